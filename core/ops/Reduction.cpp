// Reductions (ReduceMean/Sum/Max/Min/Prod/L1/L2/LogSumExp/SumSquare/LogSum, ArgMax, ArgMin) and
// the normalizing reductions Softmax and LogSoftmax along one axis.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

namespace fb {

using namespace math;

namespace {

/// The summing reductions take i32, i64 and floats; ReduceMax and ReduceMin also i8 and u8; the
/// logarithmic ones only floats (a log of an integer sum has no integer meaning worth a kernel).
constexpr DTypeSet reduceDTypes(OpKind k) {
  switch (k) {
  case OpKind::ReduceMean:
  case OpKind::ReduceSum:
  case OpKind::ReduceProd:
  case OpKind::ReduceL1:
  case OpKind::ReduceL2:
  case OpKind::ReduceSumSquare:
    return kFloatTypes | dtypeBit(DType::I32) | dtypeBit(DType::I64);
  case OpKind::ReduceLogSumExp:
  case OpKind::ReduceLogSum:
    return kFloatTypes;
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
    return kNumericTypes;
  default:
    assert(false && "not a Reduce op");
    return 0;
  }
}

/// Where the reduced axes come from. At opset 17 ReduceSum takes them as input 1 and the others
/// as the `axes` attribute; either spelling is accepted for every Reduce op, so graphs from the
/// importer's opset-18 path work too.
struct ReduceAxes {
  bool known = true;            ///< false: input 1 is not a compile-time constant
  std::vector<int64_t> axes;    ///< as written (possibly negative); meaningful when known
  std::optional<int64_t> count; ///< number of axes when !known but input 1's length is static
};

/// Reads the axes for shape inference, from input 1 or the attribute.
Expected<ReduceAxes> readAxes(const InferContext& ctx) {
  ReduceAxes r;
  if (ctx.hasInput(1)) {
    if (!isInteger(ctx.inputType(1).dtype) || ctx.inputType(1).rank() > 1)
      return ctx.error("input 1 (axes) must be a 1-D integer tensor, got ", ctx.inputType(1).str());
    if (const Tensor* t = ctx.inputConstant(1)) {
      r.axes = t->toInt64Vector();
    } else {
      r.known = false;
      if (ctx.inputType(1).rank() == 1 && ctx.inputType(1).dims[0].isStatic())
        r.count = ctx.inputType(1).dims[0].size();
    }
    return r;
  }
  FB_ASSIGN_OR_RETURN(r.axes, intsAttr(ctx, "axes", {}));
  return r;
}

/// Reads the axes at run time, from input 1 or the attribute.
Expected<std::vector<int64_t>> readAxes(const EvalContext& ctx) {
  if (ctx.hasInput(1))
    return ctx.input(1).toInt64Vector();
  return intsAttr(ctx, "axes", {});
}

/// A mask of the reduced dims: empty axes mean all dims, or none with noop_with_empty_axes.
template <typename Ctx>
Expected<std::vector<bool>> reducedMask(const Ctx& ctx, const std::vector<int64_t>& axes,
                                        int64_t rank, bool noopWithEmptyAxes) {
  std::vector<bool> mask(size_t(rank), axes.empty() && !noopWithEmptyAxes);
  auto normalized = normalizeAxes(axes, rank);
  if (!normalized)
    return ctx.error(normalized.error().message());
  for (int64_t a : *normalized)
    mask[size_t(a)] = true;
  return mask;
}

/// Drops (or keeps as 1) the reduced dims; symbolic dims that are not reduced survive.
template <OpKind K> Status inferReduce(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, reduceDTypes(K)));
  FB_ASSIGN_OR_RETURN(bool keepdims, intAttr(ctx, "keepdims", 1));
  FB_ASSIGN_OR_RETURN(bool noop, intAttr(ctx, "noop_with_empty_axes", 0));
  FB_ASSIGN_OR_RETURN(ReduceAxes axes, readAxes(ctx));
  const TensorType& x = ctx.inputType(0);
  std::vector<Dim> dims;
  if (!axes.known) {
    // Which dims are reduced is known only at run time: the rank may still be.
    if (keepdims)
      dims.assign(x.rank(), Dim::unknown());
    else if (axes.count && *axes.count > 0 && *axes.count <= int64_t(x.rank()))
      dims.assign(x.rank() - size_t(*axes.count), Dim::unknown());
    else
      return ctx.unsupported("input 1 (axes) must be a constant when keepdims=0");
  } else {
    FB_ASSIGN_OR_RETURN(std::vector<bool> mask,
                        reducedMask(ctx, axes.axes, int64_t(x.rank()), noop));
    for (size_t d = 0; d < x.rank(); ++d) {
      if (!mask[d])
        dims.push_back(x.dims[d]);
      else if (keepdims)
        dims.emplace_back(1);
    }
  }
  ctx.setOutputType(0, TensorType(x.dtype, std::move(dims)));
  return Status::success();
}

