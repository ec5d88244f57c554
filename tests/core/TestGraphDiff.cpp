// Tests of the structural diff: matching by id, change details, added/removed nodes and the
// provenance links that map fused and folded nodes back to the originals.
#include "core/GraphDiff.h"
#include "core/text/IrParser.h"

#include <QtTest/QtTest>

#include <algorithm>

using namespace fb;

namespace {

std::unique_ptr<Graph> parse(const std::string& text) {
  auto g = parseGraph(text, "<test>");
  if (!g.ok())
    qFatal("parse: %s", g.error().message().c_str());
  return std::move(g).value();
}

const NodeChange* findChange(const GraphDiff& d, NodeId id) {
  for (const NodeChange& c : d.changed)
    if (c.id == id)
      return &c;
  return nullptr;
}

using Ids = std::vector<NodeId>;
using Details = std::vector<std::string>;

const char* kChain = R"(graph @g opset 17 {
  input %x : f32[2, 3]
  input %y : f32[2, 3]
  const %c : f32[3] = dense<[1.0, 2.0, 3.0]>
  %r : f32[2, 3] = LeakyRelu(%x) {alpha = 0.1}  #1 "leaky"
  %s : f32[2, 3] = Add(%r, %c)  #2
  %t : f32[2, 3] = Mul(%s, %y)  #3
  %u : f16[2, 3] = Cast(%t) {to = 10}  #4
  output %u
}
)";

} // namespace

