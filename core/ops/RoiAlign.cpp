// RoiAlign: average (or max) pools each region of interest of X into a fixed output_height ×
// output_width grid, sampling each bin at regularly spaced points by bilinear interpolation,
// exactly as ONNX Runtime's RoiAlign does (including its 'max' mode, the largest weighted
// corner term of each sample).
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <cmath>

namespace fb {

using namespace math;

namespace {

struct RoiAlignAttrs {
  bool max = false;      ///< mode 'max' (else 'avg')
  bool halfPixel = true; ///< coordinate_transformation_mode 'half_pixel' (else 'output_half_pixel')
  int64_t outH = 1, outW = 1, samplingRatio = 0;
  double spatialScale = 1;
};

template <typename Ctx> Expected<RoiAlignAttrs> roiAlignAttrs(const Ctx& ctx) {
  RoiAlignAttrs a;
  Expected<std::string> mode = ctx.attrs().getString("mode", "avg");
  Expected<std::string> coord =
      ctx.attrs().getString("coordinate_transformation_mode", "half_pixel");
  if (!mode)
    return ctx.error(mode.error().message());
  if (!coord)
    return ctx.error(coord.error().message());
  if (*mode != "avg" && *mode != "max")
    return ctx.error("mode '", *mode, "' is not one of avg, max");
  if (*coord != "half_pixel" && *coord != "output_half_pixel")
    return ctx.error("coordinate_transformation_mode '", *coord,
                     "' is not one of half_pixel, output_half_pixel");
  a.max = *mode == "max";
  a.halfPixel = *coord == "half_pixel";
  FB_ASSIGN_OR_RETURN(a.outH, intAttr(ctx, "output_height", 1));
  FB_ASSIGN_OR_RETURN(a.outW, intAttr(ctx, "output_width", 1));
  FB_ASSIGN_OR_RETURN(a.samplingRatio, intAttr(ctx, "sampling_ratio", 0));
  FB_ASSIGN_OR_RETURN(float scale, floatAttr(ctx, "spatial_scale", 1.0f));
  a.spatialScale = scale;
  if (a.outH < 1 || a.outW < 1 || a.samplingRatio < 0)
    return ctx.error("output_height, output_width must be >= 1 and sampling_ratio >= 0");
  return a;
}

/// (num_rois, C, output_height, output_width).
Status inferRoiAlign(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  FB_TRY(checkSameDType(ctx, 0, 1));
  const TensorType& x = ctx.inputType(0);
  const TensorType& rois = ctx.inputType(1);
  const TensorType& batch = ctx.inputType(2);
  if (x.rank() != 4)
    return ctx.error("input 0 must be (N, C, H, W), got ", x.str());
  if (rois.rank() != 2 || dimsConflict(rois.dims[1], Dim(4)))
    return ctx.error("input 1 (rois) must be (num_rois, 4), got ", rois.str());
  if ((batch.dtype != DType::I64 && batch.dtype != DType::I32) || batch.rank() != 1 ||
      dimsConflict(batch.dims[0], rois.dims[0]))
    return ctx.error("input 2 (batch_indices) must be 1-D i64 with one entry per roi, got ",
                     batch.str());
  FB_ASSIGN_OR_RETURN(RoiAlignAttrs a, roiAlignAttrs(ctx));
  ctx.setOutputType(0, TensorType(x.dtype, {rois.dims[0], x.dims[1], Dim(a.outH), Dim(a.outW)}));
  return Status::success();
}

/// One bilinear sample: four positions in the H × W plane and their weights (all 0 outside).
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

/// ONNX Runtime's pre_calc_for_bilinear_interpolate for one sampling point (y, x).
Sample bilinearSample(double y, double x, int64_t H, int64_t W) {
  Sample s;
  if (y < -1.0 || y > double(H) || x < -1.0 || x > double(W))
    return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t yLow = int64_t(y), xLow = int64_t(x), yHigh, xHigh;
  if (yLow >= H - 1) {
    yHigh = yLow = H - 1;
    y = double(yLow);
  } else {
    yHigh = yLow + 1;
  }
  if (xLow >= W - 1) {
    xHigh = xLow = W - 1;
    x = double(xLow);
  } else {
    xHigh = xLow + 1;
  }
  const double ly = y - double(yLow), lx = x - double(xLow), hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = yLow * W + xLow;
  s.pos[1] = yLow * W + xHigh;
  s.pos[2] = yHigh * W + xLow;
  s.pos[3] = yHigh * W + xHigh;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

Status evalRoiAlign(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& batch = ctx.input(2);
  FB_ASSIGN_OR_RETURN(RoiAlignAttrs a, roiAlignAttrs(ctx));
  const std::vector<int64_t> xs = x.sizes();
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], R = rois.sizes()[0];
  if (batch.numElements() != R)
    return ctx.error("input 2 (batch_indices) has ", batch.numElements(), " entries for ", R,
                     " rois");
  Tensor out(x.dtype(), {R, C, a.outH, a.outW});
  const double offset = a.halfPixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = batch.getAsInt64(r);
    if (b < 0 || b >= N)
      return ctx.error("index ", b, " is out of range for axis 0 of size ", N);
    const double x1 = rois.getAsDouble(r * 4) * a.spatialScale - offset;
    const double y1 = rois.getAsDouble(r * 4 + 1) * a.spatialScale - offset;
    double roiW = rois.getAsDouble(r * 4 + 2) * a.spatialScale - offset - x1;
    double roiH = rois.getAsDouble(r * 4 + 3) * a.spatialScale - offset - y1;
    if (!a.halfPixel) {
      roiW = std::max(roiW, 1.0);
      roiH = std::max(roiH, 1.0);
    }
    const double binH = roiH / double(a.outH), binW = roiW / double(a.outW);
    const int64_t gridH =
        a.samplingRatio > 0 ? a.samplingRatio : int64_t(std::ceil(roiH / double(a.outH)));
    const int64_t gridW =
        a.samplingRatio > 0 ? a.samplingRatio : int64_t(std::ceil(roiW / double(a.outW)));
    const double count = double(std::max<int64_t>(gridH * gridW, 1));
    for (int64_t c = 0; c < C; ++c) {
      const int64_t plane = (b * C + c) * H * W;
      for (int64_t ph = 0; ph < a.outH; ++ph)
        for (int64_t pw = 0; pw < a.outW; ++pw) {
          double v = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gridH; ++iy)
            for (int64_t ix = 0; ix < gridW; ++ix) {
              const double yy = y1 + double(ph) * binH + (double(iy) + 0.5) * binH / double(gridH);
              const double xx = x1 + double(pw) * binW + (double(ix) + 0.5) * binW / double(gridW);
              const Sample s = bilinearSample(yy, xx, H, W);
              if (a.max) {
                double m = s.w[0] * x.getAsDouble(plane + s.pos[0]);
                for (int k = 1; k < 4; ++k)
                  m = std::max(m, s.w[k] * x.getAsDouble(plane + s.pos[k]));
                v = first ? m : std::max(v, m);
                first = false;
              } else {
                for (int k = 0; k < 4; ++k)
                  v += s.w[k] * x.getAsDouble(plane + s.pos[k]);
              }
            }
          out.setFromDouble(((r * C + c) * a.outH + ph) * a.outW + pw, a.max ? v : v / count);
        }
    }
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// About 12 FLOPs per sample; four samples per output element is typical.
OpCost roiAlignCost(const CostContext& ctx) {
  return OpCost{ctx.outputElements(0) * 48, 0};
}

} // namespace

void registerRoiAlignOps(OpRegistry& r) {
  r.set(OpKind::RoiAlign, inferRoiAlign, evalRoiAlign, roiAlignCost);
}

} // namespace fb
