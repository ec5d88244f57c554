// Tests of the numeric diff: value matching, per-value errors, and the first divergent node,
// including fused groups compared only at their boundary.
#include "core/NumericDiff.h"
#include "core/ShapeInference.h"
#include "core/text/IrParser.h"

#include <QtTest/QtTest>

using namespace fb;

namespace {

std::unique_ptr<Graph> parse(const std::string& text) {
  auto g = parseGraph(text, "<test>");
  if (!g.ok())
    qFatal("parse: %s", g.error().message().c_str());
  return std::move(g).value();
}

const ValueComparison* findValue(const NumericDiff& d, const std::string& name) {
  for (const ValueComparison& c : d.values)
    if (c.value == name)
      return &c;
  return nullptr;
}

/// x = [[1, -2, 3], [-4, 5, -6]] / 4: exact in binary, so expected errors are exact too.
Tensor sampleInput() {
  return Tensor::fromVector<float>({2, 3}, {0.25f, -0.5f, 0.75f, -1.f, 1.25f, -1.5f});
}

const char* kChain = R"(graph @chain opset 17 {
  input %x : f32[2, 3]
  const %c : f32[3] = dense<[1.0, 2.0, 3.0]>
  %n : f32[2, 3] = Abs(%x)  #1
  %a : f32[2, 3] = Add(%n, %c)  #2
  %m : f32[2, 3] = Mul(%a, %n)  #3
  %r : f32[2, 3] = Relu(%m)  #4
  output %r
}
)";

/// MatMul #1 → Relu #2 → Neg #3, with the weights as a constant.
std::unique_ptr<Graph> buildUnfused() {
  return parse(R"(graph @mlp opset 17 {
  input %x : f32[2, 3]
  const %w : f32[3, 2] = dense<[1.0, -1.0, 2.0, -2.0, 0.5, 0.5]>
  %m : f32[2, 2] = MatMul(%x, %w)  #1
  %r : f32[2, 2] = Relu(%m)  #2
  %n : f32[2, 2] = Neg(%r)  #3
  output %n
}
)");
}

/// The same computation with MatMul and Relu in a fused group built through the Graph API; the
/// body's nodes get new ids and name the originals in their provenance, as the fuse pass does.
/// With `wrongActivation` the body computes Abs instead of Relu (a miscompiled fusion).
std::unique_ptr<Graph> buildFused(bool wrongActivation) {
  auto g = std::make_unique<Graph>("mlp");
  Value* x = g->addInput("x", TensorType::of(DType::F32, {2, 3}));
  Value* w =
      g->addConstant("w", Tensor::fromVector<float>({3, 2}, {1.f, -1.f, 2.f, -2.f, 0.5f, 0.5f}));
  auto body = std::make_unique<Graph>("body");
  Value* p0 = body->addInput("p0", TensorType::of(DType::F32, {2, 3}));
  Value* p1 = body->addInput("p1", TensorType::of(DType::F32, {3, 2}));
  Node* mm = body->addNodeWithId(10, OpKind::MatMul, {p0, p1}, 1, {"mm"}, "");
  mm->setProvenance({1});
  Node* act = body->addNodeWithId(11, wrongActivation ? OpKind::Abs : OpKind::Relu, {mm->output(0)},
                                  1, {"act"}, "");
  act->setProvenance({2});
  body->addOutput(act->output(0));
  g->reserveNodeId(11);
  Node* group = g->addNodeWithId(9, OpKind::Fused, {x, w}, 1, {"g"}, "fused_matmul_relu");
  group->setProvenance({1, 2});
  group->setBody(std::move(body));
  Node* neg = g->addNodeWithId(3, OpKind::Neg, {group->output(0)}, 1, {"n"}, "");
  g->addOutput(neg->output(0));
  Status st = inferShapes(*g);
  if (!st.ok())
    qFatal("inferShapes: %s", st.error().message().c_str());
  return g;
}

} // namespace

