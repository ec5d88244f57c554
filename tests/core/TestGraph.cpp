// Tests of the core IR: construction, use lists, cloning with ids, topological order, verifier.
#include "core/Graph.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"
#include "core/text/IrParser.h"

#include <QtTest/QtTest>

using namespace fb;

class TestGraph : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Binding N turns every type static; an unnamed symbol stays; the interpreter agrees.
  void specializeDimsBindsTheBatch() {
    auto g = parseGraph(R"(graph @t opset 17 {
  input %x : f32[N, 3, H]
  const %w : f32[3, 3] = dense<[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]>
  %t : f32[N, H, 3] = Transpose(%x) {perm = [0, 2, 1]}  #1 "t"
  %y : f32[N, H, 3] = MatMul(%t, %w)  #2 "mm"
  output %y
}
)");
    QVERIFY(g.ok());
    QVERIFY(specializeDims(**g, {{"N", 4}}).ok());
    QCOMPARE((*g)->inputs()[0]->type().str(), std::string("f32[4, 3, H]"));
    QCOMPARE((*g)->outputs()[0]->type().str(), std::string("f32[4, H, 3]"));
    QVERIFY(specializeDims(**g, {{"H", 7}}).ok());
    QCOMPARE((*g)->outputs()[0]->type().str(), std::string("f32[4, 7, 3]"));
    QVERIFY(verify(**g).ok());
  }

  void buildAndUses() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
    Node* a = g.addNode(OpKind::Relu, {x}, 1, {"a"});
    Node* b = g.addNode(OpKind::Neg, {a->output(0)}, 1, {"b"});
    g.addOutput(b->output(0));
    QCOMPARE(x->uses().size(), size_t(1));
    QCOMPARE(a->output(0)->uses()[0].user, b);
    QVERIFY(a->id() != b->id());
    Node* c = g.addNode(OpKind::Abs, {x}, 1, {"c"});
    a->output(0)->replaceAllUsesWith(c->output(0));
    QVERIFY(!a->output(0)->hasUses());
    QCOMPARE(b->input(0), c->output(0));
    g.eraseNode(a);
    QCOMPARE(g.numNodes(), size_t(2));
    // c was appended after b but b now reads c: the sort must move c first.
    QVERIFY(g.topologicalSort().ok());
    QCOMPARE(g.nodes()[0].get(), c);
  }

  void cloneKeepsIdsAndSharesConstants() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2}));
    Value* w = g.addConstant("w", Tensor::fromVector<float>({2}, {1.f, 2.f}));
    Node* n = g.addNode(OpKind::Add, {x, w}, 1, {"y"}, "add0");
    n->setProvenance({7, 3, 7});
    g.addOutput(n->output(0));
    auto c = g.clone();
    QCOMPARE(c->nodes()[0]->id(), n->id());
    QCOMPARE(c->nodes()[0]->name(), std::string("add0"));
    QCOMPARE(c->nodes()[0]->provenance(), (std::vector<NodeId>{3, 7}));
    QVERIFY(c->constants()[0]->constantData().sharesStorageWith(w->constantData()));
    // Writing the clone's constant detaches it (copy on write).
    Tensor t = c->constants()[0]->constantData();
    t.mutableData<float>()[0] = 5.f;
    QCOMPARE(w->constantData().data<float>()[0], 1.f);
    // New ids continue after the cloned ones.
    QVERIFY(c->allocateNodeId() > n->id());
  }

  void verifierFindsCycle() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2}));
    Node* a = g.addNode(OpKind::Add, {x, x}, 1, {"a"});
    Node* b = g.addNode(OpKind::Add, {a->output(0), x}, 1, {"b"});
    a->setInput(1, b->output(0)); // a reads b, b reads a
    g.addOutput(b->output(0));
    Status st = verify(g, {/*checkTypes=*/false});
    QVERIFY(!st.ok());
    QVERIFY(st.error().message().find("before it is defined") != std::string::npos);
    Status sorted = g.topologicalSort();
    QVERIFY(!sorted.ok());
    QVERIFY(sorted.error().message().find("cycle") != std::string::npos);
  }

  void verifierChecksArity() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2}));
    Node* n = g.addNode(OpKind::Relu, {x, x}, 1, {"y"});
    g.addOutput(n->output(0));
    Status st = verify(g, {/*checkTypes=*/false});
    QVERIFY(!st.ok());
    QVERIFY(st.error().message().find("Relu takes 1") != std::string::npos);
  }

  void halfConversions() {
    for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 0.1f}) {
      f16_t h(f);
      QCOMPARE(f16_t(float(h)).bits, h.bits); // exact round trip through float
    }
    QCOMPARE(float(f16_t(1.f)), 1.f);
    QCOMPARE(f16_t(65520.f).bits, uint16_t(0x7c00)); // overflow to inf
    QCOMPARE(float(bf16_t(1.f)), 1.f);
    QCOMPARE(bf16_t(1.00390625f).bits, uint16_t(0x3f80)); // ties to even
  }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "TestGraph.moc"
