// reassociate-matmul: reorders chains of MatMul by the matrix-chain dynamic programme to save FLOPs.
#include "core/Format.h"
#include "core/ShapeInference.h"
#include "passes/Passes.h"
#include "passes/RewriteUtil.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <unordered_set>

namespace fb {

namespace {

/// A maximal chain X1 · X2 · ... · Xn of MatMuls whose intermediate results have one use each.
struct Chain {
  Node* root = nullptr;          ///< the MatMul producing the chain's result
  std::vector<Node*> nodes;      ///< the chain's MatMuls, children before parents (root last)
  std::vector<Value*> leaves;    ///< X1..Xn, left to right
  std::vector<int64_t> batch;    ///< identical leading batch dims of every operand ([] for 2-D)
  std::vector<int64_t> dims;     ///< p0..pn: Xi is [batch..., p(i-1), p(i)]
  double currentFlops = 0;       ///< FLOPs of the chain as written
};

/// The static sizes of `v` when it has rank `rank` >= 2 and the leading dims equal `batch`.
std::optional<std::vector<int64_t>> matrixSizes(const Value* v, size_t rank,
                                                const std::vector<int64_t>& batch) {
  const TensorType& t = v->type();
  if (t.rank() != rank || !t.isStatic())
    return std::nullopt;
  std::vector<int64_t> s = t.staticSizes();
  if (!std::equal(batch.begin(), batch.end(), s.begin()))
    return std::nullopt;
  return s;
}

/// True when a MatMul multiplies two operands of the chain's rank, batch dims and dtype with no
/// broadcasting, so it can be re-bracketed freely.
bool isChainable(const Node* n, size_t rank, const std::vector<int64_t>& batch, DType dtype) {
  if (n->op() != OpKind::MatMul || !n->input(0) || !n->input(1))
    return false;
  for (size_t i = 0; i < 2; ++i)
    if (n->input(i)->type().dtype != dtype || !matrixSizes(n->input(i), rank, batch))
      return false;
  return matrixSizes(n->output(0), rank, batch).has_value();
}

/// FLOPs of one batched [m, k] x [k, n] product.
double matmulFlops(const std::vector<int64_t>& batch, int64_t m, int64_t k, int64_t n) {
  double b = 1;
  for (int64_t d : batch)
    b *= double(d);
  return 2.0 * b * double(m) * double(k) * double(n);
}

/// Collects the leaves of `n` left to right, descending into operands made by a chainable
/// MatMul read only here. Adds the MatMul FLOPs of the existing bracketing.
void flatten(Node* n, Chain& chain, size_t rank, DType dtype) {
  for (size_t i = 0; i < 2; ++i) {
    Value* v = n->input(i);
    Node* p = v->producer();
    if (p && v->uses().size() == 1 && !v->isGraphOutput() &&
        isChainable(p, rank, chain.batch, dtype))
      flatten(p, chain, rank, dtype);
    else
      chain.leaves.push_back(v);
  }
  auto a = n->input(0)->type().staticSizes();
  auto b = n->input(1)->type().staticSizes();
  chain.currentFlops += matmulFlops(chain.batch, a[rank - 2], a[rank - 1], b[rank - 1]);
  chain.nodes.push_back(n);
}

/// The chain rooted at `root`, or nullopt when `root` is not chainable.
std::optional<Chain> chainAt(Node* root) {
  const Value* out = root->output(0);
  if (root->op() != OpKind::MatMul || !out->type().isStatic() || out->type().rank() < 2)
    return std::nullopt;
  size_t rank = out->type().rank();
  auto sizes = out->type().staticSizes();
  Chain chain;
  chain.root = root;
  chain.batch.assign(sizes.begin(), sizes.end() - 2);
  if (!isChainable(root, rank, chain.batch, out->type().dtype))
    return std::nullopt;
  flatten(root, chain, rank, out->type().dtype);
  for (size_t i = 0; i < chain.leaves.size(); ++i) {
    auto s = chain.leaves[i]->type().staticSizes();
    if (i == 0)
      chain.dims.push_back(s[rank - 2]);
    chain.dims.push_back(s[rank - 1]);
  }
  return chain;
}

/// The classic matrix-chain programme: best[i][j] is the fewest FLOPs to multiply Xi..Xj and
/// split[i][j] the k of the last product (Xi..Xk)(Xk+1..Xj).
struct ChainOrder {
  std::vector<std::vector<double>> best;
  std::vector<std::vector<size_t>> split;
};

ChainOrder optimalOrder(const Chain& chain) {
  const size_t n = chain.leaves.size();
  const auto& p = chain.dims;
  ChainOrder o{std::vector<std::vector<double>>(n, std::vector<double>(n, 0.0)),
               std::vector<std::vector<size_t>>(n, std::vector<size_t>(n, 0))};
  for (size_t len = 2; len <= n; ++len)
    for (size_t i = 0; i + len <= n; ++i) {
      size_t j = i + len - 1;
      o.best[i][j] = std::numeric_limits<double>::infinity();
      for (size_t k = i; k < j; ++k) {
        double cost = o.best[i][k] + o.best[k + 1][j] +
                      matmulFlops(chain.batch, p[i], p[k + 1], p[j + 1]);
        if (cost < o.best[i][j]) {
          o.best[i][j] = cost;
          o.split[i][j] = k;
        }
      }
    }
  return o;
}


/// Reassociate-matmul:
///   1. walk MatMuls from last to first; each one not yet claimed roots a chain, grown by
///      descending into operands made by a MatMul whose result is read only there (2-D, or the
///      same rank and identical static batch dims, so no broadcasting is involved);
///   2. flatten the chain into its leaves X1..Xn with Xi of size p(i-1) x p(i), and sum the
///      FLOPs (2·m·k·n per product, times the batch) of the bracketing as written;
///   3. run the matrix-chain dynamic programme for the cheapest bracketing;
///   4. only when it strictly saves FLOPs, build new MatMuls for that bracketing before the
///      root (their provenance covers every MatMul of the old chain), move the root's name and
///      uses to the new result, and erase the old MatMuls.
class ReassociateMatMulPass : public Pass {
public:
  std::string name() const override { return "reassociate-matmul"; }
  std::string summary() const override {
    return "reorder chains of MatMul to the bracketing with the fewest FLOPs";
  }
  std::string description() const override {
    return "Matrix multiplication is associative: (A·B)·C equals A·(B·C), but the work differs. "
           "With A of 1000x10, B of 10x1000 and C of 1000x10, (A·B)·C makes a 1000x1000 "
           "intermediate and costs 40 MFLOP, while A·(B·C) costs 0.4 MFLOP. This pass finds "
           "chains of MatMuls whose intermediate results are used only inside the chain, and "
           "picks the cheapest bracketing with the classic matrix-chain dynamic programme, "
           "rewriting only when it strictly saves work. Fewer FLOPs and smaller intermediates "
           "help on every processor; the result differs from the original only by "
           "floating-point rounding.";
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    std::vector<Node*> matmuls;
    for (const auto& n : graph.nodes())
      if (n->op() == OpKind::MatMul)
        matmuls.push_back(n.get());
    std::unordered_set<Node*> claimed;
    std::vector<Chain> chains;
    for (auto it = matmuls.rbegin(); it != matmuls.rend(); ++it) {
      if (claimed.count(*it))
        continue;
      auto chain = chainAt(*it);
      if (!chain)
        continue;
      for (Node* n : chain->nodes)
        claimed.insert(n);
      if (chain->leaves.size() >= 3)
        chains.push_back(std::move(*chain));
    }
    double before = 0, saved = 0;
    int64_t rewritten = 0;
    for (Chain& chain : chains) {
      ChainOrder order = optimalOrder(chain);
      double best = order.best[0][chain.leaves.size() - 1];
      before += chain.currentFlops;
      if (!(best < chain.currentFlops) || !ctx.mayRewrite())
        continue;
      rebuild(graph, chain, order, ctx);
      saved += chain.currentFlops - best;
      ++rewritten;
    }
    double percent = before > 0 ? 100.0 * saved / before : 0.0;
    ctx.addStatistic("MatMul chains found", double(chains.size()));
    ctx.addStatistic("MatMul chains reordered", double(rewritten));
    ctx.addStatistic("FLOPs saved", saved);
    ctx.addStatistic("FLOPs saved (% of chain FLOPs)", percent);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", percent);
    ctx.setSummary("reordered " + std::to_string(rewritten) + " of " +
                   std::to_string(chains.size()) + " MatMul chains; saved " +
                   formatFlops(saved) + " (" + pct + " of " + formatFlops(before) + ")");
    if (rewritten)
      FB_TRY(inferShapes(graph));
    return rewritten > 0;
  }

private:
  /// Replaces the chain by MatMuls in the order `order` chose.
  static void rebuild(Graph& g, const Chain& chain, const ChainOrder& order, PassContext& ctx) {
    Node* root = chain.root;
    Value* out = root->output(0);
    std::string name = out->name();
    g.renameValue(out, g.uniqueValueName(name + ".old"));
    // Provenance names original nodes: an old MatMul that was itself derived contributes
    // what it was made from (as Node::addProvenanceFrom does).
    std::vector<NodeId> oldIds, provenance;
    for (const Node* n : chain.nodes) {
      oldIds.push_back(n->id());
      if (n->provenance().empty())
        provenance.push_back(n->id());
      else
        provenance.insert(provenance.end(), n->provenance().begin(), n->provenance().end());
    }
    std::vector<Node*> created;
    Value* result = build(g, chain, order, 0, chain.leaves.size() - 1, name, provenance, created);
    created.back()->setName(root->name());
    std::vector<NodeId> newIds;
    for (const Node* n : created) {
      newIds.push_back(n->id());
      ctx.logCreated(n->id(), oldIds, "reassociated MatMul chain");
    }
    for (const Node* n : chain.nodes)
      ctx.logReplaced(n->id(), newIds, "MatMul chain reordered");
    out->replaceAllUsesWith(result);
    // Root first: each old MatMul's only reader is its parent, erased just before it.
    for (auto it = chain.nodes.rbegin(); it != chain.nodes.rend(); ++it)
      g.eraseNode(*it);
  }

