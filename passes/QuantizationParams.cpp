// Quantization parameters and quantized constants.
#include "passes/QuantizationParams.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace fb {

int32_t quantMin(DType dtype) { return dtype == DType::U8 ? 0 : -128; }
int32_t quantMax(DType dtype) { return dtype == DType::U8 ? 255 : 127; }

AffineParams chooseParams(const Range& range, const QuantScheme& scheme) {
  const double lo = std::min(range.lo, 0.0), hi = std::max(range.hi, 0.0);
  const int32_t qmin = quantMin(scheme.dtype), qmax = quantMax(scheme.dtype);
  AffineParams p;
  if (scheme.symmetric) {
    const double absMax = std::max(-lo, hi);
    p.scale = absMax > 0 ? float(absMax / 127.0) : 1.0f;
    p.zeroPoint = scheme.dtype == DType::U8 ? 128 : 0;
    return p;
  }
  if (hi - lo <= 0)
    return {1.0f, 0}; // all zeros: any scale, and 0 is exact with zero point 0
  p.scale = float((hi - lo) / double(qmax - qmin));
  const double zp = std::nearbyint(double(qmin) - lo / double(p.scale));
  p.zeroPoint = int32_t(std::clamp(zp, double(qmin), double(qmax)));
  return p;
}

int32_t quantizeValue(float x, const AffineParams& params, DType dtype) {
  // Divide in f32 and round half to even, exactly as the QuantizeLinear kernel does.
  const double q = std::nearbyint(double(x / params.scale)) + double(params.zeroPoint);
  return int32_t(std::clamp(q, double(quantMin(dtype)), double(quantMax(dtype))));
}

QuantizedWeight quantizeWeight(const Tensor& weight, int64_t axis, bool perChannel) {
  assert(weight.dtype() == DType::F32 && "quantizeWeight takes an f32 weight");
  assert(axis >= 0 && axis < int64_t(weight.rank()) && "quantizeWeight: axis out of range");
  QuantizedWeight q;
  q.axis = axis;
  const auto& sizes = weight.sizes();
  const int64_t channels = perChannel ? sizes[size_t(axis)] : 1;
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < sizes.size(); ++d)
    inner *= sizes[d];
  auto channelOf = [&](int64_t i) { return perChannel ? (i / inner) % channels : 0; };
  auto w = weight.data<float>();
  std::vector<double> absMax(size_t(channels), 0.0);
  for (int64_t i = 0; i < weight.numElements(); ++i)
    absMax[size_t(channelOf(i))] =
        std::max(absMax[size_t(channelOf(i))], std::fabs(double(w[size_t(i)])));
  q.scales.resize(size_t(channels));
  for (int64_t c = 0; c < channels; ++c)
    q.scales[size_t(c)] = absMax[size_t(c)] > 0 ? float(absMax[size_t(c)] / 127.0) : 1.0f;
  q.data = Tensor(DType::I8, sizes);
  auto out = q.data.mutableData<int8_t>();
  for (int64_t i = 0; i < weight.numElements(); ++i) {
    const double v = std::nearbyint(double(w[size_t(i)] / q.scales[size_t(channelOf(i))]));
    out[size_t(i)] = int8_t(std::clamp(v, -127.0, 127.0));
  }
  return q;
}

void annotateQuant(Value* v, const std::vector<float>& scales,
                   const std::vector<int64_t>& zeroPoints, std::optional<int64_t> axis) {
  TensorType t = v->type();
  t.quant = QuantParams{scales, zeroPoints, scales.size() == 1 ? std::nullopt : axis};
  v->setType(std::move(t));
}

std::optional<Range> activationClamp(const Node& node) {
  const double inf = std::numeric_limits<double>::infinity();
  if (node.op() == OpKind::Relu)
    return Range{0.0, inf};
  if (node.op() != OpKind::Clip || node.input(0)->type().dtype != DType::F32)
    return std::nullopt;
  Range r{-inf, inf};
  for (size_t i = 1; i < 3; ++i) {
    const Value* b = node.input(i);
    if (!b)
      continue;
    if (!b->isConstant() || !b->constantData().valid() || b->constantData().numElements() != 1)
      return std::nullopt;
    (i == 1 ? r.lo : r.hi) = b->constantData().getAsDouble(0);
  }
  return r;
}

float accumulatorScale(float inputScale, float weightScale) { return inputScale * weightScale; }

Tensor quantizeBias(const Tensor& bias, float inputScale, const std::vector<float>& weightScales,
                    std::vector<float>& biasScales) {
  assert(bias.dtype() == DType::F32 && "quantizeBias takes an f32 bias");
  const int64_t n = bias.numElements();
  assert((weightScales.size() == 1 || int64_t(weightScales.size()) == n) &&
         "quantizeBias: one weight scale or one per channel");
  biasScales.assign(size_t(n), 0.0f);
  Tensor out(DType::I32, bias.sizes());
  auto b = bias.data<float>();
  auto q = out.mutableData<int32_t>();
  constexpr double lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  for (int64_t c = 0; c < n; ++c) {
    const float s =
        accumulatorScale(inputScale, weightScales[weightScales.size() == 1 ? 0 : size_t(c)]);
    biasScales[size_t(c)] = s;
    const double v = std::nearbyint(double(b[size_t(c)]) / double(s));
    q[size_t(c)] = int32_t(std::clamp(v, lo, hi));
  }
  return out;
}

std::optional<int64_t> plainGemmChannelAxis(const Node& gemm, bool betaMatters) {
  auto alpha = gemm.attrs().getFloat("alpha", 1.0f), beta = gemm.attrs().getFloat("beta", 1.0f);
  auto transA = gemm.attrs().getInt("transA", 0), transB = gemm.attrs().getInt("transB", 0);
  if (!alpha.ok() || !beta.ok() || !transA.ok() || !transB.ok() || *alpha != 1.0f ||
      *transA != 0 || (betaMatters && *beta != 1.0f))
    return std::nullopt;
  return *transB ? 0 : 1;
}

} // namespace fb
