// Broadcasting elementwise ops: arithmetic, Mod, Pow, PRelu, variadic Max/Min/Sum/Mean,
// comparisons, logic, BitShift and Where.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

namespace fb {

using namespace math;

namespace {

/// The dtypes ONNX (opset 17) allows for the inputs of each same-typed broadcasting op.
constexpr DTypeSet binaryDTypes(OpKind k) {
  switch (k) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Less:
  case OpKind::Greater:
  case OpKind::LessOrEqual:
  case OpKind::GreaterOrEqual:
  case OpKind::Mod:
    return kNumericTypes;
  case OpKind::BitShift: // unsigned integers only; u8 is Fusebox's one
    return dtypeBit(DType::U8);
  case OpKind::Sum:
  case OpKind::Mean:
    return kFloatTypes;
  case OpKind::PRelu:
    return kFloatTypes | dtypeBit(DType::I32) | dtypeBit(DType::I64);
  case OpKind::Equal:
    return kAllTypes;
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor:
    return kBoolType;
  default:
    assert(false && "not a same-typed broadcasting op");
    return 0;
  }
}

/// True for the ops whose result is bool while their operands are not.
constexpr bool isComparison(OpKind k) {
  return k == OpKind::Equal || k == OpKind::Less || k == OpKind::Greater ||
         k == OpKind::LessOrEqual || k == OpKind::GreaterOrEqual;
}

/// Output sizes of broadcasting every present input, or an error naming the node.
Expected<std::vector<int64_t>> broadcastInputs(const EvalContext& ctx) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    auto r = broadcastSizes(out, ctx.input(i).sizes());
    if (!r)
      return ctx.error(r.error().message());
    out = std::move(*r);
  }
  return out;
}

/// Runs out[i] = f(a[ia], b[ib]) over the broadcast of a and b, with flat loops when no
/// broadcasting (or only a scalar operand) is involved.
template <typename A, typename B, typename O, typename F>
void binaryKernel(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const A* pa = a.data<A>().data();
  const B* pb = b.data<B>().data();
  O* po = out.mutableData<O>().data();
  const int64_t n = out.numElements();
  const bool aFull = a.sizes() == out.sizes(), bFull = b.sizes() == out.sizes();
  if (aFull && bFull) {
    for (int64_t i = 0; i < n; ++i)
      po[i] = f(pa[i], pb[i]);
  } else if (aFull && b.numElements() == 1) {
    const B y = pb[0];
    for (int64_t i = 0; i < n; ++i)
      po[i] = f(pa[i], y);
  } else if (bFull && a.numElements() == 1) {
    const A x = pa[0];
    for (int64_t i = 0; i < n; ++i)
      po[i] = f(x, pb[i]);
  } else {
    std::array<std::vector<int64_t>, 2> strides{broadcastStrides(a.sizes(), out.sizes()),
                                                broadcastStrides(b.sizes(), out.sizes())};
    forEachBroadcastN<2>(out.sizes(), strides, [&](int64_t i, const std::array<int64_t, 2>& off) {
      po[i] = f(pa[off[0]], pb[off[1]]);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Element functions, in the compute type C (float for all float dtypes).

/// x / y in the compute type, defined for every integer input.
template <typename C> C divide(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    // Integer division truncates toward zero as in C and ONNX Runtime. Division by zero has no
    // defined result in ONNX; 0 keeps the interpreter from trapping.
    if (y == C(0))
      return C(0);
    if constexpr (std::is_signed_v<C>)
      if (y == C(-1))
        return wrapSub(C(0), x); // INT_MIN / -1 wraps instead of trapping
    return C(x / y);
  } else {
    return x / y;
  }
}

/// The element function of an arithmetic or variadic op.
template <OpKind K, typename C> C applyArith(C x, C y) {
  if constexpr (K == OpKind::Add || K == OpKind::Sum || K == OpKind::Mean) {
    return wrapAdd(x, y);
  } else if constexpr (K == OpKind::Sub) {
    return wrapSub(x, y);
  } else if constexpr (K == OpKind::Mul) {
    return wrapMul(x, y);
  } else if constexpr (K == OpKind::Div) {
    return divide(x, y);
  } else if constexpr (K == OpKind::Max || K == OpKind::Min) {
    // NaN propagates, as np.maximum / np.minimum do.
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x))
        return x;
      if (std::isnan(y))
        return y;
    }
    if constexpr (K == OpKind::Max)
      return x < y ? y : x;
    else
      return y < x ? y : x;
  } else if constexpr (K == OpKind::PRelu) {
    return x < C(0) ? wrapMul(x, y) : x;
  } else {
    static_assert(K == OpKind::Add, "applyArith: not an arithmetic op");
  }
}

