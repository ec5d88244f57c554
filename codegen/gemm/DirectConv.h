// The direct convolution on the CPU: choosing it per layer and packing its weights
// (DirectConvPacking.cpp), and the kernel that computes it (DirectConvEmitter.cpp).
//
// An im2col convolution first copies its input KH·KW times over into GEMM panels; the direct
// convolution reads the input where it lies. Its register tile is `ocVectors` vectors of 16
// output channels (zmm; 8 in ymm on AVX2) by a few output pixels of one or more rows; for every
// input channel and every tap it loads the tile's weight vectors once and broadcasts one input
// element per pixel (ONNX Runtime's MLAS NCHWc kernels and oneDNN's direct convolutions work the
// same way, on blocked activations). Here the activations stay NCHW: the tile's outputs leave by
// scatters down the channels, a handful per thousands of FMAs. A padded input is first copied into
// a zero-bordered Scratch plane, so the tile loop has no bounds checks.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace fb::cg {

/// True when the direct generator computes this GEMM spec: a convolution with constant weights,
/// no bias or one per output channel, epilogue operands per element or per channel, on a target
/// with AVX-512 (`registers` ≥ 32: zmm tiles of 16 channels) or AVX2 (16: ymm tiles of 8), and
/// tensors small enough for 32-bit element offsets. Auto takes it on AVX-512 targets only.
bool directConvApplies(const GemmSpec& spec, int registers);

/// The tile and work split the direct convolution would use for `spec` (weightArg and
/// paddedArg left at -1): tile shape by a small cost model of FMA and load slots per tap.
DirectConvLayout planDirectConv(const GemmSpec& spec, int threads = 0);

/// Chooses the direct convolution for a kernel — when the spec asks for it (ConvAlgorithm::
/// Direct), or for Auto when the layer is one it is expected to win on — and then packs the
/// weights and adds the Weight and Scratch arguments it reads (spec.direct). Returns whether
/// the kernel now runs direct; an error only when Direct was asked for and does not apply.
/// Call before prepareWinograd and packConstantOperands, which a direct kernel does not need.
Expected<bool> prepareDirectConv(Kernel& kernel);

/// Emits a direct convolution kernel (spec.direct set) with the FbKernelFn ABI: the padding
/// copy (parallel over image channels) when the input is padded, then the tiles (parallel over
/// image, group, channel block and a block of output rows).
Expected<llvm::Function*> emitDirectConvKernel(llvm::Module& module, const Kernel& kernel);

/// "direct 3x3 stride 1: 2 vectors of 16 channels × 1x8 pixels, ..." for `--emit loops`.
Expected<std::string> describeDirectConv(const Kernel& kernel);

} // namespace fb::cg
