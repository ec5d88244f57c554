// Kernels → LLVM modules, choosing the GEMM generator, the depthwise generator or loops.
#include "codegen/exec/KernelModules.h"
#include "codegen/exec/OnAllCores.h"
#include "codegen/gemm/DepthwiseEmitter.h"
#include "codegen/gemm/DirectConv.h"
#include "codegen/gemm/GemmEmitter.h"
#include "codegen/gemm/Int8GemmEmitter.h"
#include "codegen/gemm/Winograd.h"
#include "codegen/gpu/GpuSchedule.h"
#include "codegen/gpu/NvptxModule.h"
#include "codegen/llvm/LoopToLlvm.h"
#include "codegen/llvm/Optimizer.h"
#include "codegen/loops/LoopIR.h"
#include "codegen/loops/LoopPrinter.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

namespace fb::cg {

const char* kernelGeneratorName(KernelGenerator g) {
  switch (g) {
  case KernelGenerator::Loops: return "loops";
  case KernelGenerator::Gemm: return "gemm";
  case KernelGenerator::Depthwise: return "dwconv";
  case KernelGenerator::Winograd:
    return "winograd";
  case KernelGenerator::DirectConv:
    return "direct";
  case KernelGenerator::Int8Gemm:
    return "int8gemm";
  case KernelGenerator::Interpreted: return "interpreted";
  }
  __builtin_unreachable();
}

namespace {

std::unique_ptr<llvm::Module> newModule(llvm::LLVMContext& context, const std::string& name,
                                        const TargetInfo& target, Status& status) {
  auto m = std::make_unique<llvm::Module>(name, context);
  m->setSourceFileName(name);
  status = configureModule(*m, target);
  return m;
}

} // namespace

Int8Target int8TargetOf(const TargetInfo& target) {
  Int8Target t;
  if (target.isGpu())
    return t;
  t.avx2 = target.hasFeature("avx2");
  const bool vl = target.hasFeature("avx512vl");
  t.vnni = (vl && target.hasFeature("avx512vnni")) || target.hasFeature("avxvnni");
  t.vnni512 = vl && target.hasFeature("avx512vnni");
  t.vbmi = vl && target.hasFeature("avx512vbmi");
  t.vectorRegisters = target.vectorRegisters();
  return t;
}

Status prepareKernels(std::vector<Kernel>& kernels, bool useGemm, const TargetInfo& target) {
  // Int8 kernels have no loop nest to fall back on: packed whatever useGemm says, or handed to
  // the interpreter (their arguments are the interpreted kernel's) when the target cannot run
  // the generator's code.
  std::optional<Int8Target> int8Target;
  for (Kernel& k : kernels)
    if (k.int8) {
      if (!int8Target)
        int8Target = int8TargetOf(target);
      if (Status st = packInt8Operands(k, *int8Target); !st.ok()) {
        k.int8.reset();
        k.interpreted = true;
        k.opSummary = k.opSummary.substr(0, k.opSummary.find(" (")) + " (interpreted)";
        k.body = withComment(block({}), "runs in the executor through the reference "
                                        "interpreter: " +
                                            st.error().message());
      }
    }
  if (!useGemm)
    return Status::success();
  const int registers = target.isGpu() ? 0 : target.vectorRegisters();
  for (Kernel& k : kernels)
    if (k.gemm)
      k.gemm->vectorRegisters = registers;
  // A convolution may run direct or (3×3) as Winograd, each with its own packed weights; a
  // spec the generator cannot pack is compiled from its loop nest instead.
  auto prepare = [](Kernel& k) -> Status {
    Expected<bool> direct = prepareDirectConv(k);
    if (!direct.ok())
      return direct.error();
    if (*direct)
      return Status::success();
    Expected<bool> winograd = prepareWinograd(k);
    if (!winograd.ok() && k.gemm->algorithm == ConvAlgorithm::Winograd)
      return winograd.error();
    if (!(winograd.ok() && *winograd) && !packConstantOperands(k).ok())
      k.gemm.reset();
    return Status::success();
  };
  // Each kernel's weights are transformed and packed on their own (a tenth of ResNet-18's
  // cold compile when done one kernel after another): the cores share the kernels, and the
  // first error in kernel order is the one returned.
  std::vector<Kernel*> work;
  for (Kernel& k : kernels)
    if (k.gemm && !isDepthwise(*k.gemm))
      work.push_back(&k);
  std::vector<Status> results(work.size(), Status::success());
  forEachOnAllCores(work.size(), [&](size_t i) { results[i] = prepare(*work[i]); });
  for (Status& st : results)
    if (!st.ok())
      return st;
  return Status::success();
}

Expected<std::unique_ptr<llvm::Module>> buildKernelModule(llvm::LLVMContext& context,
                                                          const Kernel& kernel,
                                                          const TargetInfo& target,
                                                          const KernelEmitOptions& options,
                                                          KernelGenerator* generator,
                                                          std::string* note) {
  Status st;
  if (kernel.int8) {
    if (!kernel.int8->isa)
      return makeError(kernel.name, ": int8 kernel built before prepareKernels packed it");
    if (*kernel.int8->isa == Int8Isa::Vnni && !int8TargetOf(target).vnni)
      return makeError(kernel.name, ": packed for VNNI, which ", target.cpu, " does not have");
    std::unique_ptr<llvm::Module> m = newModule(context, kernel.name, target, st);
    FB_TRY(st);
    auto fn = emitInt8GemmKernel(*m, kernel);
    if (!fn.ok())
      return fn.error();
    FB_TRY(configureModule(*m, target));
    if (generator)
      *generator = KernelGenerator::Int8Gemm;
    return m;
  }
  if (options.useGemm && kernel.gemm && !target.isGpu()) {
    bool depthwise = isDepthwise(*kernel.gemm);
    std::unique_ptr<llvm::Module> m = newModule(context, kernel.name, target, st);
    FB_TRY(st);
    auto fn = depthwise ? emitDepthwiseKernel(*m, kernel) : emitGemmKernel(*m, kernel);
    if (fn.ok()) {
      FB_TRY(configureModule(*m, target)); // tags the new functions with the target CPU
      if (generator)
        *generator = depthwise               ? KernelGenerator::Depthwise
                     : kernel.gemm->winograd ? KernelGenerator::Winograd
                     : kernel.gemm->direct   ? KernelGenerator::DirectConv
                                             : KernelGenerator::Gemm;
      return m;
    }
    if (note)
      *note = std::string(depthwise ? "depthwise" : "GEMM") +
              " generator: " + fn.error().message() + "; using the loop nest";
  }
  std::unique_ptr<llvm::Module> m = newModule(context, kernel.name, target, st);
  FB_TRY(st);
  LoopEmitOptions lo;
  lo.noAliasArgs = options.noAliasArgs;
  lo.parallel = options.parallel && !target.isGpu();
  lo.gpu = target.isGpu();
  FB_ASSIGN_OR_RETURN(llvm::Function * fn, emitLoopKernel(*m, kernel, lo));
  if (target.isGpu())
    annotateGpuKernel(*fn, kGpuMaxBlockSize, gpuMinBlocksPerMultiprocessor(kernel));
  FB_TRY(configureModule(*m, target));
  if (generator)
    *generator = KernelGenerator::Loops;
  return m;
}

namespace {

Expected<std::string> describeBlocking(const Kernel& k) {
  if (k.int8)
    return describeInt8Blocking(k);
  return describeGemmBlocking(k);
}

} // namespace

std::string kernelLoopsText(const std::vector<Kernel>& kernels) {
  return printKernels(kernels, describeBlocking);
}

std::string kernelLoopText(const Kernel& kernel) {
  return printKernel(kernel, describeBlocking);
}

Expected<JitModule> buildModelModule(const std::vector<Kernel>& kernels, const std::string& name,
                                     const TargetInfo& target, const KernelEmitOptions& options,
                                     int optLevel) {
  JitModule result;
  result.context = std::make_unique<llvm::LLVMContext>();
  Status st;
  result.module = newModule(*result.context, name, target, st);
  FB_TRY(st);
  for (const Kernel& k : kernels) {
    if (k.interpreted)
      continue; // run by the executor through the interpreter: no code to link
    FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> m,
                        buildKernelModule(*result.context, k, target, options));
    if (llvm::Linker::linkModules(*result.module, std::move(m)))
      return makeError("cannot link the module of kernel ", k.name, " into ", name);
  }
  if (target.isGpu() && optLevel >= 0) // as emitted, math stays C calls (readable)
    FB_TRY(linkDeviceMath(*result.module));
  FB_TRY(verifyModule(*result.module));
  if (optLevel >= 0) {
    FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                        createTargetMachine(target, optLevel));
    FB_TRY(optimizeModule(*result.module, *tm, optLevel));
  }
  return result;
}

Expected<std::string> modelLlvmText(const std::vector<Kernel>& kernels, const std::string& name,
                                    const TargetInfo& target, const KernelEmitOptions& options,
                                    int optLevel) {
  FB_ASSIGN_OR_RETURN(JitModule m, buildModelModule(kernels, name, target, options, optLevel));
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "; " << kernels.size() << " kernels, target " << target.triple << " (" << target.cpu
     << ")"
     << (optLevel >= 0 ? ", LLVM O" + std::to_string(optLevel) : std::string(", before optimization"))
     << "\n";
  m.module->print(os, nullptr);
  os.flush();
  return text;
}

} // namespace fb::cg