/// x mod y. With `fmod` the remainder has the sign of the dividend (C's fmod and %); without it,
/// the sign of the divisor (Python's %, np.mod), which ONNX defines for integers only. Modulo by
/// zero has no defined result in ONNX; 0 keeps the interpreter from trapping, as `divide` does,
/// and the CPU backend computes the same.
template <typename C> C modulo(C x, C y, bool fmod) {
  if constexpr (std::is_integral_v<C>) {
    if (y == C(0))
      return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (y == C(-1))
        return C(0); // INT_MIN % -1 traps in C; the remainder is 0 either way
      C r = C(x % y);
      if (!fmod && r != C(0) && (r < C(0)) != (y < C(0)))
        r = C(r + y); // |r| < |y| and the signs differ: no overflow
      return r;
    } else {
      (void)fmod;
      return C(x % y);
    }
  } else {
    (void)fmod; // float inputs require fmod=1 (checked by inference)
    return std::fmod(x, y);
  }
}

/// x shifted by y bits (left or right) on the unsigned type C; by the width or more gives 0, as
/// np.left_shift / np.right_shift do.
template <typename C> C bitShift(C x, C y, bool left) {
  static_assert(std::is_unsigned_v<C>);
  if (uint64_t(y) >= sizeof(C) * 8)
    return C(0);
  return left ? C(x << y) : C(x >> y);
}

/// The element function of a comparison or logic op.
template <OpKind K, typename C> bool applyCompare(C x, C y) {
  if constexpr (K == OpKind::Equal)
    return x == y;
  else if constexpr (K == OpKind::Less)
    return x < y;
  else if constexpr (K == OpKind::Greater)
    return x > y;
  else if constexpr (K == OpKind::LessOrEqual)
    return x <= y;
  else if constexpr (K == OpKind::GreaterOrEqual)
    return x >= y;
  else if constexpr (K == OpKind::And)
    return x && y;
  else if constexpr (K == OpKind::Or)
    return x || y;
  else if constexpr (K == OpKind::Xor)
    return x != y;
  else
    static_assert(K == OpKind::Equal, "applyCompare: not a comparison");
}

// ---------------------------------------------------------------------------------------------
// Shape values: exporters compute Reshape targets with arithmetic on Shape's output.

/// One dim of an arithmetic result on shape values; unknown where it cannot be expressed.
/// `fmod` is Mod's attribute (PyTorch's exporter wraps negative axes with Mod before a Slice
/// of Shape's output).
Dim arithDim(OpKind k, const Dim& x, const Dim& y, bool fmod) {
  const bool xs = x.isStatic(), ys = y.isStatic();
  switch (k) {
  case OpKind::Mod:
    if (xs && ys)
      return Dim(modulo(x.size(), y.size(), fmod));
    return Dim::unknown();
  case OpKind::Add:
    if (xs && ys)
      return Dim(x.size() + y.size());
    if (ys && y.size() == 0)
      return x;
    if (xs && x.size() == 0)
      return y;
    return Dim::unknown();
  case OpKind::Sub:
    if (xs && ys)
      return Dim(x.size() - y.size());
    if (ys && y.size() == 0)
      return x;
    return Dim::unknown();
  case OpKind::Mul:
    return mulDims(x, y);
  case OpKind::Div:
    if (xs && ys && y.size() != 0)
      return Dim(divide(x.size(), y.size()));
    if (ys && y.size() == 1)
      return x;
    return Dim::unknown();
  default:
    assert(false && "arithDim: not an arithmetic op");
    return Dim::unknown();
  }
}

