// Lowering of sliding-window ops: Conv (direct, and row-wise for depthwise), ConvTranspose
// (as a gather), MaxPool and AveragePool (row-wise in 2-D).
#include "codegen/loops/LowerContext.h"
#include "core/ops/ConvGeometry.h"
#include "core/ops/KernelUtil.h"

#include <algorithm>
#include <limits>

namespace fb::cg::lower {

int64_t countedTaps(const Window& w, size_t d, int64_t o, bool includePad) {
  int64_t c = 0;
  for (int64_t t = 0; t < w.kernel[d]; ++t) {
    int64_t p = o * w.stride[d] - w.padBegin[d] + t * w.dilation[d];
    if (includePad ? (p >= -w.padBegin[d] && p < w.in[d] + w.padEnd[d]) : (p >= 0 && p < w.in[d]))
      ++c;
  }
  return c;
}

Expected<Window> windowOf(const Node& n, WindowKind kind, const std::vector<int64_t>& xs,
                          const std::vector<int64_t>& ys, const std::vector<Dim>& wKernel) {
  if (xs.size() < 3 || xs.size() > 5)
    return makeUnsupported(n.describe(), ": only 1-3 spatial dims are supported");
  auto g = readWindowGeometry(n.attrs(), kind, xs.size() - 2, wKernel);
  if (!g.ok())
    return g.error().withContext(n.describe());
  std::vector<int64_t> inSp(xs.begin() + 2, xs.end());
  auto outSp = windowOutputSizes(*g, inSp);
  if (!outSp.ok())
    return outSp.error().withContext(n.describe());
  Window w;
  w.s = inSp.size();
  w.in = inSp;
  w.out = std::vector<int64_t>(ys.begin() + 2, ys.end());
  w.kernel = g->kernel;
  w.stride = g->strides;
  w.dilation = g->dilations;
  w.padBegin = g->padsBegin;
  w.padEnd = g->padsEnd;
  return w;
}

namespace {

std::vector<std::string> spatialNames(size_t s, const std::string& prefix) {
  static const char* names3[] = {"d", "h", "w"};
  std::vector<std::string> r;
  for (size_t d = 0; d < s; ++d)
    r.push_back(prefix + names3[3 - s + d]);
  return r;
}

/// Input position along each spatial axis and the in-bounds condition (null when no padding
/// can make it fall outside).
std::pair<Indices, ExprPtr> windowInput(const Window& w, const Indices& o, const Indices& kk) {
  Indices pos;
  ExprPtr cond;
  for (size_t d = 0; d < w.s; ++d) {
    ExprPtr p = add(sub(mul(o[d], intImm(w.stride[d])), intImm(w.padBegin[d])),
                    mul(kk[d], intImm(w.dilation[d])));
    pos.push_back(p);
    // Could this tap fall outside [0, in)?
    int64_t lo = -w.padBegin[d];
    int64_t hi = (w.out[d] - 1) * w.stride[d] - w.padBegin[d] + (w.kernel[d] - 1) * w.dilation[d];
    if (lo < 0) {
      ExprPtr c = binary(BinaryOp::Ge, p, intImm(0));
      cond = cond ? binary(BinaryOp::And, cond, c) : c;
    }
    if (hi >= w.in[d]) {
      ExprPtr c = binary(BinaryOp::Lt, p, intImm(w.in[d]));
      cond = cond ? binary(BinaryOp::And, cond, c) : c;
    }
  }
  return {pos, cond};
}

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// A 2-D sliding window (depthwise-style convolution, pooling) computed one output row at a
/// time: the row is initialised, every tap combines a shifted input row into it over the output
/// columns whose input column is inside the image (so the innermost loop has no bounds test and
/// vectorizes along the row), and the epilogue runs over the row last. `tap(ih, iw, kw)` is the
/// value a tap contributes; kh is the Var "kh".
StmtPtr windowRows(const Node& n, const BufferPtr& out, const AccumulatorPlan& plan,
                   const Window& w, const std::string& channel,
                   const std::function<ExprPtr(ExprPtr, ExprPtr, int64_t)>& tap, BinaryOp combine) {
  Indices yi = varsOf({"n", channel, "oh", "ow"});
  const int64_t OW = out->sizes[3], IW = w.in[1], IH = w.in[0];
  ExprPtr ih = add(sub(mul(var("oh"), intImm(w.stride[0])), intImm(w.padBegin[0])),
                   mul(var("kh"), intImm(w.dilation[0])));
  std::vector<StmtPtr> taps;
  for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
    int64_t off = kw * w.dilation[1] - w.padBegin[1];
    int64_t lo = std::max<int64_t>(0, ceilDiv(-off, w.stride[1]));
    int64_t hi = std::min<int64_t>(OW, floorDiv(IW - 1 - off, w.stride[1]) + 1);
    if (lo >= hi)
      continue;
    ExprPtr iw = add(mul(var("ow"), intImm(w.stride[1])), intImm(off));
    taps.push_back(forLoop("ow", intImm(lo), intImm(hi - lo), ForKind::Serial,
                           store(out, yi, binary(combine, load(out, yi), tap(ih, iw, kw)))));
  }
  StmtPtr rows = block(std::move(taps));
  int64_t ihLo = -w.padBegin[0];
  int64_t ihHi = (out->sizes[2] - 1) * w.stride[0] - w.padBegin[0] + (w.kernel[0] - 1) * w.dilation[0];
  ExprPtr cond;
  if (ihLo < 0)
    cond = binary(BinaryOp::Ge, ih, intImm(0));
  if (ihHi >= IH) {
    ExprPtr c = binary(BinaryOp::Lt, ih, intImm(IH));
    cond = cond ? binary(BinaryOp::And, cond, c) : c;
  }
  if (cond)
    rows = ifThen(cond, rows);
  StmtPtr body = block({forRange("ow", OW, store(out, yi, plan.init, tag(n))),
                        wrapLoops({"kh"}, {w.kernel[0]}, rows),
                        plan.finish ? forRange("ow", OW, finishStore(out, yi, plan.finish, "epilogue"))
                                    : nullptr});
  return wrapLoops({"n", channel, "oh"}, {out->sizes[0], out->sizes[1], out->sizes[2]}, body);
}

} // namespace

