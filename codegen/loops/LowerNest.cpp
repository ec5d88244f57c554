// Lowering of ops that need their own loop nest: MatMul, Gemm, reductions, ArgMax, softmax,
// layer and instance normalization, Concat (window ops: LowerWindow.cpp). Each writes its output
// buffer and applies the fused epilogue to each element's final value.
#include "codegen/loops/LowerContext.h"
#include "core/ops/RecurrentSpec.h"
#include "core/ops/KernelUtil.h"

#include <cmath>
#include <limits>

namespace fb::cg::lower {

namespace {

const char* kAcc = "__acc";

ExprPtr replaceAll(const ExprPtr& e, const ExprPtr& pattern, const ExprPtr& by, int* count) {
  if (equal(e, pattern)) {
    ++*count;
    return by;
  }
  if (e->operands.empty())
    return e;
  auto c = std::make_shared<Expr>(*e);
  for (ExprPtr& o : c->operands)
    o = replaceAll(o, pattern, by, count);
  return c;
}

int countVar(const ExprPtr& e, const std::string& name) {
  if (e->kind == Expr::Kind::Var)
    return e->name == name ? 1 : 0;
  int n = 0;
  for (const ExprPtr& o : e->operands)
    n += countVar(o, name);
  return n;
}

/// Finds the first `acc + t` (t independent of acc) in e.
ExprPtr findBiasAdd(const ExprPtr& e) {
  if (e->kind == Expr::Kind::Binary && e->binaryOp == BinaryOp::Add) {
    for (int s = 0; s < 2; ++s) {
      const ExprPtr& a = e->operands[size_t(s)];
      const ExprPtr& t = e->operands[size_t(1 - s)];
      if (a->kind == Expr::Kind::Var && a->name == kAcc && !usesVar(t, kAcc))
        return e;
    }
  }
  for (const ExprPtr& o : e->operands)
    if (ExprPtr f = findBiasAdd(o))
      return f;
  return nullptr;
}

Indices substitute(Indices xs, const std::string& name, const ExprPtr& by) {
  for (ExprPtr& x : xs)
    x = fb::cg::substitute(x, name, by);
  return xs;
}

} // namespace

ExprPtr fimm(DType d, double v) {
  if (fb::isFloat(d)) {
    auto e = std::make_shared<Expr>(*floatImm(v));
    e->type = Type{d, 1};
    return e;
  }
  return intImm(int64_t(v), Type{d, 1});
}

/// Splits post(idx, acc) into a bias initialisation and the rest.
AccumulatorPlan planAccumulator(const Epilogue& post, const Indices& idx, DType dtype,
                                double identity, bool allowBiasInit) {
  ExprPtr acc = var(kAcc, Type{dtype, 1});
  AccumulatorPlan p;
  p.init = fimm(dtype, identity);
  if (!post)
    return p;
  ExprPtr e = post(idx, acc);
  if (allowBiasInit) {
    if (ExprPtr add = findBiasAdd(e)) {
      ExprPtr bias = add->operands[0]->kind == Expr::Kind::Var && add->operands[0]->name == kAcc
                         ? add->operands[1]
                         : add->operands[0];
      int replaced = 0;
      ExprPtr rest = replaceAll(e, add, acc, &replaced);
      if (replaced == countVar(e, kAcc)) {
        p.init = identity == 0 ? bias : add;
        if (identity != 0)
          p.init = substitute(add, kAcc, fimm(dtype, identity));
        e = rest;
      }
    }
  }
  if (!(e->kind == Expr::Kind::Var && e->name == kAcc))
    p.finish = e;
  return p;
}

/// The finishing store `Y[idx] = finish(Y[idx])`, or null.
StmtPtr finishStore(const BufferPtr& out, const Indices& idx, const ExprPtr& finish,
                    const std::string& comment) {
  if (!finish)
    return nullptr;
  return store(out, idx, substitute(finish, kAcc, load(out, idx)), comment);
}

Epilogue compose(const Epilogue& outer, const Epilogue& inner) {
  if (!outer)
    return inner;
  return [outer, inner](const Indices& idx, ExprPtr v) { return outer(idx, inner(idx, v)); };
}

ExprPtr applyEpi(const Epilogue& e, const Indices& idx, ExprPtr v) { return e ? e(idx, v) : v; }

std::string tag(const Node& n) { return "n" + std::to_string(n.id()) + " " + opName(n.op()); }


namespace {

// ---- MatMul / Gemm ----

Expected<StmtPtr> lowerMatMul(KernelBuilder& b, const Node& n, const BufferPtr& out,
                              const Epilogue& epi) {
  const Value *A = n.input(0), *B = n.input(1);
  std::vector<int64_t> as = KernelBuilder::sizesOf(A), bs = KernelBuilder::sizesOf(B);
  const std::vector<int64_t>& os = out->sizes;
  bool isGemm = n.op() == OpKind::Gemm;
  int64_t transA = 0, transB = 0;
  float alpha = 1, beta = 1;
  if (isGemm) {
    FB_ASSIGN_OR_RETURN(transA, n.attrs().getInt("transA", 0));
    FB_ASSIGN_OR_RETURN(transB, n.attrs().getInt("transB", 0));
    FB_ASSIGN_OR_RETURN(alpha, n.attrs().getFloat("alpha", 1.f));
    FB_ASSIGN_OR_RETURN(beta, n.attrs().getFloat("beta", 1.f));
  }
  const size_t rA = as.size(), rB = bs.size(), rO = os.size();
  if (rA == 0 || rB == 0)
    return makeError(n.describe(), ": MatMul of a scalar");
  int64_t K = isGemm ? (transA ? as[0] : as[1]) : as[rA - 1];
  // Output loop names: batch dims b0.., then i (rows, unless A is 1-D), j (unless B is 1-D).
  std::vector<std::string> names;
  size_t batchDims = rO - (rA >= 2 ? 1 : 0) - (rB >= 2 ? 1 : 0);
  for (size_t d = 0; d < batchDims; ++d)
    names.push_back(batchDims == 1 ? "b" : "b" + std::to_string(d));
  if (rA >= 2 || isGemm)
    names.push_back("i");
  if (rB >= 2 || isGemm)
    names.push_back("j");
  Indices idx = varsOf(names);
  ExprPtr i = (rA >= 2 || isGemm) ? var("i") : nullptr;
  ExprPtr j = (rB >= 2 || isGemm) ? var("j") : nullptr;
  ExprPtr k = var("k");
  auto batchIndex = [&](size_t rank) {
    // Right-aligned batch dims of an operand of `rank` (its last two are matrix dims).
    Indices r;
    size_t nb = rank - 2;
    for (size_t d = 0; d < nb; ++d) {
      size_t od = batchDims - nb + d;
      r.push_back(idx[od]);
    }
    return r;
  };
  Indices ai, bi;
  if (isGemm) {
    ai = transA ? Indices{k, i} : Indices{i, k};
    bi = transB ? Indices{j, k} : Indices{k, j};
  } else {
    if (rA == 1)
      ai = {k};
    else {
      ai = batchIndex(rA);
      ai.push_back(i);
      ai.push_back(k);
      std::vector<int64_t> fake(os.begin(), os.end());
      for (size_t d = 0; d + 2 < rA; ++d)
        if (as[d] == 1)
          ai[d] = intImm(0);
    }
    if (rB == 1)
      bi = {k};
    else {
      bi = batchIndex(rB);
      bi.push_back(k);
      bi.push_back(j);
      for (size_t d = 0; d + 2 < rB; ++d)
        if (bs[d] == 1)
          bi[d] = intImm(0);
    }
  }
  DType dt = out->dtype;
  Epilogue post = epi;
  if (isGemm) {
    const Value* C = n.numInputs() > 2 ? n.input(2) : nullptr;
    std::vector<int64_t> mn = {os[0], os[1]};
    Epilogue gemmPost = [&b, C, alpha, beta, mn, dt](const Indices& x, ExprPtr v) {
      if (alpha != 1)
        v = mul(fimm(dt, alpha), v);
      if (C) {
        ExprPtr c = readBroadcast(b, C, x, mn);
        v = add(v, beta == 1 ? c : mul(fimm(dt, beta), c));
      }
      return v;
    };
    post = compose(epi, gemmPost);
  }
  AccumulatorPlan plan = planAccumulator(post, idx, dt, 0, /*allowBiasInit=*/true);
  ExprPtr va = b.read(A, ai), vb = b.read(B, bi);
  if (n.op() == OpKind::MatMulInteger) {
    // (A - a_zero_point[row]) * (B - b_zero_point[column]) in i32.
    auto shifted = [&](ExprPtr v, size_t zpInput, const ExprPtr& at) {
      v = cast(Type::i32(), v);
      const Value* zp = n.numInputs() > zpInput ? n.input(zpInput) : nullptr;
      if (!zp)
        return v;
      bool perAxis = zp->type().numElements().value_or(1) > 1;
      ExprPtr z = perAxis && at ? b.read(zp, {at}) : readScalar(b, zp);
      return sub(v, cast(Type::i32(), z));
    };
    va = shifted(va, 2, i);
    vb = shifted(vb, 3, j);
  }
  ExprPtr product = mul(va, vb);
  StmtPtr update = forRange("k", K, store(out, idx, add(load(out, idx), product)));
  StmtPtr body = block({store(out, idx, plan.init, tag(n)), update,
                        finishStore(out, idx, plan.finish, "epilogue")});
  return wrapLoops(names, os, body);
}

// ---- reductions ----

/// A reduction of X over `reduced` dims into `out` (kept dims in order; reduced dims either
/// dropped or kept as size 1). kind: any Reduce op (GlobalAverage/MaxPool pass Mean/Max).
StmtPtr reduceNest(KernelBuilder& b, const Node& n, const Value* X, const std::vector<bool>& reduced,
                   const BufferPtr& out, OpKind kind, const Epilogue& epi) {
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  bool keep = out->rank() == xs.size();
  std::vector<std::string> outNames, rNames;
  std::vector<int64_t> rSizes;
  Indices xi, oi;
  int64_t count = 1;
  size_t kept = 0;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (reduced[d]) {
      std::string r = "r" + std::to_string(rNames.size());
      rNames.push_back(r);
      rSizes.push_back(xs[d]);
      xi.push_back(var(r));
      count *= xs[d];
      if (keep)
        oi.push_back(intImm(0));
    } else {
      std::string v = "i" + std::to_string(kept++);
      outNames.push_back(v);
      xi.push_back(var(v));
      oi.push_back(var(v));
    }
  }
  if (rNames.size() == 1) {
    rNames[0] = "r";
    xi = substitute(xi, "r0", var("r"));
  }
  std::vector<int64_t> outLoopSizes;
  for (size_t d = 0; d < xs.size(); ++d)
    if (!reduced[d])
      outLoopSizes.push_back(xs[d]);
  DType dt = out->dtype;
  double identity = kind == OpKind::ReduceMax    ? -std::numeric_limits<double>::infinity()
                    : kind == OpKind::ReduceMin  ? std::numeric_limits<double>::infinity()
                    : kind == OpKind::ReduceProd ? 1.0
                                                 : 0.0;
  if (!fb::isFloat(dt) && kind == OpKind::ReduceMax)
    identity = double(std::numeric_limits<int32_t>::min());
  if (!fb::isFloat(dt) && kind == OpKind::ReduceMin)
    identity = double(std::numeric_limits<int32_t>::max());
  Epilogue post = epi;
  if (kind == OpKind::ReduceMean)
    post = compose(epi, [dt, count](const Indices&, ExprPtr v) { return div(v, fimm(dt, double(count))); });
  // The final step of L2 (sqrt), LogSum and LogSumExp (log), in f32 for integer sums.
  auto finalUnary = [dt](UnaryOp op) {
    return [dt, op](const Indices&, ExprPtr v) {
      return cast(Type{dt, 1}, unary(op, fb::isFloat(dt) ? v : cast(Type::f32(), v)));
    };
  };
  if (kind == OpKind::ReduceL2)
    post = compose(epi, finalUnary(UnaryOp::Sqrt));
  if (kind == OpKind::ReduceLogSum)
    post = compose(epi, finalUnary(UnaryOp::Log));
  // LogSumExp shifts by the maximum m of each output's elements so that e^x cannot overflow:
  // m + log(sum(e^(x - m))), with m taken as 0 when it is infinite (all -inf, or an inf input).
  BufferPtr shift = kind == OpKind::ReduceLogSumExp ? makeLocalBuffer("mx", dt, {1}) : nullptr;
  Indices z{intImm(0)};
  if (shift)
    post = compose(epi, [shift, z](const Indices&, ExprPtr v) {
      return add(unary(UnaryOp::Log, v), load(shift, z));
    });
  AccumulatorPlan plan = planAccumulator(post, oi, dt, identity, false);
  ExprPtr x = b.read(X, xi);
  // What each element contributes: |x|, x², e^x or x itself.
  if (kind == OpKind::ReduceL1)
    x = unary(UnaryOp::Abs, x);
  else if (kind == OpKind::ReduceL2 || kind == OpKind::ReduceSumSquare)
    x = mul(x, x);
  else if (kind == OpKind::ReduceLogSumExp)
    x = unary(UnaryOp::Exp, sub(x, load(shift, z)));
  ExprPtr cur = load(out, oi);
  // A NaN element propagates, as in the interpreter (np.max): `x != x ? x : max(acc, x)`.
  auto extremum = [&](ExprPtr step) {
    return fb::isFloat(dt) ? nanPropagating(x, std::move(step)) : step;
  };
  ExprPtr upd = kind == OpKind::ReduceMax    ? extremum(max(cur, x))
                : kind == OpKind::ReduceMin  ? extremum(min(cur, x))
                : kind == OpKind::ReduceProd ? mul(cur, x)
                                             : add(cur, x);
  StmtPtr body = block({store(out, oi, plan.init, tag(n)), wrapLoops(rNames, rSizes, store(out, oi, upd)),
                        finishStore(out, oi, plan.finish, "epilogue")});
  if (shift) {
    ExprPtr m = load(shift, z);
    ExprPtr infinite = binary(BinaryOp::Or, binary(BinaryOp::Eq, m, fimm(dt, INFINITY)),
                              binary(BinaryOp::Eq, m, fimm(dt, -INFINITY)));
    body = alloc(shift, block({store(shift, z, fimm(dt, -INFINITY)),
                               wrapLoops(rNames, rSizes, store(shift, z, max(m, b.read(X, xi)))),
                               store(shift, z, select(infinite, fimm(dt, 0), m)), body}));
  }
  return wrapLoops(outNames, outLoopSizes, body);
}

Expected<std::vector<bool>> reduceMask(KernelBuilder& b, const Node& n, size_t rank) {
  std::vector<int64_t> axes;
  if (n.numInputs() > 1 && n.input(1)) {
    const Tensor* t = b.constantOf(n.input(1));
    if (!t)
      return makeUnsupported(n.describe(), ": axes must be a compile-time constant");
    axes = t->toInt64Vector();
  } else {
    FB_ASSIGN_OR_RETURN(axes, n.attrs().getInts("axes", {}));
  }
  FB_ASSIGN_OR_RETURN(int64_t noop, n.attrs().getInt("noop_with_empty_axes", 0));
  std::vector<bool> mask(rank, axes.empty() && !noop);
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> norm, normalizeAxes(axes, int64_t(rank)));
  for (int64_t a : norm)
    mask[size_t(a)] = true;
  return mask;
}