class TestGraphDiff : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void identicalGraphsMatchEverything() {
    auto a = parse(kChain);
    auto b = parse(kChain);
    GraphDiff d = diffGraphs(*a, *b);
    QVERIFY(d.empty());
    QCOMPARE(d.unchanged, (Ids{1, 2, 3, 4}));
    QVERIFY(d.addedFrom.empty());
    QVERIFY(d.removedInto.empty());
    QVERIFY(changedNodeIds(d).empty());
  }

  void changesAreReportedWithDetails() {
    auto a = parse(kChain);
    std::string text = kChain;
    auto edit = [&](const std::string& from, const std::string& to) {
      size_t p = text.find(from);
      QVERIFY(p != std::string::npos);
      text.replace(p, from.size(), to);
    };
    edit("{alpha = 0.1}  #1 \"leaky\"", "{alpha = 0.2}  #1 \"leaky2\"");
    edit("dense<[1.0, 2.0, 3.0]>", "dense<[1.0, 2.0, 4.0]>");
    edit("Mul(%s, %y)", "Mul(%y, %y)");
    edit("%u : f16[2, 3] = Cast(%t) {to = 10}", "%u : f32[2, 3] = Cast(%t) {to = 1}");
    auto b = parse(text);
    GraphDiff d = diffGraphs(*a, *b);
    QVERIFY(!d.empty());
    QVERIFY(d.added.empty());
    QVERIFY(d.removed.empty());
    QCOMPARE(d.unchanged, Ids{});
    QCOMPARE(d.changed.size(), size_t(4));
    QCOMPARE(findChange(d, 1)->details,
             (Details{"name: \"leaky\" -> \"leaky2\"", "attribute alpha: 0.1 -> 0.2"}));
    QCOMPARE(findChange(d, 2)->details, (Details{"operand 1: data of %c changed"}));
    QCOMPARE(findChange(d, 3)->details, (Details{"operand 0: #2:0 -> %y"}));
    QCOMPARE(findChange(d, 4)->details,
             (Details{"attribute to: 10 -> 1", "type of output 0: f16[2, 3] -> f32[2, 3]"}));
    QCOMPARE(changedNodeIds(d), (Ids{1, 2, 3, 4}));
  }

  void addedAndRemovedWithoutProvenance() {
    auto a = parse(R"(graph @g opset 17 {
  input %x : f32[4]
  %r : f32[4] = Relu(%x)  #1
  %n : f32[4] = Neg(%r)  #2
  output %n
}
)");
    auto b = parse(R"(graph @g opset 17 {
  input %x : f32[4]
  %r : f32[4] = Relu(%x)  #1
  %n : f32[4] = Abs(%r)  #5
  output %n
}
)");
    GraphDiff d = diffGraphs(*a, *b);
    QCOMPARE(d.added, Ids{5});
    QCOMPARE(d.removed, Ids{2});
    QCOMPARE(d.unchanged, Ids{1});
    QVERIFY(d.changed.empty());
    QVERIFY(d.addedFrom.empty());
    QVERIFY(d.removedInto.empty());
    QCOMPARE(changedNodeIds(d), Ids{5});
  }

  void nodeMadeFromTwoRemovedNodes() {
    // MatMul #1 + Add #2 became Gemm #4 from(#1, #2): both removed nodes point at it.
    auto a = parse(R"(graph @g opset 17 {
  input %x : f32[2, 3]
  const %w : f32[3, 2] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  const %b : f32[2] = dense<[1.0, 2.0]>
  %m : f32[2, 2] = MatMul(%x, %w)  #1
  %s : f32[2, 2] = Add(%m, %b)  #2
  %y : f32[2, 2] = Relu(%s)  #3
  output %y
}
)");
    auto b = parse(R"(graph @g opset 17 {
  input %x : f32[2, 3]
  const %w : f32[3, 2] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  const %b : f32[2] = dense<[1.0, 2.0]>
  %s : f32[2, 2] = Gemm(%x, %w, %b)  #4 from(#1, #2)
  %y : f32[2, 2] = Relu(%s)  #3
  output %y
}
)");
    GraphDiff d = diffGraphs(*a, *b);
    QCOMPARE(d.added, Ids{4});
    QCOMPARE(d.removed, (Ids{1, 2}));
    QCOMPARE(d.addedFrom.size(), size_t(1));
    QCOMPARE(d.addedFrom.at(4), (Ids{1, 2}));
    QCOMPARE(d.removedInto.size(), size_t(2));
    QCOMPARE(d.removedInto.at(1), Ids{4});
    QCOMPARE(d.removedInto.at(2), Ids{4});
    QCOMPARE(findChange(d, 3)->details, (Details{"operand 0: #2:0 -> #4:0"}));
  }

  void keptNodeThatAbsorbedARemovedOne() {
    // transpose(transpose(x)) composed into the outer node, which keeps its id #2 and records
    // #1 in its provenance: the removed #1 must still point at #2.
    auto a = parse(R"(graph @g opset 17 {
  input %x : f32[2, 3]
  %t1 : f32[3, 2] = Transpose(%x) {perm = [1, 0]}  #1
  %t2 : f32[2, 3] = Transpose(%t1) {perm = [1, 0]}  #2
  output %t2
}
)");
    auto b = parse(R"(graph @g opset 17 {
  input %x : f32[2, 3]
  %t2 : f32[2, 3] = Transpose(%x) {perm = [0, 1]}  #2 from(#1)
  output %t2
}
)");
    GraphDiff d = diffGraphs(*a, *b);
    QCOMPARE(d.removed, Ids{1});
    QVERIFY(d.added.empty());
    QVERIFY(d.addedFrom.empty());
    QCOMPARE(d.removedInto.size(), size_t(1));
    QCOMPARE(d.removedInto.at(1), Ids{2});
    QCOMPARE(findChange(d, 2)->details,
             (Details{"attribute perm: [1, 0] -> [0, 1]", "operand 0: #1:0 -> %x",
                      "provenance: from() -> from(#1)"}));
  }

  void fusedGroupMapsBackToBodyIds() {
    const char* unfused = R"(graph @g opset 17 {
  input %x : f32[2, 3]
  input %w : f32[3, 4]
  %m : f32[2, 4] = MatMul(%x, %w)  #1
  %r : f32[2, 4] = Relu(%m)  #2
  %n : f32[2, 4] = Neg(%r)  #3
  output %n
}
)";
    // The body keeps the original ids #1 and #2; the group itself carries no provenance.
    const char* fused = R"(graph @g opset 17 {
  input %x : f32[2, 3]
  input %w : f32[3, 4]
  %g : f32[2, 4] = fused(%x, %w)  #9 {
    input %p0 : f32[2, 3]
    input %p1 : f32[3, 4]
    %m : f32[2, 4] = MatMul(%p0, %p1)  #1
    %r : f32[2, 4] = Relu(%m)  #2
    output %r
  }
  %n : f32[2, 4] = Neg(%g)  #3
  output %n
}
)";
    auto a = parse(unfused);
    auto b = parse(fused);
    GraphDiff d = diffGraphs(*a, *b);
    QCOMPARE(d.added, Ids{9});
    QCOMPARE(d.removed, (Ids{1, 2}));
    QCOMPARE(d.addedFrom.at(9), (Ids{1, 2}));
    QCOMPARE(d.removedInto.at(1), Ids{9});
    QCOMPARE(d.removedInto.at(2), Ids{9});
    QCOMPARE(findChange(d, 3)->details, (Details{"operand 0: #2:0 -> #9:0"}));

    // Unfusing maps the other way: the group is removed, and the restored ops are added from
    // nothing in a's top level (their ids lived in the group's body).
    GraphDiff back = diffGraphs(*b, *a);
    QCOMPARE(back.removed, Ids{9});
    QCOMPARE(back.added, (Ids{1, 2}));
  }

  void fusedBodyChangesAreReported() {
    const char* before = R"(graph @g opset 17 {
  input %x : f32[4]
  %g : f32[4] = fused(%x)  #9 from(#1, #2) {
    input %p0 : f32[4]
    %a : f32[4] = LeakyRelu(%p0) {alpha = 0.1}  #10 from(#1)
    %b : f32[4] = Neg(%a)  #11 from(#2)
    output %b
  }
  output %g
}
)";
    auto a = parse(before);
    std::string text = before;
    text.replace(text.find("alpha = 0.1"), 11, "alpha = 0.5");
    auto b = parse(text);
    GraphDiff same = diffGraphs(*a, *parse(before));
    QVERIFY(same.empty());
    GraphDiff d = diffGraphs(*a, *b);
    QCOMPARE(d.changed.size(), size_t(1));
    QCOMPARE(d.changed[0].id, NodeId(9));
    QCOMPARE(d.changed[0].details, (Details{"body: #10 attribute alpha: 0.1 -> 0.5"}));
  }
};

QTEST_GUILESS_MAIN(TestGraphDiff)
#include "TestGraphDiff.moc"
