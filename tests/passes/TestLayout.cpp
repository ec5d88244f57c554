// Tests of the layout pass and the layout ops: exact equality with the NCHW graph on the samples
// and on hand-built graphs, conversion counts, cancellation of inverse conversions, channel-tail
// padding, weight packing, print/parse round trips and errors.
#include "PassTestUtil.h"

#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"
#include "core/onnx/OnnxExport.h"
#include "core/ops/LayoutTransform.h"
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::test;

namespace {

/// A statistic of the last pass application, 0 when absent.
double statistic(const PipelineResult& r, const std::string& name) {
  const auto& stats = r.snapshots.back().record->statistics;
  auto it = stats.find(name);
  return it == stats.end() ? 0.0 : it->second;
}

/// Runs `pipeline`, failing the test (with the message) when it fails.
PipelineResult mustRun(const Graph& g, const std::string& pipeline) {
  PipelineResult r = runPipeline(g, pipeline);
  if (r.error)
    qWarning("%s failed: %s", pipeline.c_str(), r.error->message().c_str());
  return r;
}

/// A constant of random f32 data.
Value* randomConst(Graph& g, const std::string& name, std::vector<int64_t> sizes,
                   SeededRandom& rng) {
  return g.addConstant(name, randomTensor(DType::F32, sizes, rng));
}

Node* conv(Graph& g, Value* x, Value* w, Value* b, int64_t group, int64_t pad) {
  std::vector<Value*> ins = {x, w};
  if (b)
    ins.push_back(b);
  Node* n = g.addNode(OpKind::Conv, ins, 1);
  n->attrs().set("group", group);
  n->attrs().set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  return n;
}

/// A graph with channel counts that are not multiples of 8 (3 → 5 → 5 → 9) and two regions in
/// NCHW8c, split by a Div (0/0 in the padding lanes would be NaN):
///   Conv 3→5, Relu, Add scalar, Mul per channel, MaxPool (also an output), depthwise Conv,
///   SiLU (Sigmoid, Mul), Div by 2, Conv 1x1 5→9, GlobalAveragePool.
std::unique_ptr<Graph> tailGraph() {
  SeededRandom rng(42);
  auto g = std::make_unique<Graph>("tail");
  Value* x = g->addInput("x", TensorType::of(DType::F32, {2, 3, 6, 6}));
  Value* c1 = conv(*g, x, randomConst(*g, "w1", {5, 3, 3, 3}, rng),
                   randomConst(*g, "b1", {5}, rng), 1, 1)->output(0);
  Value* r = g->addNode(OpKind::Relu, {c1}, 1)->output(0);
  Value* half = g->addConstant("half", Tensor::scalar<float>(0.5f));
  Value* a = g->addNode(OpKind::Add, {r, half}, 1)->output(0);
  Value* m = g->addNode(OpKind::Mul, {a, randomConst(*g, "k", {5, 1, 1}, rng)}, 1)->output(0);
  Node* pool = g->addNode(OpKind::MaxPool, {m}, 1, {"pooled"});
  pool->attrs().set("kernel_shape", std::vector<int64_t>{2, 2});
  pool->attrs().set("strides", std::vector<int64_t>{2, 2});
  Value* dw = conv(*g, pool->output(0), randomConst(*g, "wd", {5, 1, 3, 3}, rng), nullptr, 5, 1)
                  ->output(0);
  Value* sig = g->addNode(OpKind::Sigmoid, {dw}, 1)->output(0);
  Value* silu = g->addNode(OpKind::Mul, {dw, sig}, 1)->output(0);
  Value* two = g->addConstant("two", Tensor::scalar<float>(2.0f));
  Value* s = g->addNode(OpKind::Div, {silu, two}, 1)->output(0);
  Value* c3 = conv(*g, s, randomConst(*g, "w3", {9, 5, 1, 1}, rng),
                   randomConst(*g, "b3", {9}, rng), 1, 0)->output(0);
  Value* gap = g->addNode(OpKind::GlobalAveragePool, {c3}, 1, {"gap"})->output(0);
  g->addOutput(gap);
  g->addOutput(pool->output(0));
  Status st = inferShapes(*g);
  Q_ASSERT(st.ok());
  return g;
}

/// Checks that every NCHW8c value the pass named after an original value ("v.nchw8c") holds
/// zeros in the padding lanes of its last channel block, on one random input.
void checkPaddingLanes(const Graph& original, const Graph& blocked, const std::string& where) {
  auto inputs = makeRandomInputs(blocked, 1, {});
  QVERIFY(inputs.ok());
  auto run = interpret(blocked, *inputs, InterpretOptions{/*keepIntermediates=*/true});
  QVERIFY(run.ok());
  const std::string suffix = ".nchw8c";
  for (const auto& [name, t] : run->values) {
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(),
                                                     suffix) != 0 || t.rank() < 4)
      continue;
    const Value* orig = original.findValue(name.substr(0, name.size() - suffix.size()));
    if (!orig || orig->isConstant())
      continue;
    const int64_t channels = orig->type().dims[1].size();
    const int64_t blocks = t.sizes()[1];
    const int64_t spatial = t.numElements() / (t.sizes()[0] * blocks * kChannelBlock);
    for (int64_t n = 0; n < t.sizes()[0]; ++n)
      for (int64_t s = 0; s < spatial; ++s)
        for (int64_t lane = channels - (blocks - 1) * kChannelBlock; lane < kChannelBlock; ++lane) {
          const int64_t i = ((n * blocks + blocks - 1) * spatial + s) * kChannelBlock + lane;
          QVERIFY2(t.getAsDouble(i) == 0.0, (where + ": padding lane of " + name).c_str());
        }
  }
}

