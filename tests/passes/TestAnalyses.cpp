// Tests of the analyses: exact cost estimates (estimate) and wavefront levels (parallel-levels),
// both as library functions and as passes that report without changing the graph.
#include "PassTestUtil.h"

#include "core/ShapeInference.h"
#include "core/text/IrPrinter.h"
#include "passes/Analyses.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::test;

namespace {

/// x[4,8] · w[8,16] + b[16], then Relu; the weights are zero-filled constants.
std::unique_ptr<Graph> buildMlp() {
  auto g = std::make_unique<Graph>("mlp");
  Value* x = g->addInput("x", TensorType::of(DType::F32, {4, 8}));
  Value* w = g->addConstant("w", Tensor(DType::F32, {8, 16}));
  Value* b = g->addConstant("b", Tensor(DType::F32, {16}));
  Node* mm = g->addNode(OpKind::MatMul, {x, w}, 1, {"m"});
  Node* add = g->addNode(OpKind::Add, {mm->output(0), b}, 1, {"s"});
  Node* relu = g->addNode(OpKind::Relu, {add->output(0)}, 1, {"y"});
  g->addOutput(relu->output(0));
  Status st = inferShapes(*g);
  if (!st.ok())
    qFatal("inferShapes: %s", st.error().message().c_str());
  return g;
}

/// Relu #1 feeds three branches (#2 Neg, #3 Abs, #4 Exp); #5 joins two, #6 joins the third.
const char* kDiamond = R"(graph @diamond opset 17 {
  input %x : f32[4]
  %a : f32[4] = Relu(%x)  #1
  %b : f32[4] = Neg(%a)  #2
  %c : f32[4] = Abs(%a)  #3
  %s : f32[4] = Add(%b, %c)  #5
  %e : f32[4] = Exp(%a)  #4
  %t : f32[4] = Add(%s, %e)  #6
  output %t
}
)";

const PassRecord& lastRecord(const PipelineResult& r) {
  if (r.error)
    qFatal("pipeline failed: %s", r.error->message().c_str());
  return *r.snapshots.back().record;
}

} // namespace

class TestAnalyses : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void estimateCountsFlopsAndBytes() {
    auto g = buildMlp();
    GraphEstimate e = estimateGraph(*g);
    QCOMPARE(e.nodes.size(), size_t(3));
    // MatMul: 2·M·K·N FLOPs; reads x (128 B) and w (512 B), writes 256 B.
    QCOMPARE(e.nodes[0].flops, 2.0 * 4 * 8 * 16);
    QCOMPARE(e.nodes[0].bytes, 128.0 + 512 + 256);
    QCOMPARE(e.nodes[0].intensity, 1024.0 / 896);
    // Add and Relu: one FLOP per output element.
    QCOMPARE(e.nodes[1].flops, 64.0);
    QCOMPARE(e.nodes[1].bytes, 256.0 + 64 + 256);
    QCOMPARE(e.nodes[2].flops, 64.0);
    QCOMPARE(e.nodes[2].bytes, 256.0 + 256);
    QCOMPARE(e.totals.flops, 1152.0);
    QCOMPARE(e.totals.bytesMoved, 1984.0);
    QCOMPARE(e.intensity, 1152.0 / 1984);
    QCOMPARE(e.totals.weightBytes, int64_t(512 + 64));
    // x (128) + m (256) while the MatMul runs, then m + s (512) during the Add.
    QCOMPARE(e.totals.peakActivationBytes, int64_t(512));
    QVERIFY(!e.hasSymbolicDims);