class TestNumericDiff : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void identicalGraphsAgree() {
    auto a = parse(kChain);
    auto b = parse(kChain);
    auto d = numericDiff(*a, *b, {sampleInput()}, 0, 0);
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().message().c_str());
    QVERIFY(d->ok());
    QVERIFY(!d->firstDivergent);
    QVERIFY(d->unmatched.empty());
    QCOMPARE(d->values.size(), size_t(4));
    for (const ValueComparison& c : d->values) {
      QVERIFY(c.ok);
      QCOMPARE(c.maxAbs, 0.0);
      QCOMPARE(c.cosine, 1.0);
      QCOMPARE(c.value, c.reference);
    }
    QCOMPARE(d->values[0].value, std::string("n"));
    // An untouched original node: matched as itself (names are never trusted; see below).
    QCOMPARE(d->values[0].match, ValueMatch::NodeId);
    QCOMPARE(d->values[3].value, std::string("r"));
    QCOMPARE(d->values[3].match, ValueMatch::GraphOutput);
  }

  void perturbedConstantLocalizesTheAdd() {
    auto a = parse(kChain);
    std::string text = kChain;
    text.replace(text.find("dense<[1.0, 2.0, 3.0]>"), 22, "dense<[1.0, 2.5, 3.0]>");
    auto b = parse(text);
    auto d = numericDiff(*a, *b, {sampleInput()}, 1e-6, 1e-6);
    QVERIFY(d.ok());
    QVERIFY(!d->ok());
    QCOMPARE(d->firstDivergent.value_or(0), NodeId(2));
    // Abs, before the change, still agrees.
    QVERIFY(findValue(*d, "n")->ok);
    // Add: column 1 is 0.5 larger; |n| there is 0.5 and 1.25, so a = 2.5, 3.25 → 3.0, 3.75.
    const ValueComparison* add = findValue(*d, "a");
    QVERIFY(!add->ok);
    QCOMPARE(add->producer, NodeId(2));
    QCOMPARE(add->maxAbs, 0.5);
    QCOMPARE(add->maxRel, 0.2); // 0.5 / 2.5
    QVERIFY(add->cosine < 1.0 && add->cosine > 0.9);
    // Downstream values diverge too: m = a * n, so the change is 0.5 * |n| (largest 0.625).
    const ValueComparison* mul = findValue(*d, "m");
    QVERIFY(!mul->ok);
    QCOMPARE(mul->maxAbs, 0.625);
    const ValueComparison* out = findValue(*d, "r");
    QVERIFY(!out->ok);
    QCOMPARE(out->match, ValueMatch::GraphOutput);
    QCOMPARE(d->valuesOf(4).size(), size_t(1));
    // A tolerance wider than the change accepts it.
    auto loose = numericDiff(*a, *b, {sampleInput()}, 1.0, 0);
    QVERIFY(loose.ok());
    QVERIFY(loose->ok());
  }

  void fusedGroupComparedAtItsBoundary() {
    auto a = buildUnfused();
    auto b = buildFused(/*wrongActivation=*/false);
    auto d = numericDiff(*a, *b, {sampleInput()}, 1e-6, 1e-6);
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().message().c_str());
    QVERIFY(d->ok());
    QVERIFY(d->unmatched.empty());
    // Only the group's output and the Neg: the body's MatMul result is never compared.
    QCOMPARE(d->values.size(), size_t(2));
    const ValueComparison* g = findValue(*d, "g");
    QVERIFY(g);
    QCOMPARE(g->producer, NodeId(9));
    QCOMPARE(g->reference, std::string("r")); // Relu #2, the last op the group replaced
    QCOMPARE(g->match, ValueMatch::Provenance);
    QVERIFY(!findValue(*d, "mm"));
    QVERIFY(!findValue(*d, "act"));
  }

  void miscompiledFusionIsTheFirstDivergentNode() {
    auto a = buildUnfused();
    auto b = buildFused(/*wrongActivation=*/true);
    auto d = numericDiff(*a, *b, {sampleInput()}, 1e-6, 1e-6);
    QVERIFY(d.ok());
    QCOMPARE(d->firstDivergent.value_or(0), NodeId(9));
    // x·w = [[-0.375, 1.125], [0.75, -2.25]]: Relu zeroes the negatives, Abs flips them.
    const ValueComparison* g = findValue(*d, "g");
    QVERIFY(!g->ok);
    QCOMPARE(g->maxAbs, 2.25);
    QVERIFY(!findValue(*d, "n")->ok);
  }

  void newValuesAreUnmatched() {
    auto a = parse(kChain);
    std::string text = kChain;
    text.replace(text.find("  output %r"), 0, "  %z : f32[2, 3] = Neg(%x)  #20\n");
    auto b = parse(text);
    auto d = numericDiff(*a, *b, {sampleInput()}, 0, 0);
    QVERIFY(d.ok());
    QVERIFY(d->ok());
    QCOMPARE(d->unmatched, std::vector<std::string>{"z"});
  }

  void aNameThatOutlivesItsMeaningIsNotMatched() {
    // After the rewrite, the Add #6 carries the Abs's output name %n but computes what Add #2
    // computed (it was made from #1 and #2). Matching by name would compare it with |x| and cry
    // wolf; matching by meaning compares it with %a.
    auto a = parse(kChain);
    const std::string rewritten = R"(graph @chain opset 17 {
  input %x : f32[2, 3]
  const %c : f32[3] = dense<[1.0, 2.0, 3.0]>
  %t : f32[2, 3] = Abs(%x)  #5 from(#1)
  %n : f32[2, 3] = Add(%t, %c)  #6 from(#1, #2)
  %m : f32[2, 3] = Mul(%n, %t)  #3
  %r : f32[2, 3] = Relu(%m)  #4
  output %r
}
)";
    auto b = parse(rewritten);
    auto d = numericDiff(*a, *b, {sampleInput()}, 0, 0);
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().message().c_str());
    QVERIFY2(d->ok(), "a correct rewrite is reported as divergent");
    const ValueComparison* n = findValue(*d, "n");
    QVERIFY(n);
    QCOMPARE(n->reference, std::string("a"));
    QCOMPARE(n->match, ValueMatch::Provenance);
    QCOMPARE(findValue(*d, "t")->reference, std::string("n")); // Abs #5 stands for Abs #1

    // The same graph with the Add miscompiled (a Sub) is caught at #6.
    std::string miscompiled = rewritten;
    miscompiled.replace(miscompiled.find("Add(%t, %c)"), 3, "Sub");
    auto wrong = parse(miscompiled);
    auto w = numericDiff(*a, *wrong, {sampleInput()}, 0, 0);
    QVERIFY(w.ok());
    QCOMPARE(w->firstDivergent.value_or(0), NodeId(6));
  }

  void aSplitOpIsComparedAtItsLastPart() {
    // Gemm #1 rewritten as MatMul and Add, both made from #1: only the Add completes the
    // Gemm's result; the MatMul's partial result is unmatched, not a false alarm.
    auto a = parse(R"(graph @g opset 17 {
  input %x : f32[2, 3]
  const %w : f32[3, 2] = dense<[1.0, -1.0, 2.0, -2.0, 0.5, 0.5]>
  const %b : f32[2] = dense<[10.0, 20.0]>
  %y : f32[2, 2] = Gemm(%x, %w, %b)  #1
  %r : f32[2, 2] = Relu(%y)  #2
  output %r
}
)");
    auto b = parse(R"(graph @g opset 17 {
  input %x : f32[2, 3]
  const %w : f32[3, 2] = dense<[1.0, -1.0, 2.0, -2.0, 0.5, 0.5]>
  const %b : f32[2] = dense<[10.0, 20.0]>
  %y : f32[2, 2] = MatMul(%x, %w)  #7 from(#1)
  %s : f32[2, 2] = Add(%y, %b)  #8 from(#1)
  %r : f32[2, 2] = Relu(%s)  #2
  output %r
}
)");
    auto d = numericDiff(*a, *b, {sampleInput()}, 1e-6, 1e-6);
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().message().c_str());
    QVERIFY(d->ok());
    QCOMPARE(findValue(*d, "s")->reference, std::string("y"));
    QVERIFY(!findValue(*d, "y"));
    QCOMPARE(d->unmatched, std::vector<std::string>{"y"});
  }

  void failingRunNamesTheGraph() {
    auto a = parse(kChain);
    auto b = parse(kChain);
    auto d = numericDiff(*a, *b, {}, 0, 0);
    QVERIFY(!d.ok());
    QVERIFY(d.error().message().find("reference graph 'chain'") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestNumericDiff)
#include "TestNumericDiff.moc"
