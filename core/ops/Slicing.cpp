// Data-movement ops that cut and join tensors: Concat, Split, Slice, Gather and Pad.
#include "core/ops/DataCopy.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace fb {

namespace {

/// Merges two dims that must be equal: a number wins over a symbol, a symbol over unknown.
Dim mergeEqualDims(const Dim& a, const Dim& b) {
  if (a.isStatic())
    return a;
  if (b.isStatic())
    return b;
  return a.isSymbol() ? a : b;
}

/// Copies `rows` blocks of `block` bytes from src (stride srcStride) to dst (stride dstStride).
void copyBlocks(const std::byte* src, int64_t srcStride, std::byte* dst, int64_t dstStride,
                int64_t rows, int64_t block) {
  if (block == 0)
    return;
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + r * dstStride, src + r * srcStride, size_t(block));
}

/// Product of sizes[from, to).
int64_t sizeProduct(const std::vector<int64_t>& sizes, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= sizes[i];
  return p;
}

// ---------------------------------------------------------------------------------------------
// Concat

Status inferConcat(InferContext& ctx) {
  if (!ctx.hasInput(0))
    return ctx.error("input 0 is missing");
  const TensorType& first = ctx.inputType(0);
  if (first.rank() == 0)
    return ctx.error("cannot concatenate scalars");
  if (!ctx.attrs().has("axis"))
    return ctx.error("the axis attribute is required");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, ctx.attrs().getInt("axis", 0));
  auto axis = normalizeAxis(rawAxis, int64_t(first.rank()));
  if (!axis.ok())
    return ctx.error(axis.error().message());
  std::vector<Dim> out = first.dims;
  // The concatenated dim: a sum of numbers, or one non-zero symbolic part.
  int64_t staticSum = 0;
  std::vector<Dim> dynamicParts;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      return ctx.error("input ", i, " is missing");
    const TensorType& t = ctx.inputType(i);
    if (t.dtype != first.dtype)
      return ctx.error("input ", i, " is ", t.str(), " but input 0 is ", first.str());
    if (t.rank() != first.rank())
      return ctx.error("input ", i, " ", t.str(), " has rank ", t.rank(), " but input 0 ",
                       first.str(), " has rank ", first.rank());
    for (size_t d = 0; d < t.rank(); ++d) {
      if (int64_t(d) == *axis)
        continue;
      if (dimsConflict(out[d], t.dims[d]))
        return ctx.error("input ", i, " ", t.str(), " differs from input 0 ", first.str(),
                         " in dim ", d, " (only dim ", *axis, " may differ)");
      out[d] = mergeEqualDims(out[d], t.dims[d]);
    }
    const Dim& a = t.dims[size_t(*axis)];
    if (a.isStatic())
      staticSum += a.size();
    else
      dynamicParts.push_back(a);
  }
  if (dynamicParts.empty())
    out[size_t(*axis)] = Dim(staticSum);
  else if (dynamicParts.size() == 1 && staticSum == 0)
    out[size_t(*axis)] = dynamicParts[0];
  else
    out[size_t(*axis)] = Dim::unknown();
  TensorType outType(first.dtype, out);
  if (canHoldShapeValue(outType) && outType.rank() == 1) {
    std::vector<Dim> joined;
    bool allKnown = true;
    for (size_t i = 0; i < ctx.numInputs() && allKnown; ++i) {
      auto sv = ctx.inputShapeValue(i);
      if (!sv)
        allKnown = false;
      else
        joined.insert(joined.end(), sv->begin(), sv->end());
    }
    if (allKnown)
      setSmallShapeValue(ctx, 0, joined);
  }
  ctx.setOutputType(0, std::move(outType));
  return Status::success();
}

