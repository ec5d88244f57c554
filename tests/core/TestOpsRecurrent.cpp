// Tests of the recurrent ops RNN, GRU and LSTM: interpreter results against references computed
// by NumPy (tests/core/data/gen_recurrent_cases.py: bidirectional, sequence_lens, initial
// states, peepholes, layout=1, clip, input_forget, linear_before_reset, activations with
// parameters), inferred types, the errors for bad attributes and shapes, the text IR round trip
// and the inspector's explanation.
#include "core/Graph.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/ops/RecurrentSpec.h"
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"
#include "tests/core/OpTestUtil.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::test;

namespace {

/// One operand of a case: absent, or f32 (i32 for sequence_lens) data.
struct CaseInput {
  bool present;
  bool isInt;
  std::vector<int64_t> sizes;
  std::vector<double> data;
};
struct CaseOutput {
  std::vector<int64_t> sizes;
  std::vector<double> data;
};
struct RecurrentCase {
  const char* name;
  OpKind op;
  std::vector<std::pair<std::string, AttrValue>> attrs;
  std::vector<CaseInput> inputs;
  std::vector<CaseOutput> outputs;
};

const std::vector<RecurrentCase>& cases() {
  static const std::vector<RecurrentCase> all = {
#include "tests/core/RecurrentCases.inc"
  };
  return all;
}

Tensor tensorOf(const CaseInput& in) {
  Tensor t(in.isInt ? DType::I32 : DType::F32, in.sizes);
  for (size_t i = 0; i < in.data.size(); ++i)
    t.setFromDouble(int64_t(i), in.data[i]);
  return t;
}

/// A graph of one recurrent node over the case's inputs (all graph inputs) with all outputs.
std::unique_ptr<Graph> graphOf(const RecurrentCase& c, std::vector<Tensor>& feeds) {
  auto g = std::make_unique<Graph>("rnn");
  std::vector<Value*> ins;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].present) {
      ins.push_back(nullptr);
      continue;
    }
    Tensor t = tensorOf(c.inputs[i]);
    ins.push_back(g->addInput("x" + std::to_string(i), t.type()));
    feeds.push_back(t);
  }
  Node* n = g->addNode(c.op, ins, c.outputs.size(), {}, c.name);
  for (const auto& [k, v] : c.attrs)
    n->attrs().set(k, v);
  for (size_t i = 0; i < c.outputs.size(); ++i)
    g->addOutput(n->output(i));
  return g;
}

/// A small valid LSTM (seq 2, batch 1, input 2, hidden 3) for the error tests; `mutate` edits
/// it before inference.
Expected<std::unique_ptr<Graph>> lstm(const std::function<void(Graph&, Node&)>& mutate) {
  auto g = std::make_unique<Graph>("e");
  Value* x = g->addInput("X", TensorType::of(DType::F32, {2, 1, 2}));
  Value* w = g->addInput("W", TensorType::of(DType::F32, {1, 12, 2}));
  Value* r = g->addInput("R", TensorType::of(DType::F32, {1, 12, 3}));
  Node* n = g->addNode(OpKind::LSTM, {x, w, r}, 3, {"Y", "Y_h", "Y_c"}, "lstm");
  for (size_t i = 0; i < 3; ++i)
    g->addOutput(n->output(i));
  mutate(*g, *n);
  FB_TRY(inferShapes(*g));
  return g;
}

/// The error of a graph that must fail to infer ("(no error)" when it does not).
Error errorOf(const Expected<std::unique_ptr<Graph>>& g) {
  return g.ok() ? makeError("(no error)") : g.error();
}

} // namespace

