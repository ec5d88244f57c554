// MaxPool (with Indices), AveragePool, GlobalAveragePool and GlobalMaxPool: shapes, kernels, FLOPs.
#include "core/ops/ConvGeometry.h"
#include "core/ops/DenseKernels.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

#include <limits>

namespace fb {

namespace {

/// Checks X's rank and dtype; MaxPool also takes i8 and u8.
Status checkPoolInput(const InferContext& ctx, bool allowInt8) {
  const TensorType& x = ctx.inputType(0);
  bool ok = isComputeFloat(x.dtype) ||
            (allowInt8 && (x.dtype == DType::I8 || x.dtype == DType::U8));
  if (!ok)
    return ctx.error("X is ", x.str(), "; only f32, f16, bf16", allowInt8 ? ", i8 and u8" : "",
                     " are supported");
  if (x.rank() < 3)
    return ctx.error("X ", x.str(), " must have rank 3 or more (N, C, spatial...)");
  return Status::success();
}

Status inferPool(InferContext& ctx) {
  bool isMax = ctx.node().op() == OpKind::MaxPool;
  FB_TRY(checkPoolInput(ctx, isMax));
  const TensorType& x = ctx.inputType(0);
  auto geom = readWindowGeometry(ctx.attrs(), WindowKind::Pool, x.rank() - 2);
  if (!geom.ok())
    return geom.error().withContext(ctx.node().describe());
  std::vector<Dim> out = {x.dims[0], x.dims[1]};
  for (size_t i = 0; i < geom->rank(); ++i) {
    auto d = windowOutputDim(*geom, i, x.dims[i + 2]);
    if (!d.ok())
      return d.error().withContext(ctx.node().describe());
    out.push_back(*d);
  }
  ctx.setOutputType(0, TensorType(x.dtype, out));
  if (ctx.numOutputs() > 1)
    ctx.setOutputType(1, TensorType(DType::I64, out));
  return Status::success();
}

/// The input positions each output position of one axis reads, and how many of its taps fall
/// inside the padded extent (the count_include_pad divisor).
struct AxisWindows {
  std::vector<std::vector<int64_t>> valid;
  std::vector<int64_t> paddedCount;
};

AxisWindows axisWindows(const ConvProblem& p, int axis) {
  AxisWindows w;
  w.valid.resize(size_t(p.out[axis]));
  w.paddedCount.resize(size_t(p.out[axis]));
  for (int64_t o = 0; o < p.out[axis]; ++o) {
    const int64_t start = o * p.stride[axis] - p.padBegin[axis];
    for (int64_t k = 0; k < p.kernel[axis]; ++k) {
      const int64_t pos = start + k * p.dilation[axis];
      if (pos >= 0 && pos < p.in[axis])
        w.valid[size_t(o)].push_back(pos);
      // Taps past the end padding (ceil_mode overhang) count for nobody.
      if (pos >= -p.padBegin[axis] && pos < p.in[axis] + p.padEnd[axis])
        ++w.paddedCount[size_t(o)];
    }
  }
  return w;
}

/// Reads geometry and output sizes for a pool on concrete X.
Expected<ConvProblem> poolProblem(const EvalContext& ctx, const Tensor& x) {
  if (x.rank() < 3)
    return ctx.error("X ", x.type().str(), " must have rank 3 or more");
  auto geom = readWindowGeometry(ctx.attrs(), WindowKind::Pool, x.rank() - 2);
  if (!geom.ok())
    return geom.error().withContext(ctx.node().describe());
  std::vector<int64_t> inSp(x.sizes().begin() + 2, x.sizes().end());
  auto outSp = windowOutputSizes(*geom, inSp);
  if (!outSp.ok())
    return outSp.error().withContext(ctx.node().describe());
  std::vector<int64_t> ySizes = {x.sizes()[0], x.sizes()[1]};
  ySizes.insert(ySizes.end(), outSp->begin(), outSp->end());
  return makeConvProblem(*geom, x.sizes(), ySizes, /*groups=*/1);
}

/// The output sizes [N, C, out...] of a problem for an X of rank `rank`.
std::vector<int64_t> poolOutputSizes(const ConvProblem& p, size_t rank) {
  std::vector<int64_t> s = {p.batch, p.inChannels};
  for (size_t i = 3 - (rank - 2); i < 3; ++i)
    s.push_back(p.out[i]);
  return s;
}

/// Widens any pool input (float family, i8, u8) to f32; i8/u8 are exact in f32.
std::vector<float> poolValues(const Tensor& x) {
  if (isComputeFloat(x.dtype()))
    return toFloatVector(x);
  std::vector<float> v(size_t(x.numElements()));
  for (int64_t i = 0; i < x.numElements(); ++i)
    v[size_t(i)] = float(x.getAsDouble(i));
  return v;
}

Tensor poolResult(DType dtype, std::vector<int64_t> sizes, const std::vector<float>& v) {
  if (isComputeFloat(dtype))
    return fromFloatVector(dtype, std::move(sizes), v);
  Tensor t(dtype, std::move(sizes));
  for (size_t i = 0; i < v.size(); ++i)
    t.setFromDouble(int64_t(i), double(v[i]));
  return t;
}

Status evalMaxPool(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(ConvProblem p, poolProblem(ctx, x));
  FB_ASSIGN_OR_RETURN(int64_t storageOrder, ctx.attrs().getInt("storage_order", 0));
  const bool wantIndices = ctx.numOutputs() > 1;
  AxisWindows wd = axisWindows(p, 0), wh = axisWindows(p, 1), ww = axisWindows(p, 2);
  std::vector<float> xv = poolValues(x);
  const int64_t inSp = p.inSpatial(), outSp = p.outSpatial();
  const int64_t planes = p.batch * p.inChannels;
  std::vector<float> y(size_t(planes * outSp));
  std::vector<int64_t> indices(wantIndices ? y.size() : 0);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* xp = xv.data() + plane * inSp;
    int64_t o = plane * outSp;
    for (int64_t od = 0; od < p.out[0]; ++od)
      for (int64_t oh = 0; oh < p.out[1]; ++oh)
        for (int64_t ow = 0; ow < p.out[2]; ++ow, ++o) {
          float best = -std::numeric_limits<float>::infinity();
          int64_t bestD = -1, bestH = -1, bestW = -1;
          for (int64_t id : wd.valid[size_t(od)])
            for (int64_t ih : wh.valid[size_t(oh)])
              for (int64_t iw : ww.valid[size_t(ow)]) {
                float v = xp[(id * p.in[1] + ih) * p.in[2] + iw];
                if (v > best || bestD < 0) {
                  best = v;
                  bestD = id, bestH = ih, bestW = iw;
                }
              }
          y[size_t(o)] = best;
          if (wantIndices) {
            // ONNX flattens the index over the whole input; storage_order 1 is column-major
            // over the spatial axes.
            int64_t local = storageOrder == 0 ? (bestD * p.in[1] + bestH) * p.in[2] + bestW
                                              : bestD + p.in[0] * (bestH + p.in[1] * bestW);
            indices[size_t(o)] = bestD < 0 ? -1 : plane * inSp + local;
          }
        }
  }
  std::vector<int64_t> ySizes = poolOutputSizes(p, x.rank());
  ctx.setOutput(0, poolResult(x.dtype(), ySizes, y));
  if (wantIndices)
    ctx.setOutput(1, Tensor::fromVector<int64_t>(ySizes, indices));
  return Status::success();
}

Status evalAveragePool(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(ConvProblem p, poolProblem(ctx, x));
  FB_ASSIGN_OR_RETURN(int64_t countIncludePad, ctx.attrs().getInt("count_include_pad", 0));
  AxisWindows wd = axisWindows(p, 0), wh = axisWindows(p, 1), ww = axisWindows(p, 2);
  std::vector<float> xv = toFloatVector(x);
  const int64_t inSp = p.inSpatial(), outSp = p.outSpatial();
  const int64_t planes = p.batch * p.inChannels;
  std::vector<float> y(size_t(planes * outSp));
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* xp = xv.data() + plane * inSp;
    int64_t o = plane * outSp;
    for (int64_t od = 0; od < p.out[0]; ++od)
      for (int64_t oh = 0; oh < p.out[1]; ++oh)
        for (int64_t ow = 0; ow < p.out[2]; ++ow, ++o) {
          float sum = 0;
          for (int64_t id : wd.valid[size_t(od)])
            for (int64_t ih : wh.valid[size_t(oh)])
              for (int64_t iw : ww.valid[size_t(ow)])
                sum += xp[(id * p.in[1] + ih) * p.in[2] + iw];
          int64_t count =
              countIncludePad
                  ? wd.paddedCount[size_t(od)] * wh.paddedCount[size_t(oh)] *
                        ww.paddedCount[size_t(ow)]
                  : int64_t(wd.valid[size_t(od)].size() * wh.valid[size_t(oh)].size() *
                            ww.valid[size_t(ow)].size());
          y[size_t(o)] = count > 0 ? sum / float(count) : 0.f;
        }
  }
  ctx.setOutput(0, fromFloatVector(x.dtype(), poolOutputSizes(p, x.rank()), y));
  return Status::success();
}

