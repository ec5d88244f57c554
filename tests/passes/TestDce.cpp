// Tests of dce: dead nodes, chains and constants go; outputs, inputs and live results stay.
#include "PassTestUtil.h"

#include "core/Verifier.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::test;

class TestDce : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void removesDeadChainsAndConstants() {
    auto g = parseIr(R"(graph @g {
  input %x : f32[2, 3]
  input %unused : f32[4]
  const %k : f32[3] = dense<[1.0, 2.0, 3.0]>
  const %live : f32[3] = dense<[4.0, 5.0, 6.0]>
  %a : f32[2, 3] = Mul(%x, %k)  #1
  %b : f32[2, 3] = Exp(%a)  #2
  %y : f32[2, 3] = Add(%x, %live)  #3
  %c : f32[2, 3] = Log(%b)  #4
  output %y
}
)");
    PipelineResult r = runPipeline(*g, "dce");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    QCOMPARE(out.numNodes(), size_t(1));
    QCOMPARE(out.nodes()[0]->op(), OpKind::Add);
    // The constant only the dead chain read is gone; graph inputs are the model's interface.
    QCOMPARE(out.constants().size(), size_t(1));
    QCOMPARE(out.constants()[0]->name(), std::string("live"));
    QCOMPARE(out.inputs().size(), size_t(2));
    const PassRecord& rec = *r.snapshots[1].record;
    QVERIFY(rec.changed);
    QCOMPARE(rec.statistics.at("nodes removed"), 3.0);
    QCOMPARE(rec.statistics.at("constants removed"), 1.0);
    QCOMPARE(rec.events.size(), size_t(3));
    QCOMPARE(maxOutputDifference(*g, out), 0.0);
  }

  void keepsOutputsAndPartlyUsedNodes() {
    auto g = parseIr(R"(graph @g {
  input %x : f32[4, 3]
  const %sizes : i64[2] = dense<[1, 3]>
  const %c : f32[3] = dense<[1.0, 2.0, 3.0]>
  %a : f32[1, 3], %b : f32[3, 3] = Split(%x, %sizes) {axis = 0}  #1
  %n : f32[1, 3] = Neg(%a)  #2
  %r : f32[4, 3] = Relu(%x)  #3
  output %n, %r, %c
}
)");
    PipelineResult r = runPipeline(*g, "dce");
    QVERIFY(!r.error);
    // Split's second result is unused, but its first feeds an output: the node stays. The Relu
    // result nobody reads is an output, and so is the constant.
    QCOMPARE(r.finalGraph().numNodes(), size_t(3));
    QCOMPARE(r.finalGraph().constants().size(), size_t(2));
    QVERIFY(!r.snapshots[1].record->changed);
  }

  void cleansUpAfterCanonicalize() {
    auto g = parseIr(R"(graph @g {
  input %x : f32[2, 3]
  %a : f32[2, 3] = Neg(%x)  #1
  %b : f32[2, 3] = Neg(%a)  #2
  %s : f32[2, 3] = Sigmoid(%a)  #3
  %y : f32[2, 3] = Relu(%b)  #4
  output %y
}
)");
    // Canonicalize keeps the inner Neg (the dead Sigmoid still reads it); dce then removes both.
    PipelineResult r = runPipeline(*g, "canonicalize,dce");
    QVERIFY(!r.error);
    QCOMPARE(r.finalGraph().numNodes(), size_t(1));
    QCOMPARE(r.finalGraph().nodes()[0]->input(0)->name(), std::string("x"));
    QCOMPARE(maxOutputDifference(*g, r.finalGraph()), 0.0);
  }

  void samplesStayEqual() {
    std::string failure = checkSamplesUnchanged("dce", 0, /*keepOutputNames=*/false);
    QVERIFY2(failure.empty(), failure.c_str());
  }

  void randomGraphsStayEqual() {
    size_t removed = 0;
    for (uint64_t seed = 1; seed <= 150; ++seed) {
      auto g = randomRewriteGraph(seed);
      PipelineResult r = runPipeline(*g, "canonicalize,cse,dce");
      const std::string tag = "seed " + std::to_string(seed);
      QVERIFY2(!r.error, (tag + ": " + errorText(r)).c_str());
      const Graph& out = r.finalGraph();
      QVERIFY2(verify(out).ok(), tag.c_str());
      QVERIFY2(maxOutputDifference(*g, out, 2) == 0, tag.c_str());
      // Nothing dead is left: every node feeds something, every constant is read.
      for (const auto& n : out.nodes()) {
        bool live = false;
        for (const Value* v : n->outputs())
          live = live || v->hasUses() || v->isGraphOutput();
        QVERIFY2(live, (tag + ": dead " + n->describe()).c_str());
      }
      for (const Value* c : out.constants())
        QVERIFY2(c->hasUses() || c->isGraphOutput(), (tag + ": unused " + c->name()).c_str());
      removed += r.snapshots.back().record->changed;
    }
    QVERIFY(removed > 50);
  }
};

QTEST_GUILESS_MAIN(TestDce)
#include "TestDce.moc"
