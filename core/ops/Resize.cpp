// Resize (opset 13+ semantics): nearest, n-linear and cubic interpolation with ONNX's coordinate
// transformation modes, following the ONNX reference implementation coordinate by coordinate.
#include "core/ops/DataCopy.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace fb {

namespace {

enum class ResizeMode { Nearest, Linear, Cubic };
enum class CoordMode { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNN,
                       TfCropAndResize };
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

/// Resize's attributes, validated.
struct ResizeAttrs {
  ResizeMode mode = ResizeMode::Nearest;
  CoordMode coord = CoordMode::HalfPixel;
  NearestMode nearest = NearestMode::RoundPreferFloor;
  double extrapolation = 0.0;
  double cubicA = -0.75;       // cubic_coeff_a
  bool excludeOutside = false; // exclude_outside: cubic taps outside the input get weight 0
  std::vector<int64_t> axes; // normalized; every axis when the attribute is absent
};

Expected<ResizeAttrs> parseResizeAttrs(const AttrMap& attrs, int64_t rank) {
  ResizeAttrs a;
  FB_ASSIGN_OR_RETURN(std::string mode, attrs.getString("mode", "nearest"));
  if (mode == "nearest")
    a.mode = ResizeMode::Nearest;
  else if (mode == "linear")
    a.mode = ResizeMode::Linear;
  else if (mode == "cubic")
    a.mode = ResizeMode::Cubic;
  else
    return makeError("unknown mode '", mode, "' (nearest, linear, cubic)");
  FB_ASSIGN_OR_RETURN(std::string coord,
                      attrs.getString("coordinate_transformation_mode", "half_pixel"));
  if (coord == "half_pixel")
    a.coord = CoordMode::HalfPixel;
  else if (coord == "pytorch_half_pixel")
    a.coord = CoordMode::PytorchHalfPixel;
  else if (coord == "align_corners")
    a.coord = CoordMode::AlignCorners;
  else if (coord == "asymmetric")
    a.coord = CoordMode::Asymmetric;
  else if (coord == "tf_half_pixel_for_nn")
    a.coord = CoordMode::TfHalfPixelForNN;
  else if (coord == "tf_crop_and_resize")
    a.coord = CoordMode::TfCropAndResize;
  else if (coord == "half_pixel_symmetric")
    return makeUnsupported("coordinate_transformation_mode '", coord, "' is not supported");
  else
    return makeError("unknown coordinate_transformation_mode '", coord, "'");
  FB_ASSIGN_OR_RETURN(std::string nearest, attrs.getString("nearest_mode", "round_prefer_floor"));
  if (nearest == "round_prefer_floor")
    a.nearest = NearestMode::RoundPreferFloor;
  else if (nearest == "round_prefer_ceil")
    a.nearest = NearestMode::RoundPreferCeil;
  else if (nearest == "floor")
    a.nearest = NearestMode::Floor;
  else if (nearest == "ceil")
    a.nearest = NearestMode::Ceil;
  else
    return makeError("unknown nearest_mode '", nearest, "'");
  FB_ASSIGN_OR_RETURN(float extrapolation, attrs.getFloat("extrapolation_value", 0.f));
  a.extrapolation = extrapolation;
  FB_ASSIGN_OR_RETURN(float cubicA, attrs.getFloat("cubic_coeff_a", -0.75f));
  a.cubicA = cubicA;
  FB_ASSIGN_OR_RETURN(int64_t exclude, attrs.getInt("exclude_outside", 0));
  a.excludeOutside = exclude != 0;
  FB_ASSIGN_OR_RETURN(int64_t antialias, attrs.getInt("antialias", 0));
  if (antialias != 0)
    return makeUnsupported("antialias=1 is not supported");
  FB_ASSIGN_OR_RETURN(std::string policy, attrs.getString("keep_aspect_ratio_policy", "stretch"));
  if (policy != "stretch")
    return makeUnsupported("keep_aspect_ratio_policy '", policy, "' is not supported");
  std::vector<int64_t> all(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i)
    all[size_t(i)] = i;
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> axes, attrs.getInts("axes", all));
  FB_ASSIGN_OR_RETURN(a.axes, normalizeAxes(axes, rank));
  return a;
}

/// Expands per-listed-axis values to one value per input dim, `dflt` elsewhere.
template <typename T>
Expected<std::vector<T>> perDim(const std::vector<T>& values, const std::vector<int64_t>& axes,
                                size_t rank, T dflt, const char* what) {
  if (values.size() != axes.size())
    return makeError(what, " has ", values.size(), " entries, expected ", axes.size());
  std::vector<T> out(rank, dflt);
  for (size_t i = 0; i < axes.size(); ++i)
    out[size_t(axes[i])] = values[i];
  return out;
}