class TestOpsRecurrent : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void againstNumPy_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < cases().size(); ++i)
      QTest::newRow(cases()[i].name) << int(i);
  }

  void againstNumPy() {
    QFETCH(int, index);
    const RecurrentCase& c = cases()[size_t(index)];
    std::vector<Tensor> feeds;
    auto g = graphOf(c, feeds);
    Status st = inferShapes(*g);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());
    auto r = interpret(*g, feeds);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE(r->outputs.size(), c.outputs.size());
    for (size_t o = 0; o < c.outputs.size(); ++o) {
      QCOMPARE(r->outputs[o].sizes(), c.outputs[o].sizes);
      QCOMPARE(g->outputs()[o]->type(), TensorType::of(DType::F32, c.outputs[o].sizes));
      QVERIFY2(near(values(r->outputs[o]), c.outputs[o].data, 1e-5),
               (std::string(c.name) + " output " + std::to_string(o)).c_str());
    }
  }

  /// The cases cover what the brief asks for.
  void coverage() {
    auto hasAttr = [](const RecurrentCase& c, const char* name, const AttrValue& v) {
      for (const auto& [k, a] : c.attrs)
        if (k == name && attrEquals(a, v))
          return true;
      return false;
    };
    bool bidir = false, lens = false, init = false, peep = false, layout1 = false;
    for (const RecurrentCase& c : cases()) {
      bidir |= hasAttr(c, "direction", std::string("bidirectional"));
      layout1 |= hasAttr(c, "layout", int64_t(1));
      lens |= c.inputs.size() > 4 && c.inputs[4].present;
      init |= c.inputs.size() > 5 && c.inputs[5].present;
      peep |= c.inputs.size() > 7 && c.inputs[7].present;
    }
    QVERIFY(bidir && lens && init && peep && layout1);
  }

  void inferredTypes() {
    // layout 1 with symbolic batch: Y [N, seq, 2, H], Y_h [N, 2, H].
    Graph g("t");
    Value* x = g.addInput("X", TensorType(DType::F32, {Dim::symbol("N"), 5, 4}));
    Value* w = g.addInput("W", TensorType::of(DType::F32, {2, 9, 4}));
    Value* r = g.addInput("R", TensorType::of(DType::F32, {2, 9, 3}));
    Node* n = g.addNode(OpKind::GRU, {x, w, r}, 2, {"Y", "Y_h"}, "gru");
    n->attrs() = attrs({{"direction", std::string("bidirectional")}, {"layout", int64_t(1)}});
    g.addOutput(n->output(0));
    g.addOutput(n->output(1));
    Status st = inferShapes(g);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());
    QCOMPARE(n->output(0)->type(), TensorType(DType::F32, {Dim::symbol("N"), 5, 2, 3}));
    QCOMPARE(n->output(1)->type(), TensorType(DType::F32, {Dim::symbol("N"), 2, 3}));
  }

  void errors() {
    auto bad = [](const char* attr, AttrValue v) {
      return errorOf(lstm([&](Graph&, Node& n) { n.attrs().set(attr, v); }));
    };
    QVERIFY(contains(bad("direction", std::string("sideways")), "'direction' is 'sideways'"));
    QVERIFY(contains(bad("activations", std::vector<std::string>{"Sigmoid", "Gelu", "Tanh"}),
                     "activation 'Gelu' is not supported"));
    QVERIFY(contains(bad("activations", std::vector<std::string>{"Sigmoid"}),
                     "'activations' has 1 names"));
    QVERIFY(contains(bad("layout", int64_t(2)), "'layout' is 2"));
    QVERIFY(contains(bad("hidden_size", int64_t(4)), "input 1 (W) must have shape [1, 16, 2]"));
    QVERIFY(contains(bad("clip", -1.0f), "'clip' is -1"));
    QVERIFY(contains(bad("linear_before_reset", int64_t(1)), "only on GRU"));
    // Every message names the node and op.
    QVERIFY(contains(bad("layout", int64_t(2)), "lstm"));
    auto wrongR = lstm([](Graph& g, Node& n) {
      n.attrs().set("hidden_size", int64_t(3));
      n.setInput(2, g.addInput("R2", TensorType::of(DType::F32, {1, 12, 4})));
    });
    QVERIFY(contains(errorOf(wrongR), "input 2 (R) must have shape [1, 12, 3]"));
    Graph lg("lens");
    Value* x = lg.addInput("X", TensorType::of(DType::F32, {2, 1, 2}));
    Value* w = lg.addInput("W", TensorType::of(DType::F32, {1, 12, 2}));
    Value* r0 = lg.addInput("R", TensorType::of(DType::F32, {1, 12, 3}));
    Value* lens = lg.addInput("L", TensorType::of(DType::I64, {1}));
    lg.addOutput(lg.addNode(OpKind::LSTM, {x, w, r0, nullptr, lens}, 1, {"Y"}, "lstm")->output(0));
    Status lst = inferShapes(lg);
    QVERIFY(!lst.ok());
    QVERIFY(contains(lst.error(), "sequence_lens) must be i32"));
    // A sequence length beyond the sequence is an error at run time.
    std::vector<Tensor> feeds;
    const RecurrentCase& c = cases()[2]; // lstm_sequence_lens
    auto g = graphOf(c, feeds);
    QVERIFY(inferShapes(*g).ok());
    feeds[4] = Tensor::fromVector<int32_t>({2}, {3, 4}); // X, W, R, B, sequence_lens
    auto r = interpret(*g, feeds);
    QVERIFY(!r.ok());
    QVERIFY(contains(r.error(), "sequence_lens[1] is 4, outside [0, seq_length = 3]"));
  }

  void textRoundTrip() {
    std::vector<Tensor> feeds;
    auto g = graphOf(cases()[4], feeds); // lstm_activations: string list and float list attrs
    QVERIFY(inferShapes(*g).ok());
    const std::string text = printGraph(*g);
    auto parsed = parseGraph(text);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
    QCOMPARE(printGraph(**parsed), text);
    QVERIFY(text.find("HardSigmoid") != std::string::npos);
  }

  void explanation() {
    std::vector<Tensor> feeds;
    auto g = graphOf(cases()[1], feeds); // bidirectional LSTM with peepholes, hidden 3
    QVERIFY(inferShapes(*g).ok());
    const std::string e = explainRecurrentNode(*g->nodes()[0]);
    for (const char* want : {"i_t = f(", "f_t = f(", "o_t = f(", "c_t = f_t ⊙ c_{t-1} + i_t ⊙ c̃_t",
                             "Hidden size 3", "bidirectional", "Pi⊙c_{t-1}", "f = Sigmoid"})
      QVERIFY2(e.find(want) != std::string::npos, (e + "\nlacks: " + want).c_str());
    auto gru = graphOf(cases()[6], feeds); // linear_before_reset
    QVERIFY(inferShapes(*gru).ok());
    QVERIFY(explainRecurrentNode(*gru->nodes()[0]).find("linear_before_reset") !=
            std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestOpsRecurrent)
#include "TestOpsRecurrent.moc"