/// Sets output 0's shape value when both inputs are i64 shape values and every result dim is a
/// number or a kept symbol (N * 1 stays N).
void propagateShapeValue(InferContext& ctx, OpKind k, const TensorType& outType,
                         bool fmod = false) {
  if (outType.dtype != DType::I64 || outType.rank() > 1)
    return;
  auto a = ctx.inputShapeValue(0), b = ctx.inputShapeValue(1);
  if (!a || !b)
    return;
  if (a->size() != b->size() && a->size() != 1 && b->size() != 1)
    return;
  const size_t n = std::max(a->size(), b->size());
  std::vector<Dim> out;
  for (size_t i = 0; i < n; ++i) {
    Dim d = arithDim(k, (*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i], fmod);
    if (d.isUnknown())
      return;
    out.push_back(std::move(d));
  }
  if (outType.rank() == 1 && dimsConflict(outType.dims[0], Dim(int64_t(n))))
    return;
  ctx.setOutputShapeValue(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// Shape inference.

/// Same-typed broadcasting ops, binary or variadic: Add ... Mean, comparisons, And, Or.
template <OpKind K> Status inferSameTyped(InferContext& ctx) {
  std::vector<std::vector<Dim>> shapes;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      return ctx.error("input ", i, " is missing");
    FB_TRY(checkInputDType(ctx, i, binaryDTypes(K)));
    FB_TRY(checkSameDType(ctx, 0, i));
    shapes.push_back(ctx.inputType(i).dims);
  }
  auto dims = broadcastDimsAll(shapes);
  if (!dims)
    return ctx.error(dims.error().message());
  TensorType out(isComparison(K) ? DType::Bool : ctx.inputType(0).dtype, std::move(*dims));
  if constexpr (K == OpKind::Add || K == OpKind::Sub || K == OpKind::Mul || K == OpKind::Div)
    propagateShapeValue(ctx, K, out);
  ctx.setOutputType(0, std::move(out));
  return Status::success();
}

/// Reads Mod's `fmod` (0 or 1, default 0).
template <typename Ctx> Expected<bool> readFmod(const Ctx& ctx) {
  FB_ASSIGN_OR_RETURN(int64_t f, intAttr(ctx, "fmod", 0));
  if (f != 0 && f != 1)
    return ctx.error("attribute 'fmod' must be 0 or 1, got ", f);
  return f == 1;
}

/// Reads BitShift's required `direction`: true for "LEFT", false for "RIGHT".
template <typename Ctx> Expected<bool> readShiftLeft(const Ctx& ctx) {
  if (!ctx.attrs().has("direction"))
    return ctx.error("required attribute 'direction' is missing");
  FB_ASSIGN_OR_RETURN(std::string d, ctx.attrs().getString("direction", ""));
  if (d != "LEFT" && d != "RIGHT")
    return ctx.error("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"", d, "\"");
  return d == "LEFT";
}

/// Mod and BitShift: same-typed broadcasting with an attribute to check. Float Mod needs
/// fmod=1: ONNX defines the sign-of-the-divisor form for integers only.
template <OpKind K> Status inferWithAttr(InferContext& ctx) {
  if constexpr (K == OpKind::Mod) {
    FB_ASSIGN_OR_RETURN(bool fmod, readFmod(ctx));
    if (!fmod && isFloat(ctx.inputType(0).dtype))
      return ctx.error("fmod=0 is defined for integer inputs only; ",
                       dtypeName(ctx.inputType(0).dtype), " needs fmod=1");
    FB_TRY(inferSameTyped<K>(ctx));
    propagateShapeValue(ctx, K, ctx.outputTypes()[0], fmod);
    return Status::success();
  } else {
    FB_ASSIGN_OR_RETURN(bool left, readShiftLeft(ctx));
    (void)left;
  }
  return inferSameTyped<K>(ctx);
}

/// Base and exponent may differ in dtype; the result has the base's.
Status inferPow(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes | dtypeBit(DType::I32) | dtypeBit(DType::I64)));
  FB_TRY(checkInputDType(ctx, 1, kNumericTypes));
  auto dims = broadcastDims(ctx.inputType(0).dims, ctx.inputType(1).dims);
  if (!dims)
    return ctx.error(dims.error().message());
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, std::move(*dims)));
  return Status::success();
}