OpCost costPool(const CostContext& ctx) {
  auto kernel = ctx.attrs().getInts("kernel_shape", {});
  double k = 1;
  if (kernel.ok())
    for (int64_t v : *kernel)
      k *= double(v);
  return {ctx.outputElements(0) * k, 0};
}

Status inferGlobalPool(InferContext& ctx) {
  FB_TRY(checkPoolInput(ctx, /*allowInt8=*/false));
  const TensorType& x = ctx.inputType(0);
  std::vector<Dim> out = {x.dims[0], x.dims[1]};
  out.resize(x.rank(), Dim(1));
  ctx.setOutputType(0, TensorType(x.dtype, out));
  return Status::success();
}

Status evalGlobalPool(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3)
    return ctx.error("X ", x.type().str(), " must have rank 3 or more");
  const bool isMax = ctx.node().op() == OpKind::GlobalMaxPool;
  const int64_t planes = x.sizes()[0] * x.sizes()[1];
  const int64_t spatial = planes ? x.numElements() / planes : 0;
  std::vector<float> xv = toFloatVector(x);
  std::vector<float> y(static_cast<size_t>(planes));
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* xp = xv.data() + plane * spatial;
    float acc = isMax ? -std::numeric_limits<float>::infinity() : 0.f;
    for (int64_t i = 0; i < spatial; ++i)
      acc = isMax ? std::max(acc, xp[i]) : acc + xp[i];
    y[size_t(plane)] = isMax ? acc : acc / float(spatial);
  }
  std::vector<int64_t> ySizes = {x.sizes()[0], x.sizes()[1]};
  ySizes.resize(x.rank(), 1);
  ctx.setOutput(0, fromFloatVector(x.dtype(), ySizes, y));
  return Status::success();
}

OpCost costGlobalPool(const CostContext& ctx) { return {ctx.inputElements(0), 0}; }

} // namespace

void registerPoolingOps(OpRegistry& r) {
  r.set(OpKind::MaxPool, inferPool, evalMaxPool, costPool);
  r.set(OpKind::AveragePool, inferPool, evalAveragePool, costPool);
  r.set(OpKind::GlobalAveragePool, inferGlobalPool, evalGlobalPool, costGlobalPool);
  r.set(OpKind::GlobalMaxPool, inferGlobalPool, evalGlobalPool, costGlobalPool);
}

} // namespace fb
