// Ops whose output element depends on its position along one or two axes: CumSum (a prefix sum
// along an axis) and Trilu (the upper or lower triangle of the last two dims).
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cstring>

namespace fb {

using namespace math;

namespace {

// ---------------------------------------------------------------------------------------------
// CumSum

/// CumSum adds floats, i32 and i64 (ONNX also lists u32, u64 and f64, which Fusebox lacks).
constexpr DTypeSet kCumSumTypes = kFloatTypes | dtypeBit(DType::I32) | dtypeBit(DType::I64);

/// The output has the input's type; the axis input must be an integer scalar (or one element).
Status inferCumSum(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kCumSumTypes));
  const TensorType& axis = ctx.inputType(1);
  if ((axis.dtype != DType::I32 && axis.dtype != DType::I64) || axis.rank() > 1)
    return ctx.error("input 1 (axis) must be an i32 or i64 scalar, got ", axis.str());
  const TensorType& x = ctx.inputType(0);
  if (x.rank() == 0)
    return ctx.error("input 0 must have rank >= 1");
  if (const Tensor* t = ctx.inputConstant(1)) {
    if (t->numElements() != 1)
      return ctx.error("input 1 (axis) must hold one element, got ", t->type().str());
    auto a = normalizeAxis(t->getAsInt64(0), int64_t(x.rank()));
    if (!a)
      return ctx.error(a.error().message());
  }
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// Walks each line along the axis forward (or backward with `reverse`), storing the running sum
/// after (or, with `exclusive`, before) adding each element. Floats accumulate in double.
Status evalCumSum(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (ctx.input(1).numElements() != 1)
    return ctx.error("input 1 (axis) must hold one element, got ", ctx.input(1).type().str());
  auto axisOr = normalizeAxis(ctx.input(1).getAsInt64(0), int64_t(x.rank()));
  if (!axisOr)
    return ctx.error(axisOr.error().message());
  FB_ASSIGN_OR_RETURN(bool exclusive, intAttr(ctx, "exclusive", 0));
  FB_ASSIGN_OR_RETURN(bool reverse, intAttr(ctx, "reverse", 0));
  const size_t axis = size_t(*axisOr);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d < axis)
      outer *= x.sizes()[d];
    else if (d > axis)
      inner *= x.sizes()[d];
  }
  const int64_t n = x.sizes()[axis];
  Tensor out(x.dtype(), x.sizes());
  bool supported = dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(kCumSumTypes)) {
      using C = ComputeT<T>;
      using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
      const T* in = x.data<T>().data();
      T* po = out.mutableData<T>().data();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          Acc acc = 0;
          for (int64_t s = 0; s < n; ++s) {
            const int64_t j = reverse ? n - 1 - s : s;
            const int64_t at = (o * n + j) * inner + i;
            const Acc v = Acc(C(in[at]));
            if (exclusive) {
              po[at] = T(C(acc));
              acc = wrapAdd(acc, v);
            } else {
              acc = wrapAdd(acc, v);
              po[at] = T(C(acc));
            }
          }
        }
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(x.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Trilu

/// Trilu keeps its input's type; the optional k is an i64 scalar.
Status inferTrilu(InferContext& ctx) {
  const TensorType& x = ctx.inputType(0);
  if (x.rank() < 2)
    return ctx.error("input 0 must have rank >= 2, got ", x.str());
  if (ctx.hasInput(1)) {
    const TensorType& k = ctx.inputType(1);
    if (k.dtype != DType::I64 || k.rank() > 1)
      return ctx.error("input 1 (k) must be an i64 scalar, got ", k.str());
  }
  FB_ASSIGN_OR_RETURN(int64_t upper, intAttr(ctx, "upper", 1));
  (void)upper;
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// Element (..., i, j) survives when j - i >= k (upper) or j - i <= k (lower); others become 0.
Status evalTrilu(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2)
    return ctx.error("input 0 must have rank >= 2, got ", x.type().str());
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    if (ctx.input(1).numElements() != 1)
      return ctx.error("input 1 (k) must hold one element, got ", ctx.input(1).type().str());
    k = ctx.input(1).getAsInt64(0);
  }
  FB_ASSIGN_OR_RETURN(bool upper, intAttr(ctx, "upper", 1));
  const int64_t rows = x.sizes()[x.rank() - 2], cols = x.sizes()[x.rank() - 1];
  Tensor out(x.dtype(), x.sizes()); // zero-filled
  const int64_t es = int64_t(dtypeSize(x.dtype()));
  const int64_t count = x.numElements();
  const std::byte* in = x.rawData();
  std::byte* po = count ? out.mutableRawData() : nullptr;
  for (int64_t e = 0; e < count; ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    if (upper ? j - i >= k : j - i <= k)
      std::memcpy(po + e * es, in + e * es, size_t(es));
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerScanOps(OpRegistry& r) {
  // One add per element; Trilu only compares positions and moves data.
  r.set(OpKind::CumSum, inferCumSum, evalCumSum, costPerInputElement<1>);
  r.set(OpKind::Trilu, inferTrilu, evalTrilu, costPerInputElement<0>);
}

} // namespace fb