/// One pass over the input: each element is folded into the accumulator of its output element,
/// found through strides that are 0 along reduced dims.
template <OpKind K> Status evalReduce(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(bool keepdims, intAttr(ctx, "keepdims", 1));
  FB_ASSIGN_OR_RETURN(bool noop, intAttr(ctx, "noop_with_empty_axes", 0));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> axes, readAxes(ctx));
  FB_ASSIGN_OR_RETURN(std::vector<bool> mask, reducedMask(ctx, axes, int64_t(x.rank()), noop));
  std::vector<int64_t> keptSizes, outSizes;
  int64_t count = 1; // input elements per output element
  for (size_t d = 0; d < x.rank(); ++d) {
    keptSizes.push_back(mask[d] ? 1 : x.sizes()[d]);
    if (mask[d])
      count *= x.sizes()[d];
    if (!mask[d] || keepdims)
      outSizes.push_back(keptSizes.back());
  }
  Tensor out(x.dtype(), outSizes);
  bool supported = dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(reduceDTypes(K))) {
      using C = ComputeT<T>;
      // Everything but Max/Min accumulates in double (floats) or wrapping int64 (integers) after
      // an elementwise step (|x|, x², exp x); Max/Min accumulate in C.
      constexpr bool kIsExtremum = K == OpKind::ReduceMax || K == OpKind::ReduceMin;
      constexpr bool kIsProd = K == OpKind::ReduceProd;
      using Acc = std::conditional_t<kIsExtremum, C,
                                     std::conditional_t<std::is_floating_point_v<C>, double, int64_t>>;
      Acc init = kIsProd ? Acc(1) : Acc(0);
      if constexpr (kIsExtremum) {
        constexpr bool kMax = K == OpKind::ReduceMax;
        if constexpr (std::is_floating_point_v<C>)
          init = kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
        else
          init = kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
      }
      std::vector<Acc> acc(size_t(out.numElements()), init);
      const T* in = x.data<T>().data();
      std::array<std::vector<int64_t>, 1> strides{broadcastStrides(keptSizes, x.sizes())};
      // LogSumExp shifts by each output's maximum m so that e^x cannot overflow:
      // m + log(sum(e^(x - m))), with m taken as 0 when it is infinite.
      std::vector<double> shift;
      if constexpr (K == OpKind::ReduceLogSumExp) {
        shift.assign(acc.size(), -std::numeric_limits<double>::infinity());
        forEachBroadcastN<1>(x.sizes(), strides, [&](int64_t i, const std::array<int64_t, 1>& off) {
          shift[size_t(off[0])] = std::max(shift[size_t(off[0])], double(C(in[i])));
        });
        for (double& m : shift)
          if (std::isinf(m))
            m = 0;
      }
      forEachBroadcastN<1>(x.sizes(), strides, [&](int64_t i, const std::array<int64_t, 1>& off) {
        Acc& a = acc[size_t(off[0])];
        const C v = C(in[i]);
        if constexpr (kIsExtremum) {
          if constexpr (std::is_floating_point_v<C>) {
            if (std::isnan(v) || (K == OpKind::ReduceMax ? v > a : v < a))
              a = v; // NaN propagates as in np.max
          } else {
            a = K == OpKind::ReduceMax ? std::max(a, v) : std::min(a, v);
          }
        } else if constexpr (kIsProd) {
          a = wrapMul(a, Acc(v));
        } else if constexpr (K == OpKind::ReduceL1) {
          a = wrapAdd(a, Acc(v < C(0) ? wrapSub(C(0), v) : v));
        } else if constexpr (K == OpKind::ReduceL2 || K == OpKind::ReduceSumSquare) {
          a = wrapAdd(a, wrapMul(Acc(v), Acc(v)));
        } else if constexpr (K == OpKind::ReduceLogSumExp) {
          a += std::exp(double(v) - shift[size_t(off[0])]);
        } else {
          a = wrapAdd(a, Acc(v));
        }
      });
      T* po = out.mutableData<T>().data();
      for (size_t i = 0; i < acc.size(); ++i) {
        if constexpr (K == OpKind::ReduceMean)
          po[i] = convertElement<T, double>(double(acc[i]) / double(count));
        else if constexpr (K == OpKind::ReduceL2)
          po[i] = convertElement<T, double>(std::sqrt(double(acc[i])));
        else if constexpr (K == OpKind::ReduceLogSum)
          po[i] = convertElement<T, double>(std::log(double(acc[i])));
        else if constexpr (K == OpKind::ReduceLogSumExp)
          po[i] = convertElement<T, double>(std::log(double(acc[i])) + shift[i]);
        else if constexpr (!kIsExtremum && std::is_floating_point_v<C>)
          po[i] = T(C(acc[i]));
        else
          po[i] = T(acc[i]);
      }
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(x.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// ArgMax and ArgMin.

/// Sizes before, along and after one axis: the [outer, n, inner] view of a tensor.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
/// Splits sizes around `axis`.
AxisSplit splitAt(const std::vector<int64_t>& sizes, int64_t axis) {
  AxisSplit s;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (int64_t(d) < axis)
      s.outer *= sizes[d];
    else if (int64_t(d) == axis)
      s.n = sizes[d];
    else
      s.inner *= sizes[d];
  }
  return s;
}

/// ArgMax's `axis` attribute, normalized against the rank.
template <typename Ctx> Expected<int64_t> argMaxAxis(const Ctx& ctx, size_t rank) {
  FB_ASSIGN_OR_RETURN(int64_t axis, intAttr(ctx, "axis", 0));
  if (rank == 0)
    return ctx.error("input must have rank >= 1");
  auto a = normalizeAxis(axis, int64_t(rank));
  if (!a)
    return ctx.error(a.error().message());
  return *a;
}

/// An i64 index tensor without (or with a 1 for) the axis.
Status inferArgMax(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kNumericTypes));
  const TensorType& x = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, argMaxAxis(ctx, x.rank()));
  FB_ASSIGN_OR_RETURN(bool keepdims, intAttr(ctx, "keepdims", 1));
  FB_ASSIGN_OR_RETURN(int64_t last, intAttr(ctx, "select_last_index", 0));
  (void)last;
  std::vector<Dim> dims;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (int64_t(d) != axis)
      dims.push_back(x.dims[d]);
    else if (keepdims)
      dims.emplace_back(1);
  }
  ctx.setOutputType(0, TensorType(DType::I64, std::move(dims)));
  return Status::success();
}

