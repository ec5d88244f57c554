// Conv and ConvTranspose: shape inference, im2col reference kernels (f32, f16, bf16) and FLOPs.
#include "core/ops/ConvGeometry.h"
#include "core/ops/DenseKernels.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

namespace fb {

namespace {

/// Checks that operand i is f32, f16 or bf16 and, for i > 0, of X's dtype.
Status checkFloatOperand(const InferContext& ctx, size_t i, const char* name) {
  const TensorType& t = ctx.inputType(i);
  if (!isComputeFloat(t.dtype))
    return ctx.error("operand ", i, " (", name, ") is ", t.str(),
                     "; only f32, f16 and bf16 are supported");
  if (i > 0 && t.dtype != ctx.inputType(0).dtype)
    return ctx.error("operand ", i, " (", name, ") is ", t.str(), " but X is ",
                     ctx.inputType(0).str(), "; dtypes must match");
  return Status::success();
}

/// Checks the optional bias operand 2 against the output channel count.
Status checkBias(const InferContext& ctx, const Dim& outChannels) {
  if (!ctx.hasInput(2))
    return Status::success();
  FB_TRY(checkFloatOperand(ctx, 2, "B"));
  const TensorType& b = ctx.inputType(2);
  if (b.rank() != 1 || dimsConflict(b.dims[0], outChannels))
    return ctx.error("bias B ", b.str(), " must be 1-D with ", outChannels.str(),
                     " elements (one per output channel)");
  return Status::success();
}

/// Adds bias[c] to every element of channel c of y [N, M, spatial].
void addBias(std::vector<float>& y, const Tensor& bias, int64_t batch, int64_t channels,
             int64_t spatial) {
  std::vector<float> b = toFloatVector(bias);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      float* p = y.data() + (n * channels + c) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        p[i] += b[size_t(c)];
    }
}

double staticOrOne(const Dim& d) { return d.isStatic() ? double(d.size()) : 1.0; }

/// Product of W's dims from `first` on (symbolic dims count as 1).
double weightProduct(const TensorType& w, size_t first) {
  double p = 1;
  for (size_t i = first; i < w.rank(); ++i)
    p *= staticOrOne(w.dims[i]);
  return p;
}

Status inferConv(InferContext& ctx) {
  FB_TRY(checkFloatOperand(ctx, 0, "X"));
  FB_TRY(checkFloatOperand(ctx, 1, "W"));
  auto dims = convOutputDims(ctx.attrs(), ctx.inputType(0), ctx.inputType(1));
  if (!dims.ok())
    return dims.error().withContext(ctx.node().describe());
  FB_TRY(checkBias(ctx, ctx.inputType(1).dims[0]));
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, *dims));
  return Status::success();
}

Status evalConv(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  FB_ASSIGN_OR_RETURN(int64_t group, ctx.attrs().getInt("group", 1));
  if (x.rank() < 3 || w.rank() != x.rank() || group < 1 ||
      x.sizes()[1] != w.sizes()[1] * group || w.sizes()[0] % group != 0)
    return ctx.error("X ", x.type().str(), " and W ", w.type().str(),
                     " do not fit together with group ", group);
  std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  auto geom = readWindowGeometry(ctx.attrs(), WindowKind::Conv, x.rank() - 2, dimsOf(kernel));
  if (!geom.ok())
    return geom.error().withContext(ctx.node().describe());
  std::vector<int64_t> inSp(x.sizes().begin() + 2, x.sizes().end());
  auto outSp = windowOutputSizes(*geom, inSp);
  if (!outSp.ok())
    return outSp.error().withContext(ctx.node().describe());
  std::vector<int64_t> ySizes = {x.sizes()[0], w.sizes()[0]};
  ySizes.insert(ySizes.end(), outSp->begin(), outSp->end());
  ConvProblem p = makeConvProblem(*geom, x.sizes(), ySizes, group);
  std::vector<float> xf = toFloatVector(x), wf = toFloatVector(w);
  std::vector<float> y(size_t(p.batch * p.outChannels * p.outSpatial()));
  convForward<float>(p, xf.data(), wf.data(), y.data());
  if (ctx.hasInput(2))
    addBias(y, ctx.input(2), p.batch, p.outChannels, p.outSpatial());
  ctx.setOutput(0, fromFloatVector(x.dtype(), ySizes, y));
  return Status::success();
}

