// Unary elementwise ops (Relu ... Not, trigonometric and hyperbolic functions, the ELU family
// and other activations), IsNaN/IsInf, Clip, Cast, CastLike, Shrink, Identity and inference-mode
// Dropout.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

namespace fb {

using namespace math;

namespace {

// ---------------------------------------------------------------------------------------------
// Unary ops, one template instantiated per op kind.

/// Attribute parameters of the unary ops that have any (LeakyRelu, HardSigmoid, the ELU family,
/// ThresholdedRelu). Selu's gamma is `beta`.
struct UnaryParams {
  float alpha = 0;
  float beta = 0;
};

/// Selu's default alpha and gamma (ONNX's float32 constants).
inline constexpr float kSeluAlpha = 1.67326319217681884765625f;
inline constexpr float kSeluGamma = 1.05070102214813232421875f;

/// Float types of the ops that ONNX lists for float16, float and double only (no bfloat16).
inline constexpr DTypeSet kF32F16 = dtypeBit(DType::F32) | dtypeBit(DType::F16);

/// The dtypes ONNX (opset 17) allows for each unary op, restricted to Fusebox's dtypes.
constexpr DTypeSet unaryDTypes(OpKind k) {
  switch (k) {
  case OpKind::Relu:
    return kFloatTypes | kSignedIntTypes;
  case OpKind::Neg:
    return kFloatTypes | kSignedIntTypes;
  case OpKind::Abs:
    return kNumericTypes;
  case OpKind::Erf:
    return kNumericTypes;
  case OpKind::Sign:
    return kNumericTypes;
  case OpKind::Not:
    return kBoolType;
  // Trigonometric (opset 7/9), Round (11), the ELU family (6), Softplus/Softsign (1),
  // ThresholdedRelu (10) and Mish (18) list float16, float and double only.
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
  case OpKind::Round:
  case OpKind::Elu:
  case OpKind::Selu:
  case OpKind::Softplus:
  case OpKind::Softsign:
  case OpKind::Mish:
  case OpKind::ThresholdedRelu:
    return kF32F16;
  case OpKind::Celu: // float only (opset 12)
    return dtypeBit(DType::F32);
  // HardSigmoid (opset 6) and HardSwish (opset 14) predate bf16 in ONNX's type lists.
  case OpKind::HardSigmoid:
    return dtypeBit(DType::F32) | dtypeBit(DType::F16);
  case OpKind::HardSwish:
    return dtypeBit(DType::F32) | dtypeBit(DType::F16);
  case OpKind::LeakyRelu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Reciprocal:
  case OpKind::Floor:
  case OpKind::Ceil:
    return kFloatTypes;
  default:
    assert(false && "not a unary op");
    return 0;
  }
}

/// FLOPs per element. Transcendental functions (exp, log, tanh, erf) count 4: a few multiply-adds
/// of a polynomial approximation, which is how codegen evaluates them. Comparisons, negation and
/// rounding count 1.
constexpr int unaryFlops(OpKind k) {
  switch (k) {
  case OpKind::Relu:
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Not:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::Reciprocal:
  case OpKind::Sqrt:
  case OpKind::Round:
  case OpKind::ThresholdedRelu:
    return 1;
  case OpKind::Sign:
    return 2; // two compares
  case OpKind::LeakyRelu:
    return 2; // compare, multiply
  case OpKind::HardSigmoid:
    return 3; // multiply-add, clamp
  case OpKind::HardSwish:
    return 4; // hard sigmoid, multiply
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Tanh:
  case OpKind::Erf:
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
    return 4;
  case OpKind::Softsign:
    return 3; // abs, add, divide
  case OpKind::Elu:
    return 7; // compare, exp, subtract, multiply
  case OpKind::Sigmoid:
    return 6; // exp, add, divide
  case OpKind::Selu:
    return 8; // compare, exp, multiply, subtract, multiply
  case OpKind::Celu:
    return 10; // divide, exp, subtract, multiply, min, max, add
  case OpKind::Softplus:
    return 9; // exp, add, log
  case OpKind::Mish:
    return 14; // softplus, tanh, multiply
  default:
    assert(false && "not a unary op");
    return 0;
  }
}

/// Applies the trigonometric or hyperbolic function K (float compute types only).
template <OpKind K, typename C> C applyTrig(C x) {
  if constexpr (K == OpKind::Sin)
    return std::sin(x);
  else if constexpr (K == OpKind::Cos)
    return std::cos(x);
  else if constexpr (K == OpKind::Tan)
    return std::tan(x);
  else if constexpr (K == OpKind::Asin)
    return std::asin(x);
  else if constexpr (K == OpKind::Acos)
    return std::acos(x);
  else if constexpr (K == OpKind::Atan)
    return std::atan(x);
  else if constexpr (K == OpKind::Sinh)
    return std::sinh(x);
  else if constexpr (K == OpKind::Cosh)
    return std::cosh(x);
  else if constexpr (K == OpKind::Asinh)
    return std::asinh(x);
  else if constexpr (K == OpKind::Acosh)
    return std::acosh(x);
  else if constexpr (K == OpKind::Atanh)
    return std::atanh(x);
  else
    static_assert(K == OpKind::Sin, "applyTrig: not a trigonometric op");
}

/// ln(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|). The CPU backend evaluates the same
/// form, so large inputs give x on both instead of inf.
template <typename C> C softplus(C x) {
  return std::max(x, C(0)) + std::log1p(std::exp(-std::fabs(x)));
}

/// Applies activation K (the ELU family, Softplus, Softsign, Mish, ThresholdedRelu) or, through
/// applyTrig, a trigonometric function. Float compute types only.
template <OpKind K, typename C> C applyActivation(C x, const UnaryParams& p) {
  if constexpr (K == OpKind::Elu) {
    return x < C(0) ? C(p.alpha * (std::exp(x) - C(1))) : x;
  } else if constexpr (K == OpKind::Selu) {
    return x <= C(0) ? C(p.beta * (p.alpha * std::exp(x) - p.alpha)) : C(p.beta * x);
  } else if constexpr (K == OpKind::Celu) {
    return std::max(C(0), x) + std::min(C(0), C(p.alpha * (std::exp(x / p.alpha) - C(1))));
  } else if constexpr (K == OpKind::Softplus) {
    return softplus(x);
  } else if constexpr (K == OpKind::Softsign) {
    return x / (C(1) + std::fabs(x));
  } else if constexpr (K == OpKind::Mish) {
    return x * std::tanh(softplus(x));
  } else if constexpr (K == OpKind::ThresholdedRelu) {
    return x > C(p.alpha) ? x : C(0);
  } else {
    return applyTrig<K, C>(x);
  }
}

/// Applies unary op K to one element in its compute type C (float for all float dtypes).
template <OpKind K, typename C> C applyUnary(C x, const UnaryParams& p) {
  if constexpr (K == OpKind::Relu) {
    return x < C(0) ? C(0) : x;
  } else if constexpr (K == OpKind::LeakyRelu) {
    return x < C(0) ? C(p.alpha * x) : x;
  } else if constexpr (K == OpKind::Sigmoid) {
    // Split by sign so exp never overflows.
    if (x >= 0)
      return C(1) / (C(1) + std::exp(-x));
    C e = std::exp(x);
    return e / (C(1) + e);
  } else if constexpr (K == OpKind::HardSigmoid) {
    return std::max(C(0), std::min(C(1), C(p.alpha * x + p.beta)));
  } else if constexpr (K == OpKind::HardSwish) {
    return x * std::max(C(0), std::min(C(1), C(x / C(6) + C(0.5))));
  } else if constexpr (K == OpKind::Tanh) {
    return std::tanh(x);
  } else if constexpr (K == OpKind::Erf) {
    if constexpr (std::is_integral_v<C>)
      return floatToInt<C>(std::erf(double(x)));
    else
      return std::erf(x);
  } else if constexpr (K == OpKind::Exp) {
    return std::exp(x);
  } else if constexpr (K == OpKind::Log) {
    return std::log(x);
  } else if constexpr (K == OpKind::Sqrt) {
    return std::sqrt(x);
  } else if constexpr (K == OpKind::Neg) {
    if constexpr (std::is_integral_v<C>)
      return wrapSub(C(0), x); // -INT_MIN wraps to INT_MIN, as in NumPy
    else
      return -x;
  } else if constexpr (K == OpKind::Abs) {
    if constexpr (std::is_floating_point_v<C>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < C(0) ? wrapSub(C(0), x) : x;
    else
      return x;
  } else if constexpr (K == OpKind::Reciprocal) {
    return C(1) / x;
  } else if constexpr (K == OpKind::Floor) {
    return std::floor(x);
  } else if constexpr (K == OpKind::Ceil) {
    return std::ceil(x);
  } else if constexpr (K == OpKind::Not) {
    return !x;
  } else if constexpr (K == OpKind::Sign) {
    // Zero and NaN map to themselves, as np.sign does.
    return x > C(0) ? C(1) : x < C(0) ? C(-1) : x;
  } else if constexpr (K == OpKind::Round) {
    return std::nearbyint(x); // the default rounding mode: half to even, as np.round
  } else {
    return applyActivation<K, C>(x, p);
  }
}

/// Reads the attributes of LeakyRelu, HardSigmoid, the ELU family and ThresholdedRelu with
/// their ONNX defaults.
template <typename Ctx> Expected<UnaryParams> readUnaryParams(OpKind k, const Ctx& ctx) {
  UnaryParams p;
  if (k == OpKind::LeakyRelu) {
    FB_ASSIGN_OR_RETURN(p.alpha, floatAttr(ctx, "alpha", 0.01f));
  } else if (k == OpKind::HardSigmoid) {
    FB_ASSIGN_OR_RETURN(p.alpha, floatAttr(ctx, "alpha", 0.2f));
    FB_ASSIGN_OR_RETURN(p.beta, floatAttr(ctx, "beta", 0.5f));
  } else if (k == OpKind::Elu || k == OpKind::ThresholdedRelu) {
    FB_ASSIGN_OR_RETURN(p.alpha, floatAttr(ctx, "alpha", 1.0f));
  } else if (k == OpKind::Celu) {
    FB_ASSIGN_OR_RETURN(p.alpha, floatAttr(ctx, "alpha", 1.0f));
    if (p.alpha == 0.0f)
      return ctx.error("attribute 'alpha' must not be 0 (Celu divides by it)");
  } else if (k == OpKind::Selu) {
    FB_ASSIGN_OR_RETURN(p.alpha, floatAttr(ctx, "alpha", kSeluAlpha));
    FB_ASSIGN_OR_RETURN(p.beta, floatAttr(ctx, "gamma", kSeluGamma));
  }
  return p;
}

/// Checks the dtype and keeps the input type.
template <OpKind K> Status inferUnary(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, unaryDTypes(K)));
  if (auto p = readUnaryParams(K, ctx); !p)
    return p.error();
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, ctx.inputType(0).dims));
  // Shape arithmetic (ONNX's expanded LayerNormalization computes a rank as Neg(axis)) must
  // stay visible to ConstantOfShape and Reshape.
  if constexpr (K == OpKind::Neg || K == OpKind::Abs) {
    if (ctx.inputType(0).dtype == DType::I64 && ctx.inputType(0).rank() <= 1)
      if (auto sv = ctx.inputShapeValue(0); sv && staticProduct(*sv)) {
        for (Dim& d : *sv)
          d = Dim(K == OpKind::Neg ? -d.size() : std::abs(d.size()));
        ctx.setOutputShapeValue(0, std::move(*sv));
      }
  }
  return Status::success();
}

