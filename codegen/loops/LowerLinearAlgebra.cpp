// Lowering of Det (Gaussian elimination with partial pivoting on a local copy of each matrix)
// and Einsum (one nest over the output labels around a nest over the summed labels).
#include "codegen/loops/LowerContext.h"
#include "core/ops/EinsumEquation.h"
#include "core/ops/KernelUtil.h"

#include <algorithm>

namespace fb::cg::lower {

namespace {

/// For each matrix of the batch, as the interpreter does (in f32 here):
///   a = copy of the matrix; det = 1
///   for c: p = the row >= c with the largest |a[p, c]| (the first on ties)
///          if a[p, c] == 0: det = 0
///          else: swap rows p and c (negating det), det *= a[c, c], eliminate below the pivot
/// The pivot search and the swaps depend on data, so everything stays serial.
Expected<StmtPtr> lowerDet(KernelBuilder& b, const Node& n, const BufferPtr& out,
                           const Epilogue& epi) {
  const Value* X = n.input(0);
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  const DType dt = X->type().dtype;
  if (dt != DType::F32)
    return makeUnsupported(n.describe(), ": Det of ", dtypeName(dt));
  const int64_t M = xs.back();
  std::vector<int64_t> batchSizes(xs.begin(), xs.end() - 2);
  std::vector<std::string> names = indexNames(batchSizes.size(), "b");
  Indices batch = varsOf(names);
  BufferPtr a = makeLocalBuffer("a", dt, {M, M});
  BufferPtr det = makeLocalBuffer("det", dt, {1}), f = makeLocalBuffer("f", dt, {1});
  BufferPtr piv = makeLocalBuffer("piv", DType::I64, {1});
  Indices z{intImm(0)};
  auto at = [&a](ExprPtr r, ExprPtr c) { return load(a, {std::move(r), std::move(c)}); };
  auto from = [](const std::string& v, ExprPtr start, int64_t end, StmtPtr body) {
    return forLoop(v, start, sub(intImm(end), start), ForKind::Serial, std::move(body));
  };
  Indices src = batch;
  src.push_back(var("r0"));
  src.push_back(var("k0"));
  StmtPtr copy = forRange(
      "r0", M, forRange("k0", M, store(a, {var("r0"), var("k0")}, b.read(X, src), tag(n))));
  ExprPtr c = var("c"), p = load(piv, z);
  ExprPtr cPlus1 = add(c, intImm(1));
  StmtPtr search = from("r1", cPlus1, M,
                        ifThen(binary(BinaryOp::Gt, unary(UnaryOp::Abs, at(var("r1"), c)),
                                      unary(UnaryOp::Abs, at(p, c))),
                               store(piv, z, var("r1"))));
  StmtPtr swap =
      ifThen(binary(BinaryOp::Ne, p, c),
             block({forRange("k1", M,
                             let("t", at(p, var("k1")),
                                 block({store(a, {p, var("k1")}, at(c, var("k1"))),
                                        store(a, {c, var("k1")}, var("t", Type{dt, 1}))}))),
                    store(det, z, unary(UnaryOp::Neg, load(det, z)))}));
  StmtPtr eliminate =
      from("r2", cPlus1, M,
           block({store(f, z, div(at(var("r2"), c), at(c, c))),
                  from("k2", c, M,
                       store(a, {var("r2"), var("k2")},
                             sub(at(var("r2"), var("k2")), mul(load(f, z), at(c, var("k2"))))))}));
  StmtPtr step =
      block({store(piv, z, c), search,
             ifThen(binary(BinaryOp::Eq, at(p, c), fimm(dt, 0)), store(det, z, fimm(dt, 0)),
                    block({swap, store(det, z, mul(load(det, z), at(c, c))), eliminate}))});
  StmtPtr body = block({copy, store(det, z, fimm(dt, 1)), forRange("c", M, step),
                        store(out, batch, applyEpi(epi, batch, load(det, z)))});
  return wrapLoops(names, batchSizes, alloc(a, alloc(det, alloc(f, alloc(piv, body)))));
}

/// out[output labels] = Σ over the other labels of Π_k input_k[its labels]. A label on two
/// dims of one operand reads its diagonal; an ellipsis dim of size 1 broadcasts (index 0).
Expected<StmtPtr> lowerEinsum(KernelBuilder& b, const Node& n, const BufferPtr& out,
                              const Epilogue& epi) {
  FB_ASSIGN_OR_RETURN(std::string equation, n.attrs().getString("equation", ""));
  std::vector<size_t> ranks;
  std::vector<std::vector<int64_t>> sizes;
  for (const Value* v : n.inputs()) {
    sizes.push_back(KernelBuilder::sizesOf(v));
    ranks.push_back(sizes.back().size());
  }
  auto eq = parseEinsumEquation(equation, ranks);
  if (!eq)
    return makeError(n.describe(), ": ", eq.error().message());
  auto labelSizes = einsumLabelSizes(*eq, sizes);
  if (!labelSizes)
    return makeError(n.describe(), ": ", labelSizes.error().message());
  const DType dt = out->dtype;
  auto labelVar = [](int l) { return "e" + std::to_string(l); };
  std::vector<std::string> outNames, sumNames;
  std::vector<int64_t> outSizes, sumSizes;
  for (int l : eq->output) {
    outNames.push_back(labelVar(l));
    outSizes.push_back((*labelSizes)[size_t(l)]);
  }
  for (int l = 0; l < eq->numLabels; ++l)
    if (std::find(eq->output.begin(), eq->output.end(), l) == eq->output.end()) {
      sumNames.push_back(labelVar(l));
      sumSizes.push_back((*labelSizes)[size_t(l)]);
    }
  ExprPtr product;
  for (size_t k = 0; k < ranks.size(); ++k) {
    Indices idx;
    for (size_t d = 0; d < ranks[k]; ++d) {
      const int l = eq->inputs[k][d];
      const bool broadcast = sizes[k][d] == 1 && (*labelSizes)[size_t(l)] != 1;
      idx.push_back(broadcast ? intImm(0) : var(labelVar(l)));
    }
    ExprPtr term = b.read(n.input(k), idx);
    product = product ? mul(product, term) : term;
  }
  Indices outIdx = varsOf(outNames);
  if (sumNames.empty())
    return wrapLoops(outNames, outSizes,
                     store(out, outIdx, applyEpi(epi, outIdx, product), tag(n)));
  BufferPtr acc = makeLocalBuffer("acc", dt, {1});
  Indices z{intImm(0)};
  StmtPtr body =
      alloc(acc, block({store(acc, z, fimm(dt, 0), tag(n)),
                        wrapLoops(sumNames, sumSizes, store(acc, z, add(load(acc, z), product))),
                        store(out, outIdx, applyEpi(epi, outIdx, load(acc, z)))}));
  return wrapLoops(outNames, outSizes, body);
}

} // namespace

std::optional<Expected<StmtPtr>> lowerLinearAlgebraOp(KernelBuilder& b, const Node& n,
                                                      const BufferPtr& out,
                                                      const Epilogue& epilogue) {
  switch (n.op()) {
  case OpKind::Det:
    return lowerDet(b, n, out, epilogue);
  case OpKind::Einsum:
    return lowerEinsum(b, n, out, epilogue);
  default:
    return std::nullopt;
  }
}

} // namespace fb::cg::lower
