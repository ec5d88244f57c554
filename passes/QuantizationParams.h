// Quantization parameters: scales and zero points from ranges, and the quantized constants
// (per-channel int8 weights, int32 biases at the accumulator scale).
#pragma once

#include "core/Graph.h"
#include "core/Tensor.h"
#include "passes/Calibration.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace fb {

/// How activations are quantized: their dtype (i8 or u8) and whether the range is symmetric
/// around zero (zero point in the middle) or affine (zero point anywhere, the full range used).
struct QuantScheme {
  DType dtype = DType::I8;
  bool symmetric = false;
};

/// real = scale · (q - zeroPoint).
struct AffineParams {
  float scale = 1;
  int32_t zeroPoint = 0;
};

/// The smallest and largest stored value of i8 (-128, 127) and u8 (0, 255).
int32_t quantMin(DType dtype);
int32_t quantMax(DType dtype);

/// Scale and zero point covering `range` (which must contain 0, so that zero is exact):
/// symmetric: scale = max|x| / 127 (i8: zero point 0, u8: 128); affine: scale = (hi - lo) /
/// (qmax - qmin), zero point = round(qmin - lo / scale). An empty range gets scale 1.
AffineParams chooseParams(const Range& range, const QuantScheme& scheme);

/// q = saturate(round_half_even(x / scale) + zeroPoint), as QuantizeLinear computes it.
int32_t quantizeValue(float x, const AffineParams& params, DType dtype);

/// A weight quantized symmetrically to i8 in [-127, 127]: one scale per slice along `axis`, or
/// one for the whole tensor. Zero points are all 0.
struct QuantizedWeight {
  Tensor data;               ///< i8, the weight's shape
  std::vector<float> scales; ///< one per channel along `axis`, or one
  int64_t axis = 0;
};

/// Quantizes an f32 weight per channel along `axis` (perChannel) or per tensor. An all-zero
/// channel gets scale 1.
QuantizedWeight quantizeWeight(const Tensor& weight, int64_t axis, bool perChannel);

/// The i32 bias at the accumulator scale: b[c] / (inputScale · weightScale[c]), rounded half to
/// even and saturated; also returns the scales it used (one per channel).
Tensor quantizeBias(const Tensor& bias, float inputScale, const std::vector<float>& weightScales,
                    std::vector<float>& biasScales);

/// Annotates `v`'s type with quantization parameters (per tensor, or per channel along `axis`)
/// so that the IR shows what a quantized value means; shape inference keeps the annotation.
void annotateQuant(Value* v, const std::vector<float>& scales,
                   const std::vector<int64_t>& zeroPoints, std::optional<int64_t> axis);

/// The clamp [lo, hi] of a Relu ([0, inf]) or of a Clip whose bounds are absent or f32 constant
/// scalars; nullopt for any other node. A quantized op absorbs such an activation: quantizing is
/// monotone, so Q(clamp(v, lo, hi)) = clamp(Q(v), Q(lo), Q(hi)).
std::optional<Range> activationClamp(const Node& node);

/// The axis of a Gemm's weight B that indexes output channels (transB ? 0 : 1), or nullopt when
/// the Gemm is not a plain product that quantizes per channel: alpha != 1, transA != 0, or
/// beta != 1 when `betaMatters` (the bias is added).
std::optional<int64_t> plainGemmChannelAxis(const Node& gemm, bool betaMatters);

/// The accumulator scale of channel c: inputScale · weightScale (in f32, as stored).
float accumulatorScale(float inputScale, float weightScale);

} // namespace fb
