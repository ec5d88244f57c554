// Quantization ops: QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul, MatMulInteger
// and ConvInteger, with the exact integer semantics of the ONNX spec.
#include "core/ops/ConvGeometry.h"
#include "core/ops/DenseKernels.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <cmath>

namespace fb {

namespace {

bool isInt8(DType d) { return d == DType::I8 || d == DType::U8; }

/// Checks that operand i is present with a dtype for which `pred` holds.
template <typename Pred>
Status checkOperand(const InferContext& ctx, size_t i, const char* name, Pred pred,
                    const char* allowed) {
  if (!ctx.hasInput(i))
    return ctx.error("operand ", i, " (", name, ") is missing");
  if (!pred(ctx.inputType(i).dtype))
    return ctx.error("operand ", i, " (", name, ") is ", ctx.inputType(i).str(), "; expected ",
                     allowed);
  return Status::success();
}

Status checkInt8Operand(const InferContext& ctx, size_t i, const char* name) {
  return checkOperand(ctx, i, name, isInt8, "i8 or u8");
}
Status checkScaleOperand(const InferContext& ctx, size_t i, const char* name) {
  return checkOperand(ctx, i, name, isComputeFloat, "f32, f16 or bf16");
}

/// Checks that a zero point has its tensor's dtype (ONNX ties them).
Status checkZeroPointOf(const InferContext& ctx, size_t zp, size_t of, const char* name) {
  if (!ctx.hasInput(zp))
    return Status::success();
  if (ctx.inputType(zp).dtype != ctx.inputType(of).dtype)
    return ctx.error("zero point ", name, " is ", ctx.inputType(zp).str(), " but operand ", of,
                     " is ", ctx.inputType(of).str(), "; dtypes must match");
  return Status::success();
}

/// An integer tensor's elements as int32.
std::vector<int32_t> toInt32Vector(const Tensor& t) {
  std::vector<int32_t> v(size_t(t.numElements()));
  dispatchDType(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {
      auto d = t.data<T>();
      std::transform(d.begin(), d.end(), v.begin(), [](T x) { return int32_t(x); });
    } else {
      assert(false && "toInt32Vector takes an integer tensor");
    }
  });
  return v;
}

/// Scale values widened to double; an absent tensor reads as {1}.
std::vector<double> scalesOf(const EvalContext& ctx, size_t i) {
  if (!ctx.hasInput(i))
    return {1.0};
  const Tensor& t = ctx.input(i);
  std::vector<double> v(size_t(t.numElements()));
  for (int64_t k = 0; k < t.numElements(); ++k)
    v[size_t(k)] = t.getAsDouble(k);
  return v;
}

/// Zero-point values; an absent zero point reads as {0}.
std::vector<int32_t> zeroPointsOf(const EvalContext& ctx, size_t i) {
  return ctx.hasInput(i) ? toInt32Vector(ctx.input(i)) : std::vector<int32_t>{0};
}

/// Maps a flat element index to the quantization parameter it uses: (i / inner) % count.
struct ParamIndex {
  int64_t inner = 1;
  int64_t count = 1;
  int64_t operator()(int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

/// Per-tensor (one parameter) or per-axis along `axis` of `sizes`; an error when the count
/// is neither 1 nor the axis size.
Expected<ParamIndex> paramIndex(size_t count, const std::vector<int64_t>& sizes, int64_t axis,
                                const char* what) {
  ParamIndex p;
  if (count == 1)
    return p;
  if (axis < 0 || axis >= int64_t(sizes.size()) || sizes[size_t(axis)] != int64_t(count))
    return makeError(what, " has ", count, " entries but the quantized axis ", axis, " of ",
                     dimsToString(dimsOf(sizes)), " does not have that size");
  p.count = int64_t(count);
  for (size_t d = size_t(axis) + 1; d < sizes.size(); ++d)
    p.inner *= sizes[d];
  return p;
}

/// Rounds half to even, adds the zero point and saturates to the range of `dtype`.
int32_t saturateRound(double v, int32_t zeroPoint, DType dtype) {
  double r = std::nearbyint(v) + double(zeroPoint);
  double lo = dtype == DType::U8 ? 0.0 : -128.0;
  double hi = dtype == DType::U8 ? 255.0 : 127.0;
  return int32_t(std::clamp(r, lo, hi));
}

Tensor int8Tensor(DType dtype, std::vector<int64_t> sizes, const std::vector<int32_t>& v) {
  Tensor t(dtype, std::move(sizes));
  if (dtype == DType::U8)
    std::transform(v.begin(), v.end(), t.mutableData<uint8_t>().begin(),
                   [](int32_t x) { return uint8_t(x); });
  else
    std::transform(v.begin(), v.end(), t.mutableData<int8_t>().begin(),
                   [](int32_t x) { return int8_t(x); });
  return t;
}

/// The per-axis check shared by QuantizeLinear and DequantizeLinear: a 1-D scale must match
/// X's dim along `axis`.
Status checkQuantAxis(const InferContext& ctx, size_t scaleIdx) {
  const TensorType& x = ctx.inputType(0);
  const TensorType& s = ctx.inputType(scaleIdx);
  if (s.rank() > 1)
    return ctx.error("scale ", s.str(), " must be a scalar or 1-D");
  if (ctx.hasInput(2) && ctx.inputType(2).dims != s.dims)
    return ctx.error("zero point ", ctx.inputType(2).str(), " must have the shape of scale ",
                     s.str());
  if (s.rank() == 1 && !(s.dims[0].isStatic() && s.dims[0].size() == 1)) {
    FB_ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().getInt("axis", 1));
    auto a = normalizeAxis(axis, int64_t(x.rank()));
    if (!a.ok())
      return a.error().withContext(ctx.node().describe());
    if (dimsConflict(x.dims[size_t(*a)], s.dims[0]))
      return ctx.error("per-axis scale ", s.str(), " does not match X ", x.str(), " along axis ",
                       *a);
  }
  return Status::success();
}

Status inferQuantizeLinear(InferContext& ctx) {
  FB_TRY(checkOperand(ctx, 0, "x",
                      [](DType d) { return isComputeFloat(d) || d == DType::I32; },
                      "f32, f16, bf16 or i32"));
  FB_TRY(checkScaleOperand(ctx, 1, "y_scale"));
  DType out = DType::U8;
  if (ctx.hasInput(2)) {
    FB_TRY(checkInt8Operand(ctx, 2, "y_zero_point"));
    out = ctx.inputType(2).dtype;
  }
  FB_TRY(checkQuantAxis(ctx, 1));
  ctx.setOutputType(0, TensorType(out, ctx.inputType(0).dims));
  return Status::success();
}

/// The ParamIndex of a Quantize/DequantizeLinear node for X's sizes.
Expected<ParamIndex> quantAxisIndex(const EvalContext& ctx, size_t count) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().getInt("axis", 1));
  if (axis < 0)
    axis += int64_t(x.rank());
  auto p = paramIndex(count, x.sizes(), axis, "scale");
  if (!p.ok())
    return p.error().withContext(ctx.node().describe());
  return p;
}

