// The direct depthwise-convolution generator: Conv with one input channel per group (weight
// [Cout, 1, KH, KW]) compiled straight to LLVM IR with its fused bias and epilogue, instead of
// an implicit GEMM whose K (the kernel taps) is too short to block.
#pragma once

#include "codegen/kernel/GemmSpec.h"
#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace fb::cg {

/// Emits the kernel function `kernel.name` (FbKernelFn ABI, `void name(ptr noalias args)`) and
/// its helpers `<name>.items` and `<name>.worker` into `module`. The kernel's GemmSpec must
/// satisfy isDepthwise; its weights are read unpacked from the spec's A argument.
/// Work items are (image, output channel, block of output rows), claimed dynamically through
/// fb_parallel_for. Per output row, columns go 8 lanes at a time with every tap unrolled and
/// accumulated in registers from the bias; only the vectors at the image's left/right edges and
/// the row tail use masked loads and stores (masks are compile-time constants), and rows above
/// or below the image read a row of zeros. Stride 1 loads one vector per tap, strides 2-4 load
/// 8*stride floats and keep every stride-th, larger strides gather. With stride 1, interior
/// rows go in pairs that share their common input rows' loads.
/// Fails (the caller then compiles the loop nest) on a spec it does not handle.
Expected<llvm::Function*> emitDepthwiseKernel(llvm::Module& module, const Kernel& kernel);

/// A one-line description of how a depthwise kernel is compiled (for `--emit loops` and the
/// profiler): "direct depthwise 3x3 stride 2, 8-lane vectors (2 edge, 5 interior), 96 items".
Expected<std::string> describeDepthwise(const Kernel& kernel);

} // namespace fb::cg
