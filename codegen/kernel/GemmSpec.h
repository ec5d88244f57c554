// The description of a GEMM-class kernel (MatMul, Gemm, Conv as implicit GEMM) with its fused
// epilogue: what the loop-IR lowering produces and the micro-kernel generator consumes.
#pragma once

#include "core/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fb::cg {

/// An elementwise operation applied to each output element after accumulation, in order.
/// `acc` is the accumulated value (already scaled by alpha and with bias added).
struct EpilogueOp {
  enum class Kind {
    Relu,        ///< max(acc, 0)
    Clip,        ///< min(max(acc, lo), hi)
    LeakyRelu,   ///< acc < 0 ? alpha * acc : acc
    Sigmoid,     ///< 1 / (1 + exp(-acc))
    HardSigmoid, ///< max(0, min(1, alpha * acc + beta))
    HardSwish,   ///< acc * max(0, min(1, acc / 6 + 0.5))
    Silu,        ///< acc * sigmoid(acc): x·Sigmoid(x) written as Sigmoid then Mul (EfficientNet)
    Gelu,        ///< 0.5 acc (1 + erf(acc / √2)): the transformers' MLP activation
    GeluTanh,    ///< 0.5 acc (1 + tanh(√(2/π) (acc + 0.044715 acc³))): GPT-2's approximation
    AddTensor,   ///< acc + T[m, n]: a residual read through `arg` with the output's layout
    MulTensor,   ///< acc * T[m, n]
  } kind;
  float lo = 0, hi = 0;       ///< Clip bounds
  float alpha = 0, beta = 0;  ///< LeakyRelu / HardSigmoid parameters
  int arg = -1;               ///< AddTensor/MulTensor: index into Kernel::args
  /// AddTensor/MulTensor: the operand holds one value per row (T[m]: a convolution's output
  /// channel, broadcast over the pixels, as a squeeze-excitation scale is) instead of T[m, n].
  bool perRow = false;
  /// AddTensor/MulTensor on a batched GEMM (not a convolution) whose operand has fewer batch
  /// steps than C and repeats over the others, as a Swin block's [1, heads, 49, 49] position
  /// bias does over the windows: C's batch step b reads the operand's M×N matrix
  /// (b / batchDiv) % batchMod. 0: the operand has C's layout (or perRow).
  int64_t batchDiv = 1, batchMod = 0;
};

/// The op's name as `--emit loops` prints it ("relu", "silu", "add" for AddTensor, ...).
inline const char* epilogueOpName(EpilogueOp::Kind kind) {
  switch (kind) {
  case EpilogueOp::Kind::Relu: return "relu";
  case EpilogueOp::Kind::Clip: return "clip";
  case EpilogueOp::Kind::LeakyRelu: return "leaky_relu";
  case EpilogueOp::Kind::Sigmoid: return "sigmoid";
  case EpilogueOp::Kind::HardSigmoid: return "hard_sigmoid";
  case EpilogueOp::Kind::HardSwish: return "hard_swish";
  case EpilogueOp::Kind::Silu: return "silu";
  case EpilogueOp::Kind::Gelu:
    return "gelu";
  case EpilogueOp::Kind::GeluTanh:
    return "gelu_tanh";
  case EpilogueOp::Kind::AddTensor: return "add";
  case EpilogueOp::Kind::MulTensor: return "mul";
  }
  return "?";
}

/// Implicit-GEMM geometry of a 2-D convolution (NCHW input, OIHW weights, one image per
/// batch step). For group g: C[co, p] = sum_{ci,kh,kw} W[co, ci, kh, kw] * X[ci, ih(p,kh), iw(p,kw)]
/// with M = Cout/groups, N = Hout*Wout, K = Cin/groups * KH * KW.
struct ConvGeometry {
  int64_t batch = 1, inChannels = 0, inH = 0, inW = 0;
  int64_t outChannels = 0, outH = 0, outW = 0;
  int64_t kernelH = 1, kernelW = 1;
  int64_t strideH = 1, strideW = 1;
  int64_t padTop = 0, padLeft = 0;   ///< bottom/right padding is implied by out sizes
  int64_t dilationH = 1, dilationW = 1;
  int64_t groups = 1;
};

/// How a convolution's products are formed (codegen/gemm). Auto: prepareKernels chooses per
/// layer (codegen/gemm/Winograd.h, codegen/gemm/DirectConv.h); a schedule override
/// (`conv=im2col|winograd|direct`) forces one.
enum class ConvAlgorithm { Auto, Im2col, Winograd, Direct };

