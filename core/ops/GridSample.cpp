// GridSample (opset 16, 4-D): samples X (N, C, H, W) at the normalized positions of a grid
// (N, Hout, Wout, 2) of (x, y) in [-1, 1], with nearest, bilinear or bicubic interpolation and
// zeros, border or reflection padding, following PyTorch's grid_sample, which ONNX's reference
// outputs come from.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace fb {

using namespace math;

namespace {

enum class GridMode { Bilinear, Nearest, Bicubic };
enum class GridPadding { Zeros, Border, Reflection };

struct GridAttrs {
  GridMode mode = GridMode::Bilinear;
  GridPadding padding = GridPadding::Zeros;
  bool alignCorners = false;
};

template <typename Ctx> Expected<GridAttrs> gridAttrs(const Ctx& ctx) {
  GridAttrs a;
  Expected<std::string> mode = ctx.attrs().getString("mode", "bilinear");
  Expected<std::string> padding = ctx.attrs().getString("padding_mode", "zeros");
  if (!mode)
    return ctx.error(mode.error().message());
  if (!padding)
    return ctx.error(padding.error().message());
  if (*mode == "bilinear")
    a.mode = GridMode::Bilinear;
  else if (*mode == "nearest")
    a.mode = GridMode::Nearest;
  else if (*mode == "bicubic")
    a.mode = GridMode::Bicubic;
  else
    return ctx.error("mode '", *mode, "' is not one of bilinear, nearest, bicubic");
  if (*padding == "zeros")
    a.padding = GridPadding::Zeros;
  else if (*padding == "border")
    a.padding = GridPadding::Border;
  else if (*padding == "reflection")
    a.padding = GridPadding::Reflection;
  else
    return ctx.error("padding_mode '", *padding, "' is not one of zeros, border, reflection");
  FB_ASSIGN_OR_RETURN(int64_t align, intAttr(ctx, "align_corners", 0));
  a.alignCorners = align != 0;
  return a;
}

/// (N, C, Hout, Wout) from X (N, C, H, W) and the grid (N, Hout, Wout, 2).
Status inferGridSample(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  FB_TRY(checkInputDType(ctx, 1, kFloatTypes));
  const TensorType& x = ctx.inputType(0);
  const TensorType& g = ctx.inputType(1);
  if (x.rank() != 4)
    return ctx.error("input 0 must be 4-D (N, C, H, W), got ", x.str());
  if (g.rank() != 4 || dimsConflict(g.dims[3], Dim(2)) || dimsConflict(g.dims[0], x.dims[0]))
    return ctx.error("input 1 (grid) must be (N, Hout, Wout, 2) with the N of ", x.str(), ", got ",
                     g.str());
  FB_ASSIGN_OR_RETURN(GridAttrs a, gridAttrs(ctx));
  (void)a;
  ctx.setOutputType(0, TensorType(x.dtype, {x.dims[0], x.dims[1], g.dims[1], g.dims[2]}));
  return Status::success();
}

/// A normalized coordinate in [-1, 1] as a pixel coordinate of an axis of `size` pixels.
double unnormalize(double v, int64_t size, bool alignCorners) {
  return alignCorners ? (v + 1) / 2 * double(size - 1) : ((v + 1) * double(size) - 1) / 2;
}

/// Folds v into [twiceLow / 2, twiceHigh / 2] by reflecting at the ends (PyTorch's
/// reflect_coordinates).
double reflect(double v, double twiceLow, double twiceHigh) {
  if (twiceLow == twiceHigh)
    return 0;
  const double lo = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
  v = std::fabs(v - lo);
  const double extra = std::fmod(v, span);
  const int64_t flips = int64_t(std::floor(v / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

/// A pixel coordinate after border or reflection padding (unchanged for zeros padding).
double padCoordinate(double v, int64_t size, const GridAttrs& a) {
  if (a.padding == GridPadding::Border)
    return std::clamp(v, 0.0, double(size - 1));
  if (a.padding == GridPadding::Reflection) {
    v = a.alignCorners ? reflect(v, 0, 2 * double(size - 1)) : reflect(v, -1, 2 * double(size) - 1);
    return std::clamp(v, 0.0, double(size - 1));
  }
  return v;
}

/// Keys' cubic convolution weights (A = -0.75) of the taps at floor - 1 .. floor + 2.
std::array<double, 4> bicubicWeights(double t) {
  const double A = -0.75;
  auto near1 = [A](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto far2 = [A](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  return {far2(t + 1), near1(t), near1(1 - t), far2(2 - t)};
}

/// For each output pixel: unnormalize the grid point, then
///   nearest: the pixel at the rounded (half to even), padded coordinate, 0 outside;
///   bilinear: the four neighbours of the padded coordinate, those outside weighing 0;
///   bicubic: the 4×4 neighbours of the unpadded coordinate, each tap's position padded.
Status evalGridSample(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  FB_ASSIGN_OR_RETURN(GridAttrs a, gridAttrs(ctx));
  const std::vector<int64_t> xs = x.sizes(), gs = grid.sizes();
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], Ho = gs[1], Wo = gs[2];
  if (gs[0] != N || gs[3] != 2)
    return ctx.error("input 1 (grid) ", grid.type().str(), " does not fit ", x.type().str());
  Tensor out(x.dtype(), {N, C, Ho, Wo});
  auto pixel = [&](int64_t n, int64_t c, int64_t py, int64_t px) {
    if (py < 0 || py >= H || px < 0 || px >= W)
      return 0.0;
    return x.getAsDouble(((n * C + c) * H + py) * W + px);
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < Ho; ++h)
      for (int64_t w = 0; w < Wo; ++w) {
        const int64_t g = ((n * Ho + h) * Wo + w) * 2;
        double ix = unnormalize(grid.getAsDouble(g), W, a.alignCorners);
        double iy = unnormalize(grid.getAsDouble(g + 1), H, a.alignCorners);
        for (int64_t c = 0; c < C; ++c) {
          double v = 0;
          if (a.mode == GridMode::Nearest) {
            const double px = std::nearbyint(padCoordinate(ix, W, a));
            const double py = std::nearbyint(padCoordinate(iy, H, a));
            v = pixel(n, c, int64_t(py), int64_t(px));
          } else if (a.mode == GridMode::Bilinear) {
            const double px = padCoordinate(ix, W, a), py = padCoordinate(iy, H, a);
            const double x0 = std::floor(px), y0 = std::floor(py);
            const double tx = px - x0, ty = py - y0;
            const int64_t X0 = int64_t(x0), Y0 = int64_t(y0);
            v = pixel(n, c, Y0, X0) * (1 - tx) * (1 - ty) +
                pixel(n, c, Y0, X0 + 1) * tx * (1 - ty) + pixel(n, c, Y0 + 1, X0) * (1 - tx) * ty +
                pixel(n, c, Y0 + 1, X0 + 1) * tx * ty;
          } else {
            const double x0 = std::floor(ix), y0 = std::floor(iy);
            const std::array<double, 4> wx = bicubicWeights(ix - x0), wy = bicubicWeights(iy - y0);
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 4; ++j) {
                const double py = padCoordinate(y0 - 1 + i, H, a);
                const double px = padCoordinate(x0 - 1 + j, W, a);
                v += wy[size_t(i)] * wx[size_t(j)] * pixel(n, c, int64_t(py), int64_t(px));
              }
          }
          out.setFromDouble(((n * C + c) * Ho + h) * Wo + w, v);
        }
      }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Per output element: the coordinate arithmetic and up to 16 weighted taps.
OpCost gridSampleCost(const CostContext& ctx) {
  auto mode = ctx.attrs().getString("mode", "bilinear");
  const double perElement = !mode.ok() || *mode == "bilinear" ? 12 : *mode == "nearest" ? 4 : 40;
  return OpCost{ctx.outputElements(0) * perElement, 0};
}

} // namespace

void registerGridSampleOps(OpRegistry& r) {
  r.set(OpKind::GridSample, inferGridSample, evalGridSample, gridSampleCost);
}

} // namespace fb
