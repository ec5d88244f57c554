// The GEMM-class kernel generator: MatMul, Gemm and Conv (as implicit GEMM) with their fused
// bias and epilogue, compiled to LLVM IR in BLIS style (packing, cache blocks, an mr × nr
// register-blocked FMA micro-kernel, threads through fb_parallel_for).
#pragma once

#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace fb::cg {

/// Packs the constant operands of a GEMM kernel (GemmSpec::constantA / constantB) into the
/// panel layout the micro-kernel reads, appends each packed buffer as a Weight argument named
/// `<kernel>.packedA` / `<kernel>.packedB`, records the argument index in the spec
/// (packedAArg / packedBArg) and pins the spec's register tile (mr, nr), which the layout
/// depends on. Call once, before emitGemmKernel; a second call does nothing.
/// Panel layout: A slices × K blocks of kc × ceil(M/mr) panels × kc × mr floats (rows past M
/// are zero; the spec's kc is pinned too), and
/// B slices × ceil(N/nr) panels × K × nr floats (columns past N are zero).
Status packConstantOperands(Kernel& kernel);

/// Emits the whole kernel function `kernel.name` with the FbKernelFn ABI
/// (`void name(ptr noalias args)`, runtime/RuntimeAbi.h) into `module`, plus its internal
/// helpers `<name>.items`, `.packA`, `.packB`, `.ukernel`, `.ukernel.edge`. The kernel must
/// have a GemmSpec; constant operands must have been packed by packConstantOperands.
/// Work is parallel over (batch, group, M part, N block) items via fb_parallel_for, which the
/// module declares and the JIT must resolve.
Expected<llvm::Function*> emitGemmKernel(llvm::Module& module, const Kernel& kernel);

/// A one-paragraph description of the blocking chosen for a kernel (for `--emit loops`
/// comments and the profiler): "mr=6 nr=16 mc=144 kc=256 nc=256, 8 items (2 M parts × 4 N
/// blocks), A packed at compile time, B im2col".
Expected<std::string> describeGemmBlocking(const Kernel& kernel);

} // namespace fb::cg