Expected<StmtPtr> lowerConv(KernelBuilder& b, const Node& n, const BufferPtr& out,
                            const Epilogue& epi) {
  const Value *X = n.input(0), *W = n.input(1);
  const bool integer = n.op() == OpKind::ConvInteger;
  const Value* Bias = !integer && n.numInputs() > 2 ? n.input(2) : nullptr;
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X), ws = KernelBuilder::sizesOf(W);
  std::vector<Dim> wk;
  for (size_t d = 2; d < ws.size(); ++d)
    wk.emplace_back(ws[d]);
  FB_ASSIGN_OR_RETURN(Window w, windowOf(n, WindowKind::Conv, xs, out->sizes, wk));
  FB_ASSIGN_OR_RETURN(int64_t groups, n.attrs().getInt("group", 1));
  int64_t cout = out->sizes[1], cinG = ws[1], coutG = cout / groups;
  std::vector<std::string> names = {"n", "co"};
  std::vector<std::string> on = spatialNames(w.s, "o"), kn = spatialNames(w.s, "k");
  names.insert(names.end(), on.begin(), on.end());
  Indices idx = varsOf(names);
  Indices o(idx.begin() + 2, idx.end());
  Indices kk = varsOf(kn);
  DType dt = out->dtype;
  Epilogue post = epi;
  if (Bias)
    post = compose(epi, [&b, Bias](const Indices& x, ExprPtr v) { return add(v, b.read(Bias, {x[1]})); });
  AccumulatorPlan plan = planAccumulator(post, idx, dt, 0, true);
  if (cinG == 1 && w.s == 2 && b.options().defaultSchedules && !integer) {
    ExprPtr cIn = coutG == 1 ? var("co") : div(var("co"), intImm(coutG));
    return windowRows(n, out, plan, w, "co", [&](ExprPtr ih, ExprPtr iw, int64_t kw) {
      return mul(b.read(X, {var("n"), cIn, ih, iw}), b.read(W, {var("co"), intImm(0), var("kh"), intImm(kw)}));
    }, BinaryOp::Add);
  }
  auto [pos, cond] = windowInput(w, o, kk);
  ExprPtr ci = cinG == 1 ? intImm(0) : var("ci");
  ExprPtr cIn = groups == 1 ? ci : add(mul(div(var("co"), intImm(coutG)), intImm(cinG)), ci);
  Indices xi = {var("n"), cIn};
  xi.insert(xi.end(), pos.begin(), pos.end());
  Indices wi = {var("co"), ci};
  wi.insert(wi.end(), kk.begin(), kk.end());
  ExprPtr vx = b.read(X, xi), vw = b.read(W, wi);
  if (n.op() == OpKind::ConvInteger) {
    // (X - x_zero_point) * (W - w_zero_point[output channel]) in i32.
    vx = cast(Type::i32(), vx);
    vw = cast(Type::i32(), vw);
    if (n.numInputs() > 2 && n.input(2))
      vx = sub(vx, cast(Type::i32(), readScalar(b, n.input(2))));
    if (const Value* zp = n.numInputs() > 3 ? n.input(3) : nullptr) {
      bool perChannel = zp->type().numElements().value_or(1) > 1;
      vw = sub(vw, cast(Type::i32(), perChannel ? b.read(zp, {var("co")}) : readScalar(b, zp)));
    }
  }
  StmtPtr update = store(out, idx, add(load(out, idx), mul(vx, vw)));
  if (cond)
    update = ifThen(cond, update);
  std::vector<std::string> rn;
  std::vector<int64_t> rs;
  if (cinG != 1) {
    rn.push_back("ci");
    rs.push_back(cinG);
  }
  rn.insert(rn.end(), kn.begin(), kn.end());
  rs.insert(rs.end(), w.kernel.begin(), w.kernel.end());
  StmtPtr body = block({store(out, idx, plan.init, tag(n)), wrapLoops(rn, rs, update),
                        finishStore(out, idx, plan.finish, "epilogue")});
  return wrapLoops(names, out->sizes, body);
}