/// The largest and smallest values of an integer dtype.
int64_t integerMax(DType d) {
  switch (d) {
  case DType::I8: return std::numeric_limits<int8_t>::max();
  case DType::U8: return std::numeric_limits<uint8_t>::max();
  case DType::I32: return std::numeric_limits<int32_t>::max();
  case DType::I64: return std::numeric_limits<int64_t>::max();
  case DType::Bool: return 1;
  default: assert(false && "not an integer dtype"); return 0;
  }
}
int64_t integerLowest(DType d) {
  switch (d) {
  case DType::I8: return std::numeric_limits<int8_t>::lowest();
  case DType::U8:
  case DType::Bool: return 0;
  case DType::I32: return std::numeric_limits<int32_t>::lowest();
  case DType::I64: return std::numeric_limits<int64_t>::lowest();
  default: assert(false && "not an integer dtype"); return 0;
  }
}

Expected<StmtPtr> lowerArgMax(KernelBuilder& b, const Node& n, const BufferPtr& out,
                              const Epilogue& epi) {
  const Value* X = n.input(0);
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 0));
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(xs.size())));
  FB_ASSIGN_OR_RETURN(int64_t last, n.attrs().getInt("select_last_index", 0));
  // An empty axis has no index to return: the interpreter's error, not the nest's untouched
  // (zero) output.
  if (xs[size_t(axis)] == 0)
    return makeError(n.describe(), ": ", opName(n.op()), " over an empty axis ", axis);
  bool keep = out->rank() == xs.size();
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  Indices xi, oi;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (int64_t(d) == axis) {
      xi.push_back(var("r"));
      if (keep)
        oi.push_back(intImm(0));
      continue;
    }
    std::string v = "i" + std::to_string(names.size());
    names.push_back(v);
    sizes.push_back(xs[d]);
    xi.push_back(var(v));
    oi.push_back(var(v));
  }
  const bool isMin = n.op() == OpKind::ArgMin;
  BufferPtr best = makeLocalBuffer("best", X->type().dtype, {1});
  ExprPtr x = b.read(X, xi);
  BinaryOp cmp = isMin ? (last ? BinaryOp::Le : BinaryOp::Lt) : (last ? BinaryOp::Ge : BinaryOp::Gt);
  ExprPtr better = binary(cmp, x, load(best, {intImm(0)}));
  StmtPtr update = ifThen(better, block({store(best, {intImm(0)}, x),
                                         store(out, oi, cast(Type{out->dtype, 1}, var("r")))}));
  // The start of the search: ±infinity, or the extreme value of an integer dtype.
  const DType xt = X->type().dtype;
  ExprPtr start = fb::isFloat(xt) ? fimm(xt, isMin ? INFINITY : -INFINITY)
                                  : intImm(isMin ? integerMax(xt) : integerLowest(xt), Type{xt, 1});
  StmtPtr body = alloc(best, block({store(best, {intImm(0)}, start),
                                    store(out, oi, intImm(0, Type{out->dtype, 1}), tag(n)),
                                    forRange("r", xs[size_t(axis)], update),
                                    epi ? store(out, oi, epi(oi, load(out, oi)), "epilogue") : nullptr}));
  return wrapLoops(names, sizes, body);
}