/// Applies op K to every element, in float for the 16-bit float types.
template <OpKind K> Status evalUnary(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(UnaryParams p, readUnaryParams(K, ctx));
  Tensor y(x.dtype(), x.sizes());
  bool supported = dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(unaryDTypes(K))) {
      using C = ComputeT<T>;
      const T* in = x.data<T>().data();
      T* out = y.mutableData<T>().data();
      const int64_t n = x.numElements();
      for (int64_t i = 0; i < n; ++i)
        out[i] = T(applyUnary<K, C>(C(in[i]), p));
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(x.dtype()));
  ctx.setOutput(0, std::move(y));
  return Status::success();
}

/// Registers inference, kernel and cost of unary op K.
template <OpKind K> void registerUnary(OpRegistry& r) {
  static constexpr int kFlops = unaryFlops(K);
  r.set(K, inferUnary<K>, evalUnary<K>, costPerOutputElement<kFlops>);
}

// ---------------------------------------------------------------------------------------------
// IsNaN and IsInf: float classification with bool results.

/// Reads IsInf's detect_negative and detect_positive (both default to 1).
template <typename Ctx> Expected<std::pair<bool, bool>> readInfSigns(const Ctx& ctx) {
  FB_ASSIGN_OR_RETURN(int64_t neg, intAttr(ctx, "detect_negative", 1));
  FB_ASSIGN_OR_RETURN(int64_t pos, intAttr(ctx, "detect_positive", 1));
  return std::pair<bool, bool>{neg != 0, pos != 0};
}

