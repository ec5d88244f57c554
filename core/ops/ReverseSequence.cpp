// ReverseSequence: reverses the first sequence_lens[b] elements along the time axis of each
// batch entry b, leaving the rest of each sequence in place.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cstring>

namespace fb {

using namespace math;

namespace {

/// The (time, batch) axes: attributes `time_axis` (default 0) and `batch_axis` (default 1),
/// each 0 or 1 and different.
template <typename Ctx> Expected<std::pair<int64_t, int64_t>> sequenceAxes(const Ctx& ctx) {
  FB_ASSIGN_OR_RETURN(int64_t timeAxis, intAttr(ctx, "time_axis", 0));
  FB_ASSIGN_OR_RETURN(int64_t batchAxis, intAttr(ctx, "batch_axis", 1));
  if ((timeAxis != 0 && timeAxis != 1) || (batchAxis != 0 && batchAxis != 1) ||
      timeAxis == batchAxis)
    return ctx.error("time_axis = ", timeAxis, " and batch_axis = ", batchAxis,
                     " must be 0 and 1 in some order");
  return std::pair<int64_t, int64_t>(timeAxis, batchAxis);
}

/// Keeps the input's type; sequence_lens is 1-D i32/i64 with one entry per batch entry.
Status inferReverseSequence(InferContext& ctx) {
  const TensorType& x = ctx.inputType(0);
  const TensorType& lens = ctx.inputType(1);
  if (x.rank() < 2)
    return ctx.error("input 0 must have rank >= 2, got ", x.str());
  if ((lens.dtype != DType::I32 && lens.dtype != DType::I64) || lens.rank() != 1)
    return ctx.error("input 1 (sequence_lens) must be a 1-D i32 or i64 tensor, got ", lens.str());
  FB_ASSIGN_OR_RETURN(auto axes, sequenceAxes(ctx));
  if (dimsConflict(lens.dims[0], x.dims[size_t(axes.second)]))
    return ctx.error("input 1 (sequence_lens) ", lens.str(), " needs one entry per batch entry of ",
                     x.str());
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// out[t, b, ...] = x[len_b - 1 - t, b, ...] for t < len_b, else x[t, b, ...].
Status evalReverseSequence(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& lens = ctx.input(1);
  FB_ASSIGN_OR_RETURN(auto axes, sequenceAxes(ctx));
  const std::vector<int64_t> s = x.sizes();
  const int64_t T = s[size_t(axes.first)], B = s[size_t(axes.second)];
  if (lens.numElements() != B)
    return ctx.error("input 1 (sequence_lens) has ", lens.numElements(), " entries for ", B,
                     " batch entries");
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d)
    inner *= s[d];
  const int64_t timeStride = axes.first == 0 ? B * inner : inner;
  const int64_t batchStride = axes.second == 0 ? T * inner : inner;
  Tensor out(x.dtype(), s);
  const size_t esize = dtypeSize(x.dtype());
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = lens.getAsInt64(b);
    if (len < 0 || len > T)
      return ctx.error("sequence_lens[", b, "] = ", len, " is outside [0, ", T, "]");
    for (int64_t t = 0; t < T; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      std::memcpy(out.mutableRawData() + size_t(b * batchStride + t * timeStride) * esize,
                  x.rawData() + size_t(b * batchStride + from * timeStride) * esize,
                  size_t(inner) * esize);
    }
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerReverseSequenceOps(OpRegistry& r) {
  r.set(OpKind::ReverseSequence, inferReverseSequence, evalReverseSequence);
}

} // namespace fb
