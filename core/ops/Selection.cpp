// Ops that select elements by comparing values along one axis: TopK (the k largest or smallest
// with their indices) and Hardmax (a one-hot of the first maximum).
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <numeric>

namespace fb {

using namespace math;

namespace {

/// Sizes before, along and after one axis: the [outer, n, inner] view of a tensor.
struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
};
Lines linesAlong(const std::vector<int64_t>& sizes, size_t axis) {
  Lines l;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (d < axis)
      l.outer *= sizes[d];
    else if (d == axis)
      l.n = sizes[d];
    else
      l.inner *= sizes[d];
  }
  return l;
}

/// The `axis` attribute (default -1) normalized against the rank.
template <typename Ctx> Expected<size_t> lastAxisDefault(const Ctx& ctx, size_t rank) {
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, intAttr(ctx, "axis", -1));
  if (rank == 0)
    return ctx.error("input 0 must have rank >= 1");
  auto a = normalizeAxis(rawAxis, int64_t(rank));
  if (!a)
    return ctx.error(a.error().message());
  return size_t(*a);
}

// ---------------------------------------------------------------------------------------------
// TopK

/// Values keep X's dtype, indices are i64; the axis becomes K long (known when K is a constant).
Status inferTopK(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kNumericTypes));
  const TensorType& x = ctx.inputType(0);
  const TensorType& k = ctx.inputType(1);
  if (k.dtype != DType::I64 || k.rank() > 1)
    return ctx.error("input 1 (K) must be a 1-D i64 tensor of one element, got ", k.str());
  FB_ASSIGN_OR_RETURN(size_t axis, lastAxisDefault(ctx, x.rank()));
  std::vector<Dim> dims = x.dims;
  dims[axis] = Dim::unknown();
  if (const Tensor* t = ctx.inputConstant(1)) {
    if (t->numElements() != 1)
      return ctx.error("input 1 (K) must hold one element, got ", t->type().str());
    const int64_t kv = t->getAsInt64(0);
    if (kv < 0 || (x.dims[axis].isStatic() && kv > x.dims[axis].size()))
      return ctx.error("K = ", kv, " is outside [0, ", x.dims[axis].str(), "] for axis ", axis);
    dims[axis] = Dim(kv);
  }
  ctx.setOutputType(0, TensorType(x.dtype, dims));
  ctx.setOutputType(1, TensorType(DType::I64, dims));
  return Status::success();
}

/// Sorts each line's positions by value (descending with `largest`), a stable sort so that equal
/// values keep the lower index first as ONNX requires, and keeps the first K. Sorted or not, the
/// result is in that order, which is one of the orders `sorted=0` allows.
Status evalTopK(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (ctx.input(1).numElements() != 1)
    return ctx.error("input 1 (K) must hold one element, got ", ctx.input(1).type().str());
  const int64_t k = ctx.input(1).getAsInt64(0);
  FB_ASSIGN_OR_RETURN(size_t axis, lastAxisDefault(ctx, x.rank()));
  FB_ASSIGN_OR_RETURN(bool largest, intAttr(ctx, "largest", 1));
  FB_ASSIGN_OR_RETURN(int64_t sorted, intAttr(ctx, "sorted", 1));
  (void)sorted;
  const Lines l = linesAlong(x.sizes(), axis);
  if (k < 0 || k > l.n)
    return ctx.error("K = ", k, " is outside [0, ", l.n, "] for axis ", axis);
  std::vector<int64_t> outSizes = x.sizes();
  outSizes[axis] = k;
  Tensor values(x.dtype(), outSizes), indices(DType::I64, outSizes);
  int64_t* pi = indices.mutableData<int64_t>().data();
  bool supported = dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(kNumericTypes)) {
      using C = ComputeT<T>;
      const T* in = x.data<T>().data();
      T* pv = values.mutableData<T>().data();
      std::vector<int64_t> order(size_t(l.n));
      for (int64_t o = 0; o < l.outer; ++o)
        for (int64_t i = 0; i < l.inner; ++i) {
          auto at = [&](int64_t j) { return C(in[(o * l.n + j) * l.inner + i]); };
          std::iota(order.begin(), order.end(), int64_t(0));
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
            return largest ? at(a) > at(b) : at(a) < at(b);
          });
          for (int64_t j = 0; j < k; ++j) {
            const int64_t dst = (o * k + j) * l.inner + i;
            pv[dst] = in[(o * l.n + order[size_t(j)]) * l.inner + i];
            pi[dst] = order[size_t(j)];
          }
        }
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(x.dtype()));
  ctx.setOutput(0, std::move(values));
  ctx.setOutput(1, std::move(indices));
  return Status::success();
}

/// About two comparisons per input element: a selection, not a full sort, in a tuned kernel.
OpCost topKCost(const CostContext& ctx) {
  return OpCost{ctx.inputElements(0) * 2, 0};
}

// ---------------------------------------------------------------------------------------------
// Hardmax

/// Hardmax keeps its input's type.
Status inferHardmax(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  const TensorType& x = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(size_t axis, lastAxisDefault(ctx, x.rank()));
  (void)axis;
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// 1 at the first maximum of each line along the axis, 0 elsewhere.
Status evalHardmax(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(size_t axis, lastAxisDefault(ctx, x.rank()));
  const Lines l = linesAlong(x.sizes(), axis);
  Tensor out(x.dtype(), x.sizes());
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      if (l.n == 0)
        continue;
      int64_t best = 0;
      double bestValue = x.getAsDouble(o * l.n * l.inner + i);
      for (int64_t j = 1; j < l.n; ++j) {
        const double v = x.getAsDouble((o * l.n + j) * l.inner + i);
        if (v > bestValue) {
          bestValue = v;
          best = j;
        }
      }
      out.setFromDouble((o * l.n + best) * l.inner + i, 1.0);
    }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerSelectionOps(OpRegistry& r) {
  r.set(OpKind::TopK, inferTopK, evalTopK, topKCost);
  // One comparison per element.
  r.set(OpKind::Hardmax, inferHardmax, evalHardmax, costPerInputElement<1>);
}

} // namespace fb
