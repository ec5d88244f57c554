// Tests of fuse-gemm-bias: the rewrite on hand-built graphs, the cases it must leave alone, and
// numeric equivalence on random shapes and bias broadcasts and on the samples.
#include "PassTestUtil.h"

#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::test;

namespace {

PipelineResult fuseGemm(const Graph& g) {
  PipelineResult r = runPipeline(g, "fuse-gemm-bias");
  if (r.error)
    qWarning("fuse-gemm-bias failed: %s", r.error->message().c_str());
  return r;
}

bool changed(const PipelineResult& r) { return r.snapshots.back().record->changed; }

int64_t pick(SeededRandom& rng, int64_t lo, int64_t hi) {
  return lo + int64_t(rng.next() % uint64_t(hi - lo + 1));
}

} // namespace

class TestFuseGemmBias : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// MatMul + Add(bias) becomes Gemm(A, B, bias) with alpha = beta = 1 and the Add's name.
  void fusesMatMulAdd() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[N, 3]
  const %w : f32[3, 4] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  const %b : f32[4] = dense<[0.5, -0.5, 1.0, -1.0]>
  %m : f32[N, 4] = MatMul(%x, %w)  #1 "fc/MatMul"
  %y : f32[N, 4] = Add(%m, %b)  #2 "fc/Add"
  %r : f32[N, 4] = Relu(%y)  #3
  output %r
}
)");
    PipelineResult r = fuseGemm(*g);
    QVERIFY(!r.error);
    QVERIFY(changed(r));
    const Graph& out = r.finalGraph();
    QCOMPARE(out.numNodes(), size_t(2));
    const Node* gemm = out.nodes()[0].get();
    QCOMPARE(gemm->op(), OpKind::Gemm);
    QCOMPARE(gemm->input(0)->name(), std::string("x"));
    QCOMPARE(gemm->input(1)->name(), std::string("w"));
    QCOMPARE(gemm->input(2)->name(), std::string("b"));
    QCOMPARE(*gemm->attrs().getFloat("alpha", 0.f), 1.f);
    QCOMPARE(*gemm->attrs().getFloat("beta", 0.f), 1.f);
    QCOMPARE(gemm->output(0)->name(), std::string("y"));
    QCOMPARE(gemm->output(0)->type().str(), std::string("f32[N, 4]"));
    QCOMPARE(gemm->provenance(), (std::vector<NodeId>{1, 2}));
    QCOMPARE(out.nodes()[1]->input(0), gemm->output(0));
    QCOMPARE(r.snapshots.back().record->statistics.at("MatMul+Add fused into Gemm"), 1.0);
    QCOMPARE(r.snapshots.back().record->summary, std::string("fused 1 MatMul+Add into Gemm"));
    QVERIFY(maxOutputDifference(*g, out) < 1e-4);
  }

  /// The bias may come first, be a graph input, and be [M, N]; a graph-output name is kept.
  void biasFirstAndNonConstant() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[2, 3]
  input %w : f32[3, 4]
  input %b : f32[2, 4]
  %m : f32[2, 4] = MatMul(%x, %w)  #1
  %y : f32[2, 4] = Add(%b, %m)  #2
  output %y
}
)");
    PipelineResult r = fuseGemm(*g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(out.numNodes(), size_t(1));
    QCOMPARE(out.nodes()[0]->op(), OpKind::Gemm);
    QCOMPARE(out.nodes()[0]->input(2)->name(), std::string("b"));
    QCOMPARE(out.outputs()[0]->name(), std::string("y"));
    QVERIFY(maxOutputDifference(*g, out) < 1e-5);
  }

  /// 3-D MatMul (transformer style), a reused MatMul result, and an Add that broadcasts the
  /// product to a larger shape are all left alone.
  void notFused() {
    const char* cases[] = {
        R"(graph @t opset 17 {
  input %x : f32[2, 5, 3]
  const %w : f32[3, 4] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  const %b : f32[4] = dense<[0.5, -0.5, 1.0, -1.0]>
  %m : f32[2, 5, 4] = MatMul(%x, %w)  #1
  %y : f32[2, 5, 4] = Add(%m, %b)  #2
  output %y
}
)",
        R"(graph @t opset 17 {
  input %x : f32[5, 3]
  const %w : f32[3, 4] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  const %b : f32[4] = dense<[0.5, -0.5, 1.0, -1.0]>
  %m : f32[5, 4] = MatMul(%x, %w)  #1
  %y : f32[5, 4] = Add(%m, %b)  #2
  %z : f32[5, 4] = Mul(%m, %y)  #3
  output %z
}
)",
        R"(graph @t opset 17 {
  input %x : f32[5, 3]
  input %w : f32[3, 4]
  input %b : f32[2, 5, 4]
  %m : f32[5, 4] = MatMul(%x, %w)  #1
  %y : f32[2, 5, 4] = Add(%m, %b)  #2
  output %y
}
)",
        R"(graph @t opset 17 {
  input %x : f32[5, 3]
  input %w : f32[3, 4]
  %m : f32[5, 4] = MatMul(%x, %w)  #1
  output %m
}
)"};
    for (const char* text : cases) {
      auto g = parseIr(text);
      PipelineResult r = fuseGemm(*g);
      QVERIFY(!r.error);
      QVERIFY(!changed(r));
      QCOMPARE(countOps(r.finalGraph(), OpKind::Gemm), size_t(0));
    }
  }

  /// Random M, K, N and every bias shape Gemm's C accepts; constant or input weights.
  void randomizedEquivalence() {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      SeededRandom rng(seed);
      int64_t m = pick(rng, 1, 7), k = pick(rng, 1, 7), n = pick(rng, 1, 7);
      Graph g;
      Value* a = g.addInput("a", TensorType::of(DType::F32, {m, k}));
      Value* w = rng.uniform() < 0.5
                     ? g.addConstant("w", randomTensor(DType::F32, {k, n}, rng))
                     : g.addInput("w", TensorType::of(DType::F32, {k, n}));
      const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {n}, {1, n}, {m, 1}, {m, n}};
      auto bs = shapes[size_t(pick(rng, 0, int64_t(shapes.size()) - 1))];
      Value* b = g.addConstant("b", randomTensor(DType::F32, bs, rng));
      Node* mm = g.addNode(OpKind::MatMul, {a, w}, 1, {"m"});
      bool biasFirst = rng.uniform() < 0.5;
      Node* add = g.addNode(OpKind::Add, biasFirst ? std::vector<Value*>{b, mm->output(0)}
                                                   : std::vector<Value*>{mm->output(0), b},
                            1, {"y"});
      g.addOutput(add->output(0));
      QVERIFY(inferShapes(g).ok());
      QVERIFY(verify(g).ok());
      PipelineResult r = fuseGemm(g);
      QVERIFY2(!r.error, ("seed " + std::to_string(seed)).c_str());
      const Graph& out = r.finalGraph();
      QCOMPARE(out.numNodes(), size_t(1));
      QCOMPARE(out.nodes()[0]->op(), OpKind::Gemm);
      double diff = maxOutputDifference(g, out);
      QVERIFY2(diff < 1e-5, ("seed " + std::to_string(seed) + ": " + std::to_string(diff)).c_str());
    }
  }

  /// Samples: the result matches the original; transformer blocks keep their 3-D MatMuls.
  void samples_data() {
    QTest::addColumn<QString>("sample");
    QTest::newRow("mlp") << "mlp.onnx";
    QTest::newRow("transformer_block") << "transformer_block.onnx";
  }
  void samples() {
    QFETCH(QString, sample);
    auto g = loadSample(sample.toStdString());
    size_t matmuls = countOps(*g, OpKind::MatMul);
    PipelineResult r = fuseGemm(*g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    if (sample == "transformer_block.onnx")
      QCOMPARE(countOps(out, OpKind::MatMul), matmuls);
    double diff = maxOutputDifference(*g, out);
    QVERIFY2(diff < 1e-4, std::to_string(diff).c_str());
  }
};

QTEST_GUILESS_MAIN(TestFuseGemmBias)
#include "TestFuseGemmBias.moc"
