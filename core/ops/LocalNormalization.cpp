// Normalizations of each element by statistics of a neighbourhood or of a set of axes: LRN
// (local response normalization across channels) and MeanVarianceNormalization (zero mean and
// unit variance over `axes`).
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cmath>

namespace fb {

using namespace math;

namespace {

// ---------------------------------------------------------------------------------------------
// LRN

/// Keeps the input's type: (N, C, d1, ...) of a float type.
Status inferLRN(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  const TensorType& x = ctx.inputType(0);
  if (x.rank() < 3)
    return ctx.error("input 0 must be (N, C, d1, ...) of rank >= 3, got ", x.str());
  FB_ASSIGN_OR_RETURN(int64_t size, intAttr(ctx, "size", 0));
  if (size < 1)
    return ctx.error("attribute size = ", size, " must be >= 1 (it is required)");
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// y = x / (bias + alpha / size * Σ x²)^beta, the sum over the channels
/// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that exist.
Status evalLRN(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(int64_t size, intAttr(ctx, "size", 0));
  FB_ASSIGN_OR_RETURN(float alpha, floatAttr(ctx, "alpha", 0.0001f));
  FB_ASSIGN_OR_RETURN(float beta, floatAttr(ctx, "beta", 0.75f));
  FB_ASSIGN_OR_RETURN(float bias, floatAttr(ctx, "bias", 1.0f));
  const std::vector<int64_t> s = x.sizes();
  const int64_t N = s[0], C = s[1];
  const int64_t inner = C ? x.numElements() / std::max<int64_t>(N * C, 1) : 0;
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  Tensor out(x.dtype(), s);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t q = std::max<int64_t>(0, c - before); q <= std::min(C - 1, c + after); ++q) {
          const double v = x.getAsDouble((n * C + q) * inner + i);
          sq += v * v;
        }
        const int64_t e = (n * C + c) * inner + i;
        out.setFromDouble(
            e, x.getAsDouble(e) /
                   std::pow(double(bias) + double(alpha) / double(size) * sq, double(beta)));
      }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// The square sum over the window, a power and a division per element.
OpCost lrnCost(const CostContext& ctx) {
  auto size = ctx.attrs().getInt("size", 1);
  return OpCost{ctx.outputElements(0) * (2 * double(size.ok() ? *size : 1) + 4), 0};
}

// ---------------------------------------------------------------------------------------------
// MeanVarianceNormalization

/// The normalized `axes` (default [0, 2, 3]).
template <typename Ctx> Expected<std::vector<int64_t>> mvnAxes(const Ctx& ctx, size_t rank) {
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> raw, intsAttr(ctx, "axes", {0, 2, 3}));
  auto axes = normalizeAxes(raw, int64_t(rank));
  if (!axes)
    return ctx.error(axes.error().message());
  return *axes;
}

Status inferMVN(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  const TensorType& x = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> axes, mvnAxes(ctx, x.rank()));
  (void)axes;
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// ONNX's function body: (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9), the expectations over
/// `axes`, accumulated in double.
Status evalMVN(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> axes, mvnAxes(ctx, x.rank()));
  const std::vector<int64_t> s = x.sizes();
  std::vector<int64_t> groupSizes = s;
  int64_t count = 1;
  for (int64_t a : axes) {
    count *= s[size_t(a)];
    groupSizes[size_t(a)] = 1;
  }
  int64_t groups = 1;
  for (int64_t g : groupSizes)
    groups *= g;
  // Each element's group: its offset in the keep-dims statistics tensor.
  std::vector<int64_t> groupOf(size_t(x.numElements()));
  forEachBroadcast(s, {broadcastStrides(groupSizes, s)},
                   [&](int64_t i, const int64_t* off) { groupOf[size_t(i)] = off[0]; });
  std::vector<double> sum(static_cast<size_t>(groups), 0.0),
      sumSq(static_cast<size_t>(groups), 0.0);
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    const double v = x.getAsDouble(i);
    sum[size_t(groupOf[size_t(i)])] += v;
    sumSq[size_t(groupOf[size_t(i)])] += v * v;
  }
  Tensor out(x.dtype(), s);
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    const size_t g = size_t(groupOf[size_t(i)]);
    const double mean = sum[g] / double(count);
    const double var = sumSq[g] / double(count) - mean * mean;
    out.setFromDouble(i, (x.getAsDouble(i) - mean) / (std::sqrt(std::max(var, 0.0)) + 1e-9));
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerLocalNormalizationOps(OpRegistry& r) {
  r.set(OpKind::LRN, inferLRN, evalLRN, lrnCost);
  // Two sums, then a subtract and a divide per element.
  r.set(OpKind::MeanVarianceNormalization, inferMVN, evalMVN, costPerOutputElement<5>);
}

} // namespace fb