/// A random CNN over activations with 1 to 17 channels: Convs (plain, depthwise, grouped,
/// strided, with and without bias), pools, elementwise ops with per-channel, per-tensor and
/// per-column constants, binary ops on two activations, Concats along channels and width,
/// and Softmax (which no layout handles, so it splits regions). Shape-inferred and verified.
std::unique_ptr<Graph> randomCnn(uint64_t seed) {
  SeededRandom rng(seed * 104729 + 3);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng.next() % uint64_t(hi - lo + 1)); };
  auto g = std::make_unique<Graph>("random_cnn");
  std::vector<Value*> acts = {g->addInput(
      "x", TensorType::of(DType::F32, {pick(1, 2), pick(1, 12), pick(5, 9), pick(5, 9)}))};
  auto scaled = [&](std::vector<int64_t> sizes, double scale) {
    Tensor t = randomTensor(DType::F32, sizes, rng);
    for (float& v : t.mutableData<float>())
      v = float(v * scale);
    return g->addConstant(g->uniqueValueName("k"), t);
  };
  auto dims = [](const Value* v) { return v->type().staticSizes(); };
  auto add = [&](OpKind op, std::vector<Value*> ins) { return g->addNode(op, ins, 1); };
  const int steps = int(pick(6, 14));
  for (int step = 0; step < steps; ++step) {
    Value* v = acts[size_t(pick(0, int64_t(acts.size()) - 1))];
    const auto s = dims(v);
    const int64_t c = s[1];
    Node* n = nullptr;
    switch (pick(0, 9)) {
    case 0:
    case 1: { // Conv
      int64_t k = s[2] >= 3 && s[3] >= 3 && pick(0, 1) ? 3 : 1;
      int64_t m = pick(1, 17), group = 1;
      if (pick(0, 3) == 0)
        m = group = c; // depthwise
      else if (c % 2 == 0 && m % 2 == 0 && pick(0, 3) == 0)
        group = 2;
      std::vector<Value*> ins = {v, scaled({m, c / group, k, k}, 1.0 / double(c / group * k))};
      if (pick(0, 1))
        ins.push_back(scaled({m}, 1.0));
      n = add(OpKind::Conv, ins);
      n->attrs().set("group", group);
      const int64_t pad = k == 3 && pick(0, 1) ? 1 : 0;
      n->attrs().set("pads", std::vector<int64_t>{pad, pad, pad, pad});
      if (s[2] >= 4 && s[3] >= 4 && pick(0, 3) == 0)
        n->attrs().set("strides", std::vector<int64_t>{2, 2});
      break;
    }
    case 2: {
      static const OpKind unary[] = {OpKind::Relu, OpKind::Sigmoid, OpKind::Tanh,
                                     OpKind::LeakyRelu, OpKind::Neg, OpKind::HardSigmoid};
      n = add(unary[pick(0, 5)], {v});
      break;
    }
    case 3: { // Clip, maybe with a lower bound above zero
      n = add(OpKind::Clip, {v, g->addConstant(g->uniqueValueName("lo"),
                                              Tensor::scalar<float>(pick(0, 1) ? 0.f : 0.25f)),
                             g->addConstant(g->uniqueValueName("hi"), Tensor::scalar<float>(6.f))});
      break;
    }
    case 4: { // binary with a constant
      static const OpKind ops[] = {OpKind::Add, OpKind::Mul, OpKind::Sub, OpKind::Div,
                                   OpKind::Max};
      const std::vector<std::vector<int64_t>> shapes = {
          {}, {c, 1, 1}, {1, c, 1, 1}, {s[3]}, {1}, {c, s[2], s[3]}};
      OpKind op = ops[pick(0, 4)];
      Value* k = op == OpKind::Div ? g->addConstant(g->uniqueValueName("d"),
                                                     Tensor::scalar<float>(float(pick(2, 4))))
                                   : scaled(shapes[size_t(pick(0, 5))], 1.0);
      n = add(op, pick(0, 1) && op != OpKind::Div && op != OpKind::Sub ? std::vector<Value*>{k, v}
                                                                       : std::vector<Value*>{v, k});
      break;
    }
    case 5: { // binary on two activations of one shape (or the same one twice)
      Value* w = v;
      for (Value* a : acts)
        if (a != v && dims(a) == s && pick(0, 1))
          w = a;
      static const OpKind ops[] = {OpKind::Add, OpKind::Mul, OpKind::Sub, OpKind::Min};
      n = add(ops[pick(0, 3)], {v, w});
      break;
    }
    case 6: { // pools
      const int kind = int(pick(0, 2));
      if (kind == 2 || s[2] < 2 || s[3] < 2) {
        n = add(pick(0, 1) ? OpKind::GlobalAveragePool : OpKind::GlobalMaxPool, {v});
        break;
      }
      n = add(kind ? OpKind::MaxPool : OpKind::AveragePool, {v});
      n->attrs().set("kernel_shape", std::vector<int64_t>{2, 2});
      n->attrs().set("strides", std::vector<int64_t>{2, 2});
      break;
    }
    case 7:
    case 8: { // Concat of two activations along channels or width
      const bool channels = pick(0, 1);
      Value* w = v;
      for (Value* a : acts) {
        auto d = dims(a);
        d[channels ? 1 : 3] = s[channels ? 1 : 3];
        if (a != v && d == s && pick(0, 1))
          w = a;
      }
      n = add(OpKind::Concat, pick(0, 1) ? std::vector<Value*>{v, w} : std::vector<Value*>{w, v});
      n->attrs().set("axis", int64_t(channels ? 1 : -1));
      break;
    }
    default: // a region boundary
      n = add(OpKind::Softmax, {v});
      n->attrs().set("axis", int64_t(1));
      break;
    }
    if (!inferNodeShapes(*n).ok()) { // e.g. a Concat whose operands do not fit: drop it
      g->eraseNode(n);
      continue;
    }
    acts.push_back(n->output(0));
  }
  g->addOutput(acts.back());
  if (acts.size() > 2)
    g->addOutput(acts[acts.size() / 2]);
  Status st = verify(*g);
  if (!st.ok())
    qWarning("randomCnn(%llu): %s", static_cast<unsigned long long>(seed),
             st.error().message().c_str());
  return g;
}

} // namespace