Status evalConcat(EvalContext& ctx) {
  const Tensor& first = ctx.input(0);
  if (first.rank() == 0)
    return ctx.error("cannot concatenate scalars");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, ctx.attrs().getInt("axis", 0));
  auto axisOr = normalizeAxis(rawAxis, int64_t(first.rank()));
  if (!axisOr.ok())
    return ctx.error(axisOr.error().message());
  size_t axis = size_t(*axisOr);
  std::vector<int64_t> outSizes = first.sizes();
  outSizes[axis] = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Tensor& t = ctx.input(i);
    for (size_t d = 0; d < std::max(t.rank(), first.rank()); ++d)
      if (t.rank() != first.rank() || (d != axis && t.sizes()[d] != first.sizes()[d]))
        return ctx.error("input ", i, " ", t.type().str(), " does not match input 0 ",
                         first.type().str(), " outside dim ", axis);
    outSizes[axis] += t.sizes()[axis];
  }
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(first.dtype(), outSizes));
  int64_t es = int64_t(dtypeSize(first.dtype()));
  int64_t outer = sizeProduct(outSizes, 0, axis);
  int64_t inner = sizeProduct(outSizes, axis + 1, outSizes.size());
  int64_t outRow = outSizes[axis] * inner * es;
  std::byte* dst = out.numElements() ? out.mutableRawData() : nullptr;
  int64_t at = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Tensor& t = ctx.input(i);
    int64_t block = t.sizes()[axis] * inner * es;
    if (dst)
      copyBlocks(t.rawData(), block, dst + at, outRow, outer, block);
    at += block;
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Split

/// The split sizes from the `split` input (or a legacy attribute), or nullopt for an equal split.
Expected<std::optional<std::vector<int64_t>>> explicitSplit(const AttrMap& attrs,
                                                            const Tensor* splitInput) {
  if (splitInput)
    return std::optional<std::vector<int64_t>>(splitInput->toInt64Vector());
  if (attrs.has("split")) {
    FB_ASSIGN_OR_RETURN(std::vector<int64_t> s, attrs.getInts("split", {}));
    return std::optional<std::vector<int64_t>>(std::move(s));
  }
  return std::optional<std::vector<int64_t>>();
}

/// Checks explicit split sizes against the output count and, when known, the split dim.
Status checkSplitSizes(const std::vector<int64_t>& sizes, size_t numOutputs,
                       std::optional<int64_t> dim) {
  if (sizes.size() != numOutputs)
    return makeError("split ", sizesString(sizes), " has ", sizes.size(), " entries for ",
                     numOutputs, " outputs");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return makeError("split ", sizesString(sizes), " has a negative size");
    sum += s;
  }
  if (dim && sum != *dim)
    return makeError("split ", sizesString(sizes), " sums to ", sum, " but the dim is ", *dim);
  return Status::success();
}

/// Sizes of an equal split of `dim` into n parts. ONNX 17 requires an even split; opset 18's
/// num_outputs allows a smaller last chunk.
Expected<std::vector<int64_t>> equalSplit(int64_t dim, size_t n, bool allowUneven) {
  if (n == 0)
    return makeError("Split has no outputs");
  int64_t parts = int64_t(n);
  if (dim % parts == 0)
    return std::vector<int64_t>(n, dim / parts);
  if (!allowUneven)
    return makeError("dim ", dim, " cannot be split evenly into ", n, " outputs");
  int64_t chunk = (dim + parts - 1) / parts;
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < parts; ++i)
    sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  return sizes;
}

bool unevenSplitAllowed(int64_t opset, const AttrMap& attrs) {
  return opset >= 18 || attrs.has("num_outputs");
}

Status inferSplit(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, ctx.attrs().getInt("axis", 0));
  auto axis = normalizeAxis(rawAxis, int64_t(in.rank()));
  if (!axis.ok() || in.rank() == 0)
    return ctx.error(axis.ok() ? std::string("cannot split a scalar") : axis.error().message());
  const Dim& dim = in.dims[size_t(*axis)];
  std::optional<int64_t> staticDim;
  if (dim.isStatic())
    staticDim = dim.size();
  std::vector<Dim> parts(ctx.numOutputs(), Dim::unknown());
  std::optional<std::vector<int64_t>> sizes;
  if (ctx.hasInput(1)) {
    sizes = knownInts(ctx, 1);
  } else {
    FB_ASSIGN_OR_RETURN(sizes, explicitSplit(ctx.attrs(), nullptr));
  }
  if (sizes) {
    Status st = checkSplitSizes(*sizes, ctx.numOutputs(), staticDim);
    if (!st.ok())
      return ctx.error(st.error().message());
    for (size_t i = 0; i < sizes->size(); ++i)
      parts[i] = Dim((*sizes)[i]);
  } else if (!ctx.hasInput(1) && staticDim) {
    auto eq = equalSplit(*staticDim, ctx.numOutputs(), unevenSplitAllowed(ctx.opset(), ctx.attrs()));
    if (!eq.ok())
      return ctx.error(eq.error().message());
    for (size_t i = 0; i < eq->size(); ++i)
      parts[i] = Dim((*eq)[i]);
  } else if (!ctx.hasInput(1) && ctx.numOutputs() == 1) {
    parts[0] = dim;
  }
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    std::vector<Dim> dims = in.dims;
    dims[size_t(*axis)] = parts[i];
    ctx.setOutputType(i, TensorType(in.dtype, std::move(dims)));
  }
  return Status::success();
}

