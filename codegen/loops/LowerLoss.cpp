// Lowering of the losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, one nest over
// the target elements that reads each target class's log-probability (a data-dependent load)
// and either stores the weighted loss ('none') or sums it and its weight into locals declared
// outside the nest ('sum', 'mean'), which keeps those loops serial.
#include "codegen/loops/LowerContext.h"
#include "core/ops/KernelUtil.h"

#include <cmath>

namespace fb::cg::lower {

namespace {

/// Lowers either loss; `logProbOut` is SoftmaxCrossEntropyLoss's optional second output.
///   for each target element e = (n, d1, ..., dk):
///     [SCE: mx = max_c x[n, c, d]; sum = Σ_c exp(x[n, c, d] - mx); log_prob = (x - mx) - log(sum)]
///     t = target[e]; ignored = t == ignore_index; w = ignored ? 0 : weight[t] (or 1)
///     loss = ignored ? 0 : -log_prob[n, t, d] * w
///     'none': out[e] = loss; else acc += loss, wacc += w
///   'sum': out = acc; 'mean': out = acc / wacc
/// Targets are range-checked by the executor (ignore_index exempt) and clamped in the kernel.
Expected<StmtPtr> lowerLoss(KernelBuilder& b, const Node& n, const BufferPtr& out,
                            const Epilogue& epi, const BufferPtr& logProbOut) {
  const bool softmax = n.op() == OpKind::SoftmaxCrossEntropyLoss;
  const Value *X = n.input(0), *T = n.input(1);
  const Value* W = n.numInputs() > 2 ? n.input(2) : nullptr;
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  const int64_t C = xs[1];
  FB_ASSIGN_OR_RETURN(std::string reduction, n.attrs().getString("reduction", "mean"));
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return makeError(n.describe(), ": reduction '", reduction, "' is not one of none, sum, mean");
  const bool hasIgnore = n.attrs().has("ignore_index");
  FB_ASSIGN_OR_RETURN(int64_t ignore, n.attrs().getInt("ignore_index", 0));
  FB_TRY(b.addIndexCheck(n, T, {C}, {1}, /*nonNegative=*/true,
                         hasIgnore ? std::optional<int64_t>(ignore) : std::nullopt));

  const DType dt = X->type().dtype;
  // Loop variables over the target's dims (N, d1, ..., dk) and the class index c.
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  for (size_t d = 0; d < xs.size(); ++d)
    if (d != 1) {
      names.push_back("n" + std::to_string(names.size()));
      sizes.push_back(xs[d]);
    }
  const Indices e = varsOf(names);
  auto at = [&e](ExprPtr c) {
    Indices i = e;
    i.insert(i.begin() + 1, std::move(c));
    return i;
  };
  Indices z{intImm(0)};
  BufferPtr mx = makeLocalBuffer("mx", dt, {1}), sum = makeLocalBuffer("sum", dt, {1});
  auto logProb = [&](ExprPtr c) {
    ExprPtr x = b.read(X, at(std::move(c)));
    if (!softmax)
      return x;
    return sub(sub(x, load(mx, z)), unary(UnaryOp::Log, load(sum, z)));
  };

  std::vector<StmtPtr> perElement;
  if (softmax) {
    ExprPtr x = b.read(X, at(var("c")));
    perElement.push_back(store(mx, z, fimm(dt, -INFINITY), tag(n)));
    perElement.push_back(forRange("c", C, store(mx, z, max(load(mx, z), x))));
    perElement.push_back(store(sum, z, fimm(dt, 0)));
    perElement.push_back(forRange(
        "c", C, store(sum, z, add(load(sum, z), unary(UnaryOp::Exp, sub(x, load(mx, z)))))));
    if (logProbOut)
      perElement.push_back(forRange("c", C, store(logProbOut, at(var("c")), logProb(var("c")))));
  }
  ExprPtr t = cast(Type::i64(), b.read(T, e));
  ExprPtr ignored = hasIgnore ? binary(BinaryOp::Eq, t, intImm(ignore)) : boolImm(false);
  ExprPtr tc = min(max(t, intImm(0)), intImm(std::max<int64_t>(C - 1, 0)));
  ExprPtr w = W ? b.read(W, {tc}) : fimm(dt, 1);
  w = select(ignored, fimm(dt, 0), w);
  ExprPtr loss = select(ignored, fimm(dt, 0), mul(unary(UnaryOp::Neg, logProb(tc)), w));

  BufferPtr acc = makeLocalBuffer("acc", dt, {1}), wacc = makeLocalBuffer("wacc", dt, {1});
  if (reduction == "none") {
    perElement.push_back(store(out, e, applyEpi(epi, e, loss), softmax ? "" : tag(n)));
  } else {
    perElement.push_back(store(acc, z, add(load(acc, z), loss), softmax ? "" : tag(n)));
    perElement.push_back(store(wacc, z, add(load(wacc, z), w)));
  }
  StmtPtr nest = block(std::move(perElement));
  if (softmax)
    nest = alloc(mx, alloc(sum, nest));
  nest = wrapLoops(names, sizes, nest);
  if (reduction == "none")
    return nest;
  ExprPtr total = reduction == "sum" ? load(acc, z) : div(load(acc, z), load(wacc, z));
  return alloc(acc, alloc(wacc, block({store(acc, z, fimm(dt, 0)), store(wacc, z, fimm(dt, 0)),
                                       nest, store(out, {}, applyEpi(epi, {}, total))})));
}

} // namespace

std::optional<Expected<StmtPtr>> lowerLossOp(KernelBuilder& b, const Node& n, const BufferPtr& out,
                                             const Epilogue& epilogue,
                                             const std::vector<BufferPtr>& extras) {
  switch (n.op()) {
  case OpKind::NegativeLogLikelihoodLoss:
  case OpKind::SoftmaxCrossEntropyLoss:
    return lowerLoss(b, n, out, epilogue, extras.empty() ? nullptr : extras[0]);
  default:
    return std::nullopt;
  }
}

} // namespace fb::cg::lower
