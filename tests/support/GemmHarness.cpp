// GemmHarness: GEMM kernels compiled one module each through the project's JIT (codegen/llvm).
#include "tests/support/GemmHarness.h"

#include "codegen/gemm/DirectConv.h"
#include "codegen/gemm/GemmEmitter.h"
#include "codegen/gemm/Winograd.h"
#include "codegen/llvm/Jit.h"

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <limits>

namespace fb::cg {

struct GemmHarness::Impl {
  std::unique_ptr<Jit> optimized;   ///< O3
  std::unique_ptr<Jit> unoptimized; ///< O0, created on first use
  int modules = 0;
};

GemmHarness::GemmHarness() : m_impl(std::make_unique<Impl>()) {}
GemmHarness::~GemmHarness() = default;

void GemmHarness::setThreads(int threads) {
  fb_set_num_threads(threads);
}

void GemmHarness::run(FbKernelFn fn, const Kernel& kernel,
                      std::vector<std::vector<float>>& buffers) {
  std::vector<std::vector<float>> scratch;
  scratch.reserve(kernel.args.size());
  std::vector<void*> ptrs;
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const KernelArg& a = kernel.args[i];
    if (i < buffers.size()) {
      ptrs.push_back(buffers[i].data());
    } else if (a.role == KernelArg::Role::Scratch) {
      scratch.emplace_back(size_t(a.bytes / 4), std::numeric_limits<float>::quiet_NaN());
      ptrs.push_back(scratch.back().data());
    } else {
      ptrs.push_back(const_cast<std::byte*>(a.data->rawData()));
    }
  }
  fn(ptrs.data());
}

Expected<std::unique_ptr<GemmHarness>> GemmHarness::create() {
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Jit> jit, Jit::create());
  std::unique_ptr<GemmHarness> h(new GemmHarness());
  h->m_impl->optimized = std::move(jit);
  return h;
}

Expected<FbKernelFn> GemmHarness::compile(Kernel& kernel, bool optimize,
                                          int64_t winogradChunkBytes) {
  bool prepared = false;
  if (kernel.gemm && kernel.gemm->algorithm == ConvAlgorithm::Direct) {
    FB_ASSIGN_OR_RETURN(prepared, prepareDirectConv(kernel));
  } else if (kernel.gemm && kernel.gemm->algorithm == ConvAlgorithm::Winograd) {
    FB_ASSIGN_OR_RETURN(prepared, prepareWinograd(kernel, winogradChunkBytes));
  }
  if (!prepared)
    FB_TRY(packConstantOperands(kernel));
  if (!optimize && !m_impl->unoptimized) {
    JitOptions options;
    options.optLevel = 0;
    FB_ASSIGN_OR_RETURN(m_impl->unoptimized, Jit::create(options));
  }
  Jit& jit = optimize ? *m_impl->optimized : *m_impl->unoptimized;
  // Kernel names must be unique within one JIT: number the modules.
  Kernel named = kernel;
  named.name = kernel.name + "_" + std::to_string(m_impl->modules++);
  JitModule m = newJitModule(named.name);
  FB_ASSIGN_OR_RETURN(llvm::Function * fn, emitGemmKernel(*m.module, named));
  (void)fn;
  m_lastIr.clear();
  llvm::raw_string_ostream os(m_lastIr);
  m.module->print(os, nullptr);
  FB_TRY(jit.addModule(std::move(m)));
  return jit.lookupKernel(named.name);
}

} // namespace fb::cg