Status evalQuantizeLinear(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<double> scale = scalesOf(ctx, 1);
  std::vector<int32_t> zp = zeroPointsOf(ctx, 2);
  if (zp.size() != scale.size() && zp.size() != 1)
    return ctx.error("zero point and scale have different sizes");
  FB_ASSIGN_OR_RETURN(ParamIndex idx, quantAxisIndex(ctx, scale.size()));
  DType out = ctx.outputType(0).dtype;
  std::vector<int32_t> y(size_t(x.numElements()));
  if (x.dtype() == DType::I32) {
    auto xv = x.data<int32_t>();
    for (int64_t i = 0; i < x.numElements(); ++i) {
      int64_t c = idx(i);
      y[size_t(i)] = saturateRound(double(xv[size_t(i)]) / scale[size_t(c)],
                                   zp[zp.size() == 1 ? 0 : size_t(c)], out);
    }
  } else {
    // Float inputs divide in f32, as the ONNX reference does, before rounding half to even.
    std::vector<float> xv = toFloatVector(x);
    for (int64_t i = 0; i < x.numElements(); ++i) {
      int64_t c = idx(i);
      float q = xv[size_t(i)] / float(scale[size_t(c)]);
      y[size_t(i)] = saturateRound(double(q), zp[zp.size() == 1 ? 0 : size_t(c)], out);
    }
  }
  ctx.setOutput(0, int8Tensor(out, x.sizes(), y));
  return Status::success();
}