// ---- softmax and normalization ----

Expected<StmtPtr> lowerSoftmax(KernelBuilder& b, const Node& n, const BufferPtr& out,
                               const Epilogue& epi) {
  const Value* X = n.input(0);
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", -1));
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(xs.size())));
  bool isLog = n.op() == OpKind::LogSoftmax;
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  Indices xi;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (int64_t(d) == axis) {
      xi.push_back(var("j"));
      continue;
    }
    std::string v = "i" + std::to_string(names.size());
    names.push_back(v);
    sizes.push_back(xs[d]);
    xi.push_back(var(v));
  }
  if (names.size() == 1) {
    names[0] = "i";
    xi = substitute(xi, "i0", var("i"));
  }
  DType dt = out->dtype;
  int64_t nAxis = xs[size_t(axis)];
  BufferPtr mx = makeLocalBuffer("mx", dt, {1}), sum = makeLocalBuffer("sum", dt, {1});
  Indices z{intImm(0)};
  ExprPtr x = b.read(X, xi);
  StmtPtr s1 = forRange("j", nAxis, store(mx, z, max(load(mx, z), x)));
  // Exponentials and their sum in separate loops: the first vectorizes, the second is the
  // (serial) reduction.
  StmtPtr s2 = block({forRange("j", nAxis, store(out, xi, unary(UnaryOp::Exp, sub(x, load(mx, z))))),
                      forRange("j", nAxis, store(sum, z, add(load(sum, z), load(out, xi))))});
  ExprPtr final = isLog ? sub(sub(x, load(mx, z)), unary(UnaryOp::Log, load(sum, z)))
                        : div(load(out, xi), load(sum, z));
  StmtPtr s3 = forRange("j", nAxis, store(out, xi, applyEpi(epi, xi, final)));
  StmtPtr body = alloc(mx, alloc(sum, block({store(mx, z, fimm(dt, -INFINITY), tag(n)), s1,
                                              store(sum, z, fimm(dt, 0)), s2, s3})));
  return wrapLoops(names, sizes, body);
}