/// The float dtypes IsNaN (opset 13) and IsInf (opset 10: float and double) accept.
constexpr DTypeSet classifyDTypes(OpKind k) {
  return k == OpKind::IsNaN ? kFloatTypes : dtypeBit(DType::F32);
}

/// Checks the dtype; the result is bool of the input's shape.
template <OpKind K> Status inferClassify(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, classifyDTypes(K)));
  if constexpr (K == OpKind::IsInf)
    if (auto s = readInfSigns(ctx); !s)
      return s.error();
  ctx.setOutputType(0, TensorType(DType::Bool, ctx.inputType(0).dims));
  return Status::success();
}

/// Tests every element: NaN for IsNaN; +inf / -inf, as selected, for IsInf.
template <OpKind K> Status evalClassify(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(auto signs, readInfSigns(ctx));
  const auto [detectNeg, detectPos] = signs;
  Tensor y(DType::Bool, x.sizes());
  bool* out = y.mutableData<bool>().data();
  bool supported = dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(classifyDTypes(K))) {
      const T* in = x.data<T>().data();
      for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
        const float v = float(in[i]);
        if constexpr (K == OpKind::IsNaN)
          out[i] = std::isnan(v);
        else
          out[i] = std::isinf(v) && (v > 0 ? detectPos : detectNeg);
      }
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(x.dtype()));
  ctx.setOutput(0, std::move(y));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Clip: min and max are optional scalar inputs; an absent one is no bound.

