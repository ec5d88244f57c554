// Sliding-window geometry: attribute reading, output sizes and SAME padding for conv and pools.
#include "core/ops/ConvGeometry.h"
#include "core/ops/KernelUtil.h"

#include <algorithm>

namespace fb {

std::string dimsToString(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i].str();
  return s + "]";
}

static std::string intsToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// Reads an ints attribute of exactly `count` entries, each at least `minValue`.
static Expected<std::vector<int64_t>> readAxisInts(const AttrMap& attrs, const char* name,
                                                   size_t count, int64_t dflt, int64_t minValue) {
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                      attrs.getInts(name, std::vector<int64_t>(count, dflt)));
  if (v.size() != count)
    return makeError("attribute '", name, "' has ", v.size(), " entries, expected ", count,
                     " (one per spatial axis)");
  for (int64_t x : v)
    if (x < minValue)
      return makeError("attribute '", name, "' = ", intsToString(v), " has an entry below ",
                       minValue);
  return v;
}

Expected<WindowGeometry> readWindowGeometry(const AttrMap& attrs, WindowKind kind,
                                            size_t spatialRank,
                                            const std::vector<Dim>& weightKernel) {
  if (spatialRank == 0)
    return makeError("input has no spatial axes (rank must be at least 3)");
  if (spatialRank > 3)
    return makeUnsupported("only 1-D, 2-D and 3-D windows are supported, got ", spatialRank,
                           " spatial axes");
  WindowGeometry g;
  FB_ASSIGN_OR_RETURN(std::string autoPad, attrs.getString("auto_pad", "NOTSET"));
  if (autoPad == "NOTSET" || autoPad.empty())
    g.autoPad = AutoPad::NotSet;
  else if (autoPad == "SAME_UPPER")
    g.autoPad = AutoPad::SameUpper;
  else if (autoPad == "SAME_LOWER")
    g.autoPad = AutoPad::SameLower;
  else if (autoPad == "VALID")
    g.autoPad = AutoPad::Valid;
  else
    return makeError("attribute 'auto_pad' is '", autoPad,
                     "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");

  if (attrs.has("kernel_shape")) {
    FB_ASSIGN_OR_RETURN(g.kernel, readAxisInts(attrs, "kernel_shape", spatialRank, 1, 1));
    if (!weightKernel.empty())
      for (size_t i = 0; i < spatialRank; ++i)
        if (dimsConflict(weightKernel[i], Dim(g.kernel[i])))
          return makeError("attribute 'kernel_shape' = ", intsToString(g.kernel),
                           " does not match W's spatial dims ", dimsToString(weightKernel));
  } else if (kind == WindowKind::Pool) {
    return makeError("required attribute 'kernel_shape' is missing");
  } else {
    assert(weightKernel.size() == spatialRank && "conv kinds pass W's spatial dims");
    for (const Dim& d : weightKernel)
      g.kernel.push_back(d.isStatic() ? d.size() : -1);
  }
  FB_ASSIGN_OR_RETURN(g.strides, readAxisInts(attrs, "strides", spatialRank, 1, 1));
  FB_ASSIGN_OR_RETURN(g.dilations, readAxisInts(attrs, "dilations", spatialRank, 1, 1));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> pads,
                      readAxisInts(attrs, "pads", 2 * spatialRank, 0, 0));
  g.padsBegin.assign(pads.begin(), pads.begin() + spatialRank);
  g.padsEnd.assign(pads.begin() + spatialRank, pads.end());
  if (g.autoPad == AutoPad::Valid) {
    // VALID means no padding whatever `pads` says.
    std::fill(g.padsBegin.begin(), g.padsBegin.end(), 0);
    std::fill(g.padsEnd.begin(), g.padsEnd.end(), 0);
  }
  g.outputPadding.assign(spatialRank, 0);
  if (kind == WindowKind::ConvTranspose) {
    FB_ASSIGN_OR_RETURN(g.outputPadding,
                        readAxisInts(attrs, "output_padding", spatialRank, 0, 0));
    if (attrs.has("output_shape")) {
      FB_ASSIGN_OR_RETURN(std::vector<int64_t> os, attrs.getInts("output_shape", {}));
      // Exporters write either the spatial sizes or the full [N, C, spatial...] shape.
      if (os.size() == spatialRank + 2)
        os.erase(os.begin(), os.begin() + 2);
      if (os.size() != spatialRank)
        return makeError("attribute 'output_shape' = ", intsToString(os), " has ", os.size(),
                         " entries, expected ", spatialRank);
      for (int64_t v : os)
        if (v < 1)
          return makeError("attribute 'output_shape' = ", intsToString(os),
                           " has a non-positive entry");
      g.outputShape = std::move(os);
    }
  }
  if (kind == WindowKind::Pool) {
    FB_ASSIGN_OR_RETURN(int64_t ceilMode, attrs.getInt("ceil_mode", 0));
    g.ceilMode = ceilMode != 0;
  }
  // Bounded so that output-size arithmetic (an effective kernel is (k-1)*d+1, a transposed
  // output s*(n-1)+...) cannot overflow: no real model comes near 2^31 on one window axis.
  constexpr int64_t kLimit = int64_t(1) << 31;
  auto bounded = [&](const std::vector<int64_t>& v, const char* what) -> Status {
    for (int64_t x : v)
      if (x > kLimit || x < -kLimit)
        return makeError("attribute '", what, "' = ", intsToString(v),
                         " exceeds the supported magnitude 2^31");
    return Status::success();
  };
  FB_TRY(bounded(g.kernel, "kernel_shape"));
  FB_TRY(bounded(g.strides, "strides"));
  FB_TRY(bounded(g.dilations, "dilations"));
  FB_TRY(bounded(g.padsBegin, "pads"));
  FB_TRY(bounded(g.padsEnd, "pads"));
  FB_TRY(bounded(g.outputPadding, "output_padding"));
  FB_TRY(bounded(g.outputShape, "output_shape"));
  return g;
}