/// ConvTranspose as a gather: output position o receives input position i = (o + pad - k*d) / s
/// for every tap k where that division is exact and i is inside the input.
Expected<StmtPtr> lowerConvTranspose(KernelBuilder& b, const Node& n, const BufferPtr& out,
                                     const Epilogue& epi) {
  const Value *X = n.input(0), *W = n.input(1);
  const Value* Bias = n.numInputs() > 2 ? n.input(2) : nullptr;
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X), ws = KernelBuilder::sizesOf(W);
  if (xs.size() < 3 || xs.size() > 5)
    return makeUnsupported(n.describe(), ": only 1-3 spatial dims are supported");
  std::vector<Dim> wk;
  for (size_t d = 2; d < ws.size(); ++d)
    wk.emplace_back(ws[d]);
  auto g = readWindowGeometry(n.attrs(), WindowKind::ConvTranspose, xs.size() - 2, wk);
  if (!g.ok())
    return g.error().withContext(n.describe());
  std::vector<int64_t> inSp(xs.begin() + 2, xs.end());
  auto outSp = transposedOutputSizes(*g, inSp);
  if (!outSp.ok())
    return outSp.error().withContext(n.describe());
  FB_ASSIGN_OR_RETURN(int64_t groups, n.attrs().getInt("group", 1));
  const size_t sr = inSp.size();
  const int64_t cinG = xs[1] / groups, coutG = ws[1];
  std::vector<std::string> names = {"n", "co"};
  std::vector<std::string> on = spatialNames(sr, "o"), kn = spatialNames(sr, "k");
  names.insert(names.end(), on.begin(), on.end());
  Indices idx = varsOf(names);
  Epilogue post = epi;
  if (Bias)
    post = compose(epi, [&b, Bias](const Indices& x, ExprPtr v) { return add(v, b.read(Bias, {x[1]})); });
  AccumulatorPlan plan = planAccumulator(post, idx, out->dtype, 0, true);
  ExprPtr cond;
  Indices pos;
  for (size_t d = 0; d < sr; ++d) {
    // t = o + pad - k*dilation; the tap reads input t / stride when t % stride == 0.
    ExprPtr t = sub(add(idx[2 + d], intImm(g->padsBegin[d])), mul(var(kn[d]), intImm(g->dilations[d])));
    int64_t st = g->strides[d];
    ExprPtr i = st == 1 ? t : div(t, intImm(st));
    ExprPtr c = binary(BinaryOp::And, binary(BinaryOp::Ge, t, intImm(0)),
                       binary(BinaryOp::Lt, i, intImm(inSp[d])));
    if (st != 1)
      c = binary(BinaryOp::And, c, binary(BinaryOp::Eq, binary(BinaryOp::Mod, t, intImm(st)), intImm(0)));
    cond = cond ? binary(BinaryOp::And, cond, c) : c;
    pos.push_back(i);
  }
  ExprPtr grp = groups == 1 ? intImm(0) : div(var("co"), intImm(coutG));
  ExprPtr ciGlobal = add(mul(grp, intImm(cinG)), var("ci"));
  Indices xi = {var("n"), ciGlobal};
  xi.insert(xi.end(), pos.begin(), pos.end());
  Indices wi = {ciGlobal, groups == 1 ? var("co") : binary(BinaryOp::Mod, var("co"), intImm(coutG))};
  for (const std::string& k : kn)
    wi.push_back(var(k));
  StmtPtr update = ifThen(cond, store(out, idx, add(load(out, idx), mul(b.read(X, xi), b.read(W, wi)))));
  std::vector<std::string> rn = {"ci"};
  std::vector<int64_t> rs = {cinG};
  rn.insert(rn.end(), kn.begin(), kn.end());
  rs.insert(rs.end(), ws.begin() + 2, ws.end());
  StmtPtr body = block({store(out, idx, plan.init, tag(n)), wrapLoops(rn, rs, update),
                        finishStore(out, idx, plan.finish, "epilogue")});
  return wrapLoops(names, out->sizes, body);
}

