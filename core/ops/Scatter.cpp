// Ops that write updates into a copy of their data at positions given by indices:
// ScatterElements (one index per update element) and ScatterND (one index tuple per update slice),
// each with ONNX's reduction none, add, mul, max or min.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cstring>

namespace fb {

using namespace math;

namespace {

/// How an update combines with the element it lands on.
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// Reads the `reduction` attribute (opset 16/18); the error lists the accepted spellings.
template <typename Ctx> Expected<ScatterReduction> scatterReduction(const Ctx& ctx) {
  auto s = ctx.attrs().getString("reduction", "none");
  if (!s)
    return ctx.error(s.error().message());
  if (*s == "none")
    return ScatterReduction::None;
  if (*s == "add")
    return ScatterReduction::Add;
  if (*s == "mul")
    return ScatterReduction::Mul;
  if (*s == "max")
    return ScatterReduction::Max;
  if (*s == "min")
    return ScatterReduction::Min;
  return ctx.error("reduction '", *s, "' is not one of none, add, mul, max, min");
}

/// Combines update u into element a.
template <typename C> C combine(ScatterReduction r, C a, C u) {
  switch (r) {
  case ScatterReduction::None:
    return u;
  case ScatterReduction::Add:
    return wrapAdd(a, u);
  case ScatterReduction::Mul:
    return wrapMul(a, u);
  case ScatterReduction::Max:
    return std::max(a, u);
  case ScatterReduction::Min:
    return std::min(a, u);
  default:
    assert(false && "unknown scatter reduction");
    return u;
  }
}

/// Shared checks: i32/i64 indices, updates of the data's dtype, a valid reduction; the output
/// has the data's type.
Status inferScatterCommon(InferContext& ctx) {
  const TensorType& data = ctx.inputType(0);
  const TensorType& indices = ctx.inputType(1);
  if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
    return ctx.error("input 1 (indices) must be i32 or i64, got ", indices.str());
  FB_TRY(checkSameDType(ctx, 0, 2));
  FB_ASSIGN_OR_RETURN(ScatterReduction red, scatterReduction(ctx));
  if (red != ScatterReduction::None && !inSet(kNumericTypes, data.dtype))
    return ctx.error("reduction needs numeric data, got ", data.str());
  ctx.setOutputType(0, TensorType(data.dtype, data.dims));
  return Status::success();
}

/// An index along an axis of `size` elements; the same error as the gathers' and the CPU
/// backend's index check.
template <typename Ctx>
Expected<int64_t> resolveIndex(const Ctx& ctx, int64_t i, int64_t axis, int64_t size) {
  if (i < -size || i >= size)
    return ctx.error("index ", i, " is out of range for axis ", axis, " of size ", size);
  return i < 0 ? i + size : i;
}

/// Applies updates (element u goes to element offset targets[u] of the copy) in order.
Status applyUpdates(EvalContext& ctx, const Tensor& data, const Tensor& updates,
                    const std::vector<int64_t>& targets, ScatterReduction red) {
  Tensor out(data.dtype(), data.sizes());
  if (data.numElements())
    std::memcpy(out.mutableRawData(), data.rawData(), data.byteSize());
  bool supported = dispatchDType(data.dtype(), [&]<typename T>() {
    if constexpr (typeInSet<T>(kAllTypes)) {
      T* po = data.numElements() ? out.mutableData<T>().data() : nullptr;
      const T* pu = updates.data<T>().data();
      for (size_t u = 0; u < targets.size(); ++u) {
        if constexpr (typeInSet<T>(kNumericTypes)) {
          using C = ComputeT<T>;
          po[targets[u]] = T(combine<C>(red, C(po[targets[u]]), C(pu[u])));
        } else {
          po[targets[u]] = pu[u];
        }
      }
      return true;
    } else {
      return false;
    }
  });
  if (!supported)
    return ctx.error("no kernel for dtype ", dtypeName(data.dtype()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// ScatterElements

Status inferScatterElements(InferContext& ctx) {
  const TensorType& data = ctx.inputType(0);
  const TensorType& indices = ctx.inputType(1);
  const TensorType& updates = ctx.inputType(2);
  if (data.rank() == 0 || indices.rank() != data.rank() || updates.rank() != data.rank())
    return ctx.error("data ", data.str(), ", indices ", indices.str(), " and updates ",
                     updates.str(), " must have the same rank >= 1");
  for (size_t d = 0; d < data.rank(); ++d)
    if (dimsConflict(indices.dims[d], updates.dims[d]))
      return ctx.error("indices ", indices.str(), " and updates ", updates.str(),
                       " must have the same shape");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, intAttr(ctx, "axis", 0));
  auto axis = normalizeAxis(rawAxis, int64_t(data.rank()));
  if (!axis)
    return ctx.error(axis.error().message());
  return inferScatterCommon(ctx);
}

/// Update element (i0, .., in) goes to (i0, .., indices[i0, .., in], .., in) along the axis.
Status evalScatterElements(EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  FB_ASSIGN_OR_RETURN(ScatterReduction red, scatterReduction(ctx));
  const size_t rank = data.rank();
  if (rank == 0 || indices.sizes() != updates.sizes() || indices.rank() != rank)
    return ctx.error("indices ", indices.type().str(), " and updates ", updates.type().str(),
                     " must have one shape of data's rank ", rank);
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, intAttr(ctx, "axis", 0));
  auto axisOr = normalizeAxis(rawAxis, int64_t(rank));
  if (!axisOr)
    return ctx.error(axisOr.error().message());
  const size_t axis = size_t(*axisOr);
  for (size_t d = 0; d < rank; ++d)
    if (d != axis && indices.sizes()[d] > data.sizes()[d])
      return ctx.error("indices ", indices.type().str(), " exceed data ", data.type().str(),
                       " in dim ", d);
  const std::vector<int64_t> idx = indices.toInt64Vector();
  const std::vector<int64_t> strides = data.strides();
  std::vector<int64_t> targets(idx.size()), pos(rank, 0);
  for (size_t e = 0; e < idx.size(); ++e) {
    FB_ASSIGN_OR_RETURN(int64_t i, resolveIndex(ctx, idx[e], int64_t(axis), data.sizes()[axis]));
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += (d == axis ? i : pos[d]) * strides[d];
    targets[e] = at;
    for (size_t d = rank; d-- > 0;) {
      if (++pos[d] < indices.sizes()[d])
        break;
      pos[d] = 0;
    }
  }
  return applyUpdates(ctx, data, updates, targets, red);
}

// ---------------------------------------------------------------------------------------------
// ScatterND

Status inferScatterND(InferContext& ctx) {
  const TensorType& data = ctx.inputType(0);
  const TensorType& indices = ctx.inputType(1);
  const TensorType& updates = ctx.inputType(2);
  if (data.rank() == 0 || indices.rank() == 0)
    return ctx.error("data ", data.str(), " and indices ", indices.str(), " must have rank >= 1");
  if (indices.dims.back().isStatic()) {
    const int64_t k = indices.dims.back().size();
    if (k < 1 || k > int64_t(data.rank()))
      return ctx.error("index tuples of length ", k, " do not fit data ", data.str());
    // updates = indices.shape[:-1] + data.shape[k:].
    if (updates.rank() != indices.rank() - 1 + data.rank() - size_t(k))
      return ctx.error("updates ", updates.str(), " must have shape indices[:-1] + data[", k,
                       ":] for indices ", indices.str(), " and data ", data.str());
  }
  return inferScatterCommon(ctx);
}

/// Each index tuple names a slice of data (its trailing dims) that takes the matching slice of
/// updates.
Status evalScatterND(EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  FB_ASSIGN_OR_RETURN(ScatterReduction red, scatterReduction(ctx));
  const std::vector<int64_t>& ds = data.sizes();
  if (data.rank() == 0 || indices.rank() == 0)
    return ctx.error("data and indices must have rank >= 1");
  const int64_t k = indices.sizes().back();
  if (k < 1 || k > int64_t(ds.size()))
    return ctx.error("index tuples of length ", k, " do not fit data ", data.type().str());
  std::vector<int64_t> expect(indices.sizes().begin(), indices.sizes().end() - 1);
  expect.insert(expect.end(), ds.begin() + k, ds.end());
  if (updates.sizes() != expect)
    return ctx.error("updates ", updates.type().str(), " must have shape ",
                     TensorType::of(updates.dtype(), expect).str());
  int64_t slice = 1;
  for (size_t d = size_t(k); d < ds.size(); ++d)
    slice *= ds[d];
  const std::vector<int64_t> idx = indices.toInt64Vector();
  const std::vector<int64_t> strides = data.strides();
  const int64_t tuples = k ? int64_t(idx.size()) / k : 0;
  std::vector<int64_t> targets;
  targets.reserve(size_t(tuples * slice));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (int64_t c = 0; c < k; ++c) {
      FB_ASSIGN_OR_RETURN(int64_t i, resolveIndex(ctx, idx[size_t(t * k + c)], c, ds[size_t(c)]));
      base += i * strides[size_t(c)];
    }
    for (int64_t s = 0; s < slice; ++s)
      targets.push_back(base + s);
  }
  return applyUpdates(ctx, data, updates, targets, red);
}

} // namespace

void registerScatterOps(OpRegistry& r) {
  // One combine per update element (none: a copy, counted as no FLOP).
  r.set(OpKind::ScatterElements, inferScatterElements, evalScatterElements,
        [](const CostContext& ctx) {
          return OpCost{ctx.inputElements(2), 0};
        });
  r.set(OpKind::ScatterND, inferScatterND, evalScatterND, [](const CostContext& ctx) {
    return OpCost{ctx.inputElements(2), 0};
  });
}

} // namespace fb
