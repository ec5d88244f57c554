// Tests of reassociate-matmul: the chosen bracketing on hand-built chains, chains it must leave
// alone, optimality against brute force and numeric equivalence on random chains and samples.
#include "PassTestUtil.h"

#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"

#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <limits>

using namespace fb;
using namespace fb::test;

namespace {

PipelineResult reassociate(const Graph& g) {
  PipelineResult r = runPipeline(g, "reassociate-matmul");
  if (r.error)
    qWarning("reassociate-matmul failed: %s", r.error->message().c_str());
  return r;
}

bool changed(const PipelineResult& r) { return r.snapshots.back().record->changed; }

double statistic(const PipelineResult& r, const std::string& name) {
  const auto& stats = r.snapshots.back().record->statistics;
  auto it = stats.find(name);
  return it == stats.end() ? 0.0 : it->second;
}

/// Total MatMul FLOPs of a graph (2·M·K·N times the batch), from its static types.
double matmulFlops(const Graph& g) {
  double total = 0;
  for (const auto& n : g.nodes()) {
    if (n->op() != OpKind::MatMul)
      continue;
    auto a = n->input(0)->type().staticSizes();
    auto y = n->output(0)->type().staticSizes();
    double f = 2.0 * double(a.back());
    for (int64_t d : y)
      f *= double(d);
    total += f;
  }
  return total;
}

/// The fewest FLOPs over every bracketing of matrices of sizes p[i] x p[i+1], by exhaustive
/// recursion (independent of the pass's dynamic programme).
double bruteForceBest(const std::vector<int64_t>& p, size_t i, size_t j) {
  if (i == j)
    return 0;
  double best = std::numeric_limits<double>::infinity();
  for (size_t k = i; k < j; ++k)
    best = std::min(best, bruteForceBest(p, i, k) + bruteForceBest(p, k + 1, j) +
                              2.0 * double(p[i] * p[k + 1] * p[j + 1]));
  return best;
}

int64_t pick(SeededRandom& rng, int64_t lo, int64_t hi) {
  return lo + int64_t(rng.next() % uint64_t(hi - lo + 1));
}

/// A constant of `sizes` with values scaled by 1/sqrt(rows) so long products stay near 1.
Tensor scaledRandom(const std::vector<int64_t>& sizes, SeededRandom& rng) {
  Tensor t = randomTensor(DType::F32, sizes, rng);
  double s = 1.0 / std::sqrt(double(sizes[sizes.size() - 2]));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFromDouble(i, t.getAsDouble(i) * s);
  return t;
}

} // namespace