/// A convolution computed directly from its input, set by prepareDirectConv
/// (codegen/gemm/DirectConv.h): no im2col. The register tile holds `ocVectors` vectors of
/// `lanes` output channels (16 in a zmm with AVX-512, 8 in a ymm with AVX2) by `tileRows` ×
/// `tileCols` output pixels; each tap of each input channel loads the tile's weight vectors once
/// and broadcasts one input element per pixel. Weights are packed at compile time as
/// [groups][channel blocks][Cin/groups][KH][KW][lanes·ocVectors]; a padded
/// input is first copied, borders zeroed, into a Scratch argument, so the tile loop has no
/// bounds checks.
struct DirectConvLayout {
  int lanes = 16;                   ///< floats per vector: 16 (AVX-512) or 8 (AVX2)
  int ocVectors = 2;                ///< vectors of `lanes` channels per tile (1..4)
  int tileRows = 1, tileCols = 14;  ///< output pixels of the register tile
  int64_t channelBlocks = 0;        ///< ceil(M / (lanes·ocVectors)) per group
  int64_t tileRowsPerItem = 1;      ///< tile rows (of tileRows output rows) per work item
  int64_t rowItems = 1;             ///< work items down one image
  int64_t paddedH = 0, paddedW = 0; ///< the input plane the tiles read (padded or not)
  int weightArg = -1;               ///< Weight: the packed weights
  int paddedArg = -1;               ///< Scratch: the padded input, or -1 when unpadded
  /// > 0: no Scratch plane; each work item copies the padded rows its tiles read (this many
  /// per channel) onto the worker's stack itself, saving a parallel phase and its barrier.
  int64_t localRows = 0;
  /// > 0: a work item runs its tiles over this many input channels at a time (a pass), keeping
  /// each tile's partial sums on the worker's stack between passes, so that a block of weights
  /// too large for L1 is read from memory once per pass, not once per tile; 0: one pass over
  /// every input channel of the group.
  int64_t passChannels = 0;
};

/// A 3×3, stride-1 convolution computed as Winograd F(m×m, 3×3), set by prepareWinograd: the
/// input is cut into m×m output tiles, each tile's (m+2)² input patch and each filter are
/// transformed, alpha² = (m+2)² independent GEMMs (tiles × Cin times Cin × Cout) multiply
/// them, and an output transform gives the m×m outputs, where bias and epilogue apply.
struct WinogradLayout {
  int m = 4;                      ///< output tile side (2 or 4); alpha = m + 2 points
  int uArg = -1;                  ///< Weight: transformed weights, packed as the GEMMs' B panels
  int vArg = -1;                  ///< Scratch: transformed input tiles, packed as A panels
  int mArg = -1;                  ///< Scratch: the GEMMs' products, [alpha²][tiles][Cout]
  int chunkArg = -1;              ///< Scratch: the chunk of tiles the phases work on (an i64)
  int64_t chunkTiles = 0;         ///< tiles per chunk (the GEMMs' M, a multiple of mr)
  int64_t chunks = 0;             ///< chunks covering every image's tiles
  int64_t mr = 0, nr = 0, kc = 0; ///< the GEMMs' register tile and K block (the packing's)
  /// The chunks run in parallel, each through all three phases on V and M slices of its own,
  /// so that a thread's transformed tiles and products never move to another core.
  bool chunkParallel = false;
};

/// C[b, m, n] = alpha * sum_k A[b, m, k] * B[b, k, n] (+ bias) then the epilogue, for b in
/// [0, batch). Element (m, k) of A in batch b is at A[b*aBatchStride + m*aRowStride +
/// k*aColStride] (likewise B and C), so transposed operands are just swapped strides.
struct GemmSpec {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  int aArg = -1, bArg = -1, cArg = -1; ///< indices into Kernel::args
  int64_t aBatchStride = 0, aRowStride = 0, aColStride = 1;
  int64_t bBatchStride = 0, bRowStride = 0, bColStride = 1;
  int64_t cBatchStride = 0, cRowStride = 0; ///< C's columns are contiguous
  float alpha = 1.0f;