    std::vector<NodeEstimate> top = topNodesByFlops(e, 2);
    QCOMPARE(top.size(), size_t(2));
    QCOMPARE(top[0].id, g->nodes()[0]->id());
    QCOMPARE(top[1].id, g->nodes()[1]->id()); // ties keep execution order
  }

  void estimateOfFusedGroupKeepsOnlyBoundaryBytes() {
    auto g = parseIr(R"(graph @fused opset 17 {
  input %x : f32[2, 3]
  input %w : f32[3, 4]
  %g : f32[2, 4] = fused(%x, %w)  #9 from(#1, #2) {
    input %p0 : f32[2, 3]
    input %p1 : f32[3, 4]
    %m : f32[2, 4] = MatMul(%p0, %p1)  #10 from(#1)
    %r : f32[2, 4] = Relu(%m)  #11 from(#2)
    output %r
  }
  output %g
}
)");
    GraphEstimate e = estimateGraph(*g);
    QCOMPARE(e.nodes.size(), size_t(1));
    QCOMPARE(e.totals.flops, 2.0 * 2 * 3 * 4 + 8);
    QCOMPARE(e.totals.bytesMoved, 24.0 + 48 + 32); // the MatMul result never leaves the kernel
    QCOMPARE(e.totals.weightBytes, int64_t(0));
  }

  void estimatePassReportsWithoutChanging() {
    auto g = buildMlp();
    std::string before = printGraph(*g);
    PipelineResult r = runPipeline(*g, "estimate");
    const PassRecord& rec = lastRecord(r);
    QVERIFY(!rec.changed);
    QCOMPARE(printGraph(r.finalGraph()), before);
    QCOMPARE(rec.statistics.at("FLOPs"), 1152.0);
    QCOMPARE(rec.statistics.at("bytes moved"), 1984.0);
    QCOMPARE(rec.statistics.at("weight bytes"), 576.0);
    QCOMPARE(rec.statistics.at("peak activation bytes"), 512.0);
    NodeId mm = g->nodes()[0]->id(), add = g->nodes()[1]->id(), relu = g->nodes()[2]->id();
    std::string expected = "1.15 KFLOP, 1.9 KiB moved, intensity 0.6 FLOP/B; weights 576 B; "
                           "peak activations 512 B; top: #" +
                           std::to_string(mm) + " MatMul 1.02 KFLOP (89%), #" +
                           std::to_string(add) + " Add 64 FLOP (6%), #" + std::to_string(relu) +
                           " Relu 64 FLOP (6%)";
    QCOMPARE(rec.summary, expected);
  }

  void formatting() {
    QCOMPARE(formatFlops(0), std::string("0 FLOP"));
    QCOMPARE(formatFlops(999), std::string("999 FLOP"));
    QCOMPARE(formatFlops(3.64e9), std::string("3.64 GFLOP"));
    QCOMPARE(formatBytes(1023), std::string("1023 B"));
    QCOMPARE(formatBytes(1536), std::string("1.5 KiB"));
    QCOMPARE(formatBytes(111.7 * 1024 * 1024), std::string("111.7 MiB"));
  }

  void levelsOfADiamond() {
    auto g = parseIr(kDiamond);
    ParallelLevels p = computeParallelLevels(*g);
    QCOMPARE(p.level, (std::map<NodeId, int>{{1, 1}, {2, 2}, {3, 2}, {4, 2}, {5, 3}, {6, 4}}));
    QCOMPARE(p.numLevels, 4);
    QCOMPARE(p.widest, 2);
    QCOMPARE(p.widestCount, size_t(3));
    QCOMPARE(p.widths, (std::vector<size_t>{0, 1, 3, 1, 1}));

    PipelineResult r = runPipeline(*g, "parallel-levels");
    const PassRecord& rec = lastRecord(r);
    QVERIFY(!rec.changed);
    QCOMPARE(rec.summary, std::string("4 levels; widest level 2 has 3 nodes that can run "
                                      "concurrently"));
    QCOMPARE(rec.statistics.at("levels"), 4.0);
  }

  void levelTiesPickTheLowestAndConstantsAreSources() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[2]
  const %c : f32[2] = dense<[1.0, 2.0]>
  %a : f32[2] = Neg(%c)  #1
  %b : f32[2] = Relu(%x)  #2
  %p : f32[2] = Abs(%a)  #3
  %q : f32[2] = Exp(%b)  #4
  %t : f32[2] = Add(%p, %q)  #5
  output %t
}
)");
    ParallelLevels p = computeParallelLevels(*g);
    // Neg of a constant is as early as Relu of an input: both are level 1.
    QCOMPARE(p.level, (std::map<NodeId, int>{{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}}));
    QCOMPARE(p.numLevels, 3);
    QCOMPARE(p.widest, 1);
    QCOMPARE(p.widestCount, size_t(2));

    Graph empty;
    ParallelLevels none = computeParallelLevels(empty);
    QCOMPARE(none.numLevels, 0);
    QCOMPARE(none.widest, 0);
    QCOMPARE(none.widestCount, size_t(0));
  }
};

QTEST_GUILESS_MAIN(TestAnalyses)
#include "TestAnalyses.moc"