/// floor(in * scale), as the ONNX reference computes the output size from scales.
/// floor(in * scale); -1 (refused by shape inference and by the plan) when it is not finite or
/// beyond 2^62, where converting to int64 would be undefined.
int64_t scaledSize(int64_t in, double scale) {
  const double v = std::floor(double(in) * scale);
  return std::isfinite(v) && v < 4.6e18 ? int64_t(v) : -1;
}

Status inferResize(InferContext& ctx) {
  const TensorType& in = ctx.inputType(0);
  int64_t rank = int64_t(in.rank());
  auto attrs = parseResizeAttrs(ctx.attrs(), rank);
  if (!attrs.ok())
    return attrs.error().isUnsupported() ? ctx.unsupported(attrs.error().message())
                                         : ctx.error(attrs.error().message());
  // An operand of zero elements (or absent) means "not given".
  auto given = [&](size_t i) {
    if (!ctx.hasInput(i))
      return false;
    auto n = ctx.inputType(i).numElements();
    return !n || *n > 0;
  };
  bool hasScales = given(2), hasSizes = given(3);
  if (hasScales == hasSizes)
    return ctx.error(hasScales ? "only one of scales and sizes may be given"
                               : "one of scales and sizes must be given");
  std::vector<Dim> out(in.rank());
  if (hasSizes) {
    if (auto sizes = ctx.inputShapeValue(3)) {
      auto full = perDim(*sizes, attrs->axes, in.rank(), Dim(), "sizes");
      if (!full.ok())
        return ctx.error(full.error().message());
      for (size_t d = 0; d < in.rank(); ++d)
        out[d] = std::find(attrs->axes.begin(), attrs->axes.end(), int64_t(d)) ==
                         attrs->axes.end()
                     ? in.dims[d]
                     : (*full)[d];
    }
  } else if (const Tensor* scales = ctx.inputConstant(2)) {
    if (!isFloat(scales->dtype()))
      return ctx.error("scales must be a float tensor, got ", scales->type().str());
    std::vector<double> s;
    for (int64_t i = 0; i < scales->numElements(); ++i)
      s.push_back(scales->getAsDouble(i));
    auto full = perDim(s, attrs->axes, in.rank(), 1.0, "scales");
    if (!full.ok())
      return ctx.error(full.error().message());
    for (size_t d = 0; d < in.rank(); ++d) {
      double sc = (*full)[d];
      if (!(sc > 0))
        return ctx.error("scale ", sc, " of dim ", d, " is not positive");
      if (in.dims[d].isStatic())
        out[d] = Dim(scaledSize(in.dims[d].size(), sc));
      else if (sc == 1.0)
        out[d] = in.dims[d];
    }
  } else {
    // Scales computed at run time: only dims outside `axes` are known.
    for (size_t d = 0; d < in.rank(); ++d)
      if (std::find(attrs->axes.begin(), attrs->axes.end(), int64_t(d)) == attrs->axes.end())
        out[d] = in.dims[d];
  }
  ctx.setOutputType(0, TensorType(in.dtype, out));
  return Status::success();
}

/// Where output index x of a dim of `inLen` elements samples the input, per the ONNX reference.
/// `scale` is the dim's scale factor; roiStart/roiEnd are used by tf_crop_and_resize only.
double sourceCoordinate(CoordMode mode, double x, double scale, int64_t inLen, double roiStart,
                        double roiEnd) {
  double outLen = scale * double(inLen); // the reference uses the unrounded length
  switch (mode) {
  case CoordMode::HalfPixel: return (x + 0.5) / scale - 0.5;
  case CoordMode::PytorchHalfPixel: return outLen == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  case CoordMode::AlignCorners:
    return outLen == 1 ? 0.0 : x * double(inLen - 1) / (outLen - 1);
  case CoordMode::Asymmetric: return x / scale;
  case CoordMode::TfHalfPixelForNN: return (x + 0.5) / scale;
  case CoordMode::TfCropAndResize: {
    double span = (roiEnd - roiStart) * double(inLen - 1);
    double c = outLen == 1 ? span / 2 : x * span / (outLen - 1);
    return c + roiStart * double(inLen - 1);
  }
  default: assert(false && "unknown coordinate transformation mode"); return 0.0;
  }
}