/// Checks X is numeric and the bounds are scalars of its dtype.
Status inferClip(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kNumericTypes));
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.hasInput(i))
      continue;
    FB_TRY(checkSameDType(ctx, 0, i));
    auto n = staticProduct(ctx.inputType(i).dims);
    if (n && *n != 1)
      return ctx.error("input ", i, " (", i == 1 ? "min" : "max", ") must be a scalar, got ",
                       ctx.inputType(i).str());
  }
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, ctx.inputType(0).dims));
  return Status::success();
}

/// Clamps every element; an absent bound is the dtype's full range.
Status evalClip(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  for (size_t i = 1; i < 3; ++i)
    if (ctx.hasInput(i) && ctx.input(i).numElements() != 1)
      return ctx.error("input ", i, " must be a scalar, got ", ctx.input(i).type().str());
  Tensor y(x.dtype(), x.sizes());
  return dispatchDType(x.dtype(), [&]<typename T>() -> Status {
    if constexpr (typeInSet<T>(kNumericTypes)) {
      using C = ComputeT<T>;
      // No bound is the same as the type's full range (infinities for floats).
      C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
      if constexpr (std::is_floating_point_v<C>)
        lo = -std::numeric_limits<C>::infinity(), hi = std::numeric_limits<C>::infinity();
      if (ctx.hasInput(1))
        lo = C(ctx.input(1).data<T>()[0]);
      if (ctx.hasInput(2))
        hi = C(ctx.input(2).data<T>()[0]);
      const T* in = x.data<T>().data();
      T* out = y.mutableData<T>().data();
      // min(max(x, lo), hi): when lo > hi the result is hi, as np.clip gives.
      for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
        C v = C(in[i]);
        v = v < lo ? lo : v;
        out[i] = T(v > hi ? hi : v);
      }
      ctx.setOutput(0, std::move(y));
      return Status::success();
    } else {
      return ctx.error("no kernel for dtype ", dtypeName(x.dtype()));
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Cast, Identity and Dropout: data movement that keeps or converts elements.

/// The dtype named by Cast's `to`; Unsupported for ONNX types Fusebox lacks.
Expected<DType> castTarget(const InferContext& ctx) {
  if (!ctx.attrs().has("to"))
    return ctx.error("required attribute 'to' is missing");
  FB_ASSIGN_OR_RETURN(int64_t to, intAttr(ctx, "to", 0));
  auto d = dtypeFromOnnxElemType(to);
  if (!d)
    return ctx.unsupported("cast to ONNX element type ", to,
                           " (Fusebox has f32, f16, bf16, i8, "
                           "u8, i32, i64, bool)");
  return *d;
}

/// Sets the target dtype and keeps integer shape values.
Status inferCast(InferContext& ctx) {
  FB_ASSIGN_OR_RETURN(DType to, castTarget(ctx));
  ctx.setOutputType(0, TensorType(to, ctx.inputType(0).dims));
  // Exporters cast shape values between integer types; keep them visible to Reshape and friends.
  if (isInteger(to) && isInteger(ctx.inputType(0).dtype))
    if (auto sv = ctx.inputShapeValue(0))
      ctx.setOutputShapeValue(0, *sv);
  return Status::success();
}

/// Converts every element with convertElement; a no-op cast shares storage.
Status evalCast(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType to = ctx.outputType(0).dtype;
  if (x.dtype() == to) {
    ctx.setOutput(0, x); // shares storage: no copy
    return Status::success();
  }
  Tensor y(to, x.sizes());
  dispatchDType(x.dtype(), [&]<typename S>() {
    dispatchDType(to, [&]<typename D>() {
      const S* in = x.data<S>().data();
      D* out = y.mutableData<D>().data();
      for (int64_t i = 0, n = x.numElements(); i < n; ++i)
        out[i] = convertElement<D, S>(in[i]);
    });
  });
  ctx.setOutput(0, std::move(y));
  return Status::success();
}

/// CastLike: Cast to the dtype of input 1 (whose data is ignored).
Status inferCastLike(InferContext& ctx) {
  const DType to = ctx.inputType(1).dtype;
  ctx.setOutputType(0, TensorType(to, ctx.inputType(0).dims));
  if (isInteger(to) && isInteger(ctx.inputType(0).dtype))
    if (auto sv = ctx.inputShapeValue(0))
      ctx.setOutputShapeValue(0, *sv);
  return Status::success();
}

// Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0, on any numeric type.

Status inferShrink(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kNumericTypes));
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, ctx.inputType(0).dims));
  return Status::success();
}