class TestReassociateMatMul : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// (A[100,5]·B[5,100])·C[100,5] costs 200,000 FLOPs; A·(B·C) costs 10,000.
  void reordersLeftDeepChain() {
    SeededRandom rng(1);
    Graph g;
    Value* a = g.addInput("a", TensorType::of(DType::F32, {100, 5}));
    Value* b = g.addConstant("b", scaledRandom({5, 100}, rng));
    Value* c = g.addConstant("c", scaledRandom({100, 5}, rng));
    Node* ab = g.addNode(OpKind::MatMul, {a, b}, 1, {"ab"});
    Node* abc = g.addNode(OpKind::MatMul, {ab->output(0), c}, 1, {"abc"}, "root");
    Node* relu = g.addNode(OpKind::Relu, {abc->output(0)}, 1, {"r"});
    g.addOutput(relu->output(0));
    QVERIFY(inferShapes(g).ok());
    QCOMPARE(matmulFlops(g), 200000.0);
    PipelineResult r = reassociate(g);
    QVERIFY(!r.error);
    QVERIFY(changed(r));
    const Graph& out = r.finalGraph();
    QCOMPARE(matmulFlops(out), 10000.0);
    QCOMPARE(out.numNodes(), size_t(3));
    const Node* bc = out.nodes()[0].get();
    const Node* root = out.nodes()[1].get();
    QCOMPARE(bc->op(), OpKind::MatMul);
    QCOMPARE(bc->input(0)->name(), std::string("b"));
    QCOMPARE(bc->input(1)->name(), std::string("c"));
    QCOMPARE(bc->output(0)->type().str(), std::string("f32[5, 5]"));
    QCOMPARE(root->input(0)->name(), std::string("a"));
    QCOMPARE(root->input(1), bc->output(0));
    QCOMPARE(root->output(0)->name(), std::string("abc"));
    QCOMPARE(root->name(), std::string("root"));
    QCOMPARE(out.nodes()[2]->input(0), root->output(0));
    std::vector<NodeId> old = {ab->id(), abc->id()};
    QCOMPARE(bc->provenance(), old);
    QCOMPARE(root->provenance(), old);
    QCOMPARE(statistic(r, "FLOPs saved"), 190000.0);
    QCOMPARE(statistic(r, "FLOPs saved (% of chain FLOPs)"), 95.0);
    QCOMPARE(r.snapshots.back().record->summary,
             std::string("reordered 1 of 1 MatMul chains; saved 190 KFLOP (95.0% of 200 KFLOP)"));
    double diff = maxOutputDifference(g, out);
    QVERIFY2(diff < 1e-4, std::to_string(diff).c_str());
  }

  /// (A[5,100]·B[100,5])·C[5,100] is already optimal; nothing changes.
  void optimalChainUnchanged() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %a : f32[5, 100]
  input %b : f32[100, 5]
  input %c : f32[5, 100]
  %ab : f32[5, 5] = MatMul(%a, %b)  #1
  %abc : f32[5, 100] = MatMul(%ab, %c)  #2
  output %abc
}
)");
    PipelineResult r = reassociate(*g);
    QVERIFY(!r.error);
    QVERIFY(!changed(r));
    QCOMPARE(statistic(r, "MatMul chains found"), 1.0);
    QCOMPARE(statistic(r, "FLOPs saved"), 0.0);
  }

  /// An intermediate read twice ends the chain: two 2-matrix products, nothing to reorder.
  void sharedIntermediateNotReordered() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %a : f32[100, 5]
  input %b : f32[5, 100]
  input %c : f32[100, 5]
  %ab : f32[100, 100] = MatMul(%a, %b)  #1
  %abc : f32[100, 5] = MatMul(%ab, %c)  #2
  %r : f32[100, 100] = Relu(%ab)  #3
  output %abc, %r
}
)");
    PipelineResult r = reassociate(*g);
    QVERIFY(!r.error);
    QVERIFY(!changed(r));
    QCOMPARE(statistic(r, "MatMul chains found"), 0.0);
  }

  /// A broadcasting 3-D x 2-D MatMul is not re-bracketed (batch dims differ).
  void broadcastChainUnchanged() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %a : f32[2, 100, 5]
  input %b : f32[5, 100]
  input %c : f32[100, 5]
  %ab : f32[2, 100, 100] = MatMul(%a, %b)  #1
  %abc : f32[2, 100, 5] = MatMul(%ab, %c)  #2
  output %abc
}
)");
    PipelineResult r = reassociate(*g);
    QVERIFY(!r.error);
    QVERIFY(!changed(r));
  }

  /// Batched chains with identical batch dims are reordered like 2-D ones.
  void batchedChainReordered() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %a : f32[3, 40, 2]
  input %b : f32[3, 2, 40]
  input %c : f32[3, 40, 2]
  %ab : f32[3, 40, 40] = MatMul(%a, %b)  #1
  %abc : f32[3, 40, 2] = MatMul(%ab, %c)  #2
  output %abc
}
)");
    PipelineResult r = reassociate(*g);
    QVERIFY(!r.error);
    QVERIFY(changed(r));
    const Graph& out = r.finalGraph();
    QCOMPARE(matmulFlops(out), 3 * (2.0 * 2 * 40 * 2 + 2.0 * 40 * 2 * 2));
    QCOMPARE(out.nodes()[0]->output(0)->type().str(), std::string("f32[3, 2, 2]"));
    QCOMPARE(out.outputs()[0]->name(), std::string("abc"));
    QVERIFY(maxOutputDifference(*g, out) < 1e-4);
  }

  /// Random chains of 3 to 7 matrices in a random bracketing: the result costs exactly the
  /// brute-force optimum (or is unchanged when already optimal) and computes the same values.
  void randomizedChains() {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      SeededRandom rng(seed);
      size_t n = size_t(pick(rng, 3, 7));
      std::vector<int64_t> p;
      for (size_t i = 0; i <= n; ++i)
        p.push_back(pick(rng, 1, 24));
      Graph g;
      std::vector<Value*> leaves;
      leaves.push_back(g.addInput("x", TensorType::of(DType::F32, {p[0], p[1]})));
      for (size_t i = 1; i < n; ++i)
        leaves.push_back(g.addConstant("w" + std::to_string(i), scaledRandom({p[i], p[i + 1]}, rng)));
      // A random bracketing: repeatedly multiply two neighbours.
      std::vector<Value*> items = leaves;
      while (items.size() > 1) {
        size_t i = size_t(pick(rng, 0, int64_t(items.size()) - 2));
        Node* m = g.addNode(OpKind::MatMul, {items[i], items[i + 1]}, 1);
        items[i] = m->output(0);
        items.erase(items.begin() + long(i) + 1);
      }
      g.addOutput(items[0]);
      QVERIFY(inferShapes(g).ok());
      QVERIFY(verify(g).ok());
      double before = matmulFlops(g);
      double best = bruteForceBest(p, 0, n - 1);
      PipelineResult r = reassociate(g);
      std::string what = "seed " + std::to_string(seed);
      QVERIFY2(!r.error, what.c_str());
      const Graph& out = r.finalGraph();
      QCOMPARE(changed(r), best < before);
      QCOMPARE(matmulFlops(out), best);
      QCOMPARE(statistic(r, "FLOPs saved"), before - best);
      QCOMPARE(countOps(out, OpKind::MatMul), n - 1);
      double diff = maxOutputDifference(g, out);
      QVERIFY2(diff < 1e-4, (what + ": " + std::to_string(diff)).c_str());
    }
  }

  /// The transformer sample stays numerically the same.
  void transformerSample() {
    auto g = loadSample("transformer_block.onnx");
    PipelineResult r = reassociate(*g);
    QVERIFY(!r.error);
    double diff = maxOutputDifference(*g, r.finalGraph());
    QVERIFY2(diff < 1e-4, std::to_string(diff).c_str());
  }
};

QTEST_GUILESS_MAIN(TestReassociateMatMul)
#include "TestReassociateMatMul.moc"
