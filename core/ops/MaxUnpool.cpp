// MaxUnpool: the partial inverse of MaxPool. Each input element is written to the output at the
// flat position its index gives (MaxPool's second output), every other element is 0.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

namespace fb {

using namespace math;

namespace {

/// The default output size of each spatial dim: (in - 1) * stride - pad_begin - pad_end + kernel.
template <typename Ctx>
Expected<std::vector<Dim>> defaultUnpoolDims(const Ctx& ctx, const std::vector<Dim>& x) {
  const size_t s = x.size() - 2;
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, intsAttr(ctx, "kernel_shape", {}));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      intsAttr(ctx, "strides", std::vector<int64_t>(s, 1)));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> pads,
                      intsAttr(ctx, "pads", std::vector<int64_t>(2 * s, 0)));
  if (kernel.size() != s || strides.size() != s || pads.size() != 2 * s)
    return ctx.error("kernel_shape, strides and pads must have ", s, ", ", s, " and ", 2 * s,
                     " entries for input rank ", x.size());
  std::vector<Dim> out(x.begin(), x.begin() + 2);
  for (size_t d = 0; d < s; ++d)
    out.push_back(x[d + 2].isStatic()
                      ? Dim((x[d + 2].size() - 1) * strides[d] - pads[d] - pads[d + s] + kernel[d])
                      : Dim::unknown());
  return out;
}

/// X (N, C, d...) and indices of the same shape; the output shape is the optional output_shape
/// input (known when constant) or the default from kernel_shape, strides and pads.
Status inferMaxUnpool(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  const TensorType& x = ctx.inputType(0);
  const TensorType& i = ctx.inputType(1);
  if (x.rank() < 3)
    return ctx.error("input 0 must be (N, C, d1, ...) of rank >= 3, got ", x.str());
  if (i.dtype != DType::I64 || i.rank() != x.rank())
    return ctx.error("input 1 (indices) must be i64 shaped like input 0 ", x.str(), ", got ",
                     i.str());
  if (ctx.numInputs() > 2 && ctx.hasInput(2)) {
    std::vector<Dim> dims(x.rank(), Dim::unknown());
    if (auto sv = ctx.inputShapeValue(2)) {
      if (sv->size() != x.rank())
        return ctx.error("input 2 (output_shape) has ", sv->size(), " entries for rank ", x.rank());
      dims = *sv;
    }
    ctx.setOutputType(0, TensorType(x.dtype, dims));
    return Status::success();
  }
  FB_ASSIGN_OR_RETURN(std::vector<Dim> dims, defaultUnpoolDims(ctx, x.dims));
  ctx.setOutputType(0, TensorType(x.dtype, dims));
  return Status::success();
}

/// out = 0; each x[e] goes where its index points in the default output shape (the flat index
/// MaxPool computed), which an output_shape larger than the default pads with zeros at the end
/// of each dim, as the ONNX reference does.
Status evalMaxUnpool(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (indices.sizes() != x.sizes())
    return ctx.error("input 1 (indices) ", indices.type().str(), " is not shaped like input 0 ",
                     x.type().str());
  FB_ASSIGN_OR_RETURN(std::vector<Dim> dims, defaultUnpoolDims(ctx, x.type().dims));
  std::vector<int64_t> defaultSizes;
  for (const Dim& d : dims)
    defaultSizes.push_back(d.size());
  std::vector<int64_t> outSizes = defaultSizes;
  if (ctx.numInputs() > 2 && ctx.hasInput(2))
    outSizes = ctx.input(2).toInt64Vector();
  if (outSizes.size() != x.rank())
    return ctx.error("output_shape has ", outSizes.size(), " entries for rank ", x.rank());
  for (size_t d = 0; d < outSizes.size(); ++d)
    if (outSizes[d] < defaultSizes[d])
      return ctx.error("output_shape dim ", d, " = ", outSizes[d], " is smaller than ",
                       defaultSizes[d], ", the size kernel_shape, strides and pads give");
  Tensor out(x.dtype(), outSizes);
  int64_t total = 1;
  for (int64_t s : defaultSizes)
    total *= s;
  for (int64_t e = 0, n = x.numElements(); e < n; ++e) {
    const int64_t i = indices.getAsInt64(e);
    if (i < 0 || i >= total)
      return ctx.error("index ", i, " is out of range for an output of ", total, " elements");
    int64_t at = 0, rest = i, stride = total;
    for (size_t d = 0; d < outSizes.size(); ++d) {
      stride /= defaultSizes[d];
      at = at * outSizes[d] + rest / stride;
      rest %= stride;
    }
    out.setFromDouble(at, x.getAsDouble(e));
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerMaxUnpoolOps(OpRegistry& r) {
  r.set(OpKind::MaxUnpool, inferMaxUnpool, evalMaxUnpool);
}

} // namespace fb