Status inferDequantizeLinear(InferContext& ctx) {
  FB_TRY(checkOperand(ctx, 0, "x",
                      [](DType d) { return isInt8(d) || d == DType::I32; }, "i8, u8 or i32"));
  FB_TRY(checkScaleOperand(ctx, 1, "x_scale"));
  FB_TRY(checkZeroPointOf(ctx, 2, 0, "x_zero_point"));
  FB_TRY(checkQuantAxis(ctx, 1));
  ctx.setOutputType(0, TensorType(ctx.inputType(1).dtype, ctx.inputType(0).dims));
  return Status::success();
}

Status evalDequantizeLinear(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<double> scale = scalesOf(ctx, 1);
  std::vector<int32_t> zp = zeroPointsOf(ctx, 2);
  if (zp.size() != scale.size() && zp.size() != 1)
    return ctx.error("zero point and scale have different sizes");
  FB_ASSIGN_OR_RETURN(ParamIndex idx, quantAxisIndex(ctx, scale.size()));
  std::vector<int32_t> xv = toInt32Vector(x);
  std::vector<float> y(xv.size());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = idx(i);
    int64_t diff = int64_t(xv[size_t(i)]) - zp[zp.size() == 1 ? 0 : size_t(c)];
    y[size_t(i)] = float(double(diff) * scale[size_t(c)]);
  }
  ctx.setOutput(0, fromFloatVector(ctx.outputType(0).dtype, x.sizes(), y));
  return Status::success();
}

OpCost costQuantize(const CostContext& ctx) { return {2 * ctx.outputElements(0), 0}; }

// ---------------------------------------------------------------------------------------------
// Integer convolution and matmul. Both subtract zero points into int32 and accumulate in int32.

/// `t` as int32 minus its zero points; zero points are per tensor or indexed by `idx`.
std::vector<int32_t> shifted(const Tensor& t, const std::vector<int32_t>& zp, ParamIndex idx) {
  std::vector<int32_t> v = toInt32Vector(t);
  if (zp.size() == 1) {
    for (int32_t& x : v)
      x -= zp[0];
  } else {
    for (size_t i = 0; i < v.size(); ++i)
      v[i] -= zp[size_t(idx(int64_t(i)))];
  }
  return v;
}

/// Shape inference shared by QLinearConv (x=0, w=3) and ConvInteger (x=0, w=1).
Status inferIntegerConv(InferContext& ctx, size_t wIdx, DType out) {
  FB_TRY(checkInt8Operand(ctx, 0, "x"));
  FB_TRY(checkInt8Operand(ctx, wIdx, "w"));
  auto dims = convOutputDims(ctx.attrs(), ctx.inputType(0), ctx.inputType(wIdx));
  if (!dims.ok())
    return dims.error().withContext(ctx.node().describe());
  ctx.setOutputType(0, TensorType(out, *dims));
  return Status::success();
}

