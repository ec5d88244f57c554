// Tests of cse: duplicate nodes and constants merge, commutative operands match in any order,
// and nodes that differ (attributes, operand order, outputs' names) stay apart.
#include "PassTestUtil.h"

#include "core/Verifier.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::test;

namespace {

/// Runs cse,dce on `ir`; checks it verifies and computes exactly the same outputs.
std::shared_ptr<const Graph> cse(const std::string& ir) {
  auto g = parseIr(ir);
  PipelineResult r = runPipeline(*g, "cse,dce");
  if (r.error || !verify(r.finalGraph()).ok() || maxOutputDifference(*g, r.finalGraph()) != 0)
    return nullptr;
  for (size_t i = 0; i < g->outputs().size(); ++i)
    if (r.finalGraph().outputs()[i]->name() != g->outputs()[i]->name())
      return nullptr;
  return r.snapshots.back().graph;
}

} // namespace

class TestCse : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void mergesCommutedDuplicates() {
    auto g = cse(R"(graph @g {
  input %x : f32[2, 3]
  input %y : f32[3]
  %a : f32[2, 3] = Add(%x, %y)  #1
  %b : f32[2, 3] = Add(%y, %x)  #2
  %m1 : f32[2, 3] = Mul(%a, %x)  #3
  %m2 : f32[2, 3] = Mul(%x, %b)  #4
  %s : f32[2, 3] = Sub(%m1, %m2)  #5
  output %s
}
)");
    QVERIFY(g);
    // b merges into a, which makes m2 a commuted copy of m1.
    QCOMPARE(countOps(*g, OpKind::Add), size_t(1));
    QCOMPARE(countOps(*g, OpKind::Mul), size_t(1));
    const Node* sub = g->nodes().back().get();
    QCOMPARE(sub->input(0), sub->input(1));
  }

  void keepsNonCommutativeOrder() {
    auto g = cse(R"(graph @g {
  input %x : f32[3]
  input %y : f32[3]
  %a : f32[3] = Sub(%x, %y)  #1
  %b : f32[3] = Sub(%y, %x)  #2
  %c : f32[3] = Div(%x, %y)  #3
  %d : f32[3] = Div(%y, %x)  #4
  %s : f32[3] = Sum(%a, %b, %c, %d)  #5
  output %s
}
)");
    QVERIFY(g);
    QCOMPARE(g->numNodes(), size_t(5));
  }

  void comparesAttributes() {
    auto g = cse(R"(graph @g {
  input %x : f32[2, 3]
  %a : f32[2, 3] = LeakyRelu(%x) {alpha = 0.1}  #1
  %b : f32[2, 3] = LeakyRelu(%x) {alpha = 0.2}  #2
  %c : f32[2, 3] = LeakyRelu(%x) {alpha = 0.1}  #3
  %t1 : f32[3, 2] = Transpose(%x) {perm = [1, 0]}  #4
  %t2 : f32[3, 2] = Transpose(%x) {perm = [1, 0]}  #5
  %s : f32[2, 3] = Sum(%a, %b, %c)  #6
  %t : f32[3, 2] = Add(%t1, %t2)  #7
  output %s, %t
}
)");
    QVERIFY(g);
    // a and c merge, b (another alpha) stays; the Transposes merge.
    QCOMPARE(countOps(*g, OpKind::LeakyRelu), size_t(2));
    QCOMPARE(countOps(*g, OpKind::Transpose), size_t(1));
  }

  void mergesDuplicateConstantsAndTheirUsers() {
    // c2 duplicates c1; c3 has the same bytes but another shape, c4 the same bytes as i32.
    auto g = parseIr(R"(graph @g {
  input %x : f32[4]
  const %c1 : f32[4] = dense<[1.0, 2.0, 3.0, 4.0]>
  const %c2 : f32[4] = dense<[1.0, 2.0, 3.0, 4.0]>
  const %c3 : f32[2, 2] = dense<[1.0, 2.0, 3.0, 4.0]>
  const %c4 : i32[4] = dense<[1065353216, 1073741824, 1077936128, 1082130432]>
  const %shape : i64[2] = dense<[2, 2]>
  %a : f32[4] = Add(%x, %c1)  #1
  %b : f32[4] = Add(%x, %c2)  #2
  %s : f32[4] = Sub(%a, %b)  #3
  %r : f32[2, 2] = Reshape(%s, %shape)  #4
  %q : f32[2, 2] = Add(%r, %c3)  #5
  %i : i32[4] = Cast(%x) {to = 6}  #6
  %j : i32[4] = Add(%i, %c4)  #7
  output %q, %j
}
)");
    PipelineResult r = runPipeline(*g, "cse");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    QCOMPARE(out.constants().size(), size_t(4));
    QVERIFY(!out.findValue("c2"));
    QVERIFY(out.findValue("c3") && out.findValue("c4"));
    // With c2 merged into c1, b became a duplicate of a.
    QCOMPARE(countOps(out, OpKind::Add), size_t(3));
    QCOMPARE(r.snapshots[1].record->statistics.at("constants merged"), 1.0);
    QCOMPARE(r.snapshots[1].record->statistics.at("nodes merged"), 1.0);
    QVERIFY(verify(out).ok());
    QCOMPARE(maxOutputDifference(*g, out), 0.0);
  }

  void keepsOutputNames() {
    // Both duplicates are outputs: merging would leave one name for two outputs.
    auto g = cse(R"(graph @g {
  input %x : f32[2, 3]
  %a : f32[2, 3] = Relu(%x)  #1
  %b : f32[2, 3] = Relu(%x)  #2
  output %a, %b
}
)");
    QVERIFY(g);
    QCOMPARE(g->numNodes(), size_t(2));

    // Only the later duplicate is an output: it merges and the survivor takes its name.
    auto h = cse(R"(graph @g {
  input %x : f32[2, 3]
  %a : f32[2, 3] = Relu(%x)  #1
  %n : f32[2, 3] = Neg(%a)  #2
  %b : f32[2, 3] = Relu(%x)  #3
  %m : f32[2, 3] = Neg(%b)  #4
  output %m, %n
}
)");
    QVERIFY(h);
    QCOMPARE(countOps(*h, OpKind::Relu), size_t(1));
    // The Negs are duplicates too, but both are outputs and stay.
    QCOMPARE(countOps(*h, OpKind::Neg), size_t(2));
  }

  void mergesMultiOutputNodes() {
    auto g = cse(R"(graph @g {
  input %x : f32[4, 3]
  const %sizes : i64[2] = dense<[1, 3]>
  %a : f32[1, 3], %b : f32[3, 3] = Split(%x, %sizes) {axis = 0}  #1
  %c : f32[1, 3], %d : f32[3, 3] = Split(%x, %sizes) {axis = 0}  #2
  %p : f32[1, 3] = Add(%a, %c)  #3
  %q : f32[3, 3] = Add(%b, %d)  #4
  output %p, %q
}
)");
    QVERIFY(g);
    QCOMPARE(countOps(*g, OpKind::Split), size_t(1));
    for (const auto& n : g->nodes())
      if (n->op() == OpKind::Add)
        QCOMPARE(n->input(0), n->input(1));
  }

  void samplesStayEqual() {
    std::string failure = checkSamplesUnchanged("cse,dce", 0, /*keepOutputNames=*/false);
    QVERIFY2(failure.empty(), failure.c_str());
  }

  void randomGraphsStayEqual() {
    size_t merged = 0;
    for (uint64_t seed = 1; seed <= 150; ++seed) {
      auto g = randomRewriteGraph(seed);
      PipelineResult r = runPipeline(*g, "cse");
      const std::string tag = "seed " + std::to_string(seed);
      QVERIFY2(!r.error, (tag + ": " + errorText(r)).c_str());
      QVERIFY2(verify(r.finalGraph()).ok(), tag.c_str());
      QVERIFY2(maxOutputDifference(*g, r.finalGraph(), 2) == 0, tag.c_str());
      for (size_t i = 0; i < g->outputs().size(); ++i)
        QCOMPARE(r.finalGraph().outputs()[i]->name(), g->outputs()[i]->name());
      merged += size_t(r.snapshots[1].record->statistics.at("nodes merged"));
      // One walk merges chains of duplicates: a second run finds nothing.
      PipelineResult again = runPipeline(r.finalGraph(), "cse");
      QVERIFY2(!again.snapshots[1].record->changed, tag.c_str());
    }
    QVERIFY(merged > 50);
  }
};

QTEST_GUILESS_MAIN(TestCse)
#include "TestCse.moc"
