// Lowering of GridSample to an inline expression of the output index: the grid point is read,
// unnormalized and padded as in the interpreter (core/ops/GridSample.cpp), and the nearest,
// bilinear or bicubic taps are data-dependent loads clamped into the image, weighted 0 where
// they fall outside it.
#include "codegen/loops/LowerContext.h"

#include <array>

namespace fb::cg::lower {

namespace {

/// The padded pixel coordinate of v on an axis of `size` pixels (see padCoordinate in the
/// interpreter): clamped for border, folded back and clamped for reflection, as is for zeros.
ExprPtr padCoordinate(ExprPtr v, int64_t size, const std::string& padding, bool alignCorners) {
  const double last = double(size - 1);
  auto clampAxis = [last](ExprPtr e) { return min(max(e, floatImm(0)), floatImm(last)); };
  if (padding == "border")
    return clampAxis(v);
  if (padding != "reflection")
    return v;
  const double twiceLow = alignCorners ? 0 : -1;
  const double twiceHigh = alignCorners ? 2 * last : 2 * double(size) - 1;
  if (twiceLow == twiceHigh)
    return floatImm(0);
  const double lo = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
  ExprPtr a = unary(UnaryOp::Abs, sub(v, floatImm(lo)));
  ExprPtr extra = binary(BinaryOp::Mod, a, floatImm(span));
  ExprPtr flips = unary(UnaryOp::Floor, div(a, floatImm(span)));
  ExprPtr even = binary(
      BinaryOp::Eq, sub(flips, mul(floatImm(2), unary(UnaryOp::Floor, div(flips, floatImm(2))))),
      floatImm(0));
  return clampAxis(
      select(even, add(extra, floatImm(lo)), add(sub(floatImm(span), extra), floatImm(lo))));
}

/// Keys' cubic weights (A = -0.75) of the taps at floor - 1 .. floor + 2 for fraction t.
std::array<ExprPtr, 4> bicubicWeights(const ExprPtr& t) {
  const double A = -0.75;
  auto near1 = [A](ExprPtr x) {
    return add(mul(mul(sub(mul(floatImm(A + 2), x), floatImm(A + 3)), x), x), floatImm(1));
  };
  auto far2 = [A](ExprPtr x) {
    return sub(mul(add(mul(sub(mul(floatImm(A), x), floatImm(5 * A)), x), floatImm(8 * A)), x),
               floatImm(4 * A));
  };
  return {far2(add(t, floatImm(1))), near1(t), near1(sub(floatImm(1), t)),
          far2(sub(floatImm(2), t))};
}

} // namespace

Status defineGridSample(KernelBuilder& b, const Node& n) {
  const Value *X = n.input(0), *grid = n.input(1);
  if (X->type().dtype != DType::F32 || grid->type().dtype != DType::F32)
    return makeUnsupported(n.describe(), ": GridSample of ", dtypeName(X->type().dtype));
  FB_ASSIGN_OR_RETURN(std::string mode, n.attrs().getString("mode", "bilinear"));
  FB_ASSIGN_OR_RETURN(std::string padding, n.attrs().getString("padding_mode", "zeros"));
  FB_ASSIGN_OR_RETURN(int64_t align, n.attrs().getInt("align_corners", 0));
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return makeError(n.describe(), ": mode '", mode, "' is not one of bilinear, nearest, bicubic");
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  const int64_t H = xs[2], W = xs[3];
  const bool alignCorners = align != 0;
  b.define(n.output(0), [&b, X, grid, mode, padding, alignCorners, H, W](const Indices& idx) {
    auto unnormalize = [alignCorners](ExprPtr v, int64_t size) {
      return alignCorners ? mul(div(add(v, floatImm(1)), floatImm(2)), floatImm(double(size - 1)))
                          : div(sub(mul(add(v, floatImm(1)), floatImm(double(size))), floatImm(1)),
                                floatImm(2));
    };
    ExprPtr ix = unnormalize(b.read(grid, {idx[0], idx[2], idx[3], intImm(0)}), W);
    ExprPtr iy = unnormalize(b.read(grid, {idx[0], idx[2], idx[3], intImm(1)}), H);
    // A pixel coordinate (an integral float) as an index; far-out values are bounded first so
    // the conversion is defined, and stay outside the image.
    auto index = [](ExprPtr v, int64_t size) {
      return cast(Type::i64(), min(max(v, floatImm(-4)), floatImm(double(size + 4))));
    };
    auto tap = [&b, X, &idx, H, W](ExprPtr py, ExprPtr px) {
      ExprPtr inside = binary(BinaryOp::And,
                              binary(BinaryOp::And, binary(BinaryOp::Ge, py, intImm(0)),
                                     binary(BinaryOp::Lt, py, intImm(H))),
                              binary(BinaryOp::And, binary(BinaryOp::Ge, px, intImm(0)),
                                     binary(BinaryOp::Lt, px, intImm(W))));
      ExprPtr cy = min(max(py, intImm(0)), intImm(H - 1)),
              cx = min(max(px, intImm(0)), intImm(W - 1));
      return select(inside, b.read(X, {idx[0], idx[1], cy, cx}), floatImm(0));
    };
    if (mode == "nearest")
      return tap(index(unary(UnaryOp::Round, padCoordinate(iy, H, padding, alignCorners)), H),
                 index(unary(UnaryOp::Round, padCoordinate(ix, W, padding, alignCorners)), W));
    if (mode == "bilinear") {
      ExprPtr px = padCoordinate(ix, W, padding, alignCorners);
      ExprPtr py = padCoordinate(iy, H, padding, alignCorners);
      ExprPtr x0 = unary(UnaryOp::Floor, px), y0 = unary(UnaryOp::Floor, py);
      ExprPtr tx = sub(px, x0), ty = sub(py, y0);
      ExprPtr X0 = index(x0, W), Y0 = index(y0, H);
      ExprPtr X1 = add(X0, intImm(1)), Y1 = add(Y0, intImm(1));
      ExprPtr ux = sub(floatImm(1), tx), uy = sub(floatImm(1), ty);
      return add(add(mul(tap(Y0, X0), mul(ux, uy)), mul(tap(Y0, X1), mul(tx, uy))),
                 add(mul(tap(Y1, X0), mul(ux, ty)), mul(tap(Y1, X1), mul(tx, ty))));
    }
    ExprPtr x0 = unary(UnaryOp::Floor, ix), y0 = unary(UnaryOp::Floor, iy);
    std::array<ExprPtr, 4> wx = bicubicWeights(sub(ix, x0)), wy = bicubicWeights(sub(iy, y0));
    ExprPtr sum;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        ExprPtr py = index(padCoordinate(add(y0, floatImm(i - 1)), H, padding, alignCorners), H);
        ExprPtr px = index(padCoordinate(add(x0, floatImm(j - 1)), W, padding, alignCorners), W);
        ExprPtr term = mul(mul(wy[size_t(i)], wx[size_t(j)]), tap(py, px));
        sum = sum ? add(sum, term) : term;
      }
    return sum;
  });
  return Status::success();
}

} // namespace fb::cg::lower