/// The first (or, with select_last_index, last) index of the maximum (ArgMin: minimum) along
/// the axis.
template <bool Min> Status evalArgMax(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, argMaxAxis(ctx, x.rank()));
  FB_ASSIGN_OR_RETURN(bool keepdims, intAttr(ctx, "keepdims", 1));
  FB_ASSIGN_OR_RETURN(bool selectLast, intAttr(ctx, "select_last_index", 0));
  const AxisSplit s = splitAt(x.sizes(), axis);
  if (s.n == 0)
    return ctx.error(opName(ctx.node().op()), " over an empty axis ", axis);
  std::vector<int64_t> outSizes;
  for (size_t d = 0; d < x.rank(); ++d)
    if (int64_t(d) != axis || keepdims)
      outSizes.push_back(int64_t(d) == axis ? 1 : x.sizes()[d]);
  Tensor out(DType::I64, outSizes);
  int64_t* po = out.mutableData<int64_t>().data();
  bool supported = dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(kNumericTypes)) {
      using C = ComputeT<T>;
      const T* in = x.data<T>().data();
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          const T* p = in + o * s.n * s.inner + i;
          C best = C(p[0]);
          int64_t bestIndex = 0;
          for (int64_t j = 1; j < s.n; ++j) {
            const C v = C(p[j * s.inner]);
            const bool better = Min ? v < best : v > best;
            if (better || (selectLast && v == best)) {
              best = v;
              bestIndex = j;
            }
          }
          po[o * s.inner + i] = bestIndex;
        }
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(x.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Softmax and LogSoftmax (opset 13: along one axis).

/// Softmax's `axis` attribute (default -1), normalized against the rank.
template <typename Ctx> Expected<int64_t> softmaxAxis(const Ctx& ctx, size_t rank) {
  FB_ASSIGN_OR_RETURN(int64_t axis, intAttr(ctx, "axis", -1));
  auto a = normalizeAxis(axis, int64_t(rank));
  if (!a)
    return ctx.error(a.error().message());
  return *a;
}

/// Softmax keeps its input type.
Status inferSoftmax(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  const TensorType& x = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, softmaxAxis(ctx, x.rank()));
  (void)axis;
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// Subtracts the maximum before exponentiating so large inputs do not overflow.
template <bool Log> Status evalSoftmax(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, softmaxAxis(ctx, x.rank()));
  const AxisSplit s = x.rank() ? splitAt(x.sizes(), axis) : AxisSplit{};
  Tensor out(x.dtype(), x.sizes());
  bool supported = dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(kFloatTypes)) {
      const T* in = x.data<T>().data();
      T* po = out.mutableData<T>().data();
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          const int64_t base = o * s.n * s.inner + i;
          float mx = -std::numeric_limits<float>::infinity();
          for (int64_t j = 0; j < s.n; ++j)
            mx = std::max(mx, float(in[base + j * s.inner]));
          double sum = 0;
          for (int64_t j = 0; j < s.n; ++j)
            sum += std::exp(double(float(in[base + j * s.inner]) - mx));
          if constexpr (Log) {
            const double logSum = std::log(sum);
            for (int64_t j = 0; j < s.n; ++j)
              po[base + j * s.inner] =
                  T(float(double(float(in[base + j * s.inner]) - mx) - logSum));
          } else {
            const double inv = 1.0 / sum;
            for (int64_t j = 0; j < s.n; ++j)
              po[base + j * s.inner] =
                  T(float(std::exp(double(float(in[base + j * s.inner]) - mx)) * inv));
          }
        }
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(x.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerReductionOps(OpRegistry& r) {
  // Reductions: one FLOP (add, compare) per input element.
  r.set(OpKind::ReduceMean, inferReduce<OpKind::ReduceMean>, evalReduce<OpKind::ReduceMean>,
        costPerInputElement<1>);
  r.set(OpKind::ReduceSum, inferReduce<OpKind::ReduceSum>, evalReduce<OpKind::ReduceSum>,
        costPerInputElement<1>);
  r.set(OpKind::ReduceMax, inferReduce<OpKind::ReduceMax>, evalReduce<OpKind::ReduceMax>,
        costPerInputElement<1>);
  r.set(OpKind::ReduceMin, inferReduce<OpKind::ReduceMin>, evalReduce<OpKind::ReduceMin>,
        costPerInputElement<1>);
  r.set(OpKind::ReduceProd, inferReduce<OpKind::ReduceProd>, evalReduce<OpKind::ReduceProd>,
        costPerInputElement<1>);
  // |x| or x² then add: 2 per element; exp and add: 2, the final log or sqrt per output negligible.
  r.set(OpKind::ReduceL1, inferReduce<OpKind::ReduceL1>, evalReduce<OpKind::ReduceL1>,
        costPerInputElement<2>);
  r.set(OpKind::ReduceL2, inferReduce<OpKind::ReduceL2>, evalReduce<OpKind::ReduceL2>,
        costPerInputElement<2>);
  r.set(OpKind::ReduceSumSquare, inferReduce<OpKind::ReduceSumSquare>,
        evalReduce<OpKind::ReduceSumSquare>, costPerInputElement<2>);
  r.set(OpKind::ReduceLogSumExp, inferReduce<OpKind::ReduceLogSumExp>,
        evalReduce<OpKind::ReduceLogSumExp>, costPerInputElement<2>);
  r.set(OpKind::ReduceLogSum, inferReduce<OpKind::ReduceLogSum>, evalReduce<OpKind::ReduceLogSum>,
        costPerInputElement<1>);
  r.set(OpKind::ArgMax, inferArgMax, evalArgMax</*Min=*/false>, costPerInputElement<1>);
  r.set(OpKind::ArgMin, inferArgMax, evalArgMax</*Min=*/true>, costPerInputElement<1>);
  // Softmax and LogSoftmax: max, subtract, exp, sum and scale (or subtract the log-sum): 5 per
  // element, the per-row log and division being negligible.
  r.set(OpKind::Softmax, inferSoftmax, evalSoftmax<false>, costPerInputElement<5>);
  r.set(OpKind::LogSoftmax, inferSoftmax, evalSoftmax<true>, costPerInputElement<5>);
}

} // namespace fb