/// The input index nearest mode picks for source coordinate c (before clamping).
int64_t nearestIndex(NearestMode mode, double c) {
  double fl = std::floor(c);
  if (c == fl)
    return int64_t(c);
  double ratio = c - fl;
  switch (mode) {
  case NearestMode::RoundPreferFloor: return int64_t(fl) + (ratio > 0.5 ? 1 : 0);
  case NearestMode::RoundPreferCeil: return int64_t(fl) + (ratio >= 0.5 ? 1 : 0);
  case NearestMode::Floor: return int64_t(fl);
  case NearestMode::Ceil: return int64_t(fl) + 1;
  default: assert(false && "unknown nearest mode"); return 0;
  }
}

/// The resolved geometry of one Resize call: output sizes, per-dim scales and ROI.
struct ResizePlan {
  std::vector<int64_t> outSizes;
  std::vector<double> scales;
  std::vector<double> roiStart, roiEnd;
};

Expected<ResizePlan> planResize(const EvalContext& ctx, const ResizeAttrs& attrs) {
  const Tensor& x = ctx.input(0);
  size_t rank = x.rank();
  auto given = [&](size_t i) { return ctx.hasInput(i) && ctx.input(i).numElements() > 0; };
  ResizePlan p;
  if (given(2) == given(3))
    return makeError(given(2) ? "only one of scales and sizes may be given"
                              : "one of scales and sizes must be given");
  p.roiStart.assign(rank, 0.0);
  p.roiEnd.assign(rank, 1.0);
  if (attrs.coord == CoordMode::TfCropAndResize && given(1)) {
    const Tensor& roi = ctx.input(1);
    size_t k = attrs.axes.size();
    if (size_t(roi.numElements()) != 2 * k)
      return makeError("roi ", roi.type().str(), " must hold ", 2 * k, " values");
    for (size_t i = 0; i < k; ++i) {
      p.roiStart[size_t(attrs.axes[i])] = roi.getAsDouble(int64_t(i));
      p.roiEnd[size_t(attrs.axes[i])] = roi.getAsDouble(int64_t(i + k));
    }
  }
  p.outSizes = x.sizes();
  p.scales.assign(rank, 1.0);
  if (given(3)) {
    auto sizes = perDim(ctx.input(3).toInt64Vector(), attrs.axes, rank, int64_t(-1), "sizes");
    if (!sizes.ok())
      return sizes.error();
    for (int64_t a : attrs.axes) {
      int64_t s = (*sizes)[size_t(a)];
      if (s < 0)
        return makeError("sizes has the negative size ", s);
      p.outSizes[size_t(a)] = s;
      p.scales[size_t(a)] = double(s) / double(x.sizes()[size_t(a)]);
    }
  } else {
    std::vector<double> s;
    for (int64_t i = 0; i < ctx.input(2).numElements(); ++i)
      s.push_back(double(float(ctx.input(2).getAsDouble(i))));
    auto scales = perDim(s, attrs.axes, rank, 1.0, "scales");
    if (!scales.ok())
      return scales.error();
    for (size_t d = 0; d < rank; ++d) {
      double sc = (*scales)[d];
      if (!(sc > 0))
        return makeError("scale ", sc, " of dim ", d, " is not positive");
      p.scales[d] = sc;
      double span = attrs.coord == CoordMode::TfCropAndResize ? p.roiEnd[d] - p.roiStart[d] : 1.0;
      p.outSizes[d] = scaledSize(x.sizes()[d], span * sc);
      if (p.outSizes[d] < 0)
        return makeError("scale ", sc, " of dim ", d,
                         " gives a negative size or one beyond "
                         "64-bit arithmetic");
    }
  }
  return p;
}

/// True when dim d maps output index i to input index i, so it needs no work.
bool isIdentityDim(const ResizePlan& p, const ResizeAttrs& a, size_t d, int64_t inLen) {
  return p.outSizes[d] == inLen && p.scales[d] == 1.0 && p.roiStart[d] == 0.0 &&
         p.roiEnd[d] == 1.0 && a.coord != CoordMode::TfHalfPixelForNN;
}

