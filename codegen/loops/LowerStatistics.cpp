// Lowering of ops that gather statistics of their input and then apply them to each element:
// LRN (a square sum over neighbouring channels), MeanVarianceNormalization (mean and variance
// over a set of axes) and DynamicQuantizeLinear (the range of the whole tensor). Each computes
// what its interpreter kernel computes, in f32.
#include "codegen/loops/LowerContext.h"
#include "core/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>

namespace fb::cg::lower {

namespace {

/// for every element: sq = Σ over the channel window of x²; out = x / (bias + alpha/size·sq)^beta.
/// Window channels outside [0, C) add nothing.
Expected<StmtPtr> lowerLRN(KernelBuilder& b, const Node& n, const BufferPtr& out,
                           const Epilogue& epi) {
  const Value* X = n.input(0);
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  FB_ASSIGN_OR_RETURN(int64_t size, n.attrs().getInt("size", 0));
  FB_ASSIGN_OR_RETURN(float alpha, n.attrs().getFloat("alpha", 0.0001f));
  FB_ASSIGN_OR_RETURN(float beta, n.attrs().getFloat("beta", 0.75f));
  FB_ASSIGN_OR_RETURN(float bias, n.attrs().getFloat("bias", 1.0f));
  if (size < 1)
    return makeError(n.describe(), ": attribute size = ", size, " must be >= 1");
  if (X->type().dtype != DType::F32)
    return makeUnsupported(n.describe(), ": LRN of ", dtypeName(X->type().dtype));
  const int64_t C = xs[1], before = (size - 1) / 2;
  std::vector<std::string> names = indexNames(xs.size());
  Indices idx = varsOf(names);
  Indices at = idx;
  ExprPtr ch = add(sub(idx[1], intImm(before)), var("q"));
  at[1] = min(max(ch, intImm(0)), intImm(C - 1));
  ExprPtr inside = binary(BinaryOp::And, binary(BinaryOp::Ge, ch, intImm(0)),
                          binary(BinaryOp::Lt, ch, intImm(C)));
  ExprPtr xq = b.read(X, at);
  BufferPtr sq = makeLocalBuffer("sq", DType::F32, {1});
  Indices z{intImm(0)};
  StmtPtr sum =
      forRange("q", size, store(sq, z, add(load(sq, z), select(inside, mul(xq, xq), floatImm(0)))));
  ExprPtr denom = binary(
      BinaryOp::Pow, add(floatImm(bias), mul(floatImm(double(alpha) / double(size)), load(sq, z))),
      floatImm(beta));
  StmtPtr body =
      alloc(sq, block({store(sq, z, floatImm(0), tag(n)), sum,
                       store(out, idx, applyEpi(epi, idx, div(b.read(X, idx), denom)))}));
  return wrapLoops(names, xs, body);
}

/// for every group (the dims not in `axes`): sum and square sum over the axes, then
/// out = (x - mean) / (sqrt(max(E[x²] - mean², 0)) + 1e-9).
Expected<StmtPtr> lowerMVN(KernelBuilder& b, const Node& n, const BufferPtr& out,
                           const Epilogue& epi) {
  const Value* X = n.input(0);
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  if (X->type().dtype != DType::F32)
    return makeUnsupported(n.describe(), ": MeanVarianceNormalization of ",
                           dtypeName(X->type().dtype));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> rawAxes, n.attrs().getInts("axes", {0, 2, 3}));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> axes, normalizeAxes(rawAxes, int64_t(xs.size())));
  std::vector<std::string> groupNames, axisNames;
  std::vector<int64_t> groupSizes, axisSizes;
  Indices idx;
  int64_t count = 1;
  for (size_t d = 0; d < xs.size(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
    auto& names = reduced ? axisNames : groupNames;
    names.push_back((reduced ? "r" : "g") + std::to_string(names.size()));
    (reduced ? axisSizes : groupSizes).push_back(xs[d]);
    idx.push_back(var(names.back()));
    if (reduced)
      count *= xs[d];
  }
  BufferPtr sum = makeLocalBuffer("sum", DType::F32, {1}),
            sq = makeLocalBuffer("sq", DType::F32, {1});
  Indices z{intImm(0)};
  ExprPtr x = b.read(X, idx);
  StmtPtr accumulate = wrapLoops(
      axisNames, axisSizes,
      block({store(sum, z, add(load(sum, z), x)), store(sq, z, add(load(sq, z), mul(x, x)))}));
  ExprPtr inv = floatImm(1.0 / double(std::max<int64_t>(count, 1)));
  ExprPtr mean = mul(load(sum, z), inv);
  ExprPtr variance = max(sub(mul(load(sq, z), inv), mul(mean, mean)), floatImm(0));
  ExprPtr y = div(sub(x, mean), add(unary(UnaryOp::Sqrt, variance), floatImm(1e-9)));
  StmtPtr apply = wrapLoops(axisNames, axisSizes, store(out, idx, applyEpi(epi, idx, y)));
  StmtPtr body = alloc(sum, alloc(sq, block({store(sum, z, floatImm(0), tag(n)),
                                             store(sq, z, floatImm(0)), accumulate, apply})));
  return wrapLoops(groupNames, groupSizes, body);
}

/// lo/hi = the range of x and 0; scale = (hi - lo) / 255;
/// zp = scale == 0 ? 0 : clamp(round(-lo / scale), 0, 255);
/// y = clamp(scale == 0 ? zp : round(x / scale) + zp, 0, 255) as u8 (rounding half to even).
Expected<StmtPtr> lowerDynamicQuantizeLinear(KernelBuilder& b, const Node& n, const BufferPtr& out,
                                             const std::vector<BufferPtr>& extras) {
  const Value* X = n.input(0);
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  std::vector<std::string> names = indexNames(xs.size());
  Indices idx = varsOf(names);
  Indices z{intImm(0)};
  BufferPtr lo = makeLocalBuffer("lo", DType::F32, {1}),
            hi = makeLocalBuffer("hi", DType::F32, {1});
  BufferPtr scale = makeLocalBuffer("scale", DType::F32, {1});
  BufferPtr zp = makeLocalBuffer("zp", DType::F32, {1});
  ExprPtr x = b.read(X, idx);
  StmtPtr range = wrapLoops(
      names, xs, block({store(lo, z, min(load(lo, z), x)), store(hi, z, max(load(hi, z), x))}));
  ExprPtr zero = binary(BinaryOp::Eq, load(scale, z), floatImm(0));
  auto clamp255 = [](ExprPtr v) { return min(max(v, floatImm(0)), floatImm(255)); };
  ExprPtr zpValue =
      select(zero, floatImm(0),
             clamp255(unary(UnaryOp::Round, div(sub(floatImm(0), load(lo, z)), load(scale, z)))));
  ExprPtr q =
      select(zero, load(zp, z), add(unary(UnaryOp::Round, div(x, load(scale, z))), load(zp, z)));
  const Type u8{DType::U8, 1};
  std::vector<StmtPtr> steps{store(lo, z, floatImm(0), tag(n)),
                             store(hi, z, floatImm(0)),
                             range,
                             store(scale, z, div(sub(load(hi, z), load(lo, z)), floatImm(255))),
                             store(zp, z, zpValue),
                             wrapLoops(names, xs, store(out, idx, cast(u8, clamp255(q))))};
  if (extras.size() > 0 && extras[0])
    steps.push_back(store(extras[0], {}, load(scale, z)));
  if (extras.size() > 1 && extras[1])
    steps.push_back(store(extras[1], {}, cast(u8, load(zp, z))));
  return alloc(lo, alloc(hi, alloc(scale, alloc(zp, block(std::move(steps))))));
}

} // namespace

std::optional<Expected<StmtPtr>> lowerStatisticsOp(KernelBuilder& b, const Node& n,
                                                   const BufferPtr& out, const Epilogue& epilogue,
                                                   const std::vector<BufferPtr>& extras) {
  switch (n.op()) {
  case OpKind::LRN:
    return lowerLRN(b, n, out, epilogue);
  case OpKind::MeanVarianceNormalization:
    return lowerMVN(b, n, out, epilogue);
  case OpKind::DynamicQuantizeLinear:
    if (epilogue)
      return Expected<StmtPtr>(
          makeUnsupported(n.describe(), ": DynamicQuantizeLinear takes no fused epilogue"));
    return lowerDynamicQuantizeLinear(b, n, out, extras);
  default:
    return std::nullopt;
  }
}

} // namespace fb::cg::lower
