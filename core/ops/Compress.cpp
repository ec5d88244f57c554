// Compress: the slices of a tensor along one axis (or the elements of the flattened tensor)
// where a 1-D boolean condition is true. The output length depends on the condition's data.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cstring>

namespace fb {

using namespace math;

namespace {

/// The normalized `axis`, or nullopt when absent (compress the flattened input).
template <typename Ctx> Expected<std::optional<int64_t>> compressAxis(const Ctx& ctx, size_t rank) {
  if (!ctx.attrs().has("axis"))
    return std::optional<int64_t>();
  FB_ASSIGN_OR_RETURN(int64_t raw, intAttr(ctx, "axis", 0));
  auto a = normalizeAxis(raw, int64_t(rank));
  if (!a)
    return ctx.error(a.error().message());
  return std::optional<int64_t>(*a);
}

/// The selected positions: the indices of true elements of the condition below `limit`. A
/// condition longer than the axis is an error, as in NumPy, unless the extra elements are false.
template <typename Ctx>
Expected<std::vector<int64_t>> selectedPositions(const Ctx& ctx, const Tensor& cond,
                                                 int64_t limit) {
  std::vector<int64_t> picked;
  for (int64_t i = 0, n = cond.numElements(); i < n; ++i)
    if (cond.getAsDouble(i) != 0) {
      if (i >= limit)
        return ctx.error("condition element ", i, " is true but the axis has only ", limit,
                         " elements");
      picked.push_back(i);
    }
  return picked;
}

/// The axis (or the flattened length) becomes the number of true conditions, which is known
/// when the condition is a constant.
Status inferCompress(InferContext& ctx) {
  const TensorType& x = ctx.inputType(0);
  const TensorType& c = ctx.inputType(1);
  if (c.dtype != DType::Bool || c.rank() != 1)
    return ctx.error("input 1 (condition) must be a 1-D bool tensor, got ", c.str());
  FB_ASSIGN_OR_RETURN(std::optional<int64_t> axis, compressAxis(ctx, x.rank()));
  Dim len = Dim::unknown();
  if (const Tensor* t = ctx.inputConstant(1)) {
    std::optional<int64_t> limit = axis
                                       ? (x.dims[size_t(*axis)].isStatic()
                                              ? std::optional<int64_t>(x.dims[size_t(*axis)].size())
                                              : std::nullopt)
                                       : staticProduct(x.dims);
    FB_ASSIGN_OR_RETURN(std::vector<int64_t> picked,
                        selectedPositions(ctx, *t, limit.value_or(t->numElements())));
    len = Dim(int64_t(picked.size()));
  }
  std::vector<Dim> dims{len};
  if (axis) {
    dims = x.dims;
    dims[size_t(*axis)] = len;
  }
  ctx.setOutputType(0, TensorType(x.dtype, dims));
  return Status::success();
}

/// Copies the selected slices in order.
Status evalCompress(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(std::optional<int64_t> axis, compressAxis(ctx, x.rank()));
  int64_t outer = 1, n = x.numElements(), inner = 1;
  if (axis) {
    const std::vector<int64_t> s = x.sizes();
    n = s[size_t(*axis)];
    for (size_t d = 0; d < s.size(); ++d) {
      if (int64_t(d) < *axis)
        outer *= s[d];
      else if (int64_t(d) > *axis)
        inner *= s[d];
    }
  }
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> picked, selectedPositions(ctx, ctx.input(1), n));
  std::vector<int64_t> outSizes{int64_t(picked.size())};
  if (axis) {
    outSizes = x.sizes();
    outSizes[size_t(*axis)] = int64_t(picked.size());
  }
  Tensor out(x.dtype(), outSizes);
  const size_t esize = dtypeSize(x.dtype());
  const std::byte* src = x.rawData();
  std::byte* dst = out.mutableRawData();
  const int64_t k = int64_t(picked.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(dst + size_t((o * k + j) * inner) * esize,
                  src + size_t((o * n + picked[size_t(j)]) * inner) * esize, size_t(inner) * esize);
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerCompressOps(OpRegistry& r) {
  r.set(OpKind::Compress, inferCompress, evalCompress);
}

} // namespace fb
