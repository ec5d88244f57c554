// Unique: the distinct elements (or distinct slices along an axis) of a tensor, sorted or in
// order of first occurrence, with the index of each one's first occurrence, the inverse map
// from every input element (slice) to its unique entry, and the counts. The output length
// depends on the data.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace fb {

using namespace math;

namespace {

/// The normalized `axis`, or nullopt when absent (unique elements of the flattened input).
template <typename Ctx> Expected<std::optional<int64_t>> uniqueAxis(const Ctx& ctx, size_t rank) {
  if (!ctx.attrs().has("axis"))
    return std::optional<int64_t>();
  FB_ASSIGN_OR_RETURN(int64_t raw, intAttr(ctx, "axis", 0));
  auto a = normalizeAxis(raw, int64_t(rank));
  if (!a)
    return ctx.error(a.error().message());
  return std::optional<int64_t>(*a);
}

/// Y keeps X's dtype with the axis (or the flattened length) unknown; indices, inverse_indices
/// and counts are 1-D i64 (inverse_indices as long as the axis or the flattened input).
Status inferUnique(InferContext& ctx) {
  const TensorType& x = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(std::optional<int64_t> axis, uniqueAxis(ctx, x.rank()));
  std::vector<Dim> y{Dim::unknown()};
  Dim inverse = Dim::unknown();
  if (axis) {
    y = x.dims;
    y[size_t(*axis)] = Dim::unknown();
    inverse = x.dims[size_t(*axis)];
  } else if (auto n = staticProduct(x.dims)) {
    inverse = Dim(*n);
  }
  ctx.setOutputType(0, TensorType(x.dtype, y));
  for (size_t i = 1; i < ctx.numOutputs(); ++i)
    ctx.setOutputType(i, TensorType(DType::I64, {i == 2 ? inverse : Dim::unknown()}));
  return Status::success();
}

/// Compares slices as NumPy does (lexicographically, element by element as numbers), groups
/// equal ones, and orders the groups by value (`sorted`, the default) or by first occurrence.
Status evalUnique(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(std::optional<int64_t> axis, uniqueAxis(ctx, x.rank()));
  FB_ASSIGN_OR_RETURN(int64_t sorted, intAttr(ctx, "sorted", 1));
  const std::vector<int64_t> s = x.sizes();
  int64_t outer = 1, n = x.numElements(), inner = 1;
  if (axis) {
    n = s[size_t(*axis)];
    for (size_t d = 0; d < s.size(); ++d) {
      if (int64_t(d) < *axis)
        outer *= s[d];
      else if (int64_t(d) > *axis)
        inner *= s[d];
    }
  }
  // Slice j is the elements (o, j, i) for every o and i.
  auto element = [&](int64_t j, int64_t k) {
    return x.getAsDouble(((k / inner) * n + j) * inner + k % inner);
  };
  const int64_t width = outer * inner;
  auto less = [&](int64_t p, int64_t q) {
    for (int64_t k = 0; k < width; ++k) {
      const double a = element(p, k), b = element(q, k);
      if (a != b)
        return a < b;
    }
    return false;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(), less); // equal slices keep their input order
  // Groups of equal slices, in sorted order; each starts with its first occurrence.
  std::vector<int64_t> first, counts, groupOf(static_cast<size_t>(n));
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || less(order[i - 1], order[i])) {
      first.push_back(order[i]);
      counts.push_back(0);
    }
    ++counts.back();
    groupOf[size_t(order[i])] = int64_t(first.size()) - 1;
  }
  // Position of each group in the output.
  std::vector<int64_t> rank(first.size());
  std::iota(rank.begin(), rank.end(), int64_t(0));
  if (!sorted) {
    std::vector<int64_t> byFirst(first.size());
    std::iota(byFirst.begin(), byFirst.end(), int64_t(0));
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t p, int64_t q) { return first[size_t(p)] < first[size_t(q)]; });
    for (size_t r = 0; r < byFirst.size(); ++r)
      rank[size_t(byFirst[r])] = int64_t(r);
  }
  const int64_t k = int64_t(first.size());
  std::vector<int64_t> indices(static_cast<size_t>(k)), countsOut(static_cast<size_t>(k)),
      inverse(static_cast<size_t>(n));
  for (int64_t g = 0; g < k; ++g) {
    indices[size_t(rank[size_t(g)])] = first[size_t(g)];
    countsOut[size_t(rank[size_t(g)])] = counts[size_t(g)];
  }
  for (int64_t j = 0; j < n; ++j)
    inverse[size_t(j)] = rank[size_t(groupOf[size_t(j)])];
  std::vector<int64_t> ySizes{k};
  if (axis) {
    ySizes = s;
    ySizes[size_t(*axis)] = k;
  }
  Tensor y(x.dtype(), ySizes);
  const size_t esize = dtypeSize(x.dtype());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(y.mutableRawData() + size_t((o * k + j) * inner) * esize,
                  x.rawData() + size_t((o * n + indices[size_t(j)]) * inner) * esize,
                  size_t(inner) * esize);
  ctx.setOutput(0, std::move(y));
  if (ctx.numOutputs() > 1)
    ctx.setOutput(1, Tensor::fromVector<int64_t>({k}, indices));
  if (ctx.numOutputs() > 2)
    ctx.setOutput(2, Tensor::fromVector<int64_t>({n}, inverse));
  if (ctx.numOutputs() > 3)
    ctx.setOutput(3, Tensor::fromVector<int64_t>({k}, countsOut));
  return Status::success();
}

/// A sort: about log2(n) comparisons per element.
OpCost uniqueCost(const CostContext& ctx) {
  const double n = std::max(2.0, ctx.inputElements(0));
  return OpCost{n * std::log2(n), 0};
}

} // namespace

void registerUniqueOps(OpRegistry& r) {
  r.set(OpKind::Unique, inferUnique, evalUnique, uniqueCost);
}

} // namespace fb
