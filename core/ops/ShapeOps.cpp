// Shape computations and constants: Shape, Size, Constant, ConstantOfShape and Range.
#include "core/ops/DataCopy.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fb {

namespace {

// ---------------------------------------------------------------------------------------------
// Shape and Size

/// The [start, end) range of dims Shape reports (opset 15 start/end, clamped like Slice).
Expected<std::pair<int64_t, int64_t>> shapeRange(const AttrMap& attrs, int64_t rank) {
  FB_ASSIGN_OR_RETURN(int64_t start, attrs.getInt("start", 0));
  FB_ASSIGN_OR_RETURN(int64_t end, attrs.getInt("end", rank));
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  return std::make_pair(start, std::max(start, end));
}

Status inferShape(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  auto range = shapeRange(ctx.attrs(), int64_t(in.rank()));
  if (!range.ok())
    return ctx.error(range.error().message());
  auto [start, end] = *range;
  ctx.setOutputType(0, TensorType::of(DType::I64, {end - start}));
  ctx.setOutputShapeValue(0, std::vector<Dim>(in.dims.begin() + start, in.dims.begin() + end));
  return Status::success();
}

Status evalShape(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  auto range = shapeRange(ctx.attrs(), int64_t(in.rank()));
  if (!range.ok())
    return ctx.error(range.error().message());
  auto [start, end] = *range;
  std::vector<int64_t> dims(in.sizes().begin() + start, in.sizes().begin() + end);
  ctx.setOutput(0, Tensor::fromVector<int64_t>({int64_t(dims.size())}, dims));
  return Status::success();
}

Status inferSize(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  ctx.setOutputType(0, TensorType(DType::I64, {}));
  Dim n(1);
  for (const Dim& d : in.dims)
    n = mulDims(n, d);
  ctx.setOutputShapeValue(0, {n});
  return Status::success();
}

Status evalSize(EvalContext& ctx) {
  ctx.setOutput(0, Tensor::scalar<int64_t>(ctx.input(0).numElements()));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Constant

/// The tensor a Constant node yields, from whichever of its value attributes is set.
Expected<Tensor> constantValue(const AttrMap& attrs) {
  if (const AttrValue* v = attrs.find("value")) {
    if (const Tensor* t = std::get_if<Tensor>(v))
      return *t;
    return makeError("attribute 'value' must be a tensor, got ", attrKindName(*v));
  }
  if (attrs.has("value_float")) {
    FB_ASSIGN_OR_RETURN(float f, attrs.getFloat("value_float", 0.f));
    return Tensor::scalar<float>(f);
  }
  if (attrs.has("value_floats")) {
    FB_ASSIGN_OR_RETURN(std::vector<float> fs, attrs.getFloats("value_floats", {}));
    return Tensor::fromVector<float>({int64_t(fs.size())}, fs);
  }
  if (attrs.has("value_int")) {
    FB_ASSIGN_OR_RETURN(int64_t i, attrs.getInt("value_int", 0));
    return Tensor::scalar<int64_t>(i);
  }
  if (attrs.has("value_ints")) {
    FB_ASSIGN_OR_RETURN(std::vector<int64_t> is, attrs.getInts("value_ints", {}));
    return Tensor::fromVector<int64_t>({int64_t(is.size())}, is);
  }
  for (const char* name : {"value_string", "value_strings", "sparse_value"})
    if (attrs.has(name))
      return makeUnsupported("Constant with attribute '", name, "' is not supported");
  return makeError("Constant has none of the attributes value, value_float, value_floats, "
                   "value_int, value_ints");
}

Status inferConstant(InferContext& ctx) {
  auto value = constantValue(ctx.attrs());
  if (!value.ok())
    return value.error().isUnsupported() ? ctx.unsupported(value.error().message())
                                         : ctx.error(value.error().message());
  if (!value->valid())
    return ctx.error("the value tensor has no data");
  TensorType t = value->type();
  if (canHoldShapeValue(t)) {
    std::vector<Dim> dims;
    for (int64_t i = 0; i < value->numElements(); ++i)
      dims.emplace_back(value->getAsInt64(i));
    setSmallShapeValue(ctx, 0, std::move(dims));
  }
  ctx.setOutputType(0, std::move(t));
  return Status::success();
}

Status evalConstant(EvalContext& ctx) {
  auto value = constantValue(ctx.attrs());
  if (!value.ok())
    return value.error().isUnsupported() ? ctx.unsupported(value.error().message())
                                         : ctx.error(value.error().message());
  ctx.setOutput(0, *value);
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// ConstantOfShape

/// The one-element fill value: the `value` attribute, or f32 zero when absent.
Expected<Tensor> fillValue(const AttrMap& attrs) {
  if (!attrs.has("value"))
    return Tensor::scalar<float>(0.f);
  FB_ASSIGN_OR_RETURN(Tensor t, attrs.getTensor("value"));
  if (t.numElements() != 1)
    return makeError("attribute 'value' ", t.type().str(), " must hold exactly one element");
  return t;
}

Status inferConstantOfShape(InferContext& ctx) {
  auto value = fillValue(ctx.attrs());
  if (!value.ok())
    return ctx.error(value.error().message());
  const TensorType& shapeType = ctx.inputType(0);
  if (shapeType.rank() != 1 || !isInteger(shapeType.dtype))
    return ctx.error("the shape operand must be a 1-D integer tensor, got ", shapeType.str());
  std::vector<Dim> dims;
  if (auto sv = ctx.inputShapeValue(0)) {
    dims = *sv;
    for (const Dim& d : dims)
      if (d.isStatic() && d.size() < 0)
        return ctx.error("shape ", dimsString(dims), " has a negative dim");
  } else if (shapeType.dims[0].isStatic()) {
    dims.resize(size_t(shapeType.dims[0].size()));
  } else {
    return ctx.unsupported("the output rank is unknown: the shape operand ", shapeType.str(),
                           " has a dynamic length");
  }
  ctx.setOutputType(0, TensorType(value->dtype(), dims));
  return Status::success();
}

Status evalConstantOfShape(EvalContext& ctx) {
  auto value = fillValue(ctx.attrs());
  if (!value.ok())
    return ctx.error(value.error().message());
  std::vector<int64_t> sizes = ctx.input(0).toInt64Vector();
  for (int64_t s : sizes)
    if (s < 0)
      return ctx.error("shape ", sizesString(sizes), " has a negative dim");
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(value->dtype(), sizes));
  size_t es = dtypeSize(out.dtype());
  std::byte* dst = out.numElements() ? out.mutableRawData() : nullptr;
  for (int64_t i = 0; i < out.numElements(); ++i)
    std::memcpy(dst + size_t(i) * es, value->rawData(), es);
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Range

/// Number of elements of an integer Range: max(ceil((limit - start) / delta), 0), exact over
/// the whole int64 span (the difference is taken in 128 bits).
Expected<int64_t> rangeLengthInt(int64_t start, int64_t limit, int64_t delta) {
  if (delta == 0)
    return makeError("delta is zero");
  const __int128 diff = __int128(limit) - __int128(start), d = delta;
  __int128 q = diff / d;
  if (q * d != diff && (diff > 0) == (d > 0))
    ++q;
  if (q > __int128(INT64_MAX))
    return makeError("the range from ", start, " to ", limit, " by ", delta,
                     " has a length that overflows 64 bits");
  return std::max<int64_t>(int64_t(q), 0);
}

/// Number of elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
/// (Integer ranges use rangeLengthInt.)
Expected<int64_t> rangeLength(double start, double limit, double delta) {
  if (delta == 0)
    return makeError("delta is zero");
  double n = std::ceil((limit - start) / delta);
  if (std::isnan(n) || n > 9.0e15)
    return makeError("the range from ", start, " to ", limit, " by ", delta,
                     " has too many elements");
  return std::max<int64_t>(int64_t(n), 0);
}

Status inferRange(InferContext& ctx) {
  DType dt = ctx.inputType(0).dtype;
  if (dt == DType::Bool)
    return ctx.error("Range does not take bool operands");
  for (size_t i = 0; i < 3; ++i) {
    const TensorType& t = ctx.inputType(i);
    if (t.dtype != dt)
      return ctx.error("operand ", i, " is ", t.str(), " but operand 0 is ",
                       ctx.inputType(0).str());
    if (auto n = t.numElements(); t.rank() > 1 || (n && *n != 1))
      return ctx.error("operand ", i, " ", t.str(), " must be a scalar");
  }
  Dim length = Dim::unknown();
  const Tensor* c[3] = {ctx.inputConstant(0), ctx.inputConstant(1), ctx.inputConstant(2)};
  if (c[0] && c[1] && c[2]) {
    auto n = isInteger(dt)
                 ? rangeLengthInt(c[0]->getAsInt64(0), c[1]->getAsInt64(0), c[2]->getAsInt64(0))
                 : rangeLength(c[0]->getAsDouble(0), c[1]->getAsDouble(0), c[2]->getAsDouble(0));
    if (!n.ok())
      return ctx.error(n.error().message());
    length = Dim(*n);
  } else if (isInteger(dt)) {
    // Integer operands computed from shapes: Range(0, N, 1) has N elements.
    auto start = ctx.inputShapeValue(0), limit = ctx.inputShapeValue(1),
         delta = ctx.inputShapeValue(2);
    if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1) {
      const Dim &s = (*start)[0], &l = (*limit)[0], &d = (*delta)[0];
      if (s.isStatic() && l.isStatic() && d.isStatic()) {
        auto n = rangeLengthInt(s.size(), l.size(), d.size());
        if (!n.ok())
          return ctx.error(n.error().message());
        length = Dim(*n);
      } else if (s == Dim(0) && d == Dim(1)) {
        length = l;
      }
    }
  }
  ctx.setOutputType(0, TensorType(dt, {length}));
  return Status::success();
}

Status evalRange(EvalContext& ctx) {
  const Tensor& start = ctx.input(0);
  DType dt = start.dtype();
  if (ctx.input(1).dtype() != dt || ctx.input(2).dtype() != dt)
    return ctx.error("operands must share one dtype");
  for (size_t i = 0; i < 3; ++i)
    if (ctx.input(i).numElements() != 1)
      return ctx.error("operand ", i, " ", ctx.input(i).type().str(), " must be a scalar");
  bool integral = isInteger(dt);
  auto n = integral ? rangeLengthInt(start.getAsInt64(0), ctx.input(1).getAsInt64(0),
                                     ctx.input(2).getAsInt64(0))
                    : rangeLength(start.getAsDouble(0), ctx.input(1).getAsDouble(0),
                                  ctx.input(2).getAsDouble(0));
  if (!n.ok())
    return ctx.error(n.error().message());
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(dt, {*n}));
  if (integral) {
    int64_t s = start.getAsInt64(0), d = ctx.input(2).getAsInt64(0);
    dispatchDType(dt, [&]<typename T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        auto o = out.mutableData<T>();
        for (int64_t i = 0; i < *n; ++i)
          // In unsigned arithmetic: i * d may pass int64's range although s + i * d, which
          // lies between start and limit, never does.
          o[size_t(i)] = T(int64_t(uint64_t(s) + uint64_t(i) * uint64_t(d)));
      }
    });
  } else {
    // ONNX defines the elements as start + i * delta, computed in the operand precision.
    float s = float(start.getAsDouble(0)), d = float(ctx.input(2).getAsDouble(0));
    for (int64_t i = 0; i < *n; ++i)
      out.setFromDouble(i, double(s + float(i) * d));
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerShapeOps(OpRegistry& r) {
  r.set(OpKind::Shape, inferShape, evalShape, zeroFlopsCost);
  r.set(OpKind::Size, inferSize, evalSize, zeroFlopsCost);
  r.set(OpKind::Constant, inferConstant, evalConstant, zeroFlopsCost);
  r.set(OpKind::ConstantOfShape, inferConstantOfShape, evalConstantOfShape, zeroFlopsCost);
  r.set(OpKind::Range, inferRange, evalRange, zeroFlopsCost);
}

} // namespace fb