OpCost costConv(const CostContext& ctx) {
  // Each output element takes (C/group) * prod(kernel) multiply-adds.
  double out = ctx.outputElements(0);
  double macs = out * weightProduct(ctx.inputType(1), 1);
  return {2 * macs + (ctx.hasInput(2) ? out : 0), 0};
}

Status inferConvTranspose(InferContext& ctx) {
  FB_TRY(checkFloatOperand(ctx, 0, "X"));
  FB_TRY(checkFloatOperand(ctx, 1, "W"));
  const TensorType& x = ctx.inputType(0);
  const TensorType& w = ctx.inputType(1);
  if (x.rank() < 3)
    return ctx.error("X ", x.str(), " must have rank 3 or more (N, C, spatial...)");
  if (w.rank() != x.rank())
    return ctx.error("W ", w.str(), " must have the rank of X ", x.str(),
                     " (C, M/group, kernel...)");
  FB_ASSIGN_OR_RETURN(int64_t group, ctx.attrs().getInt("group", 1));
  if (group < 1)
    return ctx.error("attribute 'group' = ", group, " must be positive");
  if (dimsConflict(x.dims[1], w.dims[0]))
    return ctx.error("channel mismatch: X ", x.str(), " has ", x.dims[1].str(),
                     " channels but W ", w.str(), " has ", w.dims[0].str(), " input channels");
  if (x.dims[1].isStatic() && x.dims[1].size() % group != 0)
    return ctx.error("X ", x.str(), " has ", x.dims[1].size(),
                     " channels, not divisible by group ", group);
  std::vector<Dim> kernel(w.dims.begin() + 2, w.dims.end());
  auto geom = readWindowGeometry(ctx.attrs(), WindowKind::ConvTranspose, x.rank() - 2, kernel);
  if (!geom.ok())
    return geom.error().withContext(ctx.node().describe());
  Dim m = mulDims(w.dims[1], Dim(group));
  std::vector<Dim> out = {x.dims[0], m};
  for (size_t i = 0; i < geom->rank(); ++i) {
    auto d = transposedOutputDim(*geom, i, x.dims[i + 2]);
    if (!d.ok())
      return d.error().withContext(ctx.node().describe());
    out.push_back(*d);
  }
  FB_TRY(checkBias(ctx, m));
  ctx.setOutputType(0, TensorType(x.dtype, out));
  return Status::success();
}

Status evalConvTranspose(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  FB_ASSIGN_OR_RETURN(int64_t group, ctx.attrs().getInt("group", 1));
  if (x.rank() < 3 || w.rank() != x.rank() || group < 1 || x.sizes()[1] != w.sizes()[0] ||
      x.sizes()[1] % group != 0)
    return ctx.error("X ", x.type().str(), " and W ", w.type().str(),
                     " do not fit together with group ", group);
  std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  auto geom =
      readWindowGeometry(ctx.attrs(), WindowKind::ConvTranspose, x.rank() - 2, dimsOf(kernel));
  if (!geom.ok())
    return geom.error().withContext(ctx.node().describe());
  std::vector<int64_t> inSp(x.sizes().begin() + 2, x.sizes().end());
  auto outSp = transposedOutputSizes(*geom, inSp);
  if (!outSp.ok())
    return outSp.error().withContext(ctx.node().describe());
  std::vector<int64_t> ySizes = {x.sizes()[0], w.sizes()[1] * group};
  ySizes.insert(ySizes.end(), outSp->begin(), outSp->end());
  ConvProblem p = makeConvProblem(*geom, x.sizes(), ySizes, group);
  std::vector<float> xf = toFloatVector(x), wf = toFloatVector(w);
  std::vector<float> y(size_t(p.batch * p.outChannels * p.outSpatial()));
  convTransposed<float>(p, xf.data(), wf.data(), y.data());
  if (ctx.hasInput(2))
    addBias(y, ctx.input(2), p.batch, p.outChannels, p.outSpatial());
  ctx.setOutput(0, fromFloatVector(x.dtype(), ySizes, y));
  return Status::success();
}

OpCost costConvTranspose(const CostContext& ctx) {
  // Every input element scatters into (M/group) * prod(kernel) outputs.
  double macs = ctx.inputElements(0) * weightProduct(ctx.inputType(1), 1);
  return {2 * macs + (ctx.hasInput(2) ? ctx.outputElements(0) : 0), 0};
}

} // namespace

void registerConvolutionOps(OpRegistry& r) {
  r.set(OpKind::Conv, inferConv, evalConv, costConv);
  r.set(OpKind::ConvTranspose, inferConvTranspose, evalConvTranspose, costConvTranspose);
}

} // namespace fb