/// Compares and subtracts in double, then converts back (integer results wrap like NumPy).
Status evalShrink(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(float lambd, floatAttr(ctx, "lambd", 0.5f));
  FB_ASSIGN_OR_RETURN(float bias, floatAttr(ctx, "bias", 0.0f));
  Tensor y(x.dtype(), x.sizes());
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    const double v = x.getAsDouble(i);
    y.setFromDouble(i, v < -double(lambd)  ? v + double(bias)
                       : v > double(lambd) ? v - double(bias)
                                           : 0.0);
  }
  ctx.setOutput(0, std::move(y));
  return Status::success();
}

/// Keeps type and shape value.
Status inferIdentity(InferContext& ctx) {
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, ctx.inputType(0).dims));
  if (auto sv = ctx.inputShapeValue(0))
    ctx.setOutputShapeValue(0, *sv);
  return Status::success();
}

/// Forwards the input, sharing its storage.
Status evalIdentity(EvalContext& ctx) {
  ctx.setOutput(0, ctx.input(0));
  return Status::success();
}

/// Random dropping has no reference result to compare with: only inference (and ratio 0) runs.
constexpr const char* kTrainingDropout =
    "training_mode=true with a nonzero ratio (only inference-mode Dropout is implemented)";

/// Output 0 is X's type; the optional mask is bool of the same shape.
Status inferDropout(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  if (ctx.hasInput(1))
    FB_TRY(checkInputDType(ctx, 1, kFloatTypes));
  if (ctx.hasInput(2)) {
    FB_TRY(checkInputDType(ctx, 2, kBoolType));
    const Tensor* train = ctx.inputConstant(2);
    const Tensor* ratio = ctx.inputConstant(1);
    if (train && train->numElements() == 1 && train->getAsInt64(0) &&
        !(ratio && ratio->numElements() == 1 && ratio->getAsDouble(0) == 0.0))
      return ctx.unsupported(kTrainingDropout);
  }
  const TensorType& x = ctx.inputType(0);
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  if (ctx.numOutputs() > 1)
    ctx.setOutputType(1, TensorType(DType::Bool, x.dims));
  return Status::success();
}