Status evalNearest(EvalContext& ctx, const ResizeAttrs& a, const ResizePlan& p) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> strides = x.strides();
  std::vector<std::vector<int64_t>> offsets(x.rank());
  for (size_t d = 0; d < x.rank(); ++d) {
    int64_t inLen = x.sizes()[d];
    offsets[d].resize(size_t(p.outSizes[d]));
    for (int64_t o = 0; o < p.outSizes[d]; ++o) {
      if (isIdentityDim(p, a, d, inLen)) {
        offsets[d][size_t(o)] = o * strides[d];
        continue;
      }
      double c = sourceCoordinate(a.coord, double(o), p.scales[d], inLen, p.roiStart[d],
                                  p.roiEnd[d]);
      if (a.coord == CoordMode::TfCropAndResize && (c < 0 || c > double(inLen - 1))) {
        offsets[d][size_t(o)] = kOutsideInput;
        continue;
      }
      int64_t i = std::clamp<int64_t>(nearestIndex(a.nearest, c), 0, inLen - 1);
      offsets[d][size_t(o)] = i * strides[d];
    }
  }
  Tensor fill(x.dtype(), {});
  fill.setFromDouble(0, a.extrapolation);
  FB_ASSIGN_OR_RETURN(Tensor out, copyWithOffsets(x, p.outSizes, offsets, fill.rawData()));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// The four weights of Keys' cubic convolution for the taps at floor(c) - 1 .. floor(c) + 2,
/// where `ratio` = c - floor(c) (the ONNX reference's cubic_coeffs).
std::array<double, 4> cubicCoefficients(double ratio, double A) {
  const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
  return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A,
          ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1, ((A + 2) * q - (A + 3)) * q * q + 1,
          ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
}

/// Cubic interpolation along one dim, as the reference computes it: the four input elements
/// nearest to the source coordinate c (ties to the lower index; when c is an integer that is
/// c - 2 .. c + 1 with ratio 1, so the weight 1 falls on c itself), indices past the edges
/// clamped (edge padding), or with exclude_outside their weights zeroed and the rest
/// renormalized.
std::vector<double> cubicPass(const std::vector<double>& buf, std::vector<int64_t>& sizes, size_t d,
                              const ResizeAttrs& a, const ResizePlan& p) {
  const int64_t inLen = sizes[d], outLen = p.outSizes[d];
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k)
    outer *= sizes[k];
  for (size_t k = d + 1; k < sizes.size(); ++k)
    inner *= sizes[k];
  const size_t n = size_t(outLen);
  std::vector<std::array<int64_t, 4>> idx(n);
  std::vector<std::array<double, 4>> w(n);
  std::vector<char> outside(n, 0);
  for (int64_t o = 0; o < outLen; ++o) {
    const double c =
        sourceCoordinate(a.coord, double(o), p.scales[d], inLen, p.roiStart[d], p.roiEnd[d]);
    if (a.coord == CoordMode::TfCropAndResize && (c < 0 || c > double(inLen - 1))) {
      outside[size_t(o)] = 1;
      continue;
    }
    double base = std::floor(c), ratio = c - base;
    if (ratio == 0) {
      ratio = 1;
      base -= 1;
    }
    std::array<double, 4> coeff = cubicCoefficients(ratio, a.cubicA);
    double total = 0;
    for (int t = 0; t < 4; ++t) {
      const int64_t i = int64_t(base) - 1 + t;
      if (a.excludeOutside && (i < 0 || i >= inLen))
        coeff[size_t(t)] = 0;
      total += coeff[size_t(t)];
      idx[size_t(o)][size_t(t)] = std::clamp<int64_t>(i, 0, inLen - 1);
    }
    for (int t = 0; t < 4; ++t)
      w[size_t(o)][size_t(t)] =
          a.excludeOutside && total != 0 ? coeff[size_t(t)] / total : coeff[size_t(t)];
  }
  std::vector<double> out(size_t(outer * outLen * inner));
  for (int64_t r = 0; r < outer; ++r)
    for (int64_t o = 0; o < outLen; ++o) {
      double* dst = out.data() + (r * outLen + o) * inner;
      if (outside[size_t(o)]) {
        std::fill(dst, dst + inner, a.extrapolation);
        continue;
      }
      for (int64_t i = 0; i < inner; ++i) {
        double v = 0;
        for (size_t t = 0; t < 4; ++t)
          v += w[size_t(o)][t] * buf[size_t((r * inLen + idx[size_t(o)][t]) * inner + i)];
        dst[i] = v;
      }
    }
  sizes[d] = outLen;
  return out;
}

