// Ops whose values come from a shape or a size rather than from input data: EyeLike (ones on a
// diagonal of a matrix shaped like the input) and the window functions HannWindow,
// HammingWindow and BlackmanWindow (generalized cosine windows of a given length).
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cmath>
#include <numbers>

namespace fb {

using namespace math;

namespace {

// ---------------------------------------------------------------------------------------------
// EyeLike

/// The output dtype: the `dtype` attribute when present, else the input's.
template <typename Ctx> Expected<DType> eyeLikeDType(const Ctx& ctx, DType input) {
  if (!ctx.attrs().has("dtype"))
    return input;
  FB_ASSIGN_OR_RETURN(int64_t elemType, intAttr(ctx, "dtype", 1));
  std::optional<DType> d = dtypeFromOnnxElemType(elemType);
  if (!d)
    return ctx.unsupported("dtype = ONNX element type ", elemType,
                           " (Fusebox has f32, f16, bf16, i8, u8, i32, i64, bool)");
  return *d;
}

/// A 2-D tensor shaped like the input.
Status inferEyeLike(InferContext& ctx) {
  const TensorType& x = ctx.inputType(0);
  if (x.rank() != 2)
    return ctx.error("input 0 must be 2-D, got ", x.str());
  FB_ASSIGN_OR_RETURN(DType dt, eyeLikeDType(ctx, x.dtype));
  ctx.setOutputType(0, TensorType(dt, x.dims));
  return Status::success();
}

/// out[i, j] = 1 where j - i == k, 0 elsewhere.
Status evalEyeLike(EvalContext& ctx) {
  const std::vector<int64_t> s = ctx.input(0).sizes();
  FB_ASSIGN_OR_RETURN(int64_t k, intAttr(ctx, "k", 0));
  Tensor out(ctx.outputType(0).dtype, s);
  for (int64_t i = 0; i < s[0]; ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < s[1])
      out.setFromDouble(i * s[1] + j, 1.0);
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Window functions

/// The window length from the scalar `size` input; an error names a negative or non-scalar one.
template <typename Ctx> Expected<int64_t> windowLength(const Ctx& ctx, const Tensor& size) {
  if (size.numElements() != 1)
    return ctx.error("input 0 (size) must be a scalar, got ", size.type().str());
  const int64_t n = size.getAsInt64(0);
  if (n < 0)
    return ctx.error("input 0 (size) is ", n, "; a window length must be >= 0");
  return n;
}

/// A 1-D window of `output_datatype` (default f32); its length is known when size is constant.
Status inferWindow(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, dtypeBit(DType::I32) | dtypeBit(DType::I64)));
  if (ctx.inputType(0).rank() > 1)
    return ctx.error("input 0 (size) must be a scalar, got ", ctx.inputType(0).str());
  FB_ASSIGN_OR_RETURN(int64_t elemType, intAttr(ctx, "output_datatype", 1));
  std::optional<DType> dt = dtypeFromOnnxElemType(elemType);
  if (!dt)
    return ctx.unsupported("output_datatype = ONNX element type ", elemType,
                           " (Fusebox has f32, f16, bf16, i8, u8, i32, i64, bool)");
  Dim len = Dim::unknown();
  if (const Tensor* t = ctx.inputConstant(0)) {
    FB_ASSIGN_OR_RETURN(int64_t n, windowLength(ctx, *t));
    len = Dim(n);
  }
  ctx.setOutputType(0, TensorType(*dt, {len}));
  return Status::success();
}

/// A generalized cosine window: w[n] = Σ_k (-1)^k a_k cos(2πkn / D), with D = size when
/// `periodic` (the default) and size - 1 otherwise.
template <OpKind K> Status evalWindow(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(int64_t n, windowLength(ctx, ctx.input(0)));
  FB_ASSIGN_OR_RETURN(int64_t periodic, intAttr(ctx, "periodic", 1));
  std::vector<double> a;
  if constexpr (K == OpKind::HannWindow)
    a = {0.5, 0.5};
  else if constexpr (K == OpKind::HammingWindow)
    a = {25.0 / 46.0, 21.0 / 46.0};
  else
    a = {0.42, 0.5, 0.08};
  const double denom = double(periodic ? n : n - 1);
  Tensor out(ctx.outputType(0).dtype, {n});
  for (int64_t i = 0; i < n; ++i) {
    double w = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      const double c = denom == 0 ? 1.0 : std::cos(2 * std::numbers::pi * double(k * i) / denom);
      w += (k % 2 ? -1 : 1) * a[k] * c;
    }
    out.setFromDouble(i, w);
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerGeneratorOps(OpRegistry& r) {
  r.set(OpKind::EyeLike, inferEyeLike, evalEyeLike);
  // A cosine or two per element.
  r.set(OpKind::HannWindow, inferWindow, evalWindow<OpKind::HannWindow>, costPerOutputElement<4>);
  r.set(OpKind::HammingWindow, inferWindow, evalWindow<OpKind::HammingWindow>,
        costPerOutputElement<4>);
  r.set(OpKind::BlackmanWindow, inferWindow, evalWindow<OpKind::BlackmanWindow>,
        costPerOutputElement<7>);
}

} // namespace fb
