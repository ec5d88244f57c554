// Data-movement ops that change how elements are laid out: Flatten, Reshape, Transpose, Squeeze,
// Unsqueeze, Expand, Tile, DepthToSpace and SpaceToDepth. Concat, Split, Slice, Gather and Pad live in ops/Slicing.cpp.
#include "core/ops/DataCopy.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

namespace fb {

namespace {

// ---------------------------------------------------------------------------------------------
// Symbolic element counts, so Reshape can solve for its -1 when dims are symbols.

/// A product of dims as a number times a multiset of symbol names; `unknown` when some factor is
/// neither a number nor a named symbol.
struct DimProduct {
  int64_t number = 1;
  std::map<std::string, int> symbols;
  bool unknown = false;
};

/// The product of dims, leaving out dim `skip` (none when skip is out of range).
DimProduct productOf(const std::vector<Dim>& dims, size_t skip = SIZE_MAX) {
  DimProduct p;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i == skip)
      continue;
    const Dim& d = dims[i];
    if (d.isStatic()) {
      if (__builtin_mul_overflow(p.number, d.size(), &p.number))
        p.unknown = true;
    } else if (d.isSymbol()) {
      ++p.symbols[d.symbolName()];
    } else {
      p.unknown = true;
    }
  }
  return p;
}

/// Solves total = known * x for the dim x. Returns unknown when the symbols do not cancel into a
/// number or a single symbol; an error when the numbers provably cannot divide.
Expected<Dim> solveMissingDim(const DimProduct& total, const DimProduct& known) {
  if (total.unknown || known.unknown || known.number == 0)
    return Dim::unknown();
  std::map<std::string, int> rest = total.symbols;
  for (const auto& [name, count] : known.symbols) {
    auto it = rest.find(name);
    if (it == rest.end() || it->second < count)
      return Dim::unknown(); // a symbol of the target does not appear in the input
    if ((it->second -= count) == 0)
      rest.erase(it);
  }
  if (total.number % known.number != 0) {
    if (rest.empty())
      return makeError("cannot divide ", total.number, " elements evenly by ", known.number);
    return Dim::unknown();
  }
  int64_t q = total.number / known.number;
  if (rest.empty())
    return Dim(q);
  if (q == 1 && rest.size() == 1 && rest.begin()->second == 1)
    return Dim::symbol(rest.begin()->first);
  return Dim::unknown();
}

// ---------------------------------------------------------------------------------------------
// Flatten

Status inferFlatten(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().getInt("axis", 1));
  int64_t rank = int64_t(in.rank());
  if (axis < -rank || axis > rank)
    return ctx.error("axis ", axis, " is out of range [", -rank, ", ", rank, "]");
  if (axis < 0)
    axis += rank;
  Dim outer(1), inner(1);
  for (int64_t i = 0; i < rank; ++i) {
    Dim& acc = i < axis ? outer : inner;
    acc = mulDims(acc, in.dims[size_t(i)]);
  }
  ctx.setOutputType(0, TensorType(in.dtype, {outer, inner}));
  return Status::success();
}

Status evalFlatten(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().getInt("axis", 1));
  int64_t rank = int64_t(in.rank());
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= in.sizes()[size_t(i)];
  ctx.setOutput(0, in.reshaped({outer, inner}));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Reshape