class TestLayout : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void samplesAreExact_data() {
    QTest::addColumn<QString>("to");
    QTest::newRow("nchw8c") << "nchw8c";
    QTest::newRow("nhwc") << "nhwc";
  }
  /// After fold-batchnorm, the layout pass changes no bit of any sample's outputs.
  void samplesAreExact() {
    QFETCH(QString, to);
    const std::string step = "layout{to=" + to.toStdString() + "}";
    for (const char* name : {"mlp.onnx", "small_cnn.onnx", "resnet_block.onnx",
                             "mobilenet_v2_block.onnx", "transformer_block.onnx",
                             "dynamic_batch.onnx"}) {
      auto g = loadSample(name);
      PipelineResult folded = mustRun(*g, "infer-shapes,fold-batchnorm");
      QVERIFY(!folded.error);
      PipelineResult r = mustRun(folded.finalGraph(), step);
      QVERIFY2(!r.error, name);
      QVERIFY2(verify(r.finalGraph()).ok(), name);
      const double diff = maxOutputDifference(folded.finalGraph(), r.finalGraph(), 2);
      QVERIFY2(diff == 0.0, (std::string(name) + " differs by " + std::to_string(diff)).c_str());
      for (size_t i = 0; i < g->outputs().size(); ++i)
        QCOMPARE(r.finalGraph().outputs()[i]->name(), g->outputs()[i]->name());
    }
  }

  /// Without fold-batchnorm, BatchNormalization inside a region becomes Mul and Add by
  /// precomputed constants: equal to the BN kernel within float rounding.
  void samplesWithBatchNorm() {
    std::string failure = checkSamplesUnchanged("infer-shapes,layout{to=nchw8c}", 1e-5);
    QVERIFY2(failure.empty(), failure.c_str());
    failure = checkSamplesUnchanged("infer-shapes,layout{to=nhwc}", 1e-5);
    QVERIFY2(failure.empty(), failure.c_str());
  }

  /// A ResNet basic block is one region: one conversion in, one out, no Conv left.
  void resnetBlockHasOneConversionEachWay() {
    auto g = loadSample("resnet_block.onnx");
    PipelineResult r = mustRun(*g, "infer-shapes,fold-batchnorm,layout{to=nchw8c}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(statistic(r, "conversions inserted"), 2.0);
    QCOMPARE(statistic(r, "conversions cancelled"), 0.0);
    QCOMPARE(statistic(r, "regions converted"), 1.0);
    QCOMPARE(statistic(r, "ops converted"), 5.0); // 2 Conv, 2 Relu, Add
    QCOMPARE(countOps(out, OpKind::ReorderLayout), size_t(2));
    QCOMPARE(countOps(out, OpKind::Conv), size_t(0));
    QCOMPARE(countOps(out, OpKind::LayoutConv), size_t(2));
    // The entry conversion reads the graph input; the exit one writes the graph output.
    const Node* first = out.nodes().front().get();
    QCOMPARE(first->op(), OpKind::ReorderLayout);
    QVERIFY(first->input(0)->isInput());
    QCOMPARE(out.outputs()[0]->producer()->op(), OpKind::ReorderLayout);
    // The weights were packed OIHW8i8o at pass time: [64/8, 64/8, 3, 3, 8, 8].
    const Node* lc = nullptr;
    for (const auto& n : out.nodes())
      if (n->op() == OpKind::LayoutConv && !lc)
        lc = n.get();
    QVERIFY(lc);
    QCOMPARE(lc->input(1)->type().str(), std::string("f32[8, 8, 3, 3, 8, 8]"));
    QCOMPARE(lc->input(0)->type().str(), std::string("f32[1, 8, 28, 28, 8]"));
    // Running the pass again finds nothing more to do.
    PipelineResult again = mustRun(out, "layout{to=nchw8c}");
    QVERIFY(!again.error);
    QVERIFY(!again.snapshots.back().record->changed);
  }

  void channelTailPadding_data() {
    QTest::addColumn<QString>("to");
    QTest::addColumn<int>("conversions");
    QTest::addColumn<int>("reorders");
    // NCHW8c: region 1 (out to Div, out to the `pooled` output), region 2 (out); the Convs
    // at both entries read their 3 and 5 NCHW channels directly.
    QTest::newRow("nchw8c") << "nchw8c" << 3 << 3;
    // NHWC has no padding: the Div joins, one region (in, `pooled`, `gap`).
    QTest::newRow("nhwc") << "nhwc" << 3 << 3;
  }
  /// C = 3, 5 and 9: the tail block is zero-padded, per-tensor constants are spread over the
  /// real channels only, padding lanes stay zero, and the results are exact.
  void channelTailPadding() {
    QFETCH(QString, to);
    QFETCH(int, conversions);
    QFETCH(int, reorders);
    auto g = tailGraph();
    PipelineResult r = mustRun(*g, "layout{to=" + to.toStdString() + "}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QVERIFY(verify(out).ok());
    QCOMPARE(statistic(r, "conversions inserted"), double(conversions));
    QCOMPARE(countOps(out, OpKind::ReorderLayout), size_t(reorders));
    QCOMPARE(countOps(out, OpKind::Conv), size_t(0));
    QCOMPARE(maxOutputDifference(*g, out, 3), 0.0);
    QCOMPARE(out.outputs()[1]->name(), std::string("pooled"));
    if (to != "nchw8c")
      return;
    QCOMPARE(countOps(out, OpKind::Div), size_t(1));
    QCOMPARE(statistic(r, "padding masks"), 1.0); // sigmoid(0) = 0.5 in lanes 5..7, masked
    // Every blocked activation with 5 channels but the unmasked Sigmoid has zeros in lanes 5..7.
    SeededRandom rng(7);
    Tensor x = randomTensor(DType::F32, {2, 3, 6, 6}, rng);
    auto run = interpret(out, {x}, InterpretOptions{/*keepIntermediates=*/true});
    QVERIFY(run.ok());
    int checked = 0;
    for (const auto& n : out.nodes()) {
      const TensorType& t = n->output(0)->type();
      if (t.rank() != 5 || t.dims[1].size() != 1 || n->op() == OpKind::ReorderLayout ||
          n->op() == OpKind::Sigmoid)
        continue;
      const Tensor& v = run->values.at(n->output(0)->name());
      for (int64_t i = 0; i < v.numElements(); ++i)
        if (i % kChannelBlock >= 5)
          QCOMPARE(v.getAsDouble(i), 0.0);
      ++checked;
    }
    QVERIFY(checked >= 8); // LayoutConv, Relu, Add, Mul, LayoutMaxPool, LayoutConv, mask, SiLU
  }

  /// ReorderLayout pairs, Transpose pairs and an NCHW↔NHWC Transpose against a ReorderLayout
  /// cancel; a pair that does not compose to the identity stays.
  void cancelsInverseConversions() {
    auto g = parseIr(R"(graph @cancel opset 17 {
  input %x : f32[1, 16, 4, 4]
  %a : f32[1, 2, 4, 4, 8] = ReorderLayout(%x) {channels = 16, from = "NCHW", to = "NCHW8c"}  #1
  %b : f32[1, 16, 4, 4] = ReorderLayout(%a) {channels = 16, from = "NCHW8c", to = "NCHW"}  #2
  %c : f32[1, 4, 4, 16] = Transpose(%b) {perm = [0, 2, 3, 1]}  #3
  %d : f32[1, 16, 4, 4] = ReorderLayout(%c) {from = "NHWC", to = "NCHW"}  #4
  %e : f32[1, 16, 4, 4] = Relu(%d)  #5
  %f : f32[1, 16, 4, 4] = Transpose(%e) {perm = [0, 1, 3, 2]}  #6
  %g : f32[1, 16, 4, 4] = Transpose(%f) {perm = [0, 1, 3, 2]}  #7
  %h : f32[1, 15, 4, 4] = ReorderLayout(%a) {channels = 15, from = "NCHW8c", to = "NCHW"}  #8
  %i : f32[1, 4, 4, 16] = Transpose(%e) {perm = [0, 2, 3, 1]}  #9
  %j : f32[1, 4, 16, 4] = Transpose(%i) {perm = [0, 1, 3, 2]}  #10
  output %g, %h, %j
}
)");
    PipelineResult r = mustRun(*g, "layout");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(statistic(r, "conversions cancelled"), 5.0); // #2, #3, #4, #6, #7 (#1 feeds #8)
    QCOMPARE(statistic(r, "conversions inserted"), 0.0);
    QCOMPARE(countOps(out, OpKind::ReorderLayout), size_t(2)); // #1 and #8
    QCOMPARE(countOps(out, OpKind::Transpose), size_t(2));     // #9 and #10
    QCOMPARE(out.outputs()[0]->name(), std::string("g"));
    QCOMPARE(out.outputs()[0]->producer()->op(), OpKind::Relu);
    QCOMPARE(out.outputs()[0]->producer()->input(0)->name(), std::string("x"));
    QCOMPARE(maxOutputDifference(*g, out, 2), 0.0);
  }

  /// A TensorFlow-style NHWC model (Transpose in, Conv, Transpose out) under layout{to=nhwc}:
  /// the pass's own conversions cancel against the exporter's Transposes, leaving none.
  void nhwcModelLosesItsTransposes() {
    auto g = parseIr(R"(graph @tf opset 17 {
  input %x : f32[1, 5, 5, 3]
  const %w : f32[2, 3, 1, 1] = dense<[1.0, -2.0, 0.5, 0.25, 3.0, -1.0]>
  const %b : f32[2] = dense<[0.5, -0.5]>
  %t : f32[1, 3, 5, 5] = Transpose(%x) {perm = [0, 3, 1, 2]}  #1
  %c : f32[1, 2, 5, 5] = Conv(%t, %w, %b)  #2 "conv"
  %r : f32[1, 2, 5, 5] = Relu(%c)  #3
  %y : f32[1, 5, 5, 2] = Transpose(%r) {perm = [0, 2, 3, 1]}  #4
  output %y
}
)");
    PipelineResult r = mustRun(*g, "layout{to=nhwc}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(statistic(r, "conversions inserted"), 2.0);
    QCOMPARE(statistic(r, "conversions cancelled"), 4.0);
    QCOMPARE(countOps(out, OpKind::ReorderLayout), size_t(0));
    QCOMPARE(countOps(out, OpKind::Transpose), size_t(0));
    QCOMPARE(out.nodes().front()->op(), OpKind::LayoutConv);
    QCOMPARE(out.nodes().front()->input(0)->name(), std::string("x"));
    QCOMPARE(out.outputs()[0]->name(), std::string("y"));
    QCOMPARE(maxOutputDifference(*g, out, 3), 0.0);
  }

  void concat_data() {
    QTest::addColumn<QString>("to");
    QTest::addColumn<bool>("alignedFirst");
    QTest::addColumn<int>("conversions");
    // The first Conv reads its 3 NCHW channels directly: only the exit converts.
    QTest::newRow("nchw8c 8+4") << "nchw8c" << true << 1;
    // 4+8: the padding of the first input would land inside the result: Concat stays NCHW.
    QTest::newRow("nchw8c 4+8") << "nchw8c" << false << 4;
    QTest::newRow("nhwc 8+4") << "nhwc" << true << 2;
    QTest::newRow("nhwc 4+8") << "nhwc" << false << 2;
  }
  /// A SqueezeNet fire module: 1x1 and 3x3 expand Convs concatenated along channels, then a
  /// Concat along width; one region when the channel blocks line up.
  void concat() {
    QFETCH(QString, to);
    QFETCH(bool, alignedFirst);
    QFETCH(int, conversions);
    SeededRandom rng(5);
    Graph g("fire");
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 3, 6, 6}));
    Value* sq = g.addNode(OpKind::Relu, {conv(g, x, randomConst(g, "ws", {8, 3, 1, 1}, rng),
                                              nullptr, 1, 0)->output(0)},
                          1)->output(0);
    Value* e1 = conv(g, sq, randomConst(g, "w1", {8, 8, 1, 1}, rng), nullptr, 1, 0)->output(0);
    Value* e3 = conv(g, sq, randomConst(g, "w3", {4, 8, 3, 3}, rng), nullptr, 1, 1)->output(0);
    Node* cat = g.addNode(OpKind::Concat,
                          alignedFirst ? std::vector<Value*>{e1, e3} : std::vector<Value*>{e3, e1},
                          1);
    cat->attrs().set("axis", int64_t(1));
    Node* wide = g.addNode(OpKind::Concat, {cat->output(0), cat->output(0)}, 1);
    wide->attrs().set("axis", int64_t(-1));
    Value* c = conv(g, wide->output(0), randomConst(g, "wc", {16, 12, 1, 1}, rng), nullptr, 1, 0)
                   ->output(0);
    g.addOutput(g.addNode(OpKind::GlobalAveragePool, {c}, 1)->output(0));
    QVERIFY(inferShapes(g).ok());
    PipelineResult r = mustRun(g, "layout{to=" + to.toStdString() + "}");
    QVERIFY(!r.error);
    QCOMPARE(statistic(r, "conversions inserted"), double(conversions));
    QCOMPARE(countOps(r.finalGraph(), OpKind::Conv), size_t(0));
    QCOMPARE(maxOutputDifference(g, r.finalGraph(), 2), 0.0);
  }

  /// AveragePool (with padding counted), MaxPool with ceil_mode and GlobalMaxPool, on 13
  /// channels, in both layouts.
  void poolKinds() {
    SeededRandom rng(9);
    Graph g("pools");
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 4, 7, 7}));
    Value* c = conv(g, x, randomConst(g, "w", {13, 4, 3, 3}, rng), nullptr, 1, 1)->output(0);
    Node* avg = g.addNode(OpKind::AveragePool, {c}, 1);
    avg->attrs().set("kernel_shape", std::vector<int64_t>{3, 3});
    avg->attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1});
    avg->attrs().set("count_include_pad", int64_t(1));
    Node* max = g.addNode(OpKind::MaxPool, {avg->output(0)}, 1);
    max->attrs().set("kernel_shape", std::vector<int64_t>{2, 2});
    max->attrs().set("strides", std::vector<int64_t>{2, 2});
    max->attrs().set("ceil_mode", int64_t(1));
    g.addOutput(g.addNode(OpKind::GlobalMaxPool, {max->output(0)}, 1)->output(0));
    g.addOutput(max->output(0));
    QVERIFY(inferShapes(g).ok());
    for (const char* to : {"nchw8c", "nhwc"}) {
      PipelineResult r = mustRun(g, std::string("layout{to=") + to + "}");
      QVERIFY(!r.error);
      const Graph& out = r.finalGraph();
      QCOMPARE(countOps(out, OpKind::LayoutAveragePool), size_t(1));
      QCOMPARE(countOps(out, OpKind::LayoutMaxPool), size_t(1));
      QCOMPARE(countOps(out, OpKind::LayoutGlobalMaxPool), size_t(1));
      QCOMPARE(out.outputs()[1]->type().str(), std::string("f32[2, 13, 4, 4]"));
      QCOMPARE(maxOutputDifference(g, out, 2), 0.0);
    }
  }

  /// Differential test: random CNNs give bit-identical outputs in both layouts.
  void randomGraphsAreExact() {
    int64_t converted = 0, masks = 0;
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      auto g = randomCnn(seed);
      QVERIFY(verify(*g).ok());
      for (const char* to : {"nchw8c", "nhwc"}) {
        PipelineResult r = mustRun(*g, std::string("layout{to=") + to + "}");
        const std::string where = "seed " + std::to_string(seed) + " " + to;
        QVERIFY2(!r.error, (where + ": " + errorText(r)).c_str());
        converted += int64_t(statistic(r, "ops converted"));
        masks += int64_t(statistic(r, "padding masks"));
        const double diff = maxOutputDifference(*g, r.finalGraph(), 1);
        QVERIFY2(diff == 0.0, (where + ": outputs differ by " + std::to_string(diff)).c_str());
        if (std::string(to) == "nchw8c")
          checkPaddingLanes(*g, r.finalGraph(), where);
      }
    }
    // The generator must actually exercise the pass.
    QVERIFY2(converted > 300, std::to_string(converted).c_str());
    QVERIFY2(masks > 0, std::to_string(masks).c_str());
  }

  /// Two Convs sharing one weight and bias share the packed constants too.
  void sharedWeightsPackOnce() {
    SeededRandom rng(13);
    Graph g("shared");
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 8, 5, 5}));
    Value* w = randomConst(g, "w", {8, 8, 3, 3}, rng);
    Value* b = randomConst(g, "b", {8}, rng);
    Value* c1 = conv(g, x, w, b, 1, 1)->output(0);
    Value* c2 = conv(g, g.addNode(OpKind::Relu, {c1}, 1)->output(0), w, b, 1, 1)->output(0);
    g.addOutput(c2);
    QVERIFY(inferShapes(g).ok());
    PipelineResult r = mustRun(g, "layout");
    QVERIFY(!r.error);
    QCOMPARE(r.finalGraph().constants().size(), size_t(2));
    QCOMPARE(maxOutputDifference(g, r.finalGraph(), 2), 0.0);
  }

  /// A grouped (not depthwise) Conv has no NCHW8c packing and stays NCHW; NHWC takes it.
  void groupedConv() {
    SeededRandom rng(3);
    Graph g("grouped");
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 8, 5, 5}));
    Value* c = conv(g, x, randomConst(g, "w", {8, 4, 3, 3}, rng), nullptr, 2, 1)->output(0);
    g.addOutput(g.addNode(OpKind::Relu, {c}, 1)->output(0));
    QVERIFY(inferShapes(g).ok());
    PipelineResult blocked = mustRun(g, "layout{to=nchw8c}");
    QVERIFY(!blocked.error);
    QCOMPARE(countOps(blocked.finalGraph(), OpKind::Conv), size_t(1));
    QCOMPARE(countOps(blocked.finalGraph(), OpKind::ReorderLayout), size_t(0));
    PipelineResult nhwc = mustRun(g, "layout{to=nhwc}");
    QVERIFY(!nhwc.error);
    QCOMPARE(countOps(nhwc.finalGraph(), OpKind::LayoutConv), size_t(1));
    QCOMPARE(maxOutputDifference(g, nhwc.finalGraph(), 2), 0.0);
  }

  /// Activations and weights survive a round trip through every layout bit for bit, and
  /// NCHW8c puts element (n, c, h, w) at [n, c/8, h, w, c%8].
  void packingRoundTrips() {
    SeededRandom rng(11);
    Tensor x = randomTensor(DType::F32, {2, 13, 3, 4}, rng);
    for (DataLayout l : {DataLayout::NCHW, DataLayout::NHWC, DataLayout::NCHW8c}) {
      auto t = tensorToLayout(x, l);
      QVERIFY(t.ok());
      auto back = tensorFromLayout(*t, l, 13);
      QVERIFY(back.ok());
      QVERIFY(back->identical(x));
    }
    auto blocked = tensorToLayout(x, DataLayout::NCHW8c);
    QCOMPARE(blocked->type().str(), std::string("f32[2, 2, 3, 4, 8]"));
    // x[1, 10, 2, 3] → [1, 1, 2, 3, 2]
    QCOMPARE(blocked->getAsDouble((((1 * 2 + 1) * 3 + 2) * 4 + 3) * 8 + 2),
             x.getAsDouble(((1 * 13 + 10) * 3 + 2) * 4 + 3));
    struct Case {
      std::vector<int64_t> w;
      int64_t group;
      DataLayout layout;
      std::string packed;
    };
    const std::vector<Case> cases = {
        {{5, 3, 3, 3}, 1, DataLayout::NCHW8c, "f32[1, 1, 3, 3, 8, 8]"},
        {{12, 1, 3, 3}, 12, DataLayout::NCHW8c, "f32[2, 1, 3, 3, 8]"},
        {{5, 3, 3, 2}, 1, DataLayout::NHWC, "f32[5, 3, 2, 3]"},
        {{4, 2, 3, 3}, 2, DataLayout::NHWC, "f32[4, 3, 3, 2]"},
    };
    for (const Case& c : cases) {
      Tensor w = randomTensor(DType::F32, c.w, rng);
      auto packed = packConvWeight(w, c.group, c.layout);
      QVERIFY(packed.ok());
      QCOMPARE(packed->type().str(), c.packed);
      auto back = unpackConvWeight(*packed, c.group, c.layout, c.w[1] * c.group, c.w[0]);
      QVERIFY(back.ok());
      QVERIFY(back->identical(w));
    }
    // OIHW8i8o: W[o, i, kh, kw] sits at [o/8, i/8, kh, kw, i%8, o%8].
    Tensor w = randomTensor(DType::F32, {10, 3, 2, 2}, rng);
    auto packed = packConvWeight(w, 1, DataLayout::NCHW8c);
    QVERIFY(packed.ok());
    QCOMPARE(packed->type().str(), std::string("f32[2, 1, 2, 2, 8, 8]"));
    for (int64_t o : {0, 7, 9})
      for (int64_t i : {0, 2})
        QCOMPARE(packed->getAsDouble(((((o / 8) * 1 * 2 + 1) * 2 + 0) * 8 + i) * 8 + o % 8),
                 w.getAsDouble(((o * 3 + i) * 2 + 1) * 2 + 0));
    QCOMPARE(packed->getAsDouble((((1 * 2 + 1) * 2 + 1) * 8 + 5) * 8 + 4), 0.0); // i = 5 pad
    // An NCHW input (OIHW8o): W[o, i, kh, kw] sits at [o/8, i, kh, kw, o%8].
    auto direct = packConvWeight(w, 1, DataLayout::NCHW8c, /*inputBlocked=*/false);
    QVERIFY(direct.ok());
    QCOMPARE(direct->type().str(), std::string("f32[2, 3, 2, 2, 8]"));
    QCOMPARE(direct->getAsDouble((((1 * 3 + 2) * 2 + 1) * 2 + 0) * 8 + 1),
             w.getAsDouble(((9 * 3 + 2) * 2 + 1) * 2 + 0));
    auto directBack = unpackConvWeight(*direct, 1, DataLayout::NCHW8c, 3, 10, false);
    QVERIFY(directBack.ok());
    QVERIFY(directBack->identical(w));
    auto grouped = packConvWeight(randomTensor(DType::F32, {4, 2, 3, 3}, rng), 2,
                                  DataLayout::NCHW8c);
    QVERIFY(!grouped.ok());
    QVERIFY(grouped.error().isUnsupported());
  }

  /// The new ops and attributes print and parse back to the same text and the same results.
  void printParseRoundTrip() {
    for (const char* to : {"nchw8c", "nhwc"}) {
      PipelineResult r = mustRun(*tailGraph(), std::string("layout{to=") + to + "}");
      QVERIFY(!r.error);
      PrintOptions opts;
      opts.withResourceData = true;
      const std::string text = printGraph(r.finalGraph(), opts);
      auto parsed = parseGraph(text, "<layout>");
      QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
      QVERIFY(verify(**parsed).ok());
      QCOMPARE(printGraph(**parsed, opts), text);
      QCOMPARE(maxOutputDifference(r.finalGraph(), **parsed, 1), 0.0);
    }
  }

  /// Errors name the option, the op and the operand; export refuses the internal ops.
  void errors() {
    auto g = loadSample("small_cnn.onnx");
    PipelineResult bad = runPipeline(*g, "layout{to=xyz}");
    QVERIFY(bad.error);
    QVERIFY2(errorText(bad).find("'xyz'") != std::string::npos, errorText(bad).c_str());
    QVERIFY(runPipeline(*g, "layout{to=nchw}").error);
    PipelineResult unknown = runPipeline(*g, "layout{block=8}");
    QVERIFY(unknown.error);
    QVERIFY(errorText(unknown).find("block") != std::string::npos);

    // A LayoutConv whose packed weight does not match its channel counts.
    Graph h("badconv");
    Value* x = h.addInput("x", TensorType::of(DType::F32, {1, 1, 4, 4, 8}));
    Value* w = h.addConstant("w", Tensor(DType::F32, {1, 1, 3, 3, 8}));
    Node* n = h.addNode(OpKind::LayoutConv, {x, w}, 1, {"y"}, "lc");
    n->attrs().set("layout", std::string("NCHW8c"));
    n->attrs().set("in_channels", int64_t(8));
    n->attrs().set("out_channels", int64_t(8));
    n->attrs().set("kernel_shape", std::vector<int64_t>{3, 3});
    Status st = inferShapes(h);
    QVERIFY(!st.ok());
    QVERIFY2(st.error().message().find("LayoutConv") != std::string::npos &&
                 st.error().message().find("packed") != std::string::npos,
             st.error().message().c_str());

    // ReorderLayouts with missing or contradictory attributes are errors, not crashes.
    struct BadReorder {
      std::vector<int64_t> x;
      std::string from, to;
      int64_t channels; // 0: absent
      const char* expect;
    };
    const std::vector<BadReorder> reorders = {
        {{1, 2, 4, 4, 8}, "NCHW8c", "NCHW", 0, "'channels' is required"},
        {{1, 2, 4, 4, 8}, "NCHW8c", "NCHW", 17, "not a NCHW8c activation with 17 channels"},
        {{1, 16, 4, 4}, "NCHW", "NCHW8c", 15, "has 16"},
        {{1, 16, 4, 4}, "NCHW", "NCHW", 16, "both NCHW"},
        {{1, 16, 4, 4}, "NCHW", "NC8HW", 16, "unknown layout 'NC8HW'"},
        {{16, 4}, "NCHW", "NHWC", 0, "rank 3 or more"},
    };
    for (const BadReorder& b : reorders) {
      Graph rg("bad");
      Value* in = rg.addInput("x", TensorType::of(DType::F32, b.x));
      Node* rn = rg.addNode(OpKind::ReorderLayout, {in}, 1);
      rn->attrs().set("from", b.from);
      rn->attrs().set("to", b.to);
      if (b.channels)
        rn->attrs().set("channels", b.channels);
      Status rs = inferShapes(rg);
      QVERIFY2(!rs.ok(), b.expect);
      QVERIFY2(rs.error().message().find(b.expect) != std::string::npos &&
                   rs.error().message().find("ReorderLayout") != std::string::npos,
               rs.error().message().c_str());
    }

    PipelineResult r = mustRun(*g, "layout");
    QVERIFY(!r.error);
    auto bytes = exportOnnxBytes(r.finalGraph());
    QVERIFY(!bytes.ok());
    QVERIFY2(bytes.error().message().find("ReorderLayout") != std::string::npos ||
                 bytes.error().message().find("LayoutConv") != std::string::npos,
             bytes.error().message().c_str());
  }
};

QTEST_GUILESS_MAIN(TestLayout)
#include "TestLayout.moc"