  /// A constant operand is packed once at compile time (the generator owns the layout); the
  /// data is given here and the packed buffer becomes an extra Weight argument of the kernel.
  std::optional<Tensor> constantA, constantB;
  /// Set by packConstantOperands (gemm/GemmEmitter.h): the Weight arguments holding the packed
  /// panels of constantA / constantB, or -1 when that operand is read at run time.
  int packedAArg = -1, packedBArg = -1;
  /// Set by packConstantOperands when the plan packs the whole run-time B once per call and
  /// shares it between the threads (GemmPlan::sharedB): the Scratch argument holding it.
  int sharedBArg = -1;

  enum class Bias { None, PerRow, PerColumn, Full } bias = Bias::None;
  int biasArg = -1;       ///< index into Kernel::args (f32, M / N / M*N elements)
  float beta = 1.0f;      ///< bias scale (Gemm's beta)

  std::vector<EpilogueOp> epilogue;

  /// Set for convolutions: B is the implicit im2col of the input (bArg, NCHW) and A the
  /// weights; batch steps over images (and groups are handled inside).
  std::optional<ConvGeometry> conv;

  /// Blocking parameters (BLIS names); 0 = the generator's default for the host. A schedule
  /// override sets these (`--schedule 'k3:mc=96,kc=256'`).
  int64_t mr = 0, nr = 0, mc = 0, kc = 0, nc = 0;
  /// Which way the register tile's vectors run (GemmPlan::mVectors): along N (rows of C, the
  /// usual tile), along M (columns of C: a convolution with few pixels and many channels), or
  /// Auto, chosen by the plan. A schedule override (`vectors=m|n`) sets it.
  enum class TileVectors { Auto, AlongN, AlongM } tileVectors = TileVectors::Auto;
  /// Vector registers of the target the kernel is compiled for (16 or 32); 0: the host's.
  int vectorRegisters = 0;
  bool parallel = true;

  /// A depthwise-shaped window without weights, compiled by the direct depthwise generator
  /// (gemm/DepthwiseEmitter.h): MaxPool (the taps' maximum; padding and NaN never win, as
  /// the interpreter's `acc < x ? x : acc` has it) or AveragePool where every window has the
  /// same divisor (the taps' sum times poolScale). aArg is -1; M = 1, K = the taps.
  enum class Pooling { None, Max, Average } pooling = Pooling::None;
  float poolScale = 1.0f;

  /// Convolutions: the algorithm asked for (a schedule override) and the Winograd tile side
  /// asked for (0: chosen), and, once prepareWinograd chose Winograd, its layout.
  ConvAlgorithm algorithm = ConvAlgorithm::Auto;
  int winogradTile = 0;
  std::optional<WinogradLayout> winograd;
  /// Set once prepareDirectConv chose the direct convolution: its layout.
  std::optional<DirectConvLayout> direct;
};

/// True when a GEMM spec is a depthwise-like convolution the direct generator compiles:
/// groups == input channels, one input channel per weight (K == KH*KW), and output channels a
/// multiple of the groups (a channel multiplier). A single-channel convolution counts only when
/// it also has a single output channel; with more, it is an ordinary implicit GEMM.
inline bool isDepthwise(const GemmSpec& spec) {
  if (!spec.conv)
    return false;
  const ConvGeometry& c = *spec.conv;
  return c.groups == c.inChannels && spec.K == c.kernelH * c.kernelW &&
         c.groups * spec.M == c.outChannels && (c.groups > 1 || c.outChannels == 1);
}

/// True when a GEMM spec is a convolution Winograd F(m×m, 3×3) computes (codegen/gemm/
/// Winograd.h): 3×3, stride 1, no dilation, one group, constant weights, no bias or one per
/// output channel, and tensors small enough for 32-bit element offsets.
inline bool winogradApplies(const GemmSpec& spec) {
  if (!spec.conv || !spec.constantA ||
      (spec.bias != GemmSpec::Bias::None && spec.bias != GemmSpec::Bias::PerRow))
    return false;
  const ConvGeometry& g = *spec.conv;
  const int64_t maxOffset = int64_t(1) << 31;
  return g.kernelH == 3 && g.kernelW == 3 && g.strideH == 1 && g.strideW == 1 && g.dilationH == 1 &&
         g.dilationW == 1 && g.groups == 1 && g.batch * g.inChannels * g.inH * g.inW < maxOffset &&
         g.batch * g.outChannels * g.outH * g.outW < maxOffset;
}

} // namespace fb::cg
