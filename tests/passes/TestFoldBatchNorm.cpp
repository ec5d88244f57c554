// Tests of fold-batchnorm: exact folded weights, provenance, what must not fold, and numeric
// equivalence on the samples and on random Conv/ConvTranspose/Gemm/MatMul + BatchNormalization.
#include "PassTestUtil.h"

#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"

#include <QtTest/QtTest>

#include <algorithm>

using namespace fb;
using namespace fb::test;

namespace {

/// Runs fold-batchnorm on `g`, failing the test when the pipeline fails.
PipelineResult foldBn(const Graph& g) {
  PipelineResult r = runPipeline(g, "fold-batchnorm");
  if (r.error)
    qWarning("fold-batchnorm failed: %s", r.error->message().c_str());
  return r;
}

/// A statistic of the (only) pass application, 0 when absent.
double statistic(const PipelineResult& r, const std::string& name) {
  const auto& stats = r.snapshots.back().record->statistics;
  auto it = stats.find(name);
  return it == stats.end() ? 0.0 : it->second;
}

std::vector<float> floatsOf(const Value* v) {
  auto d = v->constantData().data<float>();
  return {d.begin(), d.end()};
}

/// Adds a BatchNormalization over `x` with random parameters (variance in [0.5, 1.5)).
Node* addRandomBn(Graph& g, Value* x, int64_t channels, SeededRandom& rng) {
  Value* gamma = g.addConstant("gamma", randomTensor(DType::F32, {channels}, rng));
  Value* beta = g.addConstant("beta", randomTensor(DType::F32, {channels}, rng));
  Value* mean = g.addConstant("mean", randomTensor(DType::F32, {channels}, rng));
  Tensor var(DType::F32, {channels});
  for (int64_t c = 0; c < channels; ++c)
    var.setFromDouble(c, 0.5 + rng.uniform());
  Value* v = g.addConstant("var", var);
  Node* bn = g.addNode(OpKind::BatchNormalization, {x, gamma, beta, mean, v}, 1, {"y"}, "bn");
  bn->attrs().set("epsilon", 1e-3f);
  return bn;
}

/// Finishes a hand-built graph: `out` becomes the output, types are inferred and verified.
void finish(Graph& g, Value* out) {
  g.addOutput(out);
  QVERIFY(inferShapes(g).ok());
  Status st = verify(g);
  if (!st.ok())
    qWarning("%s", st.error().message().c_str());
  QVERIFY(st.ok());
}

int64_t pick(SeededRandom& rng, int64_t lo, int64_t hi) {
  return lo + int64_t(rng.next() % uint64_t(hi - lo + 1));
}

} // namespace

