// Tests of fold-constants: constant sub-graphs and exporter shape chains fold, dynamic shapes
// and oversized results do not, and the outputs never change.
#include "PassTestUtil.h"

#include "core/Verifier.h"

#include <QtTest/QtTest>

#include <span>

using namespace fb;
using namespace fb::test;

namespace {

/// The flatten an exporter writes: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
const char* kStaticFlatten = R"(graph @g {
  input %x : f32[2, 3, 4]
  const %index : i64[] = dense<[0]>
  const %axes : i64[1] = dense<[0]>
  const %minus_one : i64[1] = dense<[-1]>
  %shape : i64[3] = Shape(%x)  #1
  %batch : i64[] = Gather(%shape, %index) {axis = 0}  #2
  %batch1 : i64[1] = Unsqueeze(%batch, %axes)  #3
  %target : i64[2] = Concat(%batch1, %minus_one) {axis = 0}  #4
  %flat : f32[2, 12] = Reshape(%x, %target)  #5
  %y : f32[2, 12] = Relu(%flat)  #6
  output %y
}
)";

std::vector<int64_t> constantInts(const Value* v) {
  return v && v->isConstant() ? v->constantData().toInt64Vector() : std::vector<int64_t>{};
}

} // namespace

class TestFoldConstants : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void foldsConstantArithmetic() {
    auto g = parseIr(R"(graph @g {
  input %x : f32[3]
  const %a : f32[3] = dense<[1.0, 2.0, 3.0]>
  const %b : f32[] = dense<[0.5]>
  %s : f32[3] = Add(%a, %b)  #1
  %p : f32[3] = Mul(%s, %s)  #2
  %y : f32[3] = Add(%x, %p)  #3
  output %y
}
)");
    PipelineResult r = runPipeline(*g, "fold-constants");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    QCOMPARE(out.numNodes(), size_t(1));
    const Value* folded = out.nodes()[0]->input(1);
    QVERIFY(folded->isConstant());
    QCOMPARE(folded->name(), std::string("p")); // the folded value keeps its name
    std::span<const float> v = folded->constantData().data<float>();
    QCOMPARE(std::vector<float>(v.begin(), v.end()), (std::vector<float>{2.25f, 6.25f, 12.25f}));
    // The intermediate s was consumed by the fold: only the final constant is new.
    QVERIFY(!out.findValue("s"));
    QCOMPARE(r.snapshots[1].record->statistics.at("nodes folded"), 2.0);
    QVERIFY(verify(out).ok());
    QCOMPARE(maxOutputDifference(*g, out), 0.0);
  }

  void foldsGraphOutputsKeepingNames() {
    auto g = parseIr(R"(graph @g {
  input %x : f32[2]
  const %a : f32[2] = dense<[1.0, -2.0]>
  %c : f32[2] = Abs(%a)  #1
  %k : f32[2] = Constant() {value = dense<[3.0, 4.0]> : f32[2]}  #2
  %y : f32[2] = Add(%x, %k)  #3
  output %c, %y
}
)");
    PipelineResult r = runPipeline(*g, "fold-constants");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    QCOMPARE(out.outputs()[0]->name(), std::string("c"));
    QVERIFY(out.outputs()[0]->isConstant());
    QCOMPARE(countOps(out, OpKind::Constant), size_t(0));
    QCOMPARE(out.numNodes(), size_t(1));
    QCOMPARE(maxOutputDifference(*g, out), 0.0);
  }

  void foldsStaticShapeChain() {
    auto g = parseIr(kStaticFlatten);
    PipelineResult r = runPipeline(*g, "fold-constants,dce");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    // Shape, Gather, Unsqueeze and Concat collapse into the one constant [2, -1].
    QCOMPARE(out.numNodes(), size_t(2));
    QCOMPARE(countOps(out, OpKind::Shape), size_t(0));
    const Node* reshape = out.nodes()[0].get();
    QCOMPARE(reshape->op(), OpKind::Reshape);
    QCOMPARE(constantInts(reshape->input(1)), (std::vector<int64_t>{2, -1}));
    QCOMPARE(out.constants().size(), size_t(1));
    // Already after fold-constants alone, only one new constant exists.
    const Graph& folded = *r.snapshots[1].graph;
    QCOMPARE(folded.constants().size(), g->constants().size() + 1);
    QCOMPARE(maxOutputDifference(*g, out), 0.0);
  }

  void keepsDynamicShapeChain() {
    auto g = loadSample("dynamic_batch.onnx");
    QCOMPARE(countOps(*g, OpKind::Shape), size_t(1));
    PipelineResult r = runPipeline(*g, "fold-constants");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    // The batch size N is only known at run time: the chain must stay.
    QCOMPARE(countOps(out, OpKind::Shape), size_t(1));
    QCOMPARE(countOps(out, OpKind::Gather), size_t(1));
    QCOMPARE(countOps(out, OpKind::Unsqueeze), size_t(1));
    QCOMPARE(countOps(out, OpKind::Concat), size_t(1));
    for (const auto& n : out.nodes())
      if (n->op() == OpKind::Reshape)
        QVERIFY(!n->input(1)->isConstant());
    QVERIFY(!r.snapshots[1].record->changed);
    for (int64_t n : {1, 3})
      QCOMPARE(maxOutputDifference(*g, out, 1, {{"N", n}}), 0.0);
  }

  void foldsKnownPartsOfDynamicShapes() {
    // Dim 1 of x is static even though dim 0 is not: Gather(Shape(x), 1) folds to 12.
    auto g = parseIr(R"(graph @g {
  input %x : f32[N, 12]
  const %index : i64[] = dense<[1]>
  const %axes : i64[1] = dense<[0]>
  const %minus_one : i64[1] = dense<[-1]>
  %shape : i64[2] = Shape(%x)  #1
  %cols : i64[] = Gather(%shape, %index) {axis = 0}  #2
  %cols1 : i64[1] = Unsqueeze(%cols, %axes)  #3
  %target : i64[2] = Concat(%minus_one, %cols1) {axis = 0}  #4
  %y : f32[N, 12] = Reshape(%x, %target)  #5
  output %y
}
)");
    PipelineResult r = runPipeline(*g, "fold-constants,dce");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    QCOMPARE(out.numNodes(), size_t(1));
    QCOMPARE(constantInts(out.nodes()[0]->input(1)), (std::vector<int64_t>{-1, 12}));
    QCOMPARE(maxOutputDifference(*g, out, 1, {{"N", 3}}), 0.0);
  }

  void sizeCapPreventsHugeConstants() {
    const char* ir = R"(graph @g {
  input %x : f32[20, 20]
  const %shape : i64[2] = dense<[20, 20]>
  %big : f32[20, 20] = ConstantOfShape(%shape) {value = dense<[2.0]> : f32[1]}  #1
  %y : f32[20, 20] = Mul(%x, %big)  #2
  output %y
}
)";
    auto g = parseIr(ir);
    PipelineResult capped = runPipeline(*g, "fold-constants{max-elements=100}");
    QVERIFY2(!capped.error, errorText(capped).c_str());
    QCOMPARE(countOps(capped.finalGraph(), OpKind::ConstantOfShape), size_t(1));
    QVERIFY(!capped.snapshots[1].record->changed);

    PipelineResult folded = runPipeline(*g, "fold-constants{max-elements=400}");
    QVERIFY(!folded.error);
    QCOMPARE(countOps(folded.finalGraph(), OpKind::ConstantOfShape), size_t(0));
    QCOMPARE(maxOutputDifference(*g, folded.finalGraph()), 0.0);

    // The default cap (2^20 elements) keeps a 4M-element ConstantOfShape unmaterialized.
    auto huge = parseIr(R"(graph @g {
  input %x : f32[2048, 2048]
  const %shape : i64[2] = dense<[2048, 2048]>
  %big : f32[2048, 2048] = ConstantOfShape(%shape) {value = dense<[2.0]> : f32[1]}  #1
  %y : f32[2048, 2048] = Mul(%x, %big)  #2
  output %y
}
)");
    PipelineResult r = runPipeline(*huge, "fold-constants");
    QVERIFY(!r.error);
    QCOMPARE(countOps(r.finalGraph(), OpKind::ConstantOfShape), size_t(1));
    QVERIFY(!runPipeline(*g, "fold-constants{max-elements=many}").error->message().empty());
  }

  void sizeCapLetsWeightsBeRearranged() {
    // A Transpose of a 20x20 weight does not grow it: it folds under a cap of 100 elements
    // (else it would run on every inference), while an Expand of the same weight to 2x20x20 does
    // not.
    const char* ir = R"(graph @g {
  input %x : f32[20, 20]
  const %shape : i64[2] = dense<[20, 20]>
  const %shape3 : i64[3] = dense<[2, 20, 20]>
  %w : f32[20, 20] = ConstantOfShape(%shape) {value = dense<[2.0]> : f32[1]}  #1
  %wt : f32[20, 20] = Transpose(%w) {perm = [1, 0]}  #2
  %we : f32[2, 20, 20] = Expand(%wt, %shape3)  #3
  %y : f32[2, 20, 20] = Mul(%x, %we)  #4
  output %y
}
)";
    auto g = parseIr(ir);
    QVERIFY(g);
    PipelineResult r = runPipeline(*g, "fold-constants{max-elements=400},dce");
    QVERIFY2(!r.error, errorText(r).c_str());
    QCOMPARE(countOps(r.finalGraph(), OpKind::ConstantOfShape), size_t(0));
    QCOMPARE(countOps(r.finalGraph(), OpKind::Transpose), size_t(0));
    QCOMPARE(countOps(r.finalGraph(), OpKind::Expand), size_t(1));
    QCOMPARE(maxOutputDifference(*g, r.finalGraph()), 0.0);
    PipelineResult capped = runPipeline(*g, "fold-constants{max-elements=100}");
    QVERIFY2(!capped.error, errorText(capped).c_str());
    QCOMPARE(countOps(capped.finalGraph(), OpKind::ConstantOfShape), size_t(1));
    QCOMPARE(countOps(capped.finalGraph(), OpKind::Transpose), size_t(1));
  }

  void leavesKernelErrorsToRunTime() {
    // A Gather whose constant index is out of range fails in the kernel; folding skips it rather
    // than failing the whole pipeline on a branch that may never run.
    auto g = parseIr(R"(graph @g {
  input %x : f32[1]
  const %data : f32[3] = dense<[1.0, 2.0, 3.0]>
  const %index : i64[1] = dense<[7]>
  %bad : f32[1] = Gather(%data, %index) {axis = 0}  #1
  %y : f32[1] = Add(%x, %bad)  #2
  output %y
}
)");
    PipelineResult r = runPipeline(*g, "fold-constants");
    QVERIFY2(!r.error, errorText(r).c_str());
    QCOMPARE(countOps(r.finalGraph(), OpKind::Gather), size_t(1));
    QVERIFY(!r.snapshots[1].record->changed);
  }

  void samplesStayEqual() {
    std::string failure = checkSamplesUnchanged("fold-constants,dce", 0, /*keepOutputNames=*/true);
    QVERIFY2(failure.empty(), failure.c_str());
  }

  void randomGraphsStayEqual() {
    size_t folded = 0;
    for (uint64_t seed = 1; seed <= 150; ++seed) {
      auto g = randomRewriteGraph(seed);
      PipelineResult r = runPipeline(*g, "fold-constants");
      const std::string tag = "seed " + std::to_string(seed);
      QVERIFY2(!r.error, (tag + ": " + errorText(r)).c_str());
      const Graph& out = r.finalGraph();
      QVERIFY2(verify(out).ok(), tag.c_str());
      QVERIFY2(maxOutputDifference(*g, out, 2) == 0, tag.c_str());
      // Nothing foldable is left: no node has only constant operands.
      for (const auto& n : out.nodes()) {
        bool allConstant = n->numInputs() > 0;
        for (const Value* in : n->inputs())
          allConstant = allConstant && (!in || in->isConstant());
        QVERIFY2(!allConstant, (tag + ": not folded " + n->describe()).c_str());
      }
      QCOMPARE(countOps(out, OpKind::Shape), size_t(0));
      folded += size_t(r.snapshots[1].record->statistics.at("nodes folded"));
    }
    QVERIFY(folded > 100);
  }
};

QTEST_GUILESS_MAIN(TestFoldConstants)
#include "TestFoldConstants.moc"
