// Lowering of the elementwise math ops (trigonometric and hyperbolic functions, Sign, Round,
// IsNaN/IsInf, the ELU family and other activations, Shrink) and of the broadcasting Mod,
// LessOrEqual, GreaterOrEqual, Xor and BitShift to inline expressions. Each computes what its
// interpreter kernel (core/ops/Elementwise.cpp, core/ops/Binary.cpp) computes, in the same order.
#include "codegen/loops/LowerContext.h"

#include <cmath>
#include <limits>
#include <optional>

namespace fb::cg::lower {

namespace {

/// An element function: the expression of one output element given the input element's.
using ElementFn = std::function<ExprPtr(ExprPtr)>;

/// The loop-IR function of a trigonometric or hyperbolic op, or none.
std::optional<UnaryOp> trigFunction(OpKind op) {
  switch (op) {
  case OpKind::Sin: return UnaryOp::Sin;
  case OpKind::Cos: return UnaryOp::Cos;
  case OpKind::Tan: return UnaryOp::Tan;
  case OpKind::Asin: return UnaryOp::Asin;
  case OpKind::Acos: return UnaryOp::Acos;
  case OpKind::Atan: return UnaryOp::Atan;
  case OpKind::Sinh: return UnaryOp::Sinh;
  case OpKind::Cosh: return UnaryOp::Cosh;
  case OpKind::Asinh: return UnaryOp::Asinh;
  case OpKind::Acosh: return UnaryOp::Acosh;
  case OpKind::Atanh: return UnaryOp::Atanh;
  default: return std::nullopt;
  }
}

/// max(x, 0) + log1p(exp(-|x|)): softplus without overflow, as the interpreter computes it.
ExprPtr softplus(const ExprPtr& x) {
  ExprPtr e = unary(UnaryOp::Exp, unary(UnaryOp::Neg, unary(UnaryOp::Abs, x)));
  return add(max(x, fimm(DType::F32, 0)), unary(UnaryOp::Log1p, e));
}

/// The element function of a float activation with its attributes read.
Expected<ElementFn> activation(const Node& n) {
  auto c = [](double v) { return fimm(DType::F32, v); };
  switch (n.op()) {
  case OpKind::Elu: {
    FB_ASSIGN_OR_RETURN(float alpha, n.attrs().getFloat("alpha", 1.0f));
    return ElementFn([=](ExprPtr x) {
      ExprPtr neg = mul(c(alpha), sub(unary(UnaryOp::Exp, x), c(1)));
      return select(binary(BinaryOp::Lt, x, c(0)), neg, x);
    });
  }
  case OpKind::Selu: {
    FB_ASSIGN_OR_RETURN(float alpha, n.attrs().getFloat("alpha", 1.67326319217681884765625f));
    FB_ASSIGN_OR_RETURN(float gamma, n.attrs().getFloat("gamma", 1.05070102214813232421875f));
    return ElementFn([=](ExprPtr x) {
      ExprPtr neg = mul(c(gamma), sub(mul(c(alpha), unary(UnaryOp::Exp, x)), c(alpha)));
      return select(binary(BinaryOp::Le, x, c(0)), neg, mul(c(gamma), x));
    });
  }
  case OpKind::Celu: {
    FB_ASSIGN_OR_RETURN(float alpha, n.attrs().getFloat("alpha", 1.0f));
    if (alpha == 0.0f)
      return makeError(n.describe(), ": attribute 'alpha' must not be 0 (Celu divides by it)");
    return ElementFn([=](ExprPtr x) {
      ExprPtr e = mul(c(alpha), sub(unary(UnaryOp::Exp, div(x, c(alpha))), c(1)));
      return add(max(c(0), x), min(c(0), e));
    });
  }
  case OpKind::Softplus: return ElementFn([](ExprPtr x) { return softplus(x); });
  case OpKind::Softsign:
    return ElementFn([=](ExprPtr x) { return div(x, add(c(1), unary(UnaryOp::Abs, x))); });
  case OpKind::Mish:
    return ElementFn([](ExprPtr x) { return mul(x, unary(UnaryOp::Tanh, softplus(x))); });
  case OpKind::ThresholdedRelu: {
    FB_ASSIGN_OR_RETURN(float alpha, n.attrs().getFloat("alpha", 1.0f));
    return ElementFn(
        [=](ExprPtr x) { return select(binary(BinaryOp::Gt, x, c(alpha)), x, c(0)); });
  }
  case OpKind::IsNaN: return ElementFn([](ExprPtr x) { return binary(BinaryOp::Ne, x, x); });
  case OpKind::IsInf: {
    FB_ASSIGN_OR_RETURN(int64_t neg, n.attrs().getInt("detect_negative", 1));
    FB_ASSIGN_OR_RETURN(int64_t pos, n.attrs().getInt("detect_positive", 1));
    const double inf = std::numeric_limits<double>::infinity();
    return ElementFn([=](ExprPtr x) {
      if (neg && pos)
        return binary(BinaryOp::Eq, unary(UnaryOp::Abs, x), c(inf));
      if (neg || pos)
        return binary(BinaryOp::Eq, x, c(pos ? inf : -inf));
      return boolImm(false);
    });
  }
  default: break;
  }
  if (std::optional<UnaryOp> f = trigFunction(n.op()))
    return ElementFn([f = *f](ExprPtr x) { return unary(f, x); });
  assert(false && "activation: not a float activation");
  return makeError(n.describe(), ": not a float activation");
}

/// x mod y on values of dtype d (see `modulo` in core/ops/Binary.cpp): C's remainder, moved to
/// the sign of the divisor for fmod=0 on signed integers. The emitter makes x % 0 equal 0.
ExprPtr modulo(const ExprPtr& x, const ExprPtr& y, DType d, bool fmod) {
  ExprPtr r = binary(BinaryOp::Mod, x, y);
  if (fmod || isFloat(d) || d == DType::U8)
    return r;
  ExprPtr zero = fimm(d, 0);
  ExprPtr signsDiffer =
      binary(BinaryOp::Ne, binary(BinaryOp::Lt, r, zero), binary(BinaryOp::Lt, y, zero));
  return select(binary(BinaryOp::And, binary(BinaryOp::Ne, r, zero), signsDiffer), add(r, y), r);
}

/// Defines the output of a broadcasting binary op as f(a[idx], b[idx]).
void defineBinary(KernelBuilder& b, const Node& n,
                  std::function<ExprPtr(ExprPtr, ExprPtr)> f) {
  const Value* x = n.input(0);
  const Value* y = n.input(1);
  const std::vector<int64_t> outSizes = KernelBuilder::sizesOf(n.output(0));
  b.define(n.output(0), [&b, x, y, outSizes, f](const Indices& idx) {
    return f(readBroadcast(b, x, idx, outSizes), readBroadcast(b, y, idx, outSizes));
  });
}

/// BitShift on u8 through an i64 table of powers of two indexed by min(y, 8): x * 2^y truncated
/// to u8 and x / 2^y, where a shift by 8 or more gives 0 both ways (x * 256 truncates to 0 and
/// x / 256 is 0 for every u8 x).
Status defineBitShift(KernelBuilder& b, const Node& n) {
  FB_ASSIGN_OR_RETURN(std::string dir, n.attrs().getString("direction", ""));
  if (dir != "LEFT" && dir != "RIGHT")
    return makeError(n.describe(), ": attribute 'direction' must be LEFT or RIGHT");
  const DType d = n.output(0)->type().dtype;
  if (d != DType::U8)
    return makeUnsupported(n.describe(), ": BitShift of ", dtypeName(d));
  std::vector<int64_t> pow2;
  for (int s = 0; s <= 8; ++s)
    pow2.push_back(int64_t(1) << s);
  BufferPtr table = b.constantBuffer("shift_pow2", Tensor::fromVector<int64_t>({9}, pow2));
  const bool left = dir == "LEFT";
  defineBinary(b, n, [table, left, d](ExprPtr x, ExprPtr y) {
    ExprPtr p = load(table, {min(cast(Type::i64(), y), intImm(8))});
    ExprPtr x64 = cast(Type::i64(), x);
    return cast(Type{d, 1}, left ? mul(x64, p) : div(x64, p));
  });
  return Status::success();
}

} // namespace

bool isElementwiseMathOp(OpKind op) {
  switch (op) {
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Tan:
  case OpKind::Asin:
  case OpKind::Acos:
  case OpKind::Atan:
  case OpKind::Sinh:
  case OpKind::Cosh:
  case OpKind::Asinh:
  case OpKind::Acosh:
  case OpKind::Atanh:
  case OpKind::Sign:
  case OpKind::Round:
  case OpKind::IsNaN:
  case OpKind::IsInf:
  case OpKind::Elu:
  case OpKind::Selu:
  case OpKind::Celu:
  case OpKind::Softplus:
  case OpKind::Softsign:
  case OpKind::Mish:
  case OpKind::ThresholdedRelu:
  case OpKind::LessOrEqual:
  case OpKind::GreaterOrEqual:
  case OpKind::Xor:
  case OpKind::Mod:
  case OpKind::BitShift:
  case OpKind::Shrink:
    return true;
  default: return false;
  }
}

Status defineElementwiseMath(KernelBuilder& b, const Node& n) {
  assert(isElementwiseMathOp(n.op()) && "defineElementwiseMath: not an elementwise math op");
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const DType d = x->type().dtype;
  auto unaryFn = [&](ElementFn f) {
    b.define(out, [&b, x, f](const Indices& idx) { return f(b.read(x, idx)); });
  };
  switch (n.op()) {
  case OpKind::Sign:
    unaryFn([d](ExprPtr v) {
      // Zero and NaN stay themselves, as in the interpreter.
      return select(binary(BinaryOp::Gt, v, fimm(d, 0)), fimm(d, 1),
                    select(binary(BinaryOp::Lt, v, fimm(d, 0)), fimm(d, -1), v));
    });
    return Status::success();
  case OpKind::Round:
    if (d != DType::F32)
      return makeUnsupported(n.describe(), ": Round of ", dtypeName(d));
    unaryFn([](ExprPtr v) { return unary(UnaryOp::Round, v); });
    return Status::success();
  case OpKind::LessOrEqual:
    defineBinary(b, n, [](ExprPtr p, ExprPtr q) { return binary(BinaryOp::Le, p, q); });
    return Status::success();
  case OpKind::GreaterOrEqual:
    defineBinary(b, n, [](ExprPtr p, ExprPtr q) { return binary(BinaryOp::Ge, p, q); });
    return Status::success();
  case OpKind::Xor:
    defineBinary(b, n, [](ExprPtr p, ExprPtr q) { return binary(BinaryOp::Ne, p, q); });
    return Status::success();
  case OpKind::Mod: {
    FB_ASSIGN_OR_RETURN(int64_t fmod, n.attrs().getInt("fmod", 0));
    if (isFloat(d) && !fmod)
      return makeError(n.describe(), ": fmod=0 is defined for integer inputs only");
    defineBinary(b, n, [d, fmod](ExprPtr p, ExprPtr q) { return modulo(p, q, d, fmod != 0); });
    return Status::success();
  }
  case OpKind::BitShift: return defineBitShift(b, n);
  case OpKind::Shrink: {
    // x < -lambd ? x + bias : x > lambd ? x - bias : 0, compared in f32 like the interpreter's
    // f32 attributes (integer inputs: the ONNX schema allows them, the CPU backend takes f32).
    if (d != DType::F32)
      return makeUnsupported(n.describe(), ": Shrink of ", dtypeName(d));
    FB_ASSIGN_OR_RETURN(float lambd, n.attrs().getFloat("lambd", 0.5f));
    FB_ASSIGN_OR_RETURN(float bias, n.attrs().getFloat("bias", 0.0f));
    unaryFn([lambd, bias](ExprPtr v) {
      return select(
          binary(BinaryOp::Lt, v, floatImm(-lambd)), add(v, floatImm(bias)),
          select(binary(BinaryOp::Gt, v, floatImm(lambd)), sub(v, floatImm(bias)), floatImm(0)));
    });
    return Status::success();
  }
  default: break;
  }
  // The float activations and functions: f32 only (the libm calls and the fast exp are f32).
  if (d != DType::F32)
    return makeUnsupported(n.describe(), ": ", opName(n.op()), " of ", dtypeName(d));
  FB_ASSIGN_OR_RETURN(auto f, activation(n));
  unaryFn(std::move(f));
  return Status::success();
}

} // namespace fb::cg::lower
