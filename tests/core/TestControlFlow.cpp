// Tests of If, Loop and Scan: ONNX import with captured outer values, text IR and ONNX round
// trips, shape inference (branch merge, loop-carried fixed point, scan lengths), the interpreter.
#include "core/ControlFlow.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"
#include "core/onnx/OnnxExport.h"
#include "core/onnx/OnnxImport.h"
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"

#include <QtTest/QtTest>

using namespace fb;

namespace {

const std::string kSample = std::string(FUSEBOX_CORE_TEST_DATA) + "/../../../samples/control_flow.onnx";

PrintOptions savedForm() {
  PrintOptions o;
  o.withResourceData = true;
  return o;
}

Node* findOp(const Graph& g, OpKind op) {
  for (const auto& n : g.nodes())
    if (n->op() == op)
      return n.get();
  return nullptr;
}

/// An If on input `c` whose branches return Identity(x) and Concat(x, x) along axis 1, so the
/// branch result types differ in one dim.
std::unique_ptr<Graph> makeIfWithDifferentShapes() {
  auto g = std::make_unique<Graph>("if_merge");
  Value* c = g->addInput("c", TensorType(DType::Bool, {}));
  Value* x = g->addInput("x", TensorType(DType::F32, {2, 3}));
  Node* n = g->addNode(OpKind::If, {c, x}, 1, {"y"});
  Graph* t = n->addBody("then_branch", std::make_unique<Graph>("then"));
  Value* tx = t->addInput("x", TensorType(DType::F32, {2, 3}));
  t->addOutput(t->addNode(OpKind::Identity, {tx}, 1, {"same"})->output(0));
  Graph* e = n->addBody("else_branch", std::make_unique<Graph>("else"));
  Value* ex = e->addInput("x", TensorType(DType::F32, {2, 3}));
  Node* cat = e->addNode(OpKind::Concat, {ex, ex}, 1, {"twice"});
  cat->attrs().set("axis", int64_t(1));
  e->addOutput(cat->output(0));
  g->addOutput(n->output(0));
  return g;
}

/// A Loop summing its iteration numbers: s += i, with every s stacked as a scan output.
/// `withCond` adds a condition operand (a graph input), which makes the trip count dynamic.
std::unique_ptr<Graph> makeSumLoop(bool withCond) {
  auto g = std::make_unique<Graph>("sum_loop");
  Value* m = g->addConstant("m", Tensor::scalar<int64_t>(4));
  Value* cond = withCond ? g->addInput("cond", TensorType(DType::Bool, {})) : nullptr;
  Value* s0 = g->addConstant("s0", Tensor::scalar<int64_t>(0));
  Node* n = g->addNode(OpKind::Loop, {m, cond, s0}, 2, {"s", "steps"});
  Graph* b = n->addBody("body", std::make_unique<Graph>("loop_body"));
  Value* i = b->addInput("i", TensorType(DType::I64, {}));
  Value* c = b->addInput("c", TensorType(DType::Bool, {}));
  Value* s = b->addInput("s_in", TensorType(DType::I64, {}));
  Value* next = b->addNode(OpKind::Add, {s, i}, 1, {"s_out"})->output(0);
  Value* scan = b->addNode(OpKind::Identity, {next}, 1, {"scan"})->output(0);
  b->setOutputs({c, next, scan});
  g->addOutput(n->output(0));
  g->addOutput(n->output(1));
  return g;
}

/// Scan: a running sum over the rows of x (scanned along axis 0, or backwards), each step
/// scaled by a captured outer value w; the sums are stacked as the scan output.
std::unique_ptr<Graph> makeScanSum(bool reverse) {
  auto g = std::make_unique<Graph>("scan_sum");
  Value* init = g->addInput("init", TensorType(DType::F32, {2}));
  Value* x = g->addInput("x", TensorType(DType::F32, {3, 2}));
  Value* w = g->addConstant("w", Tensor::fromVector<float>({2}, {1.0f, 10.0f}));
  Node* n = g->addNode(OpKind::Scan, {init, x, w}, 2, {"sum", "sums"});
  n->attrs().set("num_scan_inputs", int64_t(1));
  n->attrs().set(kCapturesAttr, int64_t(1));
  if (reverse)
    n->attrs().set("scan_input_directions", std::vector<int64_t>{1});
  Graph* b = n->addBody("body", std::make_unique<Graph>("scan_body"));
  Value* acc = b->addInput("acc", TensorType(DType::F32, {2}));
  Value* row = b->addInput("row", TensorType(DType::F32, {2}));
  Value* bw = b->addInput("w", TensorType(DType::F32, {2}));
  Value* scaled = b->addNode(OpKind::Mul, {row, bw}, 1, {"scaled"})->output(0);
  Value* next = b->addNode(OpKind::Add, {acc, scaled}, 1, {"next"})->output(0);
  Value* out = b->addNode(OpKind::Identity, {next}, 1, {"step"})->output(0);
  b->setOutputs({next, out});
  g->addOutput(n->output(0));
  g->addOutput(n->output(1));
  return g;
}

} // namespace

