// Lowering of RoiAlign: one nest over (roi, channel, output row, output column) whose sampling
// loops have data-dependent trip counts when sampling_ratio is 0 (the bins' extent decides
// them), each sample a bilinear interpolation computed as the interpreter (ONNX Runtime's
// algorithm, core/ops/RoiAlign.cpp) computes it, in f32.
#include "codegen/loops/LowerContext.h"

#include <cmath>

namespace fb::cg::lower {

Expected<StmtPtr> lowerRoiAlign(KernelBuilder& b, const Node& n, const BufferPtr& out,
                                const Epilogue& epi) {
  const Value *X = n.input(0), *rois = n.input(1), *batch = n.input(2);
  if (X->type().dtype != DType::F32)
    return makeUnsupported(n.describe(), ": RoiAlign of ", dtypeName(X->type().dtype));
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  const int64_t N = xs[0], H = xs[2], W = xs[3];
  FB_ASSIGN_OR_RETURN(std::string mode, n.attrs().getString("mode", "avg"));
  FB_ASSIGN_OR_RETURN(std::string coord,
                      n.attrs().getString("coordinate_transformation_mode", "half_pixel"));
  FB_ASSIGN_OR_RETURN(int64_t outH, n.attrs().getInt("output_height", 1));
  FB_ASSIGN_OR_RETURN(int64_t outW, n.attrs().getInt("output_width", 1));
  FB_ASSIGN_OR_RETURN(int64_t ratio, n.attrs().getInt("sampling_ratio", 0));
  FB_ASSIGN_OR_RETURN(float scale, n.attrs().getFloat("spatial_scale", 1.0f));
  const bool isMax = mode == "max", halfPixel = coord == "half_pixel";
  FB_TRY(b.addIndexCheck(n, batch, {N}, {0}, /*nonNegative=*/true));

  ExprPtr r = var("r"), c = var("c"), ph = var("ph"), pw = var("pw");
  const double offset = halfPixel ? 0.5 : 0.0;
  auto roi = [&](int64_t k) {
    return sub(mul(b.read(rois, {r, intImm(k)}), floatImm(scale)), floatImm(offset));
  };
  ExprPtr x1 = roi(0), y1 = roi(1);
  ExprPtr roiW = sub(roi(2), x1), roiH = sub(roi(3), y1);
  if (!halfPixel) {
    roiW = max(roiW, floatImm(1));
    roiH = max(roiH, floatImm(1));
  }
  ExprPtr binH = div(roiH, floatImm(double(outH))), binW = div(roiW, floatImm(double(outW)));
  ExprPtr gridH = ratio > 0 ? intImm(ratio) : cast(Type::i64(), unary(UnaryOp::Ceil, binH));
  ExprPtr gridW = ratio > 0 ? intImm(ratio) : cast(Type::i64(), unary(UnaryOp::Ceil, binW));
  ExprPtr samples = mul(gridH, gridW);
  ExprPtr bi = min(max(cast(Type::i64(), b.read(batch, {r})), intImm(0)), intImm(N - 1));

  // The sampling point (y, x) of sample (iy, ix) in bin (ph, pw).
  auto at = [](ExprPtr start, ExprPtr p, ExprPtr bin, ExprPtr i, ExprPtr grid) {
    return add(add(start, mul(cast(Type::f32(), p), bin)),
               div(mul(add(cast(Type::f32(), i), floatImm(0.5)), bin), cast(Type::f32(), grid)));
  };
  ExprPtr yy = at(y1, ph, binH, var("iy"), gridH), xx = at(x1, pw, binW, var("ix"), gridW);
  ExprPtr outside = binary(BinaryOp::Or,
                           binary(BinaryOp::Or, binary(BinaryOp::Lt, yy, floatImm(-1)),
                                  binary(BinaryOp::Gt, yy, floatImm(double(H)))),
                           binary(BinaryOp::Or, binary(BinaryOp::Lt, xx, floatImm(-1)),
                                  binary(BinaryOp::Gt, xx, floatImm(double(W)))));
  // Low and high neighbours along one axis, and the fraction towards the high one.
  struct Axis {
    ExprPtr low, high, frac;
  };
  auto axis = [](ExprPtr v, int64_t size) {
    v = max(v, floatImm(0));
    ExprPtr raw = cast(Type::i64(), min(v, floatImm(double(size))));
    ExprPtr capped = binary(BinaryOp::Ge, raw, intImm(size - 1));
    ExprPtr low = select(capped, intImm(size - 1), raw);
    ExprPtr high = select(capped, intImm(size - 1), add(raw, intImm(1)));
    ExprPtr eff = select(capped, floatImm(double(size - 1)), v);
    return Axis{low, high, sub(eff, cast(Type::f32(), low))};
  };
  Axis ay = axis(yy, H), ax = axis(xx, W);
  auto px = [&](ExprPtr y, ExprPtr x) { return b.read(X, {bi, c, y, x}); };
  ExprPtr hy = sub(floatImm(1), ay.frac), hx = sub(floatImm(1), ax.frac);
  ExprPtr t1 = mul(mul(hy, hx), px(ay.low, ax.low)),
          t2 = mul(mul(hy, ax.frac), px(ay.low, ax.high));
  ExprPtr t3 = mul(mul(ay.frac, hx), px(ay.high, ax.low)),
          t4 = mul(mul(ay.frac, ax.frac), px(ay.high, ax.high));
  ExprPtr sample = isMax ? max(max(max(t1, t2), t3), t4) : add(add(t1, t2), add(t3, t4));
  sample = select(outside, floatImm(0), sample);

  BufferPtr acc = makeLocalBuffer("acc", DType::F32, {1});
  Indices z{intImm(0)};
  StmtPtr sampleLoops = forLoop(
      "iy", intImm(0), gridH, ForKind::Serial,
      forLoop("ix", intImm(0), gridW, ForKind::Serial,
              store(acc, z, isMax ? max(load(acc, z), sample) : add(load(acc, z), sample))));
  ExprPtr result = isMax
                       ? select(binary(BinaryOp::Gt, samples, intImm(0)), load(acc, z), floatImm(0))
                       : div(load(acc, z), cast(Type::f32(), max(samples, intImm(1))));
  Indices o{r, c, ph, pw};
  StmtPtr body = alloc(acc, block({store(acc, z, floatImm(isMax ? -INFINITY : 0.0), tag(n)),
                                   sampleLoops, store(out, o, applyEpi(epi, o, result))}));
  return wrapLoops({"r", "c", "ph", "pw"}, out->sizes, body);
}

} // namespace fb::cg::lower
