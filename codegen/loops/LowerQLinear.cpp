// Int8 specs of QLinearConv and QLinearMatMul: what the int8 generator compiles, or the reason
// a node keeps the interpreted kernel (its operands or quantization layout do not fit).
#include "codegen/loops/LowerContext.h"
#include "core/ops/ConvGeometry.h"

namespace fb::cg::lower {

namespace {

/// The constant tensor of optional operand i, null when absent; `ok` turns false when the
/// operand is present but computed at run time.
const Tensor* constantOperand(const Node& n, size_t i, bool& ok) {
  const Value* v = i < n.numInputs() ? n.input(i) : nullptr;
  if (!v)
    return nullptr;
  if (!v->isConstant()) {
    ok = false;
    return nullptr;
  }
  return &v->constantData();
}

/// The values of a constant scale (widened to double as the interpreter does), {1} when absent.
std::vector<double> scaleValues(const Tensor* t) {
  if (!t)
    return {1.0};
  std::vector<double> v(size_t(t->numElements()));
  for (int64_t i = 0; i < t->numElements(); ++i)
    v[size_t(i)] = t->getAsDouble(i);
  return v;
}

/// The values of a constant zero point, {0} when absent.
std::vector<int32_t> zeroPointValues(const Tensor* t) {
  if (!t)
    return {0};
  std::vector<int32_t> v(size_t(t->numElements()));
  for (int64_t i = 0; i < t->numElements(); ++i)
    v[size_t(i)] = int32_t(t->getAsDouble(i));
  return v;
}

bool isInt8Type(DType d) {
  return d == DType::U8 || d == DType::I8;
}

/// Index of the kernel argument of output 0 in the interpreted-kernel argument order (present
/// operands, then results).
int outputArgIndex(const Node& n) {
  int present = 0;
  for (const Value* in : n.inputs())
    present += in ? 1 : 0;
  return present;
}

} // namespace

std::optional<Int8GemmSpec> int8SpecFor(const Node& n, std::string& why) {
  const OpKind op = n.op();
  const bool isConv = op == OpKind::QLinearConv || op == OpKind::ConvInteger;
  // ConvInteger / MatMulInteger: (x, w, x_zero_point, w_zero_point), int32 out, no scales.
  const bool integerOut = op == OpKind::ConvInteger || op == OpKind::MatMulInteger;
  assert((isConv || op == OpKind::QLinearMatMul || op == OpKind::MatMulInteger) &&
         "int8SpecFor takes a QLinear or integer conv/matmul");
  const size_t wIdx = integerOut ? 1 : 3;
  const Value* x = n.input(0);
  const Value* w = n.numInputs() > wIdx ? n.input(wIdx) : nullptr;
  const Value* y = n.output(0);
  if (!x || !w || !x->type().isStatic() || !y->type().isStatic()) {
    why = "operands with run-time sizes";
    return std::nullopt;
  }
  if (!w->isConstant()) {
    why = "the weights are computed at run time (the generator packs them once, at compile time)";
    return std::nullopt;
  }
  bool constant = true;
  const Tensor* xScaleT = integerOut ? nullptr : constantOperand(n, 1, constant);
  const Tensor* xZpT = constantOperand(n, 2, constant);
  const Tensor* wScaleT = integerOut ? nullptr : constantOperand(n, 4, constant);
  const Tensor* wZpT = constantOperand(n, integerOut ? 3 : 5, constant);
  const Tensor* yScaleT = integerOut ? nullptr : constantOperand(n, 6, constant);
  const Tensor* yZpT = integerOut ? nullptr : constantOperand(n, 7, constant);
  const Tensor* biasT = isConv && !integerOut ? constantOperand(n, 8, constant) : nullptr;
  if (!constant) {
    why = "a scale, zero point or bias is computed at run time";
    return std::nullopt;
  }
  const Tensor& wt = w->constantData();
  const DType xType = x->type().dtype, outType = y->type().dtype;
  if (!isInt8Type(xType) || !isInt8Type(wt.dtype()) ||
      !(integerOut ? outType == DType::I32 : isInt8Type(outType)) ||
      (biasT && biasT->dtype() != DType::I32)) {
    why = "operand types other than u8/i8 (and an i32 bias)";
    return std::nullopt;
  }
  std::vector<double> xScale = scaleValues(xScaleT), wScale = scaleValues(wScaleT),
                      yScale = scaleValues(yScaleT);
  std::vector<int32_t> xZp = zeroPointValues(xZpT), wZp = zeroPointValues(wZpT),
                       yZp = zeroPointValues(yZpT);
  if (xScale.size() != 1 || xZp.size() != 1 || yScale.size() != 1 || yZp.size() != 1) {
    // Per-row activation scales or zero points would need a per-row correction of the
    // column sums; no exporter writes them for these ops.
    why = "the activation or the output is not quantized per tensor";
    return std::nullopt;
  }
  Int8GemmSpec s;
  s.actArg = 0;
  s.outArg = outputArgIndex(n);
  s.actType = xType;
  s.outType = outType;
  s.actZeroPoint = xZp[0];
  s.outZeroPoint = yZp[0];
  s.weights = wt;
  std::vector<int64_t> xs = x->type().staticSizes(), ys = y->type().staticSizes();
  if (isConv) {
    auto group = n.attrs().getInt("group", 1);
    const std::vector<int64_t>& ws = wt.sizes();
    if (xs.size() != 4 || ws.size() != 4 || ys.size() != 4 || !group.ok() || *group < 1 ||
        xs[1] != ws[1] * *group || ws[0] % *group != 0 || ys[1] != ws[0]) {
      why = "not a 2-D convolution whose weights fit its input";
      return std::nullopt;
    }
    std::optional<ConvGeometry> c = convGeometryOf(n, xs, ws, ys, *group);
    if (!c) {
      why = "its window attributes do not resolve";
      return std::nullopt;
    }
    s.conv = c;
    s.batch = xs[0];
    s.groups = *group;
    s.M = ws[0] / *group;
    s.N = ys[2] * ys[3];
    s.K = ws[1] * ws[2] * ws[3];
  } else {
    const std::vector<int64_t>& ws = wt.sizes();
    if (xs.size() < 2 || ws.size() != 2 || xs.back() != ws[0] || ys.back() != ws[1]) {
      why = "A is not a matrix (or a batch of them) times a constant [K, N] B";
      return std::nullopt;
    }
    // B is shared by every batch of A: the batches fold into the rows.
    s.M = 1;
    for (size_t d = 0; d + 1 < xs.size(); ++d)
      s.M *= xs[d];
    s.K = ws[0];
    s.N = ws[1];
  }
  const int64_t channels = s.channels();
  if ((wScale.size() != 1 && int64_t(wScale.size()) != channels) ||
      (wZp.size() != 1 && int64_t(wZp.size()) != channels) ||
      (biasT && biasT->numElements() != channels)) {
    why = "the weights' scales, zero points or the bias do not match the output channels";
    return std::nullopt;
  }
  if (s.M < 1 || s.N < 1 || s.K < 1) {
    why = "an empty product";
    return std::nullopt;
  }
  if (s.K > (int64_t(1) << 24)) {
    why = "K is too large for the packed layout";
    return std::nullopt;
  }
  s.weightZeroPoints = wZp;
  if (biasT)
    for (int64_t i = 0; i < channels; ++i)
      s.bias.push_back(int32_t(biasT->getAsDouble(i)));
  // The interpreter's multiplier, in the same order of operations.
  for (double ws : wScale)
    s.multipliers.push_back(xScale[0] * ws / yScale[0]);
  return s;
}

} // namespace fb::cg::lower