class TestControlFlow : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void importMakesCapturesExplicit() {
    auto g = importOnnxFile(kSample);
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QVERIFY(verify(**g).ok());
    Node* ifNode = findOp(**g, OpKind::If);
    QVERIFY(ifNode);
    // Operands: the condition, then the outer values the branches read (h, then b).
    QCOMPARE(ifNode->numInputs(), size_t(3));
    QCOMPARE(QString::fromStdString(ifNode->input(0)->name()), QStringLiteral("flag"));
    QCOMPARE(QString::fromStdString(ifNode->input(1)->name()), QStringLiteral("/fc/Relu_output_0"));
    QVERIFY(ifNode->input(2)->isConstant());
    QCOMPARE(ifNode->bodies().size(), size_t(2));
    // Both branches take every capture, in the same order, even the else branch (no b).
    for (const NodeBody& b : ifNode->bodies()) {
      QCOMPARE(b.graph->inputs().size(), size_t(2));
      QVERIFY(b.graph->inputs()[0]->name() == ifNode->input(1)->name());
    }
    QVERIFY(!ifNode->bodyNamed("else_branch")->inputs()[1]->hasUses());
    Node* loop = findOp(**g, OpKind::Loop);
    QVERIFY(loop);
    QCOMPARE(std::get<int64_t>(*loop->attrs().find(kCapturesAttr)), int64_t(1));
    auto l = controlFlowLayout(*loop);
    QVERIFY(l.ok());
    QCOMPARE(l->numCarried, size_t(1));
    QCOMPARE(l->numScanOutputs, size_t(1));
    QCOMPARE(QString::fromStdString(loop->input(l->firstCapture)->name()), QStringLiteral("w"));
    // A constant trip count and no condition: the scan output's length is static.
    QCOMPARE(QString::fromStdString(loop->output(1)->type().str()), QStringLiteral("f32[3, 1, 8]"));
    // Node ids are unique across the model and findNode sees bodies.
    for (const NodeBody& b : loop->bodies())
      for (const auto& n : b.graph->nodes())
        QCOMPARE((*g)->findNode(n->id()), n.get());
  }

  void textRoundTripIsExact() {
    auto g = importOnnxFile(kSample);
    QVERIFY(g.ok());
    const std::string text = printGraph(**g, savedForm());
    auto parsed = parseGraph(text);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
    QVERIFY(printGraph(**parsed, savedForm()) == text);
    QVERIFY(verify(**parsed).ok());
    QVERIFY(text.find("then_branch @then_body {") != std::string::npos);
    QVERIFY(text.find("{captures = 1}") != std::string::npos);
  }

  void onnxRoundTripKeepsIdsAndMeaning() {
    auto g = importOnnxFile(kSample);
    QVERIFY(g.ok());
    auto bytes = exportOnnxBytes(**g);
    QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().message().c_str());
    auto again = importOnnxBytes(*bytes, "", "exported");
    QVERIFY2(again.ok(), again.ok() ? "" : again.error().message().c_str());
    QCOMPARE(QString::fromStdString(printGraph(**again)), QString::fromStdString(printGraph(**g)));
  }

  void interpreterRunsBranchesAndLoops() {
    auto g = importOnnxFile(kSample);
    QVERIFY(g.ok());
    Tensor x = Tensor::fromVector<float>({1, 8}, {0.5f, -1, 2, 0, 1, -0.5f, 0.25f, 3});
    for (bool flag : {true, false}) {
      auto r = interpret(**g, {x, Tensor::scalar<bool>(flag)});
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
      QVERIFY((r->outputs[1].sizes()) == (std::vector<int64_t>{3, 1, 8}));
      // The last stacked step is the final carried value.
      auto last = r->outputs[1].data<float>().subspan(16, 8);
      auto fin = r->outputs[0].data<float>();
      for (size_t k = 0; k < 8; ++k)
        QCOMPARE(last[k], fin[k]);
    }
    auto sum = makeSumLoop(/*withCond=*/false);
    QVERIFY(inferShapes(*sum).ok());
    auto r = interpret(*sum, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE(r->outputs[0].data<int64_t>()[0], int64_t(6));
    auto steps = r->outputs[1].data<int64_t>();
    QVERIFY((std::vector<int64_t>(steps.begin(), steps.end())) == (std::vector<int64_t>{0, 1, 3, 6}));
    // With a false condition the body never runs: the carried value stays, no steps.
    auto condLoop = makeSumLoop(/*withCond=*/true);
    QVERIFY(inferShapes(*condLoop).ok());
    auto none = interpret(*condLoop, {Tensor::scalar<bool>(false)});
    QVERIFY(none.ok());
    QCOMPARE(none->outputs[0].data<int64_t>()[0], int64_t(0));
    QVERIFY((none->outputs[1].sizes()) == (std::vector<int64_t>{0}));
  }

  void ifMergesBranchTypes() {
    auto g = makeIfWithDifferentShapes();
    QVERIFY(inferShapes(*g).ok());
    QCOMPARE(QString::fromStdString(g->outputs()[0]->type().str()), QStringLiteral("f32[2, ?]"));
    QVERIFY(verify(*g).ok());
    auto r = interpret(*g, {Tensor::scalar<bool>(false), Tensor(DType::F32, {2, 3})});
    QVERIFY(r.ok());
    QVERIFY((r->outputs[0].sizes()) == (std::vector<int64_t>{2, 6}));
    // A constant condition picks one branch, whose type is exact.
    Value* c = g->addConstant("always", Tensor::scalar<bool>(true));
    g->nodes()[0]->setInput(0, c);
    QVERIFY(inferShapes(*g).ok());
    QCOMPARE(QString::fromStdString(g->outputs()[0]->type().str()), QStringLiteral("f32[2, 3]"));
  }

  void loopTypesReachAFixedPoint() {
    auto dynamic = makeSumLoop(/*withCond=*/true);
    QVERIFY(inferShapes(*dynamic).ok());
    QCOMPARE(QString::fromStdString(dynamic->outputs()[1]->type().str()), QStringLiteral("i64[?]"));
    auto fixed = makeSumLoop(/*withCond=*/false);
    QVERIFY(inferShapes(*fixed).ok());
    QCOMPARE(QString::fromStdString(fixed->outputs()[1]->type().str()), QStringLiteral("i64[4]"));
    // A carried value that grows each iteration (Concat with itself) loses its size.
    auto g = std::make_unique<Graph>("grow");
    Value* m = g->addConstant("m", Tensor::scalar<int64_t>(3));
    Value* v0 = g->addInput("v", TensorType(DType::F32, {2}));
    Node* n = g->addNode(OpKind::Loop, {m, nullptr, v0}, 1, {"v_final"});
    Graph* b = n->addBody("body", std::make_unique<Graph>("b"));
    b->addInput("i", TensorType(DType::I64, {}));
    Value* c = b->addInput("c", TensorType(DType::Bool, {}));
    Value* v = b->addInput("v_in", TensorType(DType::F32, {2}));
    Node* cat = b->addNode(OpKind::Concat, {v, v}, 1, {"v_out"});
    cat->attrs().set("axis", int64_t(0));
    b->setOutputs({c, cat->output(0)});
    g->addOutput(n->output(0));
    QVERIFY(inferShapes(*g).ok());
    QCOMPARE(QString::fromStdString(g->outputs()[0]->type().str()), QStringLiteral("f32[?]"));
    auto r = interpret(*g, {Tensor(DType::F32, {2})});
    QVERIFY(r.ok());
    QVERIFY((r->outputs[0].sizes()) == (std::vector<int64_t>{16}));
  }

  void scanSumsRowsForwardAndBackward() {
    for (bool reverse : {false, true}) {
      auto g = makeScanSum(reverse);
      QVERIFY(inferShapes(*g).ok());
      QVERIFY(verify(*g).ok());
      QCOMPARE(QString::fromStdString(g->outputs()[1]->type().str()), QStringLiteral("f32[3, 2]"));
      Tensor init = Tensor::fromVector<float>({2}, {0.5f, 0});
      Tensor x = Tensor::fromVector<float>({3, 2}, {1, 2, 3, 4, 5, 6});
      auto r = interpret(*g, {init, x});
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
      auto sums = r->outputs[1].data<float>();
      std::vector<float> want = reverse ? std::vector<float>{5.5f, 60, 8.5f, 100, 9.5f, 120}
                                        : std::vector<float>{1.5f, 20, 4.5f, 60, 9.5f, 120};
      QVERIFY(std::vector<float>(sums.begin(), sums.end()) == want);
      QCOMPARE(r->outputs[0].data<float>()[1], 120.0f);
      // Export writes the capture as a read of the outer name, and reads back the same graph.
      auto bytes = exportOnnxBytes(*g);
      QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().message().c_str());
      auto again = importOnnxBytes(*bytes, "", "scan");
      QVERIFY2(again.ok(), again.ok() ? "" : again.error().message().c_str());
      auto r2 = interpret(**again, {init, x});
      QVERIFY(r2.ok());
      QVERIFY(r2->outputs[1].identical(r->outputs[1]));
    }
  }

  void errorsNameTheNode() {
    auto g = makeIfWithDifferentShapes();
    // A branch with the wrong number of outputs.
    g->nodes()[0]->bodyNamed("then_branch")->addOutput(
        g->nodes()[0]->bodyNamed("then_branch")->inputs()[0]);
    Status st = inferShapes(*g);
    QVERIFY(!st.ok());
    QVERIFY2(st.error().message().find("(If)") != std::string::npos, st.error().message().c_str());
    QVERIFY(!verify(*g, {/*checkTypes=*/false}).ok());
    // A body may not read a value of the enclosing graph directly.
    auto parsed = parseGraph("graph @g opset 17 {\n  input %c : bool[]\n  input %x : f32[2]\n"
                             "  %y : f32[2] = If(%c)  #1 {\n    then_branch {\n"
                             "      %a : f32[2] = Neg(%x)  #2\n      output %a\n    }\n"
                             "    else_branch {\n      output %x\n    }\n  }\n  output %y\n}\n");
    QVERIFY(!parsed.ok());
    QVERIFY2(parsed.error().message().find("undefined value %x") != std::string::npos,
             parsed.error().message().c_str());
  }
};

QTEST_GUILESS_MAIN(TestControlFlow)
#include "TestControlFlow.moc"