/// Runs an integer conv of x (minus xZp) with w (minus per-tensor or per-output-channel wZp).
Expected<std::vector<int32_t>> integerConv(const EvalContext& ctx, const Tensor& x,
                                           const Tensor& w, const std::vector<int32_t>& xZp,
                                           const std::vector<int32_t>& wZp,
                                           std::vector<int64_t>& ySizes, ConvProblem& p) {
  FB_ASSIGN_OR_RETURN(int64_t group, ctx.attrs().getInt("group", 1));
  if (x.rank() < 3 || w.rank() != x.rank() || group < 1 ||
      x.sizes()[1] != w.sizes()[1] * group || w.sizes()[0] % group != 0)
    return ctx.error("x ", x.type().str(), " and w ", w.type().str(),
                     " do not fit together with group ", group);
  if (xZp.size() != 1)
    return ctx.error("x's zero point must be a scalar");
  std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  auto geom = readWindowGeometry(ctx.attrs(), WindowKind::Conv, x.rank() - 2, dimsOf(kernel));
  if (!geom.ok())
    return geom.error().withContext(ctx.node().describe());
  std::vector<int64_t> inSp(x.sizes().begin() + 2, x.sizes().end());
  auto outSp = windowOutputSizes(*geom, inSp);
  if (!outSp.ok())
    return outSp.error().withContext(ctx.node().describe());
  ySizes = {x.sizes()[0], w.sizes()[0]};
  ySizes.insert(ySizes.end(), outSp->begin(), outSp->end());
  p = makeConvProblem(*geom, x.sizes(), ySizes, group);
  auto wIdx = paramIndex(wZp.size(), w.sizes(), 0, "w's zero point");
  if (!wIdx.ok())
    return wIdx.error().withContext(ctx.node().describe());
  // Padding reads as 0 after the shift, i.e. as the zero point before it.
  std::vector<int32_t> xs = shifted(x, xZp, {}), ws = shifted(w, wZp, *wIdx);
  std::vector<int32_t> y(size_t(p.batch * p.outChannels * p.outSpatial()));
  convForward<int32_t>(p, xs.data(), ws.data(), y.data());
  return y;
}

Status inferConvInteger(InferContext& ctx) {
  FB_TRY(checkZeroPointOf(ctx, 2, 0, "x_zero_point"));
  FB_TRY(checkZeroPointOf(ctx, 3, 1, "w_zero_point"));
  return inferIntegerConv(ctx, 1, DType::I32);
}

Status evalConvInteger(EvalContext& ctx) {
  std::vector<int64_t> ySizes;
  ConvProblem p;
  FB_ASSIGN_OR_RETURN(std::vector<int32_t> y,
                      integerConv(ctx, ctx.input(0), ctx.input(1), zeroPointsOf(ctx, 2),
                                  zeroPointsOf(ctx, 3), ySizes, p));
  ctx.setOutput(0, Tensor::fromVector<int32_t>(ySizes, y));
  return Status::success();
}

Status inferQLinearConv(InferContext& ctx) {
  FB_TRY(checkScaleOperand(ctx, 1, "x_scale"));
  FB_TRY(checkZeroPointOf(ctx, 2, 0, "x_zero_point"));
  FB_TRY(checkScaleOperand(ctx, 4, "w_scale"));
  FB_TRY(checkZeroPointOf(ctx, 5, 3, "w_zero_point"));
  FB_TRY(checkScaleOperand(ctx, 6, "y_scale"));
  FB_TRY(checkInt8Operand(ctx, 7, "y_zero_point"));
  if (ctx.hasInput(8) && ctx.inputType(8).dtype != DType::I32)
    return ctx.error("bias B is ", ctx.inputType(8).str(), "; expected i32");
  return inferIntegerConv(ctx, 3, ctx.inputType(7).dtype);
}

