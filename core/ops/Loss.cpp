// The ONNX losses: NegativeLogLikelihoodLoss (the negated log-probability of each target class,
// weighted) and SoftmaxCrossEntropyLoss (log-softmax over the class axis, then the same NLL).
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cmath>
#include <limits>

namespace fb {

using namespace math;

namespace {

enum class LossReduction { None, Sum, Mean };

/// The `reduction` attribute (default "mean").
template <typename Ctx> Expected<LossReduction> lossReduction(const Ctx& ctx) {
  Expected<std::string> r = ctx.attrs().getString("reduction", "mean");
  if (!r)
    return ctx.error(r.error().message());
  if (*r == "none")
    return LossReduction::None;
  if (*r == "sum")
    return LossReduction::Sum;
  if (*r == "mean")
    return LossReduction::Mean;
  return ctx.error("reduction '", *r, "' is not one of none, sum, mean");
}

/// Scores (N, C, d1, ..., dk), target (N, d1, ..., dk) of i32/i64 and optional weights (C); the
/// loss is per target element with reduction 'none', else a scalar. SoftmaxCrossEntropyLoss's
/// optional second output holds the log-probabilities, shaped like the scores.
Status inferLoss(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  FB_TRY(checkInputDType(ctx, 1, dtypeBit(DType::I32) | dtypeBit(DType::I64)));
  const TensorType& x = ctx.inputType(0);
  const TensorType& t = ctx.inputType(1);
  if (x.rank() < 2)
    return ctx.error("input 0 (scores) must have rank >= 2 (N, C, d1, ...), got ", x.str());
  if (t.rank() + 1 != x.rank())
    return ctx.error("input 1 (target) ", t.str(), " must have rank ", x.rank() - 1,
                     " to match input 0 ", x.str());
  std::vector<Dim> lossDims;
  for (size_t d = 0; d < t.rank(); ++d) {
    const Dim& xd = x.dims[d == 0 ? 0 : d + 1];
    if (dimsConflict(xd, t.dims[d]))
      return ctx.error("input 1 (target) ", t.str(), " does not match input 0 ", x.str(),
                       " (N, d1, ... of the scores)");
    lossDims.push_back(xd.isStatic() ? xd : t.dims[d]);
  }
  if (ctx.hasInput(2)) {
    FB_TRY(checkSameDType(ctx, 0, 2));
    const TensorType& w = ctx.inputType(2);
    if (w.rank() != 1 || dimsConflict(w.dims[0], x.dims[1]))
      return ctx.error("input 2 (weight) ", w.str(), " must be 1-D with C = ", x.dims[1].str(),
                       " elements");
  }
  FB_ASSIGN_OR_RETURN(LossReduction reduction, lossReduction(ctx));
  ctx.setOutputType(
      0, TensorType(x.dtype, reduction == LossReduction::None ? lossDims : std::vector<Dim>{}));
  if (ctx.numOutputs() > 1)
    ctx.setOutputType(1, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// The shared NLL: `logProb(n, c, d)` is the log-probability of class c at (n, d), with the
/// spatial dims d1..dk flattened into d. Each target element t contributes -logProb(t) * w(t)
/// with w(t) = weight[t] (1 without weights), or 0 and weight 0 when t == ignore_index; 'mean'
/// divides the sum by the sum of those weights (the count when unweighted), as ONNX does.
template <typename LogProb>
Status evalNll(EvalContext& ctx, const std::vector<int64_t>& xs, LogProb&& logProb) {
  const Tensor& target = ctx.input(1);
  const int64_t N = xs[0], C = xs[1];
  int64_t D = 1;
  for (size_t d = 2; d < xs.size(); ++d)
    D *= xs[d];
  FB_ASSIGN_OR_RETURN(LossReduction reduction, lossReduction(ctx));
  const bool hasIgnore = ctx.attrs().has("ignore_index");
  FB_ASSIGN_OR_RETURN(int64_t ignore, intAttr(ctx, "ignore_index", 0));
  const Tensor* weight = ctx.hasInput(2) ? &ctx.input(2) : nullptr;
  if (weight && weight->numElements() != C)
    return ctx.error("input 2 (weight) has ", weight->numElements(), " elements, not C = ", C);
  const DType dt = ctx.input(0).dtype();
  Tensor out = reduction == LossReduction::None ? Tensor(dt, target.sizes()) : Tensor(dt, {});
  double sum = 0, weightSum = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t e = n * D + d;
      const int64_t t = target.getAsInt64(e);
      double loss = 0, w = 0;
      if (!(hasIgnore && t == ignore)) {
        if (t < 0 || t >= C)
          return ctx.error("index ", t, " is out of range for axis 1 of size ", C);
        w = weight ? weight->getAsDouble(t) : 1.0;
        loss = -logProb(n, t, d) * w;
      }
      if (reduction == LossReduction::None)
        out.setFromDouble(e, loss);
      sum += loss;
      weightSum += w;
    }
  if (reduction == LossReduction::Sum)
    out.setFromDouble(0, sum);
  else if (reduction == LossReduction::Mean)
    out.setFromDouble(0,
                      weightSum == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / weightSum);
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

Status evalNegativeLogLikelihoodLoss(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> xs = x.sizes();
  const int64_t C = xs[1], D = xs[0] ? x.numElements() / (xs[0] * std::max<int64_t>(C, 1)) : 0;
  return evalNll(
      ctx, xs, [&](int64_t n, int64_t c, int64_t d) { return x.getAsDouble((n * C + c) * D + d); });
}

/// Log-softmax over axis 1 computed as the interpreter's LogSoftmax does ((x - max) - log of the
/// sum of exp(x - max), the sum in double), so the expanded and the fused form agree.
Status evalSoftmaxCrossEntropyLoss(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> xs = x.sizes();
  const int64_t N = xs[0], C = xs[1];
  const int64_t D = N && C ? x.numElements() / (N * C) : 0;
  Tensor logProb(x.dtype(), xs);
  std::vector<double> lp(size_t(x.numElements()));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      auto at = [&](int64_t c) { return (n * C + c) * D + d; };
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < C; ++c)
        mx = std::max(mx, float(x.getAsDouble(at(c))));
      double s = 0;
      for (int64_t c = 0; c < C; ++c)
        s += std::exp(double(float(x.getAsDouble(at(c))) - mx));
      const double logSum = std::log(s);
      for (int64_t c = 0; c < C; ++c) {
        const float v = float(double(float(x.getAsDouble(at(c))) - mx) - logSum);
        lp[size_t(at(c))] = v;
        logProb.setFromDouble(at(c), v);
      }
    }
  FB_TRY(evalNll(ctx, xs,
                 [&](int64_t n, int64_t c, int64_t d) { return lp[size_t((n * C + c) * D + d)]; }));
  if (ctx.numOutputs() > 1)
    ctx.setOutput(1, std::move(logProb));
  return Status::success();
}

/// A multiply and an add per target element.
OpCost nllCost(const CostContext& ctx) {
  return OpCost{2 * ctx.inputElements(1), 0};
}
/// Log-softmax (5 per score) plus the NLL.
OpCost sceCost(const CostContext& ctx) {
  return OpCost{5 * ctx.inputElements(0) + 2 * ctx.inputElements(1), 0};
}

} // namespace

void registerLossOps(OpRegistry& r) {
  r.set(OpKind::NegativeLogLikelihoodLoss, inferLoss, evalNegativeLogLikelihoodLoss, nllCost);
  r.set(OpKind::SoftmaxCrossEntropyLoss, inferLoss, evalSoftmaxCrossEntropyLoss, sceCost);
}

} // namespace fb