Status inferReshape(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(int64_t allowZero, ctx.attrs().getInt("allowzero", 0));
  const TensorType& shapeType = ctx.inputType(1);
  if (shapeType.rank() != 1 || !isInteger(shapeType.dtype))
    return ctx.error("the shape operand must be a 1-D integer tensor, got ", shapeType.str());
  auto target = ctx.inputShapeValue(1);
  if (!target) {
    // Only the rank is known: the length of the shape operand.
    if (!shapeType.dims[0].isStatic())
      return ctx.unsupported("the output rank is unknown: the shape operand ", shapeType.str(),
                             " has a dynamic length");
    ctx.setOutputType(0, TensorType(in.dtype, std::vector<Dim>(size_t(shapeType.dims[0].size()))));
    return Status::success();
  }
  std::vector<Dim> out(target->size());
  std::optional<size_t> inferred;
  bool hasZero = false;
  for (size_t i = 0; i < target->size(); ++i) {
    const Dim& t = (*target)[i];
    if (!t.isStatic()) {
      out[i] = t;
      continue;
    }
    int64_t v = t.size();
    if (v == -1) {
      if (inferred)
        return ctx.error("shape ", dimsString(*target), " has more than one -1");
      inferred = i;
    } else if (v < -1) {
      return ctx.error("shape ", dimsString(*target), " has the invalid dim ", v);
    } else if (v == 0 && !allowZero) {
      if (i >= in.rank())
        return ctx.error("shape ", dimsString(*target), " copies dim ", i, " with 0, but the input ",
                         in.str(), " has rank ", in.rank());
      out[i] = in.dims[i];
    } else {
      hasZero = hasZero || v == 0;
      out[i] = Dim(v);
    }
  }
  if (allowZero && hasZero && inferred)
    return ctx.error("shape ", dimsString(*target), " has both 0 and -1 while allowzero=1");
  DimProduct total = productOf(in.dims);
  if (inferred) {
    auto solved = solveMissingDim(total, productOf(out, *inferred));
    if (!solved.ok())
      return ctx.error("cannot reshape ", in.str(), " to ", dimsString(*target), ": ",
                       solved.error().message());
    out[*inferred] = *solved;
  } else {
    DimProduct got = productOf(out);
    if (!total.unknown && !got.unknown && total.symbols == got.symbols &&
        total.number != got.number)
      return ctx.error("cannot reshape ", in.str(), " (", total.number, " elements) to ",
                       dimsString(*target), " (", got.number, " elements)");
  }
  TensorType outType(in.dtype, out);
  // A reshaped shape value (a scalar to [1] and back) still holds the same dims.
  if (auto sv = ctx.inputShapeValue(0); sv && canHoldShapeValue(outType))
    setSmallShapeValue(ctx, 0, *sv);
  ctx.setOutputType(0, std::move(outType));
  return Status::success();
}

Status evalReshape(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  FB_ASSIGN_OR_RETURN(int64_t allowZero, ctx.attrs().getInt("allowzero", 0));
  std::vector<int64_t> target = ctx.input(1).toInt64Vector();
  std::vector<int64_t> out = target;
  int64_t inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowZero) {
      if (i >= in.rank())
        return ctx.error("shape ", sizesString(target), " copies dim ", i,
                         " with 0, but the input has rank ", in.rank());
      out[i] = in.sizes()[i];
    }
    if (out[i] == -1) {
      if (inferred >= 0)
        return ctx.error("shape ", sizesString(target), " has more than one -1");
      inferred = int64_t(i);
      continue;
    }
    if (out[i] < 0)
      return ctx.error("shape ", sizesString(target), " has the invalid dim ", out[i]);
    // Checked: a product that wraps around int64 could equal the element count by accident.
    if (__builtin_mul_overflow(known, out[i], &known))
      return ctx.error("shape ", sizesString(target), " has an element count that overflows 64 bits");
  }
  if (inferred >= 0) {
    if (known == 0 || in.numElements() % known != 0)
      return ctx.error("cannot reshape ", in.type().str(), " to ", sizesString(target));
    out[size_t(inferred)] = in.numElements() / known;
  } else if (known != in.numElements()) {
    return ctx.error("cannot reshape ", in.type().str(), " (", in.numElements(),
                     " elements) to ", sizesString(target), " (", known, " elements)");
  }
  ctx.setOutput(0, in.reshaped(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Transpose

Expected<std::vector<int64_t>> transposePerm(const AttrMap& attrs, size_t rank) {
  std::vector<int64_t> dflt(rank);
  for (size_t i = 0; i < rank; ++i)
    dflt[i] = int64_t(rank - 1 - i);
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attrs.getInts("perm", dflt));
  if (perm.size() != rank)
    return makeError("perm ", sizesString(perm), " has ", perm.size(), " entries for rank ", rank);
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[size_t(p)])
      return makeError("perm ", sizesString(perm), " is not a permutation of [0, ", rank, ")");
    seen[size_t(p)] = true;
  }
  return perm;
}