Status evalSplit(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.rank() == 0)
    return ctx.error("cannot split a scalar");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, ctx.attrs().getInt("axis", 0));
  auto axisOr = normalizeAxis(rawAxis, int64_t(in.rank()));
  if (!axisOr.ok())
    return ctx.error(axisOr.error().message());
  size_t axis = size_t(*axisOr);
  int64_t dim = in.sizes()[axis];
  FB_ASSIGN_OR_RETURN(auto given,
                      explicitSplit(ctx.attrs(), ctx.hasInput(1) ? &ctx.input(1) : nullptr));
  std::vector<int64_t> sizes;
  if (given) {
    Status st = checkSplitSizes(*given, ctx.numOutputs(), dim);
    if (!st.ok())
      return ctx.error(st.error().message());
    sizes = *given;
  } else {
    auto eq = equalSplit(dim, ctx.numOutputs(), unevenSplitAllowed(ctx.opset(), ctx.attrs()));
    if (!eq.ok())
      return ctx.error(eq.error().message());
    sizes = *eq;
  }
  int64_t es = int64_t(dtypeSize(in.dtype()));
  int64_t outer = sizeProduct(in.sizes(), 0, axis);
  int64_t inner = sizeProduct(in.sizes(), axis + 1, in.rank());
  int64_t inRow = dim * inner * es;
  int64_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> outSizes = in.sizes();
    outSizes[axis] = sizes[i];
    FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(in.dtype(), outSizes));
    int64_t block = sizes[i] * inner * es;
    if (out.numElements())
      copyBlocks(in.rawData() + at, inRow, out.mutableRawData(), block, outer, block);
    at += block;
    ctx.setOutput(i, std::move(out));
  }
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Slice

/// One sliced axis: where it starts, its step and how many elements it keeps.
struct SliceRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

/// Clamps start/end against `dim` as ONNX Slice does, for positive and negative steps.
SliceRange sliceRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  SliceRange r;
  r.step = step;
  if (dim == 0)
    return r;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    // -(step + 1) + 1 avoids negating INT64_MIN.
    r.count = start > end ? (start - end - 1) / (-(step + 1) + 1) + 1 : 0;
  }
  r.start = start;
  return r;
}

/// Slice's starts/ends/axes/steps, normalized to one entry per axis of a rank-`rank` input.
struct SliceParams {
  std::vector<int64_t> starts, ends, steps;
  std::vector<bool> sliced; // per input axis
};

Expected<SliceParams> sliceParams(const std::vector<int64_t>& starts,
                                  const std::vector<int64_t>& ends,
                                  const std::optional<std::vector<int64_t>>& axesIn,
                                  const std::optional<std::vector<int64_t>>& stepsIn,
                                  int64_t rank) {
  size_t n = starts.size();
  if (ends.size() != n)
    return makeError("starts ", sizesString(starts), " and ends ", sizesString(ends),
                     " differ in length");
  std::vector<int64_t> axes(n);
  for (size_t i = 0; i < n; ++i)
    axes[i] = int64_t(i);
  if (axesIn) {
    if (axesIn->size() != n)
      return makeError("axes ", sizesString(*axesIn), " has ", axesIn->size(),
                       " entries, starts has ", n);
    FB_ASSIGN_OR_RETURN(axes, normalizeAxes(*axesIn, rank));
  } else if (int64_t(n) > rank) {
    return makeError("starts ", sizesString(starts), " has more entries than the rank ", rank);
  }
  std::vector<int64_t> steps(n, 1);
  if (stepsIn) {
    if (stepsIn->size() != n)
      return makeError("steps ", sizesString(*stepsIn), " has ", stepsIn->size(),
                       " entries, starts has ", n);
    steps = *stepsIn;
  }
  SliceParams p;
  p.starts.assign(size_t(rank), 0);
  p.ends.assign(size_t(rank), std::numeric_limits<int64_t>::max());
  p.steps.assign(size_t(rank), 1);
  p.sliced.assign(size_t(rank), false);
  for (size_t i = 0; i < n; ++i) {
    if (steps[i] == 0)
      return makeError("steps ", sizesString(steps), " has a zero step");
    size_t a = size_t(axes[i]);
    p.starts[a] = starts[i];
    p.ends[a] = ends[i];
    p.steps[a] = steps[i];
    p.sliced[a] = true;
  }
  return p;
}