class TestFoldBatchNorm : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Conv 1x1 with a bias: W' = W·γ/σ and b' = (b − μ)·γ/σ + β, computed by hand.
  void convExactValues() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[1, 2, 2, 2]
  const %w : f32[2, 2, 1, 1] = dense<[1.0, 2.0, 3.0, 4.0]>
  const %b : f32[2] = dense<[0.5, -1.0]>
  const %gamma : f32[2] = dense<[2.0, 0.5]>
  const %beta : f32[2] = dense<[1.0, 0.0]>
  const %mean : f32[2] = dense<[0.5, 1.0]>
  const %var : f32[2] = dense<[3.0, 0.0]>
  %c : f32[1, 2, 2, 2] = Conv(%x, %w, %b)  #1 "conv"
  %y : f32[1, 2, 2, 2] = BatchNormalization(%c, %gamma, %beta, %mean, %var) {epsilon = 1.0}  #2 "bn"
  output %y
}
)");
    PipelineResult r = foldBn(*g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(countOps(out, OpKind::BatchNormalization), size_t(0));
    QCOMPARE(out.numNodes(), size_t(1));
    const Node* conv = out.nodes()[0].get();
    QCOMPARE(conv->op(), OpKind::Conv);
    QCOMPARE(conv->id(), NodeId(1));
    QCOMPARE(conv->provenance(), (std::vector<NodeId>{1, 2}));
    // σ = sqrt(var + 1) = [2, 1], so the scale is γ/σ = [1, 0.5].
    QCOMPARE(floatsOf(conv->input(1)), (std::vector<float>{1.f, 2.f, 1.5f, 2.f}));
    QCOMPARE(floatsOf(conv->input(2)), (std::vector<float>{1.f, -1.f}));
    // The graph output keeps its name; old weights and BN parameters are gone.
    QCOMPARE(out.outputs()[0]->name(), std::string("y"));
    QCOMPARE(out.outputs()[0], conv->output(0));
    QCOMPARE(out.constants().size(), size_t(2));
    QCOMPARE(statistic(r, "BatchNormalization folded into Conv"), 1.0);
    QCOMPARE(r.snapshots.back().record->summary,
             std::string("folded 1 BatchNormalization into Conv; 0 into Gemm; 0 lowered to Mul+Add"));
    QVERIFY(maxOutputDifference(*g, out) < 1e-5);
  }

  /// A Conv without bias gets one: b' = −μ·γ/σ + β.
  void convWithoutBiasGetsOne() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[1, 1, 3, 3]
  const %w : f32[2, 1, 1, 1] = dense<[1.0, -1.0]>
  const %gamma : f32[2] = dense<[1.0, 3.0]>
  const %beta : f32[2] = dense<[0.25, 2.0]>
  const %mean : f32[2] = dense<[2.0, -1.0]>
  const %var : f32[2] = dense<[4.0, 9.0]>
  %c : f32[1, 2, 3, 3] = Conv(%x, %w)  #1
  %y : f32[1, 2, 3, 3] = BatchNormalization(%c, %gamma, %beta, %mean, %var) {epsilon = 0.0}  #2
  %r : f32[1, 2, 3, 3] = Relu(%y)  #3
  output %r
}
)");
    PipelineResult r = foldBn(*g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(countOps(out, OpKind::BatchNormalization), size_t(0));
    const Node* conv = out.nodes()[0].get();
    QCOMPARE(conv->numInputs(), size_t(3));
    // scale = [1/2, 3/3] = [0.5, 1]; bias = [-2·0.5 + 0.25, 1·1 + 2] = [-0.75, 3].
    QCOMPARE(floatsOf(conv->input(1)), (std::vector<float>{0.5f, -1.f}));
    QCOMPARE(floatsOf(conv->input(2)), (std::vector<float>{-0.75f, 3.f}));
    QCOMPARE(out.nodes()[1]->input(0), conv->output(0));
    QVERIFY(maxOutputDifference(*g, out) < 1e-5);
  }

  /// A BatchNormalization on a graph input becomes Mul+Add with [C, 1, 1] constants.
  void loneBnLoweredToMulAdd() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[2, 2, 3, 3]
  const %gamma : f32[2] = dense<[2.0, 1.0]>
  const %beta : f32[2] = dense<[1.0, -1.0]>
  const %mean : f32[2] = dense<[1.0, 0.0]>
  const %var : f32[2] = dense<[4.0, 1.0]>
  %y : f32[2, 2, 3, 3] = BatchNormalization(%x, %gamma, %beta, %mean, %var) {epsilon = 0.0}  #5
  output %y
}
)");
    PipelineResult r = foldBn(*g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(countOps(out, OpKind::BatchNormalization), size_t(0));
    QCOMPARE(countOps(out, OpKind::Mul), size_t(1));
    QCOMPARE(countOps(out, OpKind::Add), size_t(1));
    const Node* mul = out.nodes()[0].get();
    const Node* add = out.nodes()[1].get();
    QCOMPARE(mul->input(1)->type().str(), std::string("f32[2, 1, 1]"));
    QCOMPARE(floatsOf(mul->input(1)), (std::vector<float>{1.f, 1.f}));
    QCOMPARE(floatsOf(add->input(1)), (std::vector<float>{0.f, -1.f}));
    QCOMPARE(mul->provenance(), (std::vector<NodeId>{5}));
    QCOMPARE(add->provenance(), (std::vector<NodeId>{5}));
    QCOMPARE(out.outputs()[0]->name(), std::string("y"));
    QCOMPARE(statistic(r, "BatchNormalization lowered to Mul+Add"), 1.0);
    QVERIFY(maxOutputDifference(*g, out) < 1e-5);
  }

  /// One constant passed as both γ and β (and shared by two BNs) is erased once, when the last
  /// reader is gone.
  void sharedParameterConstant() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[1, 2, 2, 2]
  const %w : f32[2, 2, 1, 1] = dense<[1.0, 2.0, 3.0, 4.0]>
  const %p : f32[2] = dense<[2.0, 0.5]>
  const %var : f32[2] = dense<[3.0, 1.0]>
  %c : f32[1, 2, 2, 2] = Conv(%x, %w)  #1
  %y : f32[1, 2, 2, 2] = BatchNormalization(%c, %p, %p, %p, %var)  #2
  %z : f32[1, 2, 2, 2] = BatchNormalization(%y, %p, %p, %p, %var)  #3
  output %z
}
)");
    PipelineResult r = foldBn(*g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(out.numNodes(), size_t(1));
    QCOMPARE(out.nodes()[0]->provenance(), (std::vector<NodeId>{1, 2, 3}));
    QCOMPARE(out.constants().size(), size_t(2));
    QVERIFY(maxOutputDifference(*g, out) < 1e-5);
  }

  /// The Conv's output is also read by a Relu: the Conv must keep its weights, and the BN is
  /// lowered to Mul+Add instead.
  void convOutputUsedTwiceNotFolded() {
    SeededRandom rng(7);
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 3, 4, 4}));
    Value* w = g.addConstant("w", randomTensor(DType::F32, {4, 3, 3, 3}, rng));
    Node* conv = g.addNode(OpKind::Conv, {x, w}, 1, {"c"});
    Node* bn = addRandomBn(g, conv->output(0), 4, rng);
    Node* relu = g.addNode(OpKind::Relu, {conv->output(0)}, 1, {"r"});
    Node* add = g.addNode(OpKind::Add, {bn->output(0), relu->output(0)}, 1, {"s"});
    finish(g, add->output(0));
    PipelineResult r = foldBn(g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(countOps(out, OpKind::BatchNormalization), size_t(0));
    QCOMPARE(countOps(out, OpKind::Mul), size_t(1));
    const Node* newConv = out.findNode(conv->id());
    QVERIFY(newConv);
    QCOMPARE(newConv->input(1)->name(), std::string("w"));
    QCOMPARE(newConv->numInputs(), size_t(2));
    QVERIFY(newConv->provenance().empty());
    QVERIFY(maxOutputDifference(g, out) < 1e-4);
  }

  /// Weights that are a graph input are not known at compile time: no folding into the Conv.
  void nonConstantWeightsNotFolded() {
    SeededRandom rng(8);
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 2, 4, 4}));
    Value* w = g.addInput("w", TensorType::of(DType::F32, {3, 2, 1, 1}));
    Node* conv = g.addNode(OpKind::Conv, {x, w}, 1, {"c"});
    Node* bn = addRandomBn(g, conv->output(0), 3, rng);
    finish(g, bn->output(0));
    PipelineResult r = foldBn(g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(statistic(r, "BatchNormalization folded into Conv"), 0.0);
    QCOMPARE(statistic(r, "BatchNormalization lowered to Mul+Add"), 1.0);
    QCOMPARE(out.findNode(conv->id())->input(1)->name(), std::string("w"));
    QVERIFY(maxOutputDifference(g, out) < 1e-4);
  }

  /// Non-constant BN parameters or another dtype: the BN is left alone and nothing changes.
  void unsupportedBnLeftAlone() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[1, 2, 2, 2]
  input %mean : f32[2]
  const %gamma : f32[2] = dense<[2.0, 0.5]>
  const %beta : f32[2] = dense<[1.0, 0.0]>
  const %var : f32[2] = dense<[3.0, 0.0]>
  %y : f32[1, 2, 2, 2] = BatchNormalization(%x, %gamma, %beta, %mean, %var)  #2
  output %y
}
)");
    PipelineResult r = foldBn(*g);
    QVERIFY(!r.error);
    QVERIFY(!r.snapshots.back().record->changed);
    QCOMPARE(countOps(r.finalGraph(), OpKind::BatchNormalization), size_t(1));

    auto h = parseIr(R"(graph @t opset 17 {
  input %x : f16[1, 2, 2, 2]
  const %gamma : f16[2] = dense<[2.0, 0.5]>
  const %beta : f16[2] = dense<[1.0, 0.0]>
  const %mean : f16[2] = dense<[1.0, 0.0]>
  const %var : f16[2] = dense<[3.0, 0.0]>
  %y : f16[1, 2, 2, 2] = BatchNormalization(%x, %gamma, %beta, %mean, %var)  #2
  output %y
}
)");
    PipelineResult rh = foldBn(*h);
    QVERIFY(!rh.error);
    QVERIFY(!rh.snapshots.back().record->changed);
    QCOMPARE(countOps(rh.finalGraph(), OpKind::BatchNormalization), size_t(1));
  }

  /// Gemm with transB = 1 and a [N] bias; beta = 2 must be folded into the new bias.
  void gemmTransBFolded() {
    SeededRandom rng(3);
    for (int64_t transB = 0; transB < 2; ++transB) {
      Graph g;
      Value* a = g.addInput("a", TensorType::of(DType::F32, {3, 5}));
      std::vector<int64_t> bs = transB ? std::vector<int64_t>{4, 5} : std::vector<int64_t>{5, 4};
      Value* b = g.addConstant("b", randomTensor(DType::F32, bs, rng));
      Value* c = g.addConstant("c", randomTensor(DType::F32, {4}, rng));
      Node* gemm = g.addNode(OpKind::Gemm, {a, b, c}, 1, {"g"});
      gemm->attrs().set("transB", transB);
      gemm->attrs().set("beta", 2.0f);
      gemm->attrs().set("alpha", 0.5f);
      Node* bn = addRandomBn(g, gemm->output(0), 4, rng);
      finish(g, bn->output(0));
      PipelineResult r = foldBn(g);
      QVERIFY(!r.error);
      const Graph& out = r.finalGraph();
      QCOMPARE(out.numNodes(), size_t(1));
      QCOMPARE(out.nodes()[0]->id(), gemm->id());
      QCOMPARE(statistic(r, "BatchNormalization folded into Gemm"), 1.0);
      QVERIFY(maxOutputDifference(g, out) < 1e-5);
    }
  }

  /// A 2-D MatMul by a constant weight becomes one Gemm; a 3-D one (BN channel = rows) not.
  void matMulBecomesGemm() {
    SeededRandom rng(4);
    Graph g;
    Value* a = g.addInput("a", TensorType::of(DType::F32, {6, 5}));
    Value* w = g.addConstant("w", randomTensor(DType::F32, {5, 3}, rng));
    Node* mm = g.addNode(OpKind::MatMul, {a, w}, 1, {"m"});
    Node* bn = addRandomBn(g, mm->output(0), 3, rng);
    finish(g, bn->output(0));
    PipelineResult r = foldBn(g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(out.numNodes(), size_t(1));
    QCOMPARE(out.nodes()[0]->op(), OpKind::Gemm);
    QCOMPARE(out.nodes()[0]->provenance(), (std::vector<NodeId>{mm->id(), bn->id()}));
    QCOMPARE(out.outputs()[0]->name(), std::string("y"));
    QVERIFY(maxOutputDifference(g, out) < 1e-5);

    Graph h;
    Value* a3 = h.addInput("a", TensorType::of(DType::F32, {2, 6, 5}));
    Value* w3 = h.addConstant("w", randomTensor(DType::F32, {5, 3}, rng));
    Node* mm3 = h.addNode(OpKind::MatMul, {a3, w3}, 1, {"m"});
    Node* bn3 = addRandomBn(h, mm3->output(0), 6, rng);
    finish(h, bn3->output(0));
    PipelineResult r3 = foldBn(h);
    QVERIFY(!r3.error);
    QCOMPARE(countOps(r3.finalGraph(), OpKind::MatMul), size_t(1));
    QCOMPARE(countOps(r3.finalGraph(), OpKind::Gemm), size_t(0));
    QCOMPARE(statistic(r3, "BatchNormalization lowered to Mul+Add"), 1.0);
    QVERIFY(maxOutputDifference(h, r3.finalGraph()) < 1e-5);
  }

  /// Random Conv / ConvTranspose (groups, with and without bias), Gemm (C of every broadcast
  /// shape) and MatMul, each followed by a BN: every BN folds and the results match.
  void randomizedEquivalence() {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      SeededRandom rng(seed);
      Graph g;
      int kind = int(seed % 4);
      Value* y = nullptr;
      int64_t channels = 0;
      OpKind expected = OpKind::Conv;
      if (kind <= 1) {
        int64_t group = pick(rng, 1, 3);
        int64_t cinPerGroup = pick(rng, 1, 3), coutPerGroup = pick(rng, 1, 3);
        int64_t cin = cinPerGroup * group, cout = coutPerGroup * group, k = pick(rng, 1, 3);
        Value* x = g.addInput("x", TensorType::of(DType::F32, {2, cin, 5, 5}));
        bool transposed = kind == 1;
        std::vector<int64_t> ws = transposed ? std::vector<int64_t>{cin, coutPerGroup, k, k}
                                             : std::vector<int64_t>{cout, cinPerGroup, k, k};
        std::vector<Value*> ins = {x, g.addConstant("w", randomTensor(DType::F32, ws, rng))};
        if (rng.uniform() < 0.5)
          ins.push_back(g.addConstant("b", randomTensor(DType::F32, {cout}, rng)));
        expected = transposed ? OpKind::ConvTranspose : OpKind::Conv;
        Node* conv = g.addNode(expected, ins, 1, {"c"});
        conv->attrs().set("group", group);
        conv->attrs().set("strides", std::vector<int64_t>{pick(rng, 1, 2), 1});
        y = conv->output(0);
        channels = cout;
      } else if (kind == 2) {
        int64_t m = pick(rng, 1, 6), k = pick(rng, 1, 6), n = pick(rng, 1, 6);
        int64_t transB = pick(rng, 0, 1);
        Value* a = g.addInput("a", TensorType::of(DType::F32, {m, k}));
        std::vector<int64_t> bs = transB ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
        std::vector<Value*> ins = {a, g.addConstant("b", randomTensor(DType::F32, bs, rng))};
        const std::vector<std::vector<int64_t>> cShapes = {{}, {n}, {1, n}, {m, 1}, {m, n}, {1}};
        int64_t cs = pick(rng, -1, int64_t(cShapes.size()) - 1);
        if (cs >= 0)
          ins.push_back(g.addConstant("c", randomTensor(DType::F32, cShapes[size_t(cs)], rng)));
        Node* gemm = g.addNode(OpKind::Gemm, ins, 1, {"g"});
        gemm->attrs().set("transB", transB);
        gemm->attrs().set("beta", float(0.5 + rng.uniform()));
        expected = OpKind::Gemm;
        y = gemm->output(0);
        channels = n;
      } else {
        int64_t m = pick(rng, 1, 6), k = pick(rng, 1, 6), n = pick(rng, 1, 6);
        Value* a = g.addInput("a", TensorType::of(DType::F32, {m, k}));
        Value* w = g.addConstant("w", randomTensor(DType::F32, {k, n}, rng));
        y = g.addNode(OpKind::MatMul, {a, w}, 1, {"m"})->output(0);
        expected = OpKind::Gemm;
        channels = n;
      }
      Node* bn = addRandomBn(g, y, channels, rng);
      finish(g, bn->output(0));
      PipelineResult r = foldBn(g);
      QVERIFY2(!r.error, ("seed " + std::to_string(seed)).c_str());
      const Graph& out = r.finalGraph();
      QCOMPARE(countOps(out, OpKind::BatchNormalization), size_t(0));
      QCOMPARE(out.numNodes(), size_t(1));
      QCOMPARE(out.nodes()[0]->op(), expected);
      double diff = maxOutputDifference(g, out);
      QVERIFY2(diff < 1e-4, ("seed " + std::to_string(seed) + ": " + std::to_string(diff)).c_str());
    }
  }

  /// Every BN of the CNN samples folds into its Conv, and the outputs stay the same.
  void samplesFoldCompletely_data() {
    QTest::addColumn<QString>("sample");
    QTest::newRow("small_cnn") << "small_cnn.onnx";
    QTest::newRow("resnet_block") << "resnet_block.onnx";
    QTest::newRow("mobilenet_v2_block") << "mobilenet_v2_block.onnx";
  }
  void samplesFoldCompletely() {
    QFETCH(QString, sample);
    auto g = loadSample(sample.toStdString());
    size_t bns = countOps(*g, OpKind::BatchNormalization);
    size_t convs = countOps(*g, OpKind::Conv);
    QVERIFY(bns > 0);
    PipelineResult r = foldBn(*g);
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(countOps(out, OpKind::BatchNormalization), size_t(0));
    QCOMPARE(countOps(out, OpKind::Conv), convs);
    QCOMPARE(statistic(r, "BatchNormalization folded into Conv"), double(bns));
    double diff = maxOutputDifference(*g, out);
    QVERIFY2(diff < 1e-4, std::to_string(diff).c_str());
  }

  /// A model without BatchNormalization is left unchanged.
  void mlpUnchanged() {
    auto g = loadSample("mlp.onnx");
    PipelineResult r = foldBn(*g);
    QVERIFY(!r.error);
    QVERIFY(!r.snapshots.back().record->changed);
  }
};

QTEST_GUILESS_MAIN(TestFoldBatchNorm)
#include "TestFoldBatchNorm.moc"