/// The output has X's type; slope must broadcast to X.
Status inferPRelu(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, binaryDTypes(OpKind::PRelu)));
  FB_TRY(checkSameDType(ctx, 0, 1));
  const TensorType& x = ctx.inputType(0);
  const TensorType& slope = ctx.inputType(1);
  // Unidirectional broadcasting: slope must broadcast to X without changing X's shape.
  bool ok = slope.rank() <= x.rank();
  for (size_t i = 0; ok && i < slope.rank(); ++i) {
    const Dim& s = slope.dims[slope.rank() - 1 - i];
    const Dim& d = x.dims[x.rank() - 1 - i];
    ok = !(s.isStatic() && s.size() != 1 && dimsConflict(s, d));
  }
  if (!ok)
    return ctx.error("slope ", slope.str(), " does not broadcast to X ", x.str());
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// Broadcasts condition, X and Y; the result has X's dtype.
Status inferWhere(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kBoolType));
  FB_TRY(checkSameDType(ctx, 1, 2));
  auto dims =
      broadcastDimsAll({ctx.inputType(0).dims, ctx.inputType(1).dims, ctx.inputType(2).dims});
  if (!dims)
    return ctx.error(dims.error().message());
  ctx.setOutputType(0, TensorType(ctx.inputType(1).dtype, std::move(*dims)));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Kernels.