/// The sliced size of a symbolic dim: kept only when the slice provably takes all of it.
Dim slicedSymbolicDim(const Dim& d, int64_t start, int64_t end, int64_t step) {
  constexpr int64_t kHuge = std::numeric_limits<int32_t>::max();
  if (step == 1 && start == 0 && end >= kHuge)
    return d;
  if (step == -1 && (start == -1 || start >= kHuge) && end <= -kHuge)
    return d;
  return Dim::unknown();
}

Status inferSlice(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  int64_t rank = int64_t(in.rank());
  auto starts = knownInts(ctx, 1);
  auto ends = knownInts(ctx, 2);
  std::optional<std::vector<int64_t>> axes, steps;
  bool axesKnown = true, stepsKnown = true;
  if (ctx.hasInput(3))
    axesKnown = (axes = knownInts(ctx, 3)).has_value();
  if (ctx.hasInput(4))
    stepsKnown = (steps = knownInts(ctx, 4)).has_value();
  TensorType out(in.dtype, in.dims);
  if (!starts || !ends || !stepsKnown || !axesKnown) {
    // The sliced axes lose their size; the others keep it when we know which axes those are.
    if (axesKnown && axes) {
      auto norm = normalizeAxes(*axes, rank);
      if (!norm.ok())
        return ctx.error("axes ", sizesString(*axes), ": ", norm.error().message());
      for (int64_t a : *norm)
        out.dims[size_t(a)] = Dim::unknown();
    } else {
      std::fill(out.dims.begin(), out.dims.end(), Dim::unknown());
    }
    ctx.setOutputType(0, std::move(out));
    return Status::success();
  }
  auto p = sliceParams(*starts, *ends, axes, steps, rank);
  if (!p.ok())
    return ctx.error(p.error().message());
  for (size_t a = 0; a < size_t(rank); ++a) {
    if (!p->sliced[a])
      continue;
    const Dim& d = in.dims[a];
    if (d.isStatic())
      out.dims[a] = Dim(sliceRange(p->starts[a], p->ends[a], p->steps[a], d.size()).count);
    else
      out.dims[a] = slicedSymbolicDim(d, p->starts[a], p->ends[a], p->steps[a]);
  }
  if (auto sv = ctx.inputShapeValue(0); sv && rank == 1 && canHoldShapeValue(out)) {
    SliceRange r = sliceRange(p->starts[0], p->ends[0], p->steps[0], int64_t(sv->size()));
    std::vector<Dim> picked;
    for (int64_t i = 0; i < r.count; ++i)
      picked.push_back((*sv)[size_t(r.start + i * r.step)]);
    setSmallShapeValue(ctx, 0, picked);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::success();
}

Status evalSlice(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  int64_t rank = int64_t(in.rank());
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.hasInput(3))
    axes = ctx.input(3).toInt64Vector();
  if (ctx.hasInput(4))
    steps = ctx.input(4).toInt64Vector();
  auto p = sliceParams(ctx.input(1).toInt64Vector(), ctx.input(2).toInt64Vector(), axes, steps,
                       rank);
  if (!p.ok())
    return ctx.error(p.error().message());
  std::vector<int64_t> strides = in.strides();
  std::vector<int64_t> outSizes(static_cast<size_t>(rank));
  std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(rank));
  for (size_t a = 0; a < size_t(rank); ++a) {
    SliceRange r = sliceRange(p->starts[a], p->ends[a], p->steps[a], in.sizes()[a]);
    outSizes[a] = r.count;
    offsets[a].resize(size_t(r.count));
    for (int64_t i = 0; i < r.count; ++i)
      offsets[a][size_t(i)] = (r.start + i * r.step) * strides[a];
  }
  FB_ASSIGN_OR_RETURN(Tensor out, copyWithOffsets(in, outSizes, offsets));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Gather