Status inferTranspose(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  auto perm = transposePerm(ctx.attrs(), in.rank());
  if (!perm.ok())
    return ctx.error(perm.error().message());
  std::vector<Dim> out;
  for (int64_t p : *perm)
    out.push_back(in.dims[size_t(p)]);
  ctx.setOutputType(0, TensorType(in.dtype, out));
  return Status::success();
}

Status evalTranspose(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  auto perm = transposePerm(ctx.attrs(), in.rank());
  if (!perm.ok())
    return ctx.error(perm.error().message());
  std::vector<int64_t> strides = in.strides();
  std::vector<int64_t> outSizes;
  std::vector<std::vector<int64_t>> offsets;
  for (int64_t p : *perm) {
    int64_t n = in.sizes()[size_t(p)];
    outSizes.push_back(n);
    std::vector<int64_t> map(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      map[size_t(i)] = i * strides[size_t(p)];
    offsets.push_back(std::move(map));
  }
  FB_ASSIGN_OR_RETURN(Tensor out, copyWithOffsets(in, outSizes, offsets));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Squeeze and Unsqueeze: the axes are an input (opset 13+).

/// The number of axes in a run-time axes operand (input 1), known from its static length.
Expected<int64_t> runtimeAxesCount(const InferContext& ctx) {
  const TensorType& t = ctx.inputType(1);
  if (t.rank() != 1 || !isInteger(t.dtype))
    return ctx.error("axes must be a 1-D integer tensor, got ", t.str());
  if (!t.dims[0].isStatic())
    return ctx.unsupported("the output rank is unknown: axes ", t.str(),
                           " has a dynamic length and is not known at compile time");
  return t.dims[0].size();
}

Status inferSqueeze(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  int64_t rank = int64_t(in.rank());
  std::vector<bool> drop(in.rank(), false);
  if (ctx.hasInput(1)) {
    auto axes = knownInts(ctx, 1);
    if (!axes) {
      // Axes computed at run time: the rank is known from their count, the dims are not.
      FB_ASSIGN_OR_RETURN(int64_t count, runtimeAxesCount(ctx));
      if (count > rank)
        return ctx.error("cannot squeeze ", count, " axes of ", in.str());
      ctx.setOutputType(0, TensorType(in.dtype, std::vector<Dim>(size_t(rank - count))));
      return Status::success();
    }
    auto norm = normalizeAxes(*axes, rank);
    if (!norm.ok())
      return ctx.error("axes ", sizesString(*axes), ": ", norm.error().message());
    for (int64_t a : *norm) {
      const Dim& d = in.dims[size_t(a)];
      if (d.isStatic() && d.size() != 1)
        return ctx.error("cannot squeeze axis ", a, " of ", in.str(), ": its size is not 1");
      drop[size_t(a)] = true;
    }
  } else {
    // Without axes every dim of size 1 goes; a symbolic dim is assumed not to be 1.
    for (size_t i = 0; i < in.rank(); ++i)
      drop[i] = in.dims[i].isStatic() && in.dims[i].size() == 1;
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < in.rank(); ++i)
    if (!drop[i])
      out.push_back(in.dims[i]);
  TensorType outType(in.dtype, out);
  if (auto sv = ctx.inputShapeValue(0); sv && canHoldShapeValue(outType))
    setSmallShapeValue(ctx, 0, *sv);
  ctx.setOutputType(0, std::move(outType));
  return Status::success();
}

Status evalSqueeze(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  int64_t rank = int64_t(in.rank());
  std::vector<bool> drop(in.rank(), false);
  if (ctx.hasInput(1)) {
    std::vector<int64_t> axes = ctx.input(1).toInt64Vector();
    auto norm = normalizeAxes(axes, rank);
    if (!norm.ok())
      return ctx.error("axes ", sizesString(axes), ": ", norm.error().message());
    for (int64_t a : *norm) {
      if (in.sizes()[size_t(a)] != 1)
        return ctx.error("cannot squeeze axis ", a, " of ", in.type().str(),
                         ": its size is not 1");
      drop[size_t(a)] = true;
    }
  } else {
    for (size_t i = 0; i < in.rank(); ++i)
      drop[i] = in.sizes()[i] == 1;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.rank(); ++i)
    if (!drop[i])
      out.push_back(in.sizes()[i]);
  ctx.setOutput(0, in.reshaped(out));
  return Status::success();
}

/// Which dims of the output are new unit dims, or an error naming the bad axes.
Expected<std::vector<bool>> unsqueezedDims(const std::vector<int64_t>& axes, size_t inRank) {
  int64_t outRank = int64_t(inRank + axes.size());
  auto norm = normalizeAxes(axes, outRank);
  if (!norm.ok())
    return makeError("axes ", sizesString(axes), ": ", norm.error().message());
  std::vector<bool> isNew(size_t(outRank), false);
  for (int64_t a : *norm)
    isNew[size_t(a)] = true;
  return isNew;
}

Status inferUnsqueeze(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  auto axes = knownInts(ctx, 1);
  if (!axes) {
    FB_ASSIGN_OR_RETURN(int64_t count, runtimeAxesCount(ctx));
    ctx.setOutputType(0, TensorType(in.dtype, std::vector<Dim>(in.rank() + size_t(count))));
    return Status::success();
  }
  auto isNew = unsqueezedDims(*axes, in.rank());
  if (!isNew.ok())
    return ctx.error(isNew.error().message());
  std::vector<Dim> out;
  size_t k = 0;
  for (bool n : *isNew)
    out.push_back(n ? Dim(1) : in.dims[k++]);
  TensorType outType(in.dtype, out);
  if (auto sv = ctx.inputShapeValue(0); sv && canHoldShapeValue(outType))
    setSmallShapeValue(ctx, 0, *sv);
  ctx.setOutputType(0, std::move(outType));
  return Status::success();
}

Status evalUnsqueeze(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  auto isNew = unsqueezedDims(ctx.input(1).toInt64Vector(), in.rank());
  if (!isNew.ok())
    return ctx.error(isNew.error().message());
  std::vector<int64_t> out;
  size_t k = 0;
  for (bool n : *isNew)
    out.push_back(n ? 1 : in.sizes()[k++]);
  ctx.setOutput(0, in.reshaped(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Expand and Tile

/// The dims named by a shape operand: its shape value, or unknown dims when only its length is
/// known. Fails when even the length is unknown.
Expected<std::vector<Dim>> shapeOperandDims(const InferContext& ctx, size_t i) {
  if (auto sv = ctx.inputShapeValue(i))
    return *sv;
  const TensorType& t = ctx.inputType(i);
  if (t.rank() == 1 && t.dims[0].isStatic())
    return std::vector<Dim>(size_t(t.dims[0].size()));
  return ctx.unsupported("the output rank is unknown: operand ", i, " (", t.str(),
                         ") has a dynamic length");
}

Status inferExpand(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  const TensorType& shapeType = ctx.inputType(1);
  if (shapeType.rank() != 1 || !isInteger(shapeType.dtype))
    return ctx.error("the shape operand must be a 1-D integer tensor, got ", shapeType.str());
  FB_ASSIGN_OR_RETURN(std::vector<Dim> target, shapeOperandDims(ctx, 1));
  for (const Dim& d : target)
    if (d.isStatic() && d.size() < 0)
      return ctx.error("shape ", dimsString(target), " has a negative dim");
  auto out = broadcastDims(in.dims, target);
  if (!out.ok())
    return ctx.error(out.error().message());
  ctx.setOutputType(0, TensorType(in.dtype, *out));
  return Status::success();
}

using OffsetMaps = std::vector<std::vector<int64_t>>;

/// Offset maps that read `in` broadcast (or tiled, when `tile`) to outSizes.
OffsetMaps repeatOffsets(const Tensor& in, const std::vector<int64_t>& outSizes, bool tile) {
  std::vector<int64_t> strides = in.strides();
  size_t lead = outSizes.size() - in.rank();
  std::vector<std::vector<int64_t>> offsets(outSizes.size());
  for (size_t d = 0; d < outSizes.size(); ++d) {
    offsets[d].resize(size_t(outSizes[d]), 0);
    if (d < lead)
      continue;
    int64_t n = in.sizes()[d - lead];
    for (int64_t i = 0; i < outSizes[d]; ++i)
      offsets[d][size_t(i)] = (tile ? i % n : (n == 1 ? 0 : i)) * strides[d - lead];
  }
  return offsets;
}

Status evalExpand(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> target = ctx.input(1).toInt64Vector();
  auto outSizes = broadcastSizes(in.sizes(), target);
  if (!outSizes.ok())
    return ctx.error("cannot expand ", in.type().str(), " to ", sizesString(target), ": ",
                     outSizes.error().message());
  Expected<bool> needed = checkCopyOutput(in.dtype(), *outSizes);
  if (!needed.ok())
    return ctx.error(needed.error().message());
  FB_ASSIGN_OR_RETURN(
      Tensor out,
      copyWithOffsets(in, *outSizes, *needed ? repeatOffsets(in, *outSizes, false) : OffsetMaps{}));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

Status inferTile(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  const TensorType& repType = ctx.inputType(1);
  if (repType.rank() != 1 || !isInteger(repType.dtype))
    return ctx.error("repeats must be a 1-D integer tensor, got ", repType.str());
  if (repType.dims[0].isStatic() && repType.dims[0].size() != int64_t(in.rank()))
    return ctx.error("repeats has ", repType.dims[0].size(), " entries for an input of rank ",
                     in.rank());
  std::vector<Dim> out(in.rank());
  if (auto reps = ctx.inputShapeValue(1)) {
    if (reps->size() != in.rank())
      return ctx.error("repeats ", dimsString(*reps), " has ", reps->size(),
                       " entries for an input of rank ", in.rank());
    for (size_t i = 0; i < in.rank(); ++i) {
      const Dim& r = (*reps)[i];
      if (r.isStatic() && r.size() < 0)
        return ctx.error("repeats ", dimsString(*reps), " has a negative entry");
      out[i] = mulDims(in.dims[i], r);
    }
  }
  ctx.setOutputType(0, TensorType(in.dtype, out));
  return Status::success();
}

Status evalTile(EvalContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> reps = ctx.input(1).toInt64Vector();
  if (reps.size() != in.rank())
    return ctx.error("repeats ", sizesString(reps), " has ", reps.size(),
                     " entries for an input of rank ", in.rank());
  std::vector<int64_t> outSizes(in.rank());
  for (size_t i = 0; i < in.rank(); ++i) {
    if (reps[i] < 0)
      return ctx.error("repeats ", sizesString(reps), " has a negative entry");
    if (__builtin_mul_overflow(in.sizes()[i], reps[i], &outSizes[i]))
      return ctx.error("repeats ", sizesString(reps), " give a size that overflows 64 bits");
  }
  Expected<bool> needed = checkCopyOutput(in.dtype(), outSizes);
  if (!needed.ok())
    return ctx.error(needed.error().message());
  FB_ASSIGN_OR_RETURN(
      Tensor out,
      copyWithOffsets(in, outSizes, *needed ? repeatOffsets(in, outSizes, true) : OffsetMaps{}));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// DepthToSpace and SpaceToDepth: NCHW rearrangements of channel blocks into spatial blocks.

/// Reads `blocksize` (required, positive) and, for DepthToSpace, whether the mode is CRD.
template <typename Ctx> Expected<std::pair<int64_t, bool>> depthSpaceParams(const Ctx& ctx) {
  auto b = ctx.attrs().getInt("blocksize", 0);
  if (!b)
    return ctx.error(b.error().message());
  if (*b < 1)
    return ctx.error("blocksize must be a positive integer, got ", *b);
  auto mode = ctx.attrs().getString("mode", "DCR");
  if (!mode)
    return ctx.error(mode.error().message());
  if (*mode != "DCR" && *mode != "CRD")
    return ctx.error("mode '", *mode, "' is neither DCR nor CRD");
  return std::pair<int64_t, bool>(*b, *mode == "CRD");
}

/// [N, C, H, W] → [N, C/b², H·b, W·b] (DepthToSpace) or [N, C·b², H/b, W/b] (SpaceToDepth).
template <bool ToSpace> Status inferDepthSpace(InferContext& ctx) {
  const TensorType& x = ctx.inputType(0);
  if (x.rank() != 4)
    return ctx.error("input 0 must be 4-D NCHW, got ", x.str());
  FB_ASSIGN_OR_RETURN(auto params, depthSpaceParams(ctx));
  const int64_t b = params.first;
  std::vector<Dim> out = x.dims;
  auto divide = [&](size_t d, int64_t by) -> Status {
    if (!x.dims[d].isStatic()) {
      out[d] = by == 1 ? x.dims[d] : Dim::unknown();
      return Status::success();
    }
    if (x.dims[d].size() % by != 0)
      return ctx.error("dim ", d, " of ", x.str(), " is not a multiple of ", by);
    out[d] = Dim(x.dims[d].size() / by);
    return Status::success();
  };
  if (ToSpace) {
    FB_TRY(divide(1, b * b));
    out[2] = mulDims(x.dims[2], Dim(b));
    out[3] = mulDims(x.dims[3], Dim(b));
  } else {
    out[1] = mulDims(x.dims[1], Dim(b * b));
    FB_TRY(divide(2, b));
    FB_TRY(divide(3, b));
  }
  ctx.setOutputType(0, TensorType(x.dtype, std::move(out)));
  return Status::success();
}

/// Copies each output element from the input element its block position names.
template <bool ToSpace> Status evalDepthSpace(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4)
    return ctx.error("input 0 must be 4-D NCHW, got ", x.type().str());
  FB_ASSIGN_OR_RETURN(auto params, depthSpaceParams(ctx));
  const auto [b, crd] = params;
  const std::vector<int64_t>& is = x.sizes();
  std::vector<int64_t> os = is;
  if (ToSpace) {
    if (is[1] % (b * b))
      return ctx.error("channels ", is[1], " are not a multiple of blocksize² ", b * b);
    os = {is[0], is[1] / (b * b), is[2] * b, is[3] * b};
  } else {
    if (is[2] % b || is[3] % b)
      return ctx.error("spatial dims of ", x.type().str(), " are not multiples of ", b);
    os = {is[0], is[1] * b * b, is[2] / b, is[3] / b};
  }
  Tensor out(x.dtype(), os);
  const int64_t es = int64_t(dtypeSize(x.dtype()));
  int64_t e = 0;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t c = 0; c < os[1]; ++c)
      for (int64_t h = 0; h < os[2]; ++h)
        for (int64_t w = 0; w < os[3]; ++w, ++e) {
          int64_t ic, ih, iw;
          if (ToSpace) {
            // Output (c, h·b + i, w·b + j) comes from channel (i·b + j)·C' + c (DCR) or
            // c·b² + i·b + j (CRD) at (h, w).
            const int64_t i = h % b, j = w % b;
            ic = crd ? c * b * b + i * b + j : (i * b + j) * os[1] + c;
            ih = h / b;
            iw = w / b;
          } else {
            // Output channel (i·b + j)·C + c at (h, w) comes from (c, h·b + i, w·b + j).
            const int64_t blk = c / is[1], i = blk / b, j = blk % b;
            ic = c % is[1];
            ih = h * b + i;
            iw = w * b + j;
          }
          const int64_t src = ((n * is[1] + ic) * is[2] + ih) * is[3] + iw;
          std::memcpy(out.mutableRawData() + e * es, x.rawData() + src * es, size_t(es));
        }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerDataMovementOps(OpRegistry& r) {
  r.set(OpKind::Flatten, inferFlatten, evalFlatten, zeroFlopsCost);
  r.set(OpKind::Reshape, inferReshape, evalReshape, zeroFlopsCost);
  r.set(OpKind::Transpose, inferTranspose, evalTranspose, zeroFlopsCost);
  r.set(OpKind::Squeeze, inferSqueeze, evalSqueeze, zeroFlopsCost);
  r.set(OpKind::Unsqueeze, inferUnsqueeze, evalUnsqueeze, zeroFlopsCost);
  r.set(OpKind::Expand, inferExpand, evalExpand, zeroFlopsCost);
  r.set(OpKind::Tile, inferTile, evalTile, zeroFlopsCost);
  r.set(OpKind::DepthToSpace, inferDepthSpace</*ToSpace=*/true>, evalDepthSpace<true>,
        zeroFlopsCost);
  r.set(OpKind::SpaceToDepth, inferDepthSpace</*ToSpace=*/false>, evalDepthSpace<false>,
        zeroFlopsCost);
  registerSlicingOps(r);
}

} // namespace fb