Status evalQLinearConv(EvalContext& ctx) {
  std::vector<int64_t> ySizes;
  ConvProblem p;
  FB_ASSIGN_OR_RETURN(std::vector<int32_t> acc,
                      integerConv(ctx, ctx.input(0), ctx.input(3), zeroPointsOf(ctx, 2),
                                  zeroPointsOf(ctx, 5), ySizes, p));
  std::vector<double> xScale = scalesOf(ctx, 1), wScale = scalesOf(ctx, 4),
                      yScale = scalesOf(ctx, 6);
  std::vector<int32_t> yZp = zeroPointsOf(ctx, 7);
  if (xScale.size() != 1 || yScale.size() != 1 || yZp.size() != 1)
    return ctx.error("x and y must be quantized per tensor");
  if (wScale.size() != 1 && int64_t(wScale.size()) != p.outChannels)
    return ctx.error("w_scale has ", wScale.size(), " entries; expected 1 or ", p.outChannels);
  std::vector<int32_t> bias;
  if (ctx.hasInput(8)) {
    bias = toInt32Vector(ctx.input(8));
    if (int64_t(bias.size()) != p.outChannels)
      return ctx.error("bias B has ", bias.size(), " entries; expected ", p.outChannels);
  }
  DType out = ctx.outputType(0).dtype;
  const int64_t sp = p.outSpatial();
  std::vector<int32_t> y(acc.size());
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t m = 0; m < p.outChannels; ++m) {
      const double mult = xScale[0] * wScale[wScale.size() == 1 ? 0 : size_t(m)] / yScale[0];
      const int32_t b = bias.empty() ? 0 : bias[size_t(m)];
      const size_t base = size_t((n * p.outChannels + m) * sp);
      for (int64_t i = 0; i < sp; ++i)
        y[base + size_t(i)] = saturateRound(double(acc[base + size_t(i)] + b) * mult, yZp[0], out);
    }
  ctx.setOutput(0, int8Tensor(out, ySizes, y));
  return Status::success();
}

OpCost costIntegerConv(const CostContext& ctx) {
  size_t wIdx = ctx.node().op() == OpKind::QLinearConv ? 3 : 1;
  const TensorType& w = ctx.inputType(wIdx);
  double k = 1;
  for (size_t i = 1; i < w.rank(); ++i)
    k *= w.dims[i].isStatic() ? double(w.dims[i].size()) : 1.0;
  return {2 * ctx.outputElements(0) * k, 0};
}

/// Runs integer matmul of a (minus a per-tensor or per-row zero point) with b (minus a
/// per-tensor or per-column zero point); returns int32 accumulators.
Expected<std::vector<int32_t>> integerMatMul(const EvalContext& ctx, const Tensor& a,
                                             const Tensor& b, const std::vector<int32_t>& aZp,
                                             const std::vector<int32_t>& bZp,
                                             std::vector<int64_t>& ySizes) {
  auto sizes = matmulOutputSizes(a.sizes(), b.sizes());
  if (!sizes.ok())
    return sizes.error().withContext(ctx.node().describe());
  ySizes = *sizes;
  // Per-row zero points of A follow its second-to-last axis, per-column ones of B its last.
  auto aIdx = paramIndex(aZp.size(), a.sizes(), int64_t(a.rank()) - 2, "A's zero point");
  auto bIdx = paramIndex(bZp.size(), b.sizes(), int64_t(b.rank()) - 1, "B's zero point");
  if (!aIdx.ok())
    return aIdx.error().withContext(ctx.node().describe());
  if (!bIdx.ok())
    return bIdx.error().withContext(ctx.node().describe());
  std::vector<int32_t> as = shifted(a, aZp, *aIdx), bs = shifted(b, bZp, *bIdx);
  int64_t n = 1;
  for (int64_t s : ySizes)
    n *= s;
  std::vector<int32_t> y(static_cast<size_t>(n));
  batchedMatMul<int32_t>(a.sizes(), as.data(), b.sizes(), bs.data(), y.data());
  return y;
}

Status inferIntegerMatMul(InferContext& ctx, size_t bIdx, DType out) {
  FB_TRY(checkInt8Operand(ctx, 0, "a"));
  FB_TRY(checkInt8Operand(ctx, bIdx, "b"));
  auto dims = matmulOutputDims(ctx.inputType(0), ctx.inputType(bIdx));
  if (!dims.ok())
    return dims.error().withContext(ctx.node().describe());
  ctx.setOutputType(0, TensorType(out, *dims));
  return Status::success();
}

Status inferMatMulInteger(InferContext& ctx) {
  FB_TRY(checkZeroPointOf(ctx, 2, 0, "a_zero_point"));
  FB_TRY(checkZeroPointOf(ctx, 3, 1, "b_zero_point"));
  return inferIntegerMatMul(ctx, 1, DType::I32);
}