Expected<Dim> windowOutputDim(const WindowGeometry& g, size_t i, const Dim& in) {
  if (!in.isStatic() || g.kernel[i] < 0)
    return Dim::unknown();
  int64_t n = in.size();
  int64_t s = g.strides[i];
  int64_t ek = g.effectiveKernel(i);
  if (g.autoPad == AutoPad::SameUpper || g.autoPad == AutoPad::SameLower)
    return Dim((n + s - 1) / s);
  int64_t pb = g.padsBegin[i];
  int64_t span = n + pb + g.padsEnd[i] - ek;
  if (span < 0)
    return makeError("the window of extent ", ek, " (kernel ", g.kernel[i], ", dilation ",
                     g.dilations[i], ") does not fit spatial axis ", i, " of size ", n,
                     " with pads ", pb, "+", g.padsEnd[i]);
  int64_t out = g.ceilMode ? (span + s - 1) / s + 1 : span / s + 1;
  // ceil_mode must not start a window entirely in the end padding (as PyTorch and ONNX do).
  if (g.ceilMode && (out - 1) * s >= n + pb)
    --out;
  return Dim(out);
}

Expected<std::vector<int64_t>> windowOutputSizes(WindowGeometry& g,
                                                 const std::vector<int64_t>& inSizes) {
  assert(inSizes.size() == g.rank() && "one input size per spatial axis");
  std::vector<int64_t> out(g.rank());
  for (size_t i = 0; i < g.rank(); ++i) {
    assert(g.kernel[i] > 0 && "concrete sizes need a known kernel");
    if (g.autoPad == AutoPad::SameUpper || g.autoPad == AutoPad::SameLower) {
      int64_t s = g.strides[i];
      int64_t o = (inSizes[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (o - 1) * s + g.effectiveKernel(i) - inSizes[i]);
      // SAME_UPPER puts the odd pad at the end, SAME_LOWER at the beginning.
      int64_t small = total / 2;
      g.padsBegin[i] = g.autoPad == AutoPad::SameUpper ? small : total - small;
      g.padsEnd[i] = total - g.padsBegin[i];
    }
    FB_ASSIGN_OR_RETURN(Dim d, windowOutputDim(g, i, Dim(inSizes[i])));
    out[i] = d.size();
  }
  return out;
}

Expected<Dim> transposedOutputDim(const WindowGeometry& g, size_t i, const Dim& in) {
  if (!g.outputShape.empty())
    return Dim(g.outputShape[i]);
  if (!in.isStatic() || g.kernel[i] < 0)
    return Dim::unknown();
  int64_t n = in.size();
  if (g.autoPad == AutoPad::SameUpper || g.autoPad == AutoPad::SameLower)
    return Dim(n * g.strides[i]);
  int64_t out = 0;
  if (__builtin_mul_overflow(g.strides[i], n - 1, &out) ||
      __builtin_add_overflow(
          out, g.outputPadding[i] + g.effectiveKernel(i) - g.padsBegin[i] - g.padsEnd[i], &out))
    return makeError("the output of spatial axis ", i, " (input ", n, ", stride ", g.strides[i],
                     ") overflows 64 bits");
  if (out < 1)
    return makeError("the output of spatial axis ", i, " would have size ", out,
                     " (input ", n, ", pads ", g.padsBegin[i], "+", g.padsEnd[i], ")");
  return Dim(out);
}

Expected<std::vector<int64_t>> transposedOutputSizes(WindowGeometry& g,
                                                     const std::vector<int64_t>& inSizes) {
  assert(inSizes.size() == g.rank() && "one input size per spatial axis");
  std::vector<int64_t> out(g.rank());
  for (size_t i = 0; i < g.rank(); ++i) {
    assert(g.kernel[i] > 0 && "concrete sizes need a known kernel");
    FB_ASSIGN_OR_RETURN(Dim d, transposedOutputDim(g, i, Dim(inSizes[i])));
    out[i] = d.size();
    bool same = g.autoPad == AutoPad::SameUpper || g.autoPad == AutoPad::SameLower;
    if (same || !g.outputShape.empty()) {
      // The padding that makes the full transposed output come out at the requested size.
      int64_t total = g.strides[i] * (inSizes[i] - 1) + g.outputPadding[i] +
                      g.effectiveKernel(i) - out[i];
      // Floor division, as the ONNX spec's Python does: a negative total (output_shape larger
      // than the full result) leaves the extra outputs at the end.
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      g.padsBegin[i] = g.autoPad == AutoPad::SameUpper ? half : total - half;
      g.padsEnd[i] = total - g.padsBegin[i];
    }
  }
  return out;
}

Expected<std::vector<Dim>> convOutputDims(const AttrMap& attrs, const TensorType& x,
                                          const TensorType& w) {
  if (x.rank() < 3)
    return makeError("X ", x.str(), " must have rank 3 or more (N, C, spatial...)");
  if (w.rank() != x.rank())
    return makeError("W ", w.str(), " must have the rank of X ", x.str(),
                     " (M, C/group, kernel...)");
  FB_ASSIGN_OR_RETURN(int64_t group, attrs.getInt("group", 1));
  if (group < 1)
    return makeError("attribute 'group' = ", group, " must be positive");
  const Dim& c = x.dims[1];
  const Dim& cPerGroup = w.dims[1];
  if (c.isStatic() && cPerGroup.isStatic() && c.size() != cPerGroup.size() * group)
    return makeError("channel mismatch: X ", x.str(), " has ", c.size(), " channels but W ",
                     w.str(), " expects ", cPerGroup.size() * group, " (", cPerGroup.size(),
                     " per group x group ", group, ")");
  const Dim& m = w.dims[0];
  if (m.isStatic() && m.size() % group != 0)
    return makeError("W ", w.str(), " has ", m.size(),
                     " output channels, not divisible by group ", group);
  std::vector<Dim> weightKernel(w.dims.begin() + 2, w.dims.end());
  FB_ASSIGN_OR_RETURN(WindowGeometry g,
                      readWindowGeometry(attrs, WindowKind::Conv, x.rank() - 2, weightKernel));
  std::vector<Dim> out = {x.dims[0], m};
  for (size_t i = 0; i < g.rank(); ++i) {
    FB_ASSIGN_OR_RETURN(Dim d, windowOutputDim(g, i, x.dims[i + 2]));
    out.push_back(d);
  }
  return out;
}

ConvProblem makeConvProblem(const WindowGeometry& g, const std::vector<int64_t>& xSizes,
                            const std::vector<int64_t>& ySizes, int64_t groups) {
  assert(xSizes.size() == g.rank() + 2 && ySizes.size() == g.rank() + 2 &&
         "X and Y are [N, C, spatial...]");
  ConvProblem p;
  p.batch = xSizes[0];
  p.inChannels = xSizes[1];
  p.outChannels = ySizes[1];
  p.groups = groups;
  size_t offset = 3 - g.rank();
  for (size_t i = 0; i < g.rank(); ++i) {
    p.in[offset + i] = xSizes[i + 2];
    p.out[offset + i] = ySizes[i + 2];
    p.kernel[offset + i] = g.kernel[i];
    p.stride[offset + i] = g.strides[i];
    p.dilation[offset + i] = g.dilations[i];
    p.padBegin[offset + i] = g.padsBegin[i];
    p.padEnd[offset + i] = g.padsEnd[i];
  }
  return p;
}

} // namespace fb