Status inferGather(InferContext& ctx) {
  const TensorType& data = ctx.inputType(0);
  const TensorType& indices = ctx.inputType(1);
  if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
    return ctx.error("indices must be i32 or i64, got ", indices.str());
  if (data.rank() == 0)
    return ctx.error("cannot gather from a scalar");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, ctx.attrs().getInt("axis", 0));
  auto axis = normalizeAxis(rawAxis, int64_t(data.rank()));
  if (!axis.ok())
    return ctx.error(axis.error().message());
  std::vector<Dim> out(data.dims.begin(), data.dims.begin() + *axis);
  out.insert(out.end(), indices.dims.begin(), indices.dims.end());
  out.insert(out.end(), data.dims.begin() + *axis + 1, data.dims.end());
  TensorType outType(data.dtype, out);
  // Picking from a shape value (Shape → Gather) yields the picked dims.
  auto sv = ctx.inputShapeValue(0);
  auto idx = knownInts(ctx, 1);
  if (sv && idx && data.rank() == 1 && indices.rank() <= 1 && canHoldShapeValue(outType)) {
    std::vector<Dim> picked;
    int64_t n = int64_t(sv->size());
    for (int64_t i : *idx) {
      if (i < -n || i >= n)
        return ctx.error("index ", i, " is out of range for dim of size ", n);
      picked.push_back((*sv)[size_t(i < 0 ? i + n : i)]);
    }
    setSmallShapeValue(ctx, 0, picked);
  }
  ctx.setOutputType(0, std::move(outType));
  return Status::success();
}

Status evalGather(EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (indices.dtype() != DType::I32 && indices.dtype() != DType::I64)
    return ctx.error("indices must be i32 or i64, got ", indices.type().str());
  if (data.rank() == 0)
    return ctx.error("cannot gather from a scalar");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, ctx.attrs().getInt("axis", 0));
  auto axisOr = normalizeAxis(rawAxis, int64_t(data.rank()));
  if (!axisOr.ok())
    return ctx.error(axisOr.error().message());
  size_t axis = size_t(*axisOr);
  std::vector<int64_t> outSizes(data.sizes().begin(), data.sizes().begin() + axis);
  outSizes.insert(outSizes.end(), indices.sizes().begin(), indices.sizes().end());
  outSizes.insert(outSizes.end(), data.sizes().begin() + axis + 1, data.sizes().end());
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(data.dtype(), outSizes));
  int64_t dim = data.sizes()[axis];
  int64_t es = int64_t(dtypeSize(data.dtype()));
  int64_t outer = sizeProduct(data.sizes(), 0, axis);
  int64_t block = sizeProduct(data.sizes(), axis + 1, data.rank()) * es;
  std::vector<int64_t> idx = indices.toInt64Vector();
  for (int64_t& i : idx) {
    if (i < -dim || i >= dim)
      return ctx.error("index ", i, " is out of range for axis ", axis, " of size ", dim);
    if (i < 0)
      i += dim;
  }
  if (out.numElements() == 0) {
    ctx.setOutput(0, std::move(out));
    return Status::success();
  }
  std::byte* dst = out.mutableRawData();
  const std::byte* src = data.rawData();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      std::memcpy(dst, src + (o * dim + i) * block, size_t(block));
      dst += block;
    }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Pad

enum class PadMode { Constant, Reflect, Edge };

Expected<PadMode> padMode(const AttrMap& attrs) {
  FB_ASSIGN_OR_RETURN(std::string mode, attrs.getString("mode", "constant"));
  if (mode == "constant")
    return PadMode::Constant;
  if (mode == "reflect")
    return PadMode::Reflect;
  if (mode == "edge")
    return PadMode::Edge;
  return makeUnsupported("pad mode '", mode, "' is not supported (constant, reflect, edge)");
}

Status inferPad(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  auto mode = padMode(ctx.attrs());
  if (!mode.ok())
    return mode.error().isUnsupported() ? ctx.unsupported(mode.error().message())
                                        : ctx.error(mode.error().message());
  if (ctx.hasInput(2)) {
    const TensorType& cv = ctx.inputType(2);
    if (cv.dtype != in.dtype)
      return ctx.error("constant_value is ", cv.str(), " but the data is ", in.str());
    if (auto n = cv.numElements(); n && *n != 1)
      return ctx.error("constant_value ", cv.str(), " must hold one element");
  }
  TensorType out(in.dtype, std::vector<Dim>(in.rank()));
  if (auto pads = knownInts(ctx, 1)) {
    if (pads->size() != 2 * in.rank())
      return ctx.error("pads ", sizesString(*pads), " has ", pads->size(), " entries, expected ",
                       2 * in.rank(), " for ", in.str());
    for (size_t i = 0; i < in.rank(); ++i) {
      int64_t extra = 0, padded = 0;
      const Dim& d = in.dims[i];
      if (__builtin_add_overflow((*pads)[i], (*pads)[i + in.rank()], &extra) ||
          (d.isStatic() && __builtin_add_overflow(d.size(), extra, &padded)))
        return ctx.error("pads ", sizesString(*pads), " on dim ", i, " of ", in.str(),
                         " give a size that overflows 64 bits");
      if (d.isStatic()) {
        if (d.size() + extra < 0)
          return ctx.error("pads ", sizesString(*pads), " remove more than dim ", i, " of ",
                           in.str(), " holds");
        out.dims[i] = Dim(d.size() + extra);
      } else if (extra == 0) {
        out.dims[i] = d;
      }
    }
  }
  ctx.setOutputType(0, std::move(out));
  return Status::success();
}