/// Normalizes X over the trailing dims from `axis` (LayerNorm), over the spatial dims per
/// (n, c) (InstanceNorm) or over each group of channels per n (GroupNorm), then scales and shifts.
Expected<StmtPtr> lowerNorm(KernelBuilder& b, const Node& n, const BufferPtr& out,
                            const Epilogue& epi, const std::vector<BufferPtr>& extras) {
  const Value* X = n.input(0);
  const Value* scale = n.input(1);
  const Value* bias = n.numInputs() > 2 ? n.input(2) : nullptr;
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  FB_ASSIGN_OR_RETURN(float eps, n.attrs().getFloat("epsilon", 1e-5f));
  bool isLayer = n.op() == OpKind::LayerNormalization;
  int64_t axis = 2;
  if (isLayer) {
    FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", -1));
    FB_ASSIGN_OR_RETURN(axis, normalizeAxis(rawAxis, int64_t(xs.size())));
  }
  std::vector<std::string> outer, inner;
  std::vector<int64_t> outerS, innerS;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (int64_t(d) < axis) {
      outer.push_back("i" + std::to_string(d));
      outerS.push_back(xs[d]);
    } else {
      inner.push_back("r" + std::to_string(d - size_t(axis)));
      innerS.push_back(xs[d]);
    }
  }
  std::vector<std::string> all = outer;
  all.insert(all.end(), inner.begin(), inner.end());
  Indices xi = varsOf(all);
  // GroupNormalization: the outer loops are (n, group), the inner ones (channel within the
  // group, spatial...), and the channel read is group * C/G + that channel.
  const bool isGroup = n.op() == OpKind::GroupNormalization;
  int64_t perGroup = 1;
  if (isGroup) {
    FB_ASSIGN_OR_RETURN(int64_t groups, n.attrs().getInt("num_groups", 1));
    if (groups < 1 || xs.size() < 2 || xs[1] % groups != 0)
      return makeError(n.describe(), ": ", xs.size() < 2 ? 0 : xs[1],
                       " channels do not split into num_groups = ", groups, " groups");
    perGroup = xs[1] / groups;
    outer = {"i0", "g"};
    outerS = {xs[0], groups};
    inner.clear();
    innerS.clear();
    for (size_t d = 1; d < xs.size(); ++d) {
      inner.push_back("r" + std::to_string(d - 1));
      innerS.push_back(d == 1 ? perGroup : xs[d]);
    }
    xi = varsOf(inner);
    xi[0] = add(mul(var("g"), intImm(perGroup)), xi[0]);
    xi.insert(xi.begin(), var("i0"));
  }
  int64_t count = 1;
  for (int64_t s : innerS)
    count *= s;
  DType dt = out->dtype;
  BufferPtr mean = makeLocalBuffer("mean", dt, {1}), var2 = makeLocalBuffer("var", dt, {1});
  Indices z{intImm(0)};
  ExprPtr x = b.read(X, xi);
  ExprPtr dev = sub(x, load(mean, z));
  Indices si, bi;
  if (isLayer) {
    std::vector<int64_t> ss = KernelBuilder::sizesOf(scale);
    Indices normIdx(xi.begin() + axis, xi.end());
    si = [&] {
      Indices r;
      size_t lead = normIdx.size() - ss.size();
      for (size_t d = 0; d < ss.size(); ++d)
        r.push_back(ss[d] == 1 && innerS[lead + d] != 1 ? intImm(0) : normIdx[lead + d]);
      return r;
    }();
  } else if (isGroup) {
    // A [C] parameter is per channel; a [G] one (opset 18, G != C) per group.
    auto paramIndex = [&](const Value* p) -> Indices {
      return {KernelBuilder::sizesOf(p)[0] == xs[1] ? xi[1] : var("g")};
    };
    si = paramIndex(scale);
    bi = paramIndex(bias);
  } else {
    si = {xi[1]};
  }
  // LayerNormalization's optional Mean and InvStdDev outputs: X[:axis] + ones.
  auto statStore = [&](size_t k, ExprPtr v) -> StmtPtr {
    if (k >= extras.size() || !extras[k])
      return nullptr;
    Indices si2(xi.begin(), xi.begin() + axis);
    si2.resize(xs.size(), intImm(0));
    return store(extras[k], si2, cast(Type{extras[k]->dtype, 1}, v));
  };
  ExprPtr y = mul(mul(dev, unary(UnaryOp::Sqrt, div(fimm(dt, 1), add(load(var2, z), fimm(dt, eps))))),
                  b.read(scale, si));
  if (bias)
    y = add(y, b.read(bias, isGroup ? bi : si));
  StmtPtr body = alloc(
      mean,
      alloc(var2, block({store(mean, z, fimm(dt, 0), tag(n)),
                         wrapLoops(inner, innerS, store(mean, z, add(load(mean, z), x))),
                         store(mean, z, div(load(mean, z), fimm(dt, double(count)))),
                         store(var2, z, fimm(dt, 0)),
                         wrapLoops(inner, innerS, store(var2, z, add(load(var2, z), mul(dev, dev)))),
                         store(var2, z, div(load(var2, z), fimm(dt, double(count)))),
                         wrapLoops(inner, innerS, store(out, xi, applyEpi(epi, xi, y))),
                         statStore(0, load(mean, z)),
                         statStore(1, div(fimm(dt, 1), unary(UnaryOp::Sqrt, add(load(var2, z), fimm(dt, eps)))))})));
  return wrapLoops(outer, outerS, body);
}

