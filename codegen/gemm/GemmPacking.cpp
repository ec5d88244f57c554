// Compile-time packing of a GEMM kernel's constant operands into micro-kernel panels.
#include "codegen/gemm/GemmEmitter.h"
#include "codegen/gemm/GemmPlan.h"

#include <algorithm>

namespace fb::cg {

namespace {

/// Reads element `offset` of a constant operand as float (f32 data, or anything convertible).
float elementAt(const Tensor& t, int64_t offset) {
  if (t.dtype() == DType::F32)
    return t.data<float>()[size_t(offset)];
  return float(t.getAsDouble(offset));
}

} // namespace

Status packConstantOperands(Kernel& kernel) {
  if (!kernel.gemm)
    return makeError("kernel ", kernel.name, ": packConstantOperands on a non-GEMM kernel");
  GemmSpec& s = *kernel.gemm;
  bool needA = s.constantA && s.packedAArg < 0;
  bool needB = s.constantB && s.packedBArg < 0;
  if (!needA && !needB)
    return Status::success();
  // Plan with placeholders so the blocking is resolved exactly as emitGemmKernel will see it.
  Kernel probe = kernel;
  if (needA)
    probe.gemm->packedAArg = 0;
  if (needB)
    probe.gemm->packedBArg = 0;
  bool mayShareB = needA && !s.constantB && s.sharedBArg < 0;
  if (mayShareB)
    probe.gemm->sharedBArg = 0;
  probe.args.resize(std::max<size_t>(probe.args.size(), 1));
  FB_ASSIGN_OR_RETURN(GemmPlan p, planGemm(probe));
  // The panel layout depends on the register tile and (for A) the K block; pin them so
  // emission agrees.
  s.mr = p.mr;
  s.nr = p.nr;
  s.kc = p.kc;
  s.tileVectors = p.mVectors ? GemmSpec::TileVectors::AlongM : GemmSpec::TileVectors::AlongN;

  if (needA) {
    const Tensor& src = *s.constantA;
    int64_t batchSlices = p.a.batchStride != 0 ? p.batch : 1;
    int64_t extent = (batchSlices - 1) * p.a.batchStride + (p.groups - 1) * p.a.groupStride +
                     (p.M - 1) * p.a.rowStride + (p.K - 1) * p.a.colStride + 1;
    if (p.K > 0 && src.numElements() < extent)
      return makeError("kernel ", kernel.name, ": constant A has ", src.numElements(),
                       " elements, the GEMM strides need ", extent);
    // K-block-major: the mc × kc block a work item reads for one K block is one contiguous
    // stream, which the hardware prefetcher follows from DRAM (weights of a large CNN do not
    // stay in cache between inferences).
    Tensor packed(DType::F32, {batchSlices * p.groups * p.aPanels * p.K * p.mr});
    auto out = packed.mutableData<float>();
    int64_t at = 0;
    for (int64_t bs = 0; bs < batchSlices; ++bs)
      for (int64_t g = 0; g < p.groups; ++g)
        for (int64_t pc = 0; pc < p.K; pc += p.kc)
          for (int64_t panel = 0; panel < p.aPanels; ++panel)
            for (int64_t k = pc; k < std::min(p.K, pc + p.kc); ++k)
              for (int64_t i = 0; i < p.mr; ++i, ++at) {
                int64_t m = panel * p.mr + i;
                out[size_t(at)] = m < p.M
                                      ? elementAt(src, bs * p.a.batchStride + g * p.a.groupStride +
                                                           m * p.a.rowStride + k * p.a.colStride)
                                      : 0.0f;
              }
    KernelArg arg;
    arg.role = KernelArg::Role::Weight;
    arg.name = kernel.name + ".packedA";
    arg.sizes = packed.sizes();
    arg.bytes = int64_t(packed.byteSize());
    arg.data = std::move(packed);
    s.packedAArg = int(kernel.args.size());
    kernel.args.push_back(std::move(arg));
  }
  if (needB) {
    const Tensor& src = *s.constantB;
    int64_t slices = p.b.batchStride != 0 ? p.batch : 1;
    int64_t extent =
        (slices - 1) * p.b.batchStride + (p.K - 1) * p.b.rowStride + (p.N - 1) * p.b.colStride + 1;
    if (p.K > 0 && src.numElements() < extent)
      return makeError("kernel ", kernel.name, ": constant B has ", src.numElements(),
                       " elements, the GEMM strides need ", extent);
    Tensor packed(DType::F32, {slices * p.bPanels * p.bPanelFloats()});
    auto out = packed.mutableData<float>();
    int64_t at = 0;
    for (int64_t bs = 0; bs < slices; ++bs)
      for (int64_t panel = 0; panel < p.bPanels; ++panel)
        for (int64_t k = 0; k < p.K; ++k)
          for (int64_t j = 0; j < p.nr; ++j, ++at) {
            int64_t n = panel * p.nr + j;
            out[size_t(at)] =
                n < p.N
                    ? elementAt(src, bs * p.b.batchStride + k * p.b.rowStride + n * p.b.colStride)
                    : 0.0f;
          }
    KernelArg arg;
    arg.role = KernelArg::Role::Weight;
    arg.name = kernel.name + ".packedB";
    arg.sizes = packed.sizes();
    arg.bytes = int64_t(packed.byteSize());
    arg.data = std::move(packed);
    s.packedBArg = int(kernel.args.size());
    kernel.args.push_back(std::move(arg));
  }
  if (mayShareB && p.sharedB) {
    KernelArg arg;
    arg.role = KernelArg::Role::Scratch;
    arg.name = kernel.name + ".sharedB";
    arg.sizes = {p.sharedBFloats()};
    arg.bytes = 4 * p.sharedBFloats();
    s.sharedBArg = int(kernel.args.size());
    kernel.args.push_back(std::move(arg));
  }
  return Status::success();
}

} // namespace fb::cg
