// DynamicQuantizeLinear: quantizes a float tensor to u8 with a scale and zero point computed
// from its own range (which always includes 0), as ONNX Runtime's dynamic quantization does.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <cmath>

namespace fb {

using namespace math;

namespace {

/// y (u8, the input's shape), y_scale (f32 scalar), y_zero_point (u8 scalar).
Status inferDynamicQuantizeLinear(InferContext& ctx) {
  if (ctx.inputType(0).dtype != DType::F32)
    return ctx.error("input 0 has dtype ", dtypeName(ctx.inputType(0).dtype),
                     ", but DynamicQuantizeLinear takes f32");
  ctx.setOutputType(0, TensorType(DType::U8, ctx.inputType(0).dims));
  ctx.setOutputType(1, TensorType(DType::F32, {}));
  ctx.setOutputType(2, TensorType(DType::U8, {}));
  return Status::success();
}

/// scale = (max(0, max x) - min(0, min x)) / 255; zero_point = clamp(round(-min / scale));
/// y = clamp(round(x / scale) + zero_point, 0, 255), rounding half to even, in f32 arithmetic
/// like the ONNX reference. An all-zero input gets scale 0 and quantizes to the zero point.
Status evalDynamicQuantizeLinear(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::span<const float> in = x.data<float>();
  float lo = 0, hi = 0;
  for (float v : in) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const float scale = (hi - lo) / 255.0f;
  const float zp =
      scale == 0 ? 0.0f : std::clamp(std::nearbyint((0.0f - lo) / scale), 0.0f, 255.0f);
  Tensor y(DType::U8, x.sizes());
  std::span<uint8_t> out = y.mutableData<uint8_t>();
  for (size_t i = 0; i < in.size(); ++i) {
    const float q = scale == 0 ? zp : std::nearbyint(in[i] / scale) + zp;
    out[i] = uint8_t(std::clamp(std::isnan(q) ? zp : q, 0.0f, 255.0f));
  }
  ctx.setOutput(0, std::move(y));
  ctx.setOutput(1, Tensor::scalar<float>(scale));
  ctx.setOutput(2, Tensor::scalar<uint8_t>(uint8_t(zp)));
  return Status::success();
}

} // namespace

void registerDynamicQuantizeOps(OpRegistry& r) {
  // Min and max, then a divide, round, add and clamp per element.
  r.set(OpKind::DynamicQuantizeLinear, inferDynamicQuantizeLinear, evalDynamicQuantizeLinear,
        costPerInputElement<6>);
}

} // namespace fb