Status evalMatMulInteger(EvalContext& ctx) {
  std::vector<int64_t> ySizes;
  FB_ASSIGN_OR_RETURN(std::vector<int32_t> y,
                      integerMatMul(ctx, ctx.input(0), ctx.input(1), zeroPointsOf(ctx, 2),
                                    zeroPointsOf(ctx, 3), ySizes));
  ctx.setOutput(0, Tensor::fromVector<int32_t>(ySizes, y));
  return Status::success();
}

Status inferQLinearMatMul(InferContext& ctx) {
  FB_TRY(checkScaleOperand(ctx, 1, "a_scale"));
  FB_TRY(checkZeroPointOf(ctx, 2, 0, "a_zero_point"));
  FB_TRY(checkScaleOperand(ctx, 4, "b_scale"));
  FB_TRY(checkZeroPointOf(ctx, 5, 3, "b_zero_point"));
  FB_TRY(checkScaleOperand(ctx, 6, "y_scale"));
  FB_TRY(checkInt8Operand(ctx, 7, "y_zero_point"));
  return inferIntegerMatMul(ctx, 3, ctx.inputType(7).dtype);
}

Status evalQLinearMatMul(EvalContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  std::vector<int64_t> ySizes;
  FB_ASSIGN_OR_RETURN(std::vector<int32_t> acc,
                      integerMatMul(ctx, a, b, zeroPointsOf(ctx, 2), zeroPointsOf(ctx, 5),
                                    ySizes));
  std::vector<double> aScale = scalesOf(ctx, 1), bScale = scalesOf(ctx, 4),
                      yScale = scalesOf(ctx, 6);
  std::vector<int32_t> yZp = zeroPointsOf(ctx, 7);
  if (yScale.size() != 1 || yZp.size() != 1)
    return ctx.error("y must be quantized per tensor");
  // Rows and columns of the output, for per-row A and per-column B scales.
  const int64_t rows = a.rank() > 1 ? a.sizes()[a.rank() - 2] : 1;
  const int64_t cols = b.rank() > 1 ? b.sizes().back() : 1;
  if ((aScale.size() != 1 && int64_t(aScale.size()) != rows) ||
      (bScale.size() != 1 && int64_t(bScale.size()) != cols))
    return ctx.error("a_scale must have 1 or ", rows, " entries and b_scale 1 or ", cols);
  DType out = ctx.outputType(0).dtype;
  std::vector<int32_t> y(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t col = int64_t(i) % cols, row = (int64_t(i) / cols) % rows;
    const double mult = aScale[aScale.size() == 1 ? 0 : size_t(row)] *
                        bScale[bScale.size() == 1 ? 0 : size_t(col)] / yScale[0];
    y[i] = saturateRound(double(acc[i]) * mult, yZp[0], out);
  }
  ctx.setOutput(0, int8Tensor(out, ySizes, y));
  return Status::success();
}

OpCost costIntegerMatMul(const CostContext& ctx) {
  const TensorType& a = ctx.inputType(0);
  double k = a.rank() && a.dims.back().isStatic() ? double(a.dims.back().size()) : 1.0;
  return {2 * ctx.outputElements(0) * k, 0};
}

} // namespace

void registerQuantizedOps(OpRegistry& r) {
  r.set(OpKind::QuantizeLinear, inferQuantizeLinear, evalQuantizeLinear, costQuantize);
  r.set(OpKind::DequantizeLinear, inferDequantizeLinear, evalDequantizeLinear, costQuantize);
  r.set(OpKind::QLinearConv, inferQLinearConv, evalQLinearConv, costIntegerConv);
  r.set(OpKind::ConvInteger, inferConvInteger, evalConvInteger, costIntegerConv);
  r.set(OpKind::QLinearMatMul, inferQLinearMatMul, evalQLinearMatMul, costIntegerMatMul);
  r.set(OpKind::MatMulInteger, inferMatMulInteger, evalMatMulInteger, costIntegerMatMul);
}

} // namespace fb
