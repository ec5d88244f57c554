// Passes on graphs with If and Loop: -O1..-O3 keep the interpreter's outputs, fold-constants
// inlines a constant-condition If, dce sweeps bodies, cse never merges nodes with bodies.
#include "PassTestUtil.h"
#include "core/Verifier.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

#include <algorithm>

using namespace fb;
using namespace fb::test;

namespace {

/// Two Ifs with the same operands but different branches, and a Loop whose body has a dead node.
const char* kTwoIfs = R"(graph @two_ifs opset 17 {
  input %c : bool[]
  input %x : f32[2, 3]
  const %w : f32[3] = dense<[1.0, 2.0, 3.0]>
  const %m : i64[] = dense<[2]>
  %a : f32[2, 3] = If(%c, %x)  #1 {
    then_branch {
      input %x : f32[2, 3]
      %t : f32[2, 3] = Neg(%x)  #2
      output %t
    }
    else_branch {
      input %x : f32[2, 3]
      %e : f32[2, 3] = Relu(%x)  #3
      output %e
    }
  }
  %b : f32[2, 3] = If(%c, %x)  #4 {
    then_branch {
      input %x : f32[2, 3]
      %t : f32[2, 3] = Tanh(%x)  #5
      output %t
    }
    else_branch {
      input %x : f32[2, 3]
      %e : f32[2, 3] = Sigmoid(%x)  #6
      output %e
    }
  }
  %sum : f32[2, 3] = Add(%a, %b)  #7
  %s : f32[2, 3] = Loop(%m, _, %sum, %w) {captures = 1}  #8 {
    body {
      input %i : i64[]
      input %cond : bool[]
      input %v : f32[2, 3]
      input %w : f32[3]
      %n : f32[2, 3] = Mul(%v, %w)  #9
      %dead : f32[2, 3] = Exp(%n)  #10
      output %cond, %n
    }
  }
  output %s
}
)";

} // namespace

class TestControlFlowPasses : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void optimizationLevelsKeepOutputs() {
    auto g = loadSample("control_flow.onnx");
    for (const char* level : {"O1", "O2", "O3"}) {
      auto steps = namedPipeline(level);
      QVERIFY(steps.ok());
      PipelineResult r = PassManager().run(g->clone(), *steps);
      QVERIFY2(!r.error, errorText(r).c_str());
      QVERIFY(verify(r.finalGraph()).ok());
      QCOMPARE(countOps(r.finalGraph(), OpKind::If), size_t(1));
      QCOMPARE(countOps(r.finalGraph(), OpKind::Loop), size_t(1));
      // Several seeds draw both values of the bool condition.
      QCOMPARE(maxOutputDifference(*g, r.finalGraph(), /*seeds=*/6), 0.0);
    }
    auto two = parseIr(kTwoIfs);
    PipelineResult r = runPipeline(*two, "canonicalize,fold-constants,dce,cse,fuse");
    QVERIFY2(!r.error, errorText(r).c_str());
    QCOMPARE(maxOutputDifference(*two, r.finalGraph(), /*seeds=*/6), 0.0);
  }

  void foldConstantsInlinesTheTakenBranch() {
    for (bool cond : {true, false}) {
      std::string text = kTwoIfs;
      text.replace(text.find("  input %c : bool[]\n"), 20,
                   std::string("  const %c : bool[] = dense<[") + (cond ? "true" : "false") + "]>\n");
      auto g = parseIr(text);
      PipelineResult r = runPipeline(*g, "fold-constants,dce");
      QVERIFY2(!r.error, errorText(r).c_str());
      const Graph& out = r.finalGraph();
      QCOMPARE(countOps(out, OpKind::If), size_t(0));
      QCOMPARE(countOps(out, cond ? OpKind::Neg : OpKind::Relu), size_t(1));
      QCOMPARE(countOps(out, cond ? OpKind::Tanh : OpKind::Sigmoid), size_t(1));
      // The inlined node keeps its id and says it came from the If.
      const Node* inlined = out.findNode(cond ? 2 : 3);
      QVERIFY(inlined && inlined->graph() == &out);
      QVERIFY(std::find(inlined->provenance().begin(), inlined->provenance().end(), NodeId(1)) !=
              inlined->provenance().end());
      QCOMPARE(maxOutputDifference(*g, out), 0.0);
    }
  }

  void dceSweepsBodiesAndCseKeepsBodies() {
    auto g = parseIr(kTwoIfs);
    PipelineResult r = runPipeline(*g, "dce,cse");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    QVERIFY(!out.findNode(10));  // the dead Exp inside the Loop body
    QVERIFY(out.findNode(9));
    QCOMPARE(countOps(out, OpKind::If), size_t(2)); // same operands, different bodies
    QCOMPARE(maxOutputDifference(*g, out), 0.0);
  }

  /// When nothing in the bodies reads a capture any more, dce drops it from the node and from
  /// every body, and the weight it kept alive becomes dead.
  void dceDropsUnusedCaptures() {
    std::string text = kTwoIfs;
    // The Loop body stops reading %w: %n becomes a copy of %v.
    text.replace(text.find("Mul(%v, %w)"), 11, "Identity(%v)");
    auto g = parseIr(text);
    PipelineResult r = runPipeline(*g, "dce,dce");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    const Node* loop = out.findNode(8);
    QVERIFY(loop);
    QCOMPARE(loop->numInputs(), size_t(3)); // M, cond slot, the carried value
    QVERIFY(!loop->attrs().has("captures"));
    QCOMPARE(loop->bodyNamed("body")->inputs().size(), size_t(3));
    QVERIFY(!out.findValue("w")); // the second dce run erased the weight
    QVERIFY(verify(out).ok());
    QCOMPARE(maxOutputDifference(*g, out), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestControlFlowPasses)
#include "TestControlFlowPasses.moc"