Expected<StmtPtr> lowerPool(KernelBuilder& b, const Node& n, const BufferPtr& out,
                            const Epilogue& epi, const BufferPtr& indicesOut) {
  const Value* X = n.input(0);
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  bool isMax = n.op() == OpKind::MaxPool;
  FB_ASSIGN_OR_RETURN(Window w, windowOf(n, WindowKind::Pool, xs, out->sizes, {}));
  std::vector<std::string> names = {"n", "c"};
  std::vector<std::string> on = spatialNames(w.s, "o"), kn = spatialNames(w.s, "k");
  names.insert(names.end(), on.begin(), on.end());
  Indices idx = varsOf(names);
  Indices o(idx.begin() + 2, idx.end());
  Indices kk = varsOf(kn);
  DType dt = out->dtype;
  if (isMax && indicesOut) {
    // MaxPool with Indices: the first maximum's offset in X, flattened over the whole input
    // (storage_order 1: column-major over the spatial axes).
    FB_ASSIGN_OR_RETURN(int64_t storageOrder, n.attrs().getInt("storage_order", 0));
    auto [pos, cond] = windowInput(w, o, kk);
    Indices xi = {var("n"), var("c")};
    xi.insert(xi.end(), pos.begin(), pos.end());
    int64_t inSp = 1;
    for (int64_t v : w.in)
      inSp *= v;
    ExprPtr flat = mul(add(mul(var("n"), intImm(xs[1])), var("c")), intImm(inSp));
    for (size_t d = 0; d < w.s; ++d) {
      int64_t stride = 1;
      if (storageOrder == 0)
        for (size_t e = d + 1; e < w.s; ++e)
          stride *= w.in[e];
      else
        for (size_t e = 0; e < d; ++e)
          stride *= w.in[e];
      flat = add(flat, mul(pos[d], intImm(stride)));
    }
    ExprPtr x = b.read(X, xi);
    ExprPtr better = binary(BinaryOp::Or, binary(BinaryOp::Gt, x, load(out, idx)),
                            binary(BinaryOp::Lt, load(indicesOut, idx), intImm(0)));
    StmtPtr update = ifThen(better, block({store(out, idx, x), store(indicesOut, idx, flat)}));
    if (cond)
      update = ifThen(cond, update);
    StmtPtr body = block({store(out, idx, fimm(dt, -std::numeric_limits<double>::infinity()), tag(n)),
                          store(indicesOut, idx, intImm(-1)), wrapLoops(kn, w.kernel, update),
                          epi ? store(out, idx, epi(idx, load(out, idx)), "epilogue") : nullptr});
    return wrapLoops(names, out->sizes, body);
  }
  auto [pos, cond] = windowInput(w, o, kk);
  Indices xi = {var("n"), var("c")};
  xi.insert(xi.end(), pos.begin(), pos.end());
  ExprPtr x = b.read(X, xi);
  Epilogue post = epi;
  if (!isMax) {
    // Divide by the number of taps counted, per output position: one table per axis.
    FB_ASSIGN_OR_RETURN(int64_t includePad, n.attrs().getInt("count_include_pad", 0));
    std::vector<BufferPtr> tables;
    for (size_t d = 0; d < w.s; ++d) {
      std::vector<float> cnt(static_cast<size_t>(w.out[d]));
      for (int64_t oo = 0; oo < w.out[d]; ++oo)
        cnt[size_t(oo)] = float(std::max<int64_t>(countedTaps(w, d, oo, includePad != 0), 1));
      tables.push_back(b.constantBuffer("pool_count" + std::to_string(d),
                                        Tensor::fromVector<float>({w.out[d]}, cnt)));
    }
    post = compose(epi, [tables](const Indices& ix, ExprPtr v) {
      ExprPtr c;
      for (size_t d = 0; d < tables.size(); ++d) {
        ExprPtr t = load(tables[d], {ix[2 + d]});
        c = c ? mul(c, t) : t;
      }
      return div(v, c);
    });
  }
  AccumulatorPlan plan = planAccumulator(
      post, idx, dt, isMax ? -std::numeric_limits<double>::infinity() : 0.0, false);
  if (w.s == 2 && b.options().defaultSchedules)
    return windowRows(n, out, plan, w, "c", [&](ExprPtr ih, ExprPtr iw, int64_t) {
      return b.read(X, {var("n"), var("c"), ih, iw});
    }, isMax ? BinaryOp::Max : BinaryOp::Add);
  StmtPtr update = store(out, idx, isMax ? max(load(out, idx), x) : add(load(out, idx), x));
  if (cond)
    update = ifThen(cond, update);
  StmtPtr body = block({store(out, idx, plan.init, tag(n)), wrapLoops(kn, w.kernel, update),
                        finishStore(out, idx, plan.finish, "epilogue")});
  return wrapLoops(names, out->sizes, body);
}

} // namespace fb::cg::lower