/// Add, Sub, Mul, Div and PRelu (whose slope broadcasting reaches the same kernel).
template <OpKind K> Status evalArith(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> outSizes, broadcastInputs(ctx));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (K == OpKind::PRelu && outSizes != a.sizes())
    return ctx.error("slope ", b.type().str(), " does not broadcast to X ", a.type().str());
  Tensor out(a.dtype(), outSizes);
  bool supported = dispatchDType(a.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(binaryDTypes(K))) {
      using C = ComputeT<T>;
      binaryKernel<T, T, T>(a, b, out, [](T x, T y) { return T(applyArith<K, C>(C(x), C(y))); });
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(a.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Mod and BitShift: an element function chosen by an attribute at run time.
template <OpKind K> Status evalWithAttr(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> outSizes, broadcastInputs(ctx));
  bool flag = false; // fmod for Mod, left for BitShift
  if constexpr (K == OpKind::Mod) {
    FB_ASSIGN_OR_RETURN(flag, readFmod(ctx));
  } else {
    FB_ASSIGN_OR_RETURN(flag, readShiftLeft(ctx));
  }
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor out(a.dtype(), outSizes);
  bool supported = dispatchDType(a.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(binaryDTypes(K))) {
      using C = ComputeT<T>;
      binaryKernel<T, T, T>(a, b, out, [flag](T x, T y) {
        if constexpr (K == OpKind::Mod)
          return T(modulo<C>(C(x), C(y), flag));
        else
          return T(bitShift<C>(C(x), C(y), flag));
      });
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(a.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor: bool results.
template <OpKind K> Status evalCompare(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> outSizes, broadcastInputs(ctx));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor out(DType::Bool, outSizes);
  bool supported = dispatchDType(a.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(binaryDTypes(K))) {
      using C = ComputeT<T>;
      binaryKernel<T, T, bool>(a, b, out, [](T x, T y) { return applyCompare<K, C>(C(x), C(y)); });
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(a.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Max, Min, Sum, Mean over any number of inputs: accumulate each broadcast input into a buffer
/// in the compute type, so f16 and bf16 round once at the end.
template <OpKind K> Status evalVariadic(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> outSizes, broadcastInputs(ctx));
  const DType dtype = ctx.input(0).dtype();
  Tensor out(dtype, outSizes);
  bool supported = dispatchDType(dtype, [&]<typename T>() {
    if constexpr (typeInSet<T>(binaryDTypes(K))) {
      using C = ComputeT<T>;
      std::vector<C> acc(size_t(out.numElements()));
      for (size_t k = 0; k < ctx.numInputs(); ++k) {
        const Tensor& in = ctx.input(k);
        const T* p = in.data<T>().data();
        auto combine = [&](int64_t i, int64_t j) {
          acc[size_t(i)] = k == 0 ? C(p[j]) : applyArith<K, C>(acc[size_t(i)], C(p[j]));
        };
        if (in.sizes() == outSizes) {
          for (int64_t i = 0, n = out.numElements(); i < n; ++i)
            combine(i, i);
        } else {
          std::array<std::vector<int64_t>, 1> strides{broadcastStrides(in.sizes(), outSizes)};
          forEachBroadcastN<1>(
              outSizes, strides,
              [&](int64_t i, const std::array<int64_t, 1>& off) { combine(i, off[0]); });
        }
      }
      T* po = out.mutableData<T>().data();
      const C count = C(ctx.numInputs());
      for (int64_t i = 0, n = out.numElements(); i < n; ++i)
        po[i] = T(K == OpKind::Mean ? acc[size_t(i)] / count : acc[size_t(i)]);
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(dtype));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// base ** exponent in the base's dtype. Integer powers are exact (wrapping); anything involving
/// a float goes through double and converts back with Cast semantics.
template <typename T, typename E> T powElement(T base, E exponent) {
  using CT = ComputeT<T>;
  using CE = ComputeT<E>;
  if constexpr (std::is_integral_v<CT> && std::is_integral_v<CE>) {
    CT b = base;
    CE e = exponent;
    if constexpr (std::is_signed_v<CE>) {
      if (e < 0) // 1/b^|e| truncates to 0 unless |b| == 1
        return b == 1 ? CT(1) : b == -1 ? CT((e % 2) ? -1 : 1) : CT(0);
    }
    CT r = 1;
    uint64_t ue = uint64_t(e);
    while (ue) {
      if (ue & 1)
        r = wrapMul(r, b);
      b = wrapMul(b, b);
      ue >>= 1;
    }
    return r;
  } else {
    return convertElement<T, double>(std::pow(double(CT(base)), double(CE(exponent))));
  }
}

/// Dispatches over base and exponent dtypes separately.
Status evalPow(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> outSizes, broadcastInputs(ctx));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor out(a.dtype(), outSizes);
  constexpr DTypeSet kBase = kFloatTypes | dtypeBit(DType::I32) | dtypeBit(DType::I64);
  bool supported = dispatchDType(a.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(kBase)) {
      return dispatchDType(b.dtype(), [&]<typename E>() {
        if constexpr (typeInSet<E>(kNumericTypes)) {
          binaryKernel<T, E, T>(a, b, out, [](T x, E y) { return powElement<T, E>(x, y); });
          return true;
        } else {
          return false;
        }
      });
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtypes ", dtypeName(a.dtype()), " ** ", dtypeName(b.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Selects from X where the condition holds, from Y elsewhere.
Status evalWhere(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> outSizes, broadcastInputs(ctx));
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  Tensor out(x.dtype(), outSizes);
  dispatchDType(x.dtype(), [&]<typename T>() {
    const bool* pc = c.data<bool>().data();
    const T* px = x.data<T>().data();
    const T* py = y.data<T>().data();
    T* po = out.mutableData<T>().data();
    if (c.sizes() == outSizes && x.sizes() == outSizes && y.sizes() == outSizes) {
      for (int64_t i = 0, n = out.numElements(); i < n; ++i)
        po[i] = pc[i] ? px[i] : py[i];
      return;
    }
    std::array<std::vector<int64_t>, 3> strides{broadcastStrides(c.sizes(), outSizes),
                                                broadcastStrides(x.sizes(), outSizes),
                                                broadcastStrides(y.sizes(), outSizes)};
    forEachBroadcastN<3>(outSizes, strides, [&](int64_t i, const std::array<int64_t, 3>& off) {
      po[i] = pc[off[0]] ? px[off[1]] : py[off[2]];
    });
  });
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Costs: one FLOP per output element for arithmetic, comparisons, logic and selection.

/// Pow counts 4 like the transcendental unary ops (exp and log under the hood).
OpCost costPow(const CostContext& ctx) {
  return OpCost{4 * ctx.outputElements(0), 0};
}

/// Variadic ops combine n inputs with n-1 operations per output element; Mean adds a divide.
template <OpKind K> OpCost costVariadic(const CostContext& ctx) {
  double n = double(ctx.node().numInputs());
  double perElement = K == OpKind::Mean ? n : std::max(n - 1, 0.0);
  return OpCost{perElement * ctx.outputElements(0), 0};
}

} // namespace

void registerBinaryOps(OpRegistry& r) {
  r.set(OpKind::Add, inferSameTyped<OpKind::Add>, evalArith<OpKind::Add>, costPerOutputElement<1>);
  r.set(OpKind::Sub, inferSameTyped<OpKind::Sub>, evalArith<OpKind::Sub>, costPerOutputElement<1>);
  r.set(OpKind::Mul, inferSameTyped<OpKind::Mul>, evalArith<OpKind::Mul>, costPerOutputElement<1>);
  r.set(OpKind::Div, inferSameTyped<OpKind::Div>, evalArith<OpKind::Div>, costPerOutputElement<1>);
  r.set(OpKind::Pow, inferPow, evalPow, costPow);
  // PRelu: compare and multiply.
  r.set(OpKind::PRelu, inferPRelu, evalArith<OpKind::PRelu>, costPerOutputElement<2>);
  r.set(OpKind::Max, inferSameTyped<OpKind::Max>, evalVariadic<OpKind::Max>,
        costVariadic<OpKind::Max>);
  r.set(OpKind::Min, inferSameTyped<OpKind::Min>, evalVariadic<OpKind::Min>,
        costVariadic<OpKind::Min>);
  r.set(OpKind::Sum, inferSameTyped<OpKind::Sum>, evalVariadic<OpKind::Sum>,
        costVariadic<OpKind::Sum>);
  r.set(OpKind::Mean, inferSameTyped<OpKind::Mean>, evalVariadic<OpKind::Mean>,
        costVariadic<OpKind::Mean>);
  r.set(OpKind::Equal, inferSameTyped<OpKind::Equal>, evalCompare<OpKind::Equal>,
        costPerOutputElement<1>);
  r.set(OpKind::Less, inferSameTyped<OpKind::Less>, evalCompare<OpKind::Less>,
        costPerOutputElement<1>);
  r.set(OpKind::Greater, inferSameTyped<OpKind::Greater>, evalCompare<OpKind::Greater>,
        costPerOutputElement<1>);
  r.set(OpKind::And, inferSameTyped<OpKind::And>, evalCompare<OpKind::And>,
        costPerOutputElement<1>);
  r.set(OpKind::Or, inferSameTyped<OpKind::Or>, evalCompare<OpKind::Or>, costPerOutputElement<1>);
  r.set(OpKind::LessOrEqual, inferSameTyped<OpKind::LessOrEqual>,
        evalCompare<OpKind::LessOrEqual>, costPerOutputElement<1>);
  r.set(OpKind::GreaterOrEqual, inferSameTyped<OpKind::GreaterOrEqual>,
        evalCompare<OpKind::GreaterOrEqual>, costPerOutputElement<1>);
  r.set(OpKind::Xor, inferSameTyped<OpKind::Xor>, evalCompare<OpKind::Xor>,
        costPerOutputElement<1>);
  // Mod: divide, multiply-subtract and the sign fix-up; BitShift: one shift.
  r.set(OpKind::Mod, inferWithAttr<OpKind::Mod>, evalWithAttr<OpKind::Mod>,
        costPerOutputElement<3>);
  r.set(OpKind::BitShift, inferWithAttr<OpKind::BitShift>, evalWithAttr<OpKind::BitShift>,
        costPerOutputElement<1>);
  r.set(OpKind::Where, inferWhere, evalWhere, costPerOutputElement<1>);
}

} // namespace fb