/// Forwards X and an all-true mask: nothing is dropped in inference.
Status evalDropout(EvalContext& ctx) {
  // Training with ratio 0 drops nothing, so it is deterministic and equals inference.
  const bool training =
      ctx.hasInput(2) && ctx.input(2).numElements() == 1 && ctx.input(2).getAsInt64(0);
  const double ratio =
      ctx.hasInput(1) && ctx.input(1).numElements() == 1 ? ctx.input(1).getAsDouble(0) : 0.5;
  if (training && ratio != 0.0)
    return ctx.unsupported(kTrainingDropout);
  const Tensor& x = ctx.input(0);
  ctx.setOutput(0, x);
  if (ctx.numOutputs() > 1) {
    Tensor mask(DType::Bool, x.sizes());
    for (bool& b : mask.mutableData<bool>())
      b = true;
    ctx.setOutput(1, std::move(mask));
  }
  return Status::success();
}

/// Pure data movement: no arithmetic.
OpCost costNone(const CostContext&) {
  return OpCost{};
}

} // namespace

void registerElementwiseOps(OpRegistry& r) {
  registerUnary<OpKind::Relu>(r);
  registerUnary<OpKind::LeakyRelu>(r);
  registerUnary<OpKind::Sigmoid>(r);
  registerUnary<OpKind::HardSigmoid>(r);
  registerUnary<OpKind::HardSwish>(r);
  registerUnary<OpKind::Tanh>(r);
  registerUnary<OpKind::Erf>(r);
  registerUnary<OpKind::Exp>(r);
  registerUnary<OpKind::Log>(r);
  registerUnary<OpKind::Sqrt>(r);
  registerUnary<OpKind::Neg>(r);
  registerUnary<OpKind::Abs>(r);
  registerUnary<OpKind::Reciprocal>(r);
  registerUnary<OpKind::Floor>(r);
  registerUnary<OpKind::Ceil>(r);
  registerUnary<OpKind::Not>(r);
  registerUnary<OpKind::Sign>(r);
  registerUnary<OpKind::Round>(r);
  registerUnary<OpKind::Sin>(r);
  registerUnary<OpKind::Cos>(r);
  registerUnary<OpKind::Tan>(r);
  registerUnary<OpKind::Asin>(r);
  registerUnary<OpKind::Acos>(r);
  registerUnary<OpKind::Atan>(r);
  registerUnary<OpKind::Sinh>(r);
  registerUnary<OpKind::Cosh>(r);
  registerUnary<OpKind::Asinh>(r);
  registerUnary<OpKind::Acosh>(r);
  registerUnary<OpKind::Atanh>(r);
  registerUnary<OpKind::Elu>(r);
  registerUnary<OpKind::Selu>(r);
  registerUnary<OpKind::Celu>(r);
  registerUnary<OpKind::Softplus>(r);
  registerUnary<OpKind::Softsign>(r);
  registerUnary<OpKind::Mish>(r);
  registerUnary<OpKind::ThresholdedRelu>(r);
  r.set(OpKind::IsNaN, inferClassify<OpKind::IsNaN>, evalClassify<OpKind::IsNaN>,
        costPerOutputElement<1>);
  r.set(OpKind::IsInf, inferClassify<OpKind::IsInf>, evalClassify<OpKind::IsInf>,
        costPerOutputElement<1>);
  r.set(OpKind::Clip, inferClip, evalClip, costPerOutputElement<2>); // max, min
  r.set(OpKind::Cast, inferCast, evalCast, costNone);
  r.set(OpKind::Identity, inferIdentity, evalIdentity, costNone);
  r.set(OpKind::Dropout, inferDropout, evalDropout, costNone);
  r.set(OpKind::CastLike, inferCastLike, evalCast, costNone);
  r.set(OpKind::Shrink, inferShrink, evalShrink, costPerOutputElement<2>); // compare, add
}

} // namespace fb
