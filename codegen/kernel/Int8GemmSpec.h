// The description of an int8 GEMM-class kernel (QLinearConv as implicit GEMM, QLinearMatMul,
// ConvInteger, MatMulInteger):
// integer operands, int32 accumulation and the interpreter's double-precision requantization,
// as codegen/loops lowers it and the int8 generator (codegen/gemm/Int8GemmEmitter.h) compiles it.
#pragma once

#include "codegen/kernel/GemmSpec.h"
#include "core/Tensor.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace fb::cg {

/// How the int8 generator forms its inner products; chosen from the target when the constant
/// operand is packed (packInt8Operands), since the packed layout depends on it.
enum class Int8Isa {
  Vnni,  ///< vpdpbusd: u8 × s8, four products per i32 lane (AVX512-VNNI with VL, or AVX-VNNI)
  Int16, ///< vpmaddwd on operands widened to i16 at packing: exact, AVX2, two products per lane
  /// A depthwise convolution (one input and one output channel per group) computed directly:
  /// int32 products of the zero-point-shifted operands, nr output columns per vector.
  Depthwise
};

/// Y[s, r, c] = requant(sum_k R[s, r, k] * C[s, k, c]) for s over slices (images × groups),
/// r over rows, c over columns, where one of R and C is the constant weight tensor and the
/// other the run-time activation (u8 or i8), both minus their zero points.
///
/// - Conv (`conv` set): rows are output channels (R = weights W[g*M + r, k], OIHW flattened),
///   columns are output pixels (C = the implicit im2col of the NCHW input), slices are
///   batch × groups. Per-channel constants are indexed by row (g*M + r).
/// - MatMul: rows are A's rows (R = the activation, [batch, M, K]), columns are the weight
///   matrix's (C = W[K, N], shared by all slices). Per-channel constants are indexed by column.
///
/// ConvInteger and MatMulInteger use the same spec with `outType` I32: the int32 sums are
/// stored as they are (no bias, no multipliers).
///
/// Requantization is the interpreter's (core/ops/Quantized.cpp), bit for bit: the int32 sum
/// plus the int32 bias, converted to double, times `multipliers[channel]` (x_scale * w_scale /
/// y_scale computed in double), rounded half to even, plus the output zero point, clamped to
/// the output type's range.
struct Int8GemmSpec {
  int64_t batch = 1, groups = 1, M = 0, N = 0, K = 0;
  std::optional<ConvGeometry> conv; ///< set for QLinearConv (rows = weights)
  int actArg = -1, outArg = -1;     ///< indices into Kernel::args (activation in, Y out)
  DType actType = DType::U8, outType = DType::U8; ///< outType: U8, I8, or I32 (no requantization)
  int32_t actZeroPoint = 0, outZeroPoint = 0;
  /// The constant operand as given (I8 or U8): OIHW weights of a conv, [K, N] of a matmul.
  Tensor weights;
  /// Per channel (out channels of a conv, columns of a matmul) or one for all.
  std::vector<int32_t> weightZeroPoints;
  std::vector<int32_t> bias;       ///< per output channel (conv only), or empty
  std::vector<double> multipliers; ///< per channel, or one for all
  bool parallel = true;

  /// Set by packInt8Operands: the inner-product form, the register tile (rows × columns of one
  /// micro-kernel call; columns a multiple of 8), and the Weight/Scratch arguments it appended:
  /// the packed constant operand, the per-channel int32 correction (bias minus the activation
  /// zero point times the weights' sums), the per-channel multipliers (as the bits of doubles)
  /// and the packed activation.
  std::optional<Int8Isa> isa;
  int64_t mr = 0, nr = 0;
  int packedArg = -1, correctionArg = -1, multiplierArg = -1, packedActArg = -1;
  /// Depthwise only, set where the target has 512-bit VNNI and AVX512-VBMI and every tap fits
  /// s8 (an i8 activation is made u8 by flipping its sign bit): the taps as s8 quadruples (per
  /// channel and kernel row, ceil(kW / 4) int32 words, zero past kW) for vpdpbusd, whose lanes'
  /// input bytes one vpermb gathers from a 64-byte load of the padded row; -1 otherwise.
  int tapQuadsArg = -1;
  /// Set by packInt8Operands where every requantized value double(sum) * multiplier lies
  /// within ±2^30 (|sum| is at most K · 255² plus the bias, or 2^31): the product is then
  /// rounded half to even straight to int32 and the zero point and clamp applied in int32,
  /// which gives the interpreter's result with fewer instructions than clamping in double.
  bool requantFitsInt32 = false;
  /// Set by packInt8Operands: the target has AVX-512 (a rounding mode embedded in the
  /// conversion, 16 int32 lanes per register).
  bool avx512 = false;

  /// True for a convolution with one input and one output channel per group.
  bool depthwise() const { return conv && groups == conv->inChannels && M == 1; }
  /// True when the rows are the constant operand (a convolution).
  bool weightsAreRows() const { return conv.has_value(); }
  int64_t slices() const { return batch * groups; }
  int64_t channels() const { return weightsAreRows() ? groups * M : N; }
  /// The multiplier of channel c (1 when there are none).
  double multiplierOf(int64_t c) const {
    return multipliers.empty()       ? 1.0
           : multipliers.size() == 1 ? multipliers[0]
                                     : multipliers[size_t(c)];
  }
};

} // namespace fb::cg