/// Linear interpolation along one dim of a row-major double buffer, in place of `buf`.
std::vector<double> linearPass(const std::vector<double>& buf, std::vector<int64_t>& sizes,
                               size_t d, const ResizeAttrs& a, const ResizePlan& p) {
  int64_t inLen = sizes[d], outLen = p.outSizes[d];
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k)
    outer *= sizes[k];
  for (size_t k = d + 1; k < sizes.size(); ++k)
    inner *= sizes[k];
  // Per output index: the two neighbours and their weights, or outside (extrapolate).
  size_t n = static_cast<size_t>(outLen);
  std::vector<int64_t> lo(n), hi(n);
  std::vector<double> wHi(n);
  std::vector<char> outside(n, 0);
  for (int64_t o = 0; o < outLen; ++o) {
    double c = sourceCoordinate(a.coord, double(o), p.scales[d], inLen, p.roiStart[d],
                                p.roiEnd[d]);
    if (a.coord == CoordMode::TfCropAndResize && (c < 0 || c > double(inLen - 1))) {
      outside[size_t(o)] = 1;
      continue;
    }
    double fl = std::floor(c);
    lo[size_t(o)] = std::clamp<int64_t>(int64_t(fl), 0, inLen - 1);
    hi[size_t(o)] = std::clamp<int64_t>(int64_t(fl) + 1, 0, inLen - 1);
    wHi[size_t(o)] = c - fl;
  }
  std::vector<double> out(size_t(outer * outLen * inner));
  for (int64_t r = 0; r < outer; ++r)
    for (int64_t o = 0; o < outLen; ++o) {
      double* dst = out.data() + (r * outLen + o) * inner;
      if (outside[size_t(o)]) {
        std::fill(dst, dst + inner, a.extrapolation);
        continue;
      }
      const double* a0 = buf.data() + (r * inLen + lo[size_t(o)]) * inner;
      const double* a1 = buf.data() + (r * inLen + hi[size_t(o)]) * inner;
      double w = wHi[size_t(o)];
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = (1 - w) * a0[i] + w * a1[i];
    }
  sizes[d] = outLen;
  return out;
}

Status evalLinear(EvalContext& ctx, const ResizeAttrs& a, const ResizePlan& p) {
  const Tensor& x = ctx.input(0);
  std::vector<double> buf(size_t(x.numElements()));
  for (int64_t i = 0; i < x.numElements(); ++i)
    buf[size_t(i)] = x.getAsDouble(i);
  std::vector<int64_t> sizes = x.sizes();
  // Linear and cubic interpolation are separable: one pass per resized dim, innermost first as
  // the reference's recursion does.
  for (size_t d = x.rank(); d-- > 0;) {
    if (isIdentityDim(p, a, d, sizes[d]))
      continue;
    buf = a.mode == ResizeMode::Cubic ? cubicPass(buf, sizes, d, a, p)
                                      : linearPass(buf, sizes, d, a, p);
  }
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(x.dtype(), p.outSizes));
  bool integral = isInteger(x.dtype());
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.setFromDouble(i, integral ? std::nearbyint(buf[size_t(i)]) : buf[size_t(i)]);
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

Status evalResize(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto attrs = parseResizeAttrs(ctx.attrs(), int64_t(x.rank()));
  if (!attrs.ok())
    return attrs.error().isUnsupported() ? ctx.unsupported(attrs.error().message())
                                         : ctx.error(attrs.error().message());
  auto plan = planResize(ctx, *attrs);
  if (!plan.ok())
    return ctx.error(plan.error().message());
  for (size_t d = 0; d < x.rank(); ++d)
    if (x.sizes()[d] == 0 && plan->outSizes[d] > 0)
      return ctx.error("cannot resize the empty dim ", d, " of ", x.type().str());
  // Both modes build per-dim tables as long as the output's dims: refuse a size that cannot be
  // allocated before them, and skip them for an empty output.
  Expected<bool> needed = checkCopyOutput(x.dtype(), plan->outSizes);
  if (!needed.ok())
    return ctx.error(needed.error().message());
  if (!*needed) {
    FB_ASSIGN_OR_RETURN(Tensor empty, Tensor::create(x.dtype(), plan->outSizes));
    ctx.setOutput(0, std::move(empty));
    return Status::success();
  }
  if (attrs->mode == ResizeMode::Nearest)
    return evalNearest(ctx, *attrs, *plan);
  return evalLinear(ctx, *attrs, *plan);
}

/// Nearest moves data; linear does about three FLOPs per output element and resized dim.
OpCost resizeCost(const CostContext& ctx) {
  OpCost c;
  auto mode = ctx.attrs().getString("mode", "nearest");
  if (!mode.ok() || *mode == "nearest")
    return c;
  const TensorType& in = ctx.inputType(0);
  const TensorType& out = ctx.outputType(0);
  int resized = 0;
  for (size_t d = 0; d < in.rank() && d < out.rank(); ++d)
    resized += in.dims[d] == out.dims[d] ? 0 : 1;
  double perDim = *mode == "cubic" ? 8.0 : 3.0;
  c.flops = ctx.outputElements() * perDim * double(resized);
  return c;
}

} // namespace

void registerResizeOps(OpRegistry& r) { r.set(OpKind::Resize, inferResize, evalResize, resizeCost); }

} // namespace fb