  /// Builds the product of leaves i..j; the outermost product takes the name `rootName`.
  static Value* build(Graph& g, const Chain& chain, const ChainOrder& order, size_t i, size_t j,
                      const std::string& rootName, const std::vector<NodeId>& provenance,
                      std::vector<Node*>& created) {
    if (i == j)
      return chain.leaves[i];
    size_t k = order.split[i][j];
    Value* a = build(g, chain, order, i, k, rootName, provenance, created);
    Value* b = build(g, chain, order, k + 1, j, rootName, provenance, created);
    bool outermost = i == 0 && j + 1 == chain.leaves.size();
    std::string name = outermost ? rootName : g.uniqueValueName(rootName + ".reassoc");
    Node* n = g.insertNodeBefore(chain.root, OpKind::MatMul, {a, b}, 1, {name});
    std::vector<int64_t> sizes = chain.batch;
    sizes.push_back(chain.dims[i]);
    sizes.push_back(chain.dims[j + 1]);
    n->output(0)->setType(TensorType::of(chain.root->output(0)->type().dtype, sizes));
    n->setProvenance(provenance);
    created.push_back(n);
    return n->output(0);
  }
};

} // namespace

std::unique_ptr<Pass> createReassociateMatMulPass() {
  return std::make_unique<ReassociateMatMulPass>();
}

} // namespace fb