/// The input index an out-of-range index `i` reads in reflect mode (NumPy's repeated reflection).
int64_t reflectIndex(int64_t i, int64_t n) {
  if (n == 1)
    return 0;
  int64_t period = 2 * (n - 1);
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - i;
}

Status evalPad(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  auto mode = padMode(ctx.attrs());
  if (!mode.ok())
    return mode.error().isUnsupported() ? ctx.unsupported(mode.error().message())
                                        : ctx.error(mode.error().message());
  std::vector<int64_t> pads = ctx.input(1).toInt64Vector();
  size_t rank = in.rank();
  if (pads.size() != 2 * rank)
    return ctx.error("pads ", sizesString(pads), " has ", pads.size(), " entries, expected ",
                     2 * rank);
  const std::byte* fill = nullptr;
  if (ctx.hasInput(2) && ctx.input(2).numElements() > 0) {
    if (ctx.input(2).dtype() != in.dtype())
      return ctx.error("constant_value is ", ctx.input(2).type().str(), " but the data is ",
                       in.type().str());
    fill = ctx.input(2).rawData();
  }
  std::vector<int64_t> strides = in.strides();
  std::vector<int64_t> outSizes(rank);
  std::vector<std::vector<int64_t>> offsets(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t n = in.sizes()[d];
    int64_t before = pads[d];
    if (__builtin_add_overflow(n, before, &outSizes[d]) ||
        __builtin_add_overflow(outSizes[d], pads[d + rank], &outSizes[d]))
      return ctx.error("pads ", sizesString(pads), " on dim ", d, " of ", in.type().str(),
                       " give a size that overflows 64 bits");
    if (outSizes[d] < 0)
      return ctx.error("pads ", sizesString(pads), " remove more than dim ", d, " of ",
                       in.type().str(), " holds");
    if (n == 0 && outSizes[d] > 0 && *mode != PadMode::Constant)
      return ctx.error("cannot pad the empty dim ", d, " of ", in.type().str(),
                       " in reflect or edge mode");
  }
  Expected<bool> needed = checkCopyOutput(in.dtype(), outSizes);
  if (!needed.ok())
    return ctx.error(needed.error().message());
  for (size_t d = 0; d < rank && *needed; ++d) {
    const int64_t n = in.sizes()[d];
    const int64_t before = pads[d];
    offsets[d].resize(size_t(outSizes[d]));
    for (int64_t o = 0; o < outSizes[d]; ++o) {
      int64_t i = o - before;
      if (i < 0 || i >= n) {
        switch (*mode) {
        case PadMode::Constant: i = kOutsideInput; break;
        case PadMode::Edge: i = std::clamp<int64_t>(i, 0, n - 1); break;
        case PadMode::Reflect: i = reflectIndex(i, n); break;
        default: assert(false && "unknown pad mode"); break;
        }
      }
      offsets[d][size_t(o)] = i == kOutsideInput ? kOutsideInput : i * strides[d];
    }
  }
  FB_ASSIGN_OR_RETURN(Tensor out, copyWithOffsets(in, outSizes, offsets, fill));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerSlicingOps(OpRegistry& r) {
  r.set(OpKind::Concat, inferConcat, evalConcat, zeroFlopsCost);
  r.set(OpKind::Split, inferSplit, evalSplit, zeroFlopsCost);
  r.set(OpKind::Slice, inferSlice, evalSlice, zeroFlopsCost);
  r.set(OpKind::Gather, inferGather, evalGather, zeroFlopsCost);
  r.set(OpKind::Pad, inferPad, evalPad, zeroFlopsCost);
}

} // namespace fb