// ---- Concat ----

Expected<StmtPtr> lowerConcat(KernelBuilder& b, const Node& n, const BufferPtr& out,
                              const Epilogue& epi) {
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 0));
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(out->rank())));
  std::vector<StmtPtr> parts;
  int64_t offset = 0;
  for (const Value* in : n.inputs()) {
    if (!in)
      continue;
    std::vector<int64_t> s = KernelBuilder::sizesOf(in);
    std::vector<std::string> names = indexNames(s.size());
    Indices idx = varsOf(names);
    Indices oi = idx;
    oi[size_t(axis)] = add(idx[size_t(axis)], intImm(offset));
    parts.push_back(wrapLoops(names, s, store(out, oi, applyEpi(epi, oi, b.read(in, idx)),
                                              offset == 0 ? tag(n) : "")));
    offset += s[size_t(axis)];
  }
  return block(std::move(parts));
}

} // namespace

bool nestWritesExtraOutputs(OpKind op) {
  return op == OpKind::LayerNormalization || op == OpKind::MaxPool || op == OpKind::TopK ||
         op == OpKind::SoftmaxCrossEntropyLoss || op == OpKind::DynamicQuantizeLinear ||
         isRecurrentOp(op);
}

Expected<StmtPtr> lowerNestOp(KernelBuilder& b, const Node& n, const BufferPtr& out,
                              const Epilogue& epilogue, const std::vector<BufferPtr>& extras) {
  switch (n.op()) {
  case OpKind::MatMul:
  case OpKind::MatMulInteger:
  case OpKind::Gemm: return lowerMatMul(b, n, out, epilogue);
  case OpKind::Conv:
  case OpKind::ConvInteger: return lowerConv(b, n, out, epilogue);
  case OpKind::ConvTranspose: return lowerConvTranspose(b, n, out, epilogue);
  case OpKind::MaxPool:
  case OpKind::AveragePool: return lowerPool(b, n, out, epilogue, extras.empty() ? nullptr : extras[0]);
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool: {
    size_t r = n.input(0)->type().rank();
    std::vector<bool> mask(r, true);
    mask[0] = mask[1] = false;
    return reduceNest(b, n, n.input(0), mask, out,
                      n.op() == OpKind::GlobalMaxPool ? OpKind::ReduceMax : OpKind::ReduceMean,
                      epilogue);
  }
  case OpKind::ReduceMean:
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
  case OpKind::ReduceL1:
  case OpKind::ReduceL2:
  case OpKind::ReduceLogSumExp:
  case OpKind::ReduceSumSquare:
  case OpKind::ReduceLogSum: {
    FB_ASSIGN_OR_RETURN(std::vector<bool> mask, reduceMask(b, n, n.input(0)->type().rank()));
    return reduceNest(b, n, n.input(0), mask, out, n.op(), epilogue);
  }
  case OpKind::ArgMax:
  case OpKind::ArgMin: return lowerArgMax(b, n, out, epilogue);
  case OpKind::Softmax:
  case OpKind::LogSoftmax: return lowerSoftmax(b, n, out, epilogue);
  case OpKind::LayerNormalization:
  case OpKind::InstanceNormalization:
  case OpKind::GroupNormalization:
    return lowerNorm(b, n, out, epilogue, extras);
  case OpKind::Concat: return lowerConcat(b, n, out, epilogue);
  default: break;
  }
  if (std::optional<Expected<StmtPtr>> s = lowerSequentialOp(b, n, out, epilogue, extras))
    return std::move(*s);
  if (std::optional<Expected<StmtPtr>> s = lowerLossOp(b, n, out, epilogue, extras))
    return std::move(*s);
  if (std::optional<Expected<StmtPtr>> s = lowerStatisticsOp(b, n, out, epilogue, extras))
    return std::move(*s);
  if (std::optional<Expected<StmtPtr>> s = lowerLinearAlgebraOp(b, n, out, epilogue))
    return std::move(*s);
  if (isRecurrentOp(n.op())) {
    // Opaque ops are never fused, so nothing hands a recurrent op an epilogue.
    if (epilogue)
      return makeError(n.describe(), ": internal lowering error: a recurrent op takes no epilogue");
    return std::move(*lowerRecurrentOp(b, n, out, extras));
  }
  return makeUnsupported(n.describe(), ": the CPU backend cannot lower ", opName(n.op()), " yet");
}

} // namespace fb::cg::lower
