// Tests of the text IR: exact print/parse round trips, the printed format, and parse errors.
#include "core/Graph.h"
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"
#include "core/text/TextSyntax.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <random>

using namespace fb;

namespace {

PrintOptions savedForm() {
  PrintOptions o;
  o.withResourceData = true;
  return o;
}

std::string names(const std::vector<Value*>& values) {
  std::string s;
  for (const Value* v : values)
    s += (v ? v->name() : std::string("_")) + ",";
  return s;
}

/// Compares two graphs field by field; returns "" when equal, else what differs.
std::string diffGraphs(const Graph& a, const Graph& b) {
  if (a.name() != b.name())
    return "graph name " + a.name() + " vs " + b.name();
  if (a.opset() != b.opset())
    return "opset";
  if (names(a.inputs()) != names(b.inputs()) || names(a.outputs()) != names(b.outputs()) ||
      names(a.constants()) != names(b.constants()))
    return "inputs, outputs or constants of " + a.name();
  for (size_t i = 0; i < a.inputs().size(); ++i)
    if (a.inputs()[i]->type() != b.inputs()[i]->type())
      return "type of input " + a.inputs()[i]->name();
  for (size_t i = 0; i < a.constants().size(); ++i) {
    const Value* ca = a.constants()[i];
    const Value* cb = b.constants()[i];
    if (ca->type() != cb->type())
      return "type of constant " + ca->name() + ": " + ca->type().str() + " vs " + cb->type().str();
    if (!ca->constantData().identical(cb->constantData()))
      return "data of constant " + ca->name();
  }
  if (a.numNodes() != b.numNodes())
    return "node count";
  for (size_t i = 0; i < a.numNodes(); ++i) {
    const Node& na = *a.nodes()[i];
    const Node& nb = *b.nodes()[i];
    if (na.id() != nb.id() || na.op() != nb.op() || na.name() != nb.name())
      return "node " + na.describe() + " vs " + nb.describe();
    if (!(na.attrs() == nb.attrs()))
      return "attributes of " + na.describe();
    if (na.provenance() != nb.provenance())
      return "provenance of " + na.describe();
    if (names(na.inputs()) != names(nb.inputs()) || names(na.outputs()) != names(nb.outputs()))
      return "operands or results of " + na.describe();
    for (size_t k = 0; k < na.numOutputs(); ++k)
      if (na.output(k)->type() != nb.output(k)->type())
        return "type of " + na.output(k)->name();
    if (bool(na.body()) != bool(nb.body()))
      return "body presence of " + na.describe();
    if (na.body()) {
      std::string inner = diffGraphs(*na.body(), *nb.body());
      if (!inner.empty())
        return "in body of " + na.describe() + ": " + inner;
    }
  }
  return "";
}

/// A graph that uses every feature of the format: symbolic and unknown dims, quantized types,
/// every attribute kind (empty lists too), inline and resource constants of every dtype, absent
/// inputs, multiple results, names that need quoting, provenance and nested fused groups.
std::unique_ptr<Graph> buildRichGraph() {
  auto g = std::make_unique<Graph>("rich model");
  g->setOpset(17);
  Value* x = g->addInput("x", TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
  TensorType qt(DType::I8, {Dim(), Dim(3)});
  qt.quant = QuantParams{{0.5f, 0.25f, 0.1f}, {0, 1, -128}, 1};
  Value* q = g->addInput("onnx::q/in.0", qt);
  Value* odd = g->addInput("weird \"name\"\n", TensorType(DType::F32, {Dim::symbol("batch size"),
                                                                       Dim::symbol("?"), Dim(2)}));
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  Value* w = g->addConstant(
      "fc1.weight", Tensor::fromVector<float>({4, 4}, {1.f, -0.f, 0.1f, 1e-5f, 3.4028235e38f,
                                                       1.4e-45f, inf, -inf, nan, 2.f, 0.5f, 7.f,
                                                       -1.f, 1e10f, 123456.79f, 1.f / 3}));
  std::vector<float> bigData(25);
  for (size_t i = 0; i < bigData.size(); ++i)
    bigData[i] = float(i) * 0.37f - 3.f;
  Value* big = g->addConstant("big", Tensor::fromVector<float>({5, 5}, bigData));
  g->addConstant("shape", Tensor::fromVector<int64_t>({2}, {1, -1}));
  g->addConstant("limits", Tensor::fromVector<int64_t>({2}, {std::numeric_limits<int64_t>::min(),
                                                            std::numeric_limits<int64_t>::max()}));
  g->addConstant("mask", Tensor::fromVector<bool>({3}, {true, false, true}));
  g->addConstant("half", Tensor::fromVector<f16_t>({3}, {f16_t(0.1f), f16_t(65504.f),
                                                         f16_t(5.9604645e-08f)}));
  g->addConstant("brain", Tensor::fromVector<bf16_t>({2}, {bf16_t(0.1f), bf16_t(-3e38f)}));
  g->addConstant("bytes", Tensor::fromVector<uint8_t>({2}, {0, 255}));
  g->addConstant("i32s", Tensor::fromVector<int32_t>({2}, {-2147483647 - 1, 2147483647}));
  g->addConstant("scalar", Tensor::scalar<float>(2.5f));
  g->addConstant("empty", Tensor(DType::F32, {0, 3}));
  std::vector<int8_t> bigInts(40);
  for (size_t i = 0; i < bigInts.size(); ++i)
    bigInts[i] = int8_t(int(i) * 7 - 100);
  Value* qw = g->addConstant("/quant weight", Tensor::fromVector<int8_t>({40}, bigInts));
  TensorType qwt = qw->type();
  qwt.quant = QuantParams{{0.02f}, {3}, std::nullopt};
  qw->setType(qwt);
  Tensor bigBool(DType::Bool, {20});
  for (int64_t i = 0; i < 20; ++i)
    bigBool.mutableData<bool>()[size_t(i)] = i % 3 == 0;
  g->addConstant("bigmask", bigBool);

  Node* gemm = g->addNode(OpKind::Gemm, {x, w, big}, 1, {"h"}, "/fc1/Gemm");
  gemm->output(0)->setType(TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
  AttrMap& at = gemm->attrs();
  at.set("transB", int64_t(1));
  at.set("negative", int64_t(-42));
  at.set("alpha", 1.0f);
  at.set("beta", 0.1f);
  at.set("eps", 1e-5f);
  at.set("hi", inf);
  at.set("lo", -inf);
  // No NaN attribute here: AttrMap's == compares floats with ==; nanAttributes covers NaN.
  at.set("mode", std::string("say \"hi\"\\\n\t\x01 ü"));
  at.set("ints", std::vector<int64_t>{1, -2, 3});
  at.set("floats", std::vector<float>{1.f, 0.25f, -1e-7f});
  at.set("strings", std::vector<std::string>{"a", "", "b c"});
  at.set("no_ints", std::vector<int64_t>{});
  at.set("no_floats", std::vector<float>{});
  at.set("no_strings", std::vector<std::string>{});
  at.set("value", Tensor::fromVector<float>({2}, {1.5f, -2.f}));
  at.set("table", Tensor::fromVector<int64_t>({20}, std::vector<int64_t>(20, 9)));
  at.set("weird key", int64_t(0));

  Node* clip = g->addNode(OpKind::Clip, {gemm->output(0), nullptr, odd}, 1, {"onnx::Clip_0"});
  clip->output(0)->setType(TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
  clip->setProvenance({1, 7, 3});
  Node* split = g->addNode(OpKind::Split, {clip->output(0)}, 2, {"a", "b b"});
  split->output(0)->setType(TensorType::of(DType::F32, {2}));
  split->output(1)->setType(TensorType::of(DType::F32, {2}));
  split->attrs().set("axis", int64_t(0));

  // A fused group whose body has its own "big" constant (a resource key collision) and a
  // nested group.
  Node* fused = g->addNode(OpKind::Fused, {clip->output(0), q}, 1, {"g"}, "fused_gemm_relu");
  fused->output(0)->setType(TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
  fused->setProvenance({gemm->id(), clip->id()});
  fused->setBody(std::make_unique<Graph>("main"));
  Graph* body = fused->body();
  Value* p0 = body->addInput("p0", TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
  Value* p1 = body->addInput("p1", qt);
  Value* bodyBig = body->addConstant("big", Tensor::fromVector<float>({5, 5}, bigData));
  Node* relu = body->addNode(OpKind::Relu, {p0}, 1, {"r"});
  relu->output(0)->setType(p0->type());
  Node* inner = body->addNode(OpKind::Fused, {relu->output(0), bodyBig, p1}, 1, {"s"});
  inner->output(0)->setType(p0->type());
  inner->setBody(std::make_unique<Graph>("inner body"));
  Graph* innerBody = inner->body();
  Value* ip = innerBody->addInput("t", p0->type());
  innerBody->addInput("unused", TensorType::of(DType::F32, {5, 5}));
  innerBody->addInput("unused2", qt);
  Node* neg = innerBody->addNode(OpKind::Neg, {ip}, 1, {"t2"});
  neg->output(0)->setType(p0->type());
  innerBody->addOutput(neg->output(0));
  body->addOutput(inner->output(0));

  g->addOutput(fused->output(0));
  g->addOutput(split->output(1));
  g->addOutput(x);
  return g;
}

struct ErrorCase {
  const char* text;
  const char* message; // expected substring of the error message
};

} // namespace

class TestTextIr : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void roundTripRichGraph() {
    auto g = buildRichGraph();
    std::string text = printGraph(*g, savedForm());
    auto parsed = parseGraph(text, "rich.fbir");
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
    std::string diff = diffGraphs(*g, **parsed);
    QVERIFY2(diff.empty(), diff.c_str());
    QCOMPARE(printGraph(**parsed, savedForm()), text);
    // Ids written in the text are reserved: new ids do not collide with them.
    NodeId fresh = (*parsed)->allocateNodeId();
    QVERIFY((*parsed)->findNode(fresh) == nullptr);
    QVERIFY(fresh > g->nodes().back()->id());
  }

  void roundTripWithLargeInlineLimit() {
    auto g = buildRichGraph();
    PrintOptions inlineAll;
    inlineAll.inlineElementLimit = 1000;
    std::string text = printGraph(*g, inlineAll);
    QVERIFY(text.find("resource<") == std::string::npos);
    auto parsed = parseGraph(text);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
    QVERIFY(diffGraphs(*g, **parsed).empty());
    QCOMPARE(printGraph(**parsed, inlineAll), text);
  }

  void resourceKeysAreUnique() {
    auto g = buildRichGraph();
    std::string text = printGraph(*g, savedForm());
    QVERIFY(text.find("const %big : f32[5, 5] = resource<big>") != std::string::npos);
    QVERIFY(text.find("const %big : f32[5, 5] = resource<big.1>") != std::string::npos);
    QVERIFY(text.find("table = resource<n1.table> : i64[20]") != std::string::npos);
    QVERIFY(text.find("\n  big: \"") != std::string::npos);
    QVERIFY(text.find("\n  big.1: \"") != std::string::npos);
    QVERIFY(text.find("\n  \"/quant weight\": \"") != std::string::npos);
  }

  void printsTheDocumentedFormat() {
    Graph g("mlp");
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("N"), Dim(3)}));
    Value* w = g.addConstant("fc1.weight", Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
    Value* bias = g.addConstant("fc1.bias", Tensor::fromVector<float>({2}, {0.5f, -1}));
    Node* gemm = g.addNode(OpKind::Gemm, {x, w, bias}, 1, {"h"}, "/fc1/Gemm");
    gemm->output(0)->setType(TensorType(DType::F32, {Dim::symbol("N"), Dim(2)}));
    gemm->attrs().set("transB", int64_t(1));
    gemm->attrs().set("alpha", 1.0f);
    Node* relu = g.addNode(OpKind::Relu, {gemm->output(0)}, 1, {"y"}, "/relu");
    relu->output(0)->setType(gemm->output(0)->type());
    relu->setProvenance({1});
    g.addOutput(relu->output(0));
    PrintOptions small;
    small.inlineElementLimit = 4;
    const char* expected = "graph @mlp opset 17 {\n"
                           "  input %x : f32[N, 3]\n"
                           "  const %fc1.weight : f32[2, 3] = resource<fc1.weight>\n"
                           "  const %fc1.bias : f32[2] = dense<[0.5, -1.0]>\n"
                           "  %h : f32[N, 2] = Gemm(%x, %fc1.weight, %fc1.bias) {alpha = 1.0, "
                           "transB = 1}  #1 \"/fc1/Gemm\"\n"
                           "  %y : f32[N, 2] = Relu(%h)  #2 \"/relu\" from(#1)\n"
                           "  output %y\n"
                           "}\n";
    QCOMPARE(printGraph(g, small), std::string(expected));
    std::string saved = printGraph(g, [] {
      PrintOptions o;
      o.inlineElementLimit = 4;
      o.withResourceData = true;
      return o;
    }());
    // 1..6 as little-endian f32, base64 (checked with Python: base64.b64encode(np.arange(1,7,
    // dtype='<f4').tobytes())).
    QCOMPARE(saved, std::string(expected) + "resources {\n"
                                            "  fc1.weight: \"AACAPwAAAEAAAEBAAACAQAAAoEAAAMBA\"\n"
                                            "}\n");
  }

  void formatsFloatsDistinctly() {
    QCOMPARE(text::formatFloat(1.f), std::string("1.0"));
    QCOMPARE(text::formatFloat(0.1f), std::string("0.1"));
    QCOMPARE(text::formatFloat(1e-5f), std::string("1e-05"));
    QCOMPARE(text::formatFloat(-0.f), std::string("-0.0"));
    QCOMPARE(text::formatFloat(1e10f), std::string("1e+10"));
    QCOMPARE(text::formatFloat(std::numeric_limits<float>::infinity()), std::string("inf"));
    QCOMPARE(text::formatFloat(-std::numeric_limits<float>::infinity()), std::string("-inf"));
    QCOMPARE(text::formatFloat(std::numeric_limits<float>::quiet_NaN()), std::string("nan"));
  }

  void nanAttributes() {
    auto parsed = parseGraph("graph @g {\n  Identity() {a = nan, b = -nan, c = [nan, 1.0]}  #1\n}\n");
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
    const AttrMap& attrs = (*parsed)->nodes()[0]->attrs();
    QVERIFY(std::isnan(attrs.getFloat("a", 0).value()));
    QVERIFY(!std::signbit(attrs.getFloat("a", 0).value()));
    QVERIFY(std::isnan(attrs.getFloat("b", 0).value()));
    QVERIFY(std::signbit(attrs.getFloat("b", 0).value()));
    QVERIFY(std::isnan(attrs.getFloats("c", {}).value()[0]));
    QVERIFY(printGraph(**parsed).find("{a = nan, b = -nan, c = [nan, 1.0]}") != std::string::npos);
  }

  void base64RoundTrip() {
    for (size_t n = 0; n < 8; ++n) {
      std::vector<std::byte> data(n);
      for (size_t i = 0; i < n; ++i)
        data[i] = std::byte(250 - i * 31);
      std::string enc = text::encodeBase64(data.data(), n);
      QCOMPARE(enc.size(), (n + 2) / 3 * 4);
      auto dec = text::decodeBase64(enc);
      QVERIFY(dec && *dec == data);
    }
    QCOMPARE(text::encodeBase64(reinterpret_cast<const std::byte*>("Man"), 3), std::string("TWFu"));
    QVERIFY(!text::decodeBase64("TWF"));
    QVERIFY(!text::decodeBase64("T=Fu"));
    QVERIFY(!text::decodeBase64("TW=u"));
    QVERIFY(!text::decodeBase64("TW!u"));
  }

  void parsesHandWrittenText() {
    const char* src = R"(// A comment line.
graph @"hand written"   {   // no opset: 17
  input %x : f32[2, ?]
  const %s : i64[2] = dense<[1, -1]>
  %y : f32[2, ?] = Relu(%x)        // no id: gets one after #7
  %z : f32[2] = Reshape(%y, %s) {allowzero = 0}  #7
  %w : f32[2] = Clip(%z, _, _)
  output %w, %y
}
)";
    auto parsed = parseGraph(src);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
    Graph& g = **parsed;
    QCOMPARE(g.name(), std::string("hand written"));
    QCOMPARE(g.opset(), int64_t(17));
    QCOMPARE(g.numNodes(), size_t(3));
    QCOMPARE(g.nodes()[0]->id(), NodeId(8));
    QCOMPARE(g.nodes()[1]->id(), NodeId(7));
    QCOMPARE(g.nodes()[2]->id(), NodeId(9));
    QVERIFY(g.nodes()[2]->input(1) == nullptr);
    QCOMPARE(g.nodes()[2]->numInputs(), size_t(3));
    QVERIFY(g.nodes()[0]->output(0)->type().dims[1].isUnknown());
    QCOMPARE(g.constants()[0]->constantData().toInt64Vector(), (std::vector<int64_t>{1, -1}));
    QCOMPARE(g.outputs().size(), size_t(2));
    // The printer writes it canonically, and the canonical form is a fixed point.
    std::string canonical = printGraph(g);
    QVERIFY(canonical.find("%y : f32[2, ?] = Relu(%x)  #8\n") != std::string::npos);
    auto again = parseGraph(canonical);
    QVERIFY(again.ok());
    QCOMPARE(printGraph(**again), canonical);
  }

  void fusedGroupWithoutIdTakesAttributesOrBody() {
    const char* src = "graph @g {\n  input %x : f32[2]\n"
                      "  %a : f32[2] = fused(%x) {tag = 1} {\n    input %p : f32[2]\n    output %p\n  }\n"
                      "  %b : f32[2] = fused(%a) {\n    input %p : f32[2]\n    output %p\n  }\n"
                      "  output %b\n}\n";
    auto parsed = parseGraph(src);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
    const Graph& g = **parsed;
    QCOMPARE(g.nodes()[0]->attrs().getInt("tag", 0).value(), int64_t(1));
    QVERIFY(g.nodes()[0]->body() && g.nodes()[1]->body());
    QVERIFY(g.nodes()[1]->attrs().empty());
    QCOMPARE(g.nodes()[1]->body()->inputs()[0]->name(), std::string("p"));
  }

  void displayFormIsNotLoadable() {
    auto g = buildRichGraph();
    std::string display = printGraph(*g); // no resources section
    auto parsed = parseGraph(display, "shown.fbir");
    QVERIFY(!parsed.ok());
    const std::string& msg = parsed.error().message();
    QVERIFY2(msg.find("shown.fbir:") == 0, msg.c_str());
    QVERIFY2(msg.find("constant %big refers to resource<big>") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find("display form") != std::string::npos, msg.c_str());
  }

  void reportsErrorsWithPositions_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    const ErrorCase cases[] = {
        {"graph @g {\n  input %x : f32[2]\n  %y : f32[2] = Foo(%x)  #1\n}\n",
         "<input>:3:17: unknown op 'Foo'"},
        {"graph @g {\n  %y : f32[2] = Relu(%z)  #1\n}\n", "<input>:2:22: undefined value %z"},
        {"graph @g {\n  input %x : f32[2]\n  input %x : f32[3]\n}\n",
         "<input>:3:9: value %x is defined twice"},
        {"graph @g {\n  input %x : f32[2]\n  %x : f32[2] = Relu(%x)  #1\n}\n",
         "<input>:3:3: value %x is defined twice"},
        {"graph @g {\n  input %x : f33[2]\n}\n", "<input>:2:14: unknown element type 'f33'"},
        {"graph @g {\n  input %x : f32[2,]\n}\n",
         "<input>:2:20: expected dimension (a size, a symbol or ?) but found ']'"},
        {"graph @g {\n  input %x : f32[-2]\n}\n", "<input>:2:18: dimension -2 is negative"},
        {"graph @g {\n  input %x : f32[2 3]\n}\n",
         "<input>:2:20: expected ',' or ']' in the dimensions but found integer 3"},
        {"graph @g {\n  input %x : f32[99999999999999999999]\n}\n", "is out of range"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x)  #4\n"
         "  %b : f32[2] = Relu(%a)  #4\n}\n",
         "<input>:4:27: node id #4 is used twice"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x)  #1\n", "<input>:4:1: expected "
                                                                          "'input', 'const', "
                                                                          "'output', a node or "
                                                                          "'}' but found end of "
                                                                          "input"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x", "<input>:3:24: expected "
                                                                     "',' or ')' but found end of "
                                                                     "input"},
        {"", "<input>:1:1: expected 'graph' but found end of input"},
        {"graph @g {\n  const %c : f32[3] = dense<[1.0, 2.0]>\n}\n",
         "<input>:2:14: dense<> lists 2 elements but f32[3] has 3"},
        {"graph @g {\n  const %c : i8[1] = dense<[128]>\n}\n",
         "<input>:2:29: integer 128 is out of range for i8"},
        {"graph @g {\n  const %c : f32[N] = dense<[1.0]>\n}\n",
         "<input>:2:14: a tensor literal needs a static type, not f32[N]"},
        {"graph @g {\n  const %c : f32[9223372036854775807, 4] = resource<c>\n}\n",
         "<input>:2:14: the element count of f32[9223372036854775807, 4] overflows"},
        {"graph @g {\n  const %c : f32[2] = resource<c>\n}\nresources {\n  c: \"AACAPw==\"\n}\n",
         "<input>:2:23: resource 'c' holds 4 bytes, but constant %c of type f32[2] needs 8"},
        {"graph @g {\n  const %c : f32[1] = resource<c>\n}\nresources {\n  c: \"AA*APw==\"\n}\n",
         "<input>:5:6: the data of resource 'c' is not valid base64"},
        {"graph @g {\n  const %c : bool[1] = resource<c>\n}\nresources {\n  c: \"Ag==\"\n}\n",
         "resource 'c' holds a bool that is not 0 or 1"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x) {s = \"abc}  #1\n}\n",
         "<input>:3:31: newline in string (write it as \\n)"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x) {s = \"abc", 
         "<input>:3:31: unterminated string"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x) {s = \"\\q\"}  #1\n}\n",
         "<input>:3:31: unknown escape in string"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x) {k = []}  #1\n}\n",
         "<input>:3:33: expected ':' and the kind of the empty list (ints, floats, strings) but "
         "found '}'"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x) {k = 1, k = 2}  #1\n}\n",
         "<input>:3:34: attribute 'k' is given twice"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x)  #1 {\n  }\n}\n",
         "<input>:3:30: only fused groups have a body, not Relu"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x)  #1\n}\ntrailing\n",
         "<input>:5:1: expected 'resources' or end of input but found identifier 'trailing'"},
        {"graph @g {\n  input %x : f32[2] $\n}\n", "<input>:2:21: unexpected character '$'"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x)  #99999999999\n}\n",
         "<input>:3:27: node id #99999999999 is out of range"},
        {"graph @g {\n  input %x : f32[2]\n  %a : f32[2] = Relu(%x) {v = dense<[1.0]> : f32[2]}"
         "  #1\n}\n",
         "<input>:3:46: dense<> lists 1 elements but f32[2] has 2"},
    };
    for (const ErrorCase& c : cases)
      QTest::newRow(c.message) << QString::fromUtf8(c.text) << QString::fromUtf8(c.message);
  }
  void reportsErrorsWithPositions() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    auto parsed = parseGraph(text.toStdString());
    QVERIFY(!parsed.ok());
    QString got = QString::fromStdString(parsed.error().message());
    QVERIFY2(got.contains(message), qPrintable(got));
  }

  void rejectsDeepNesting() {
    std::string src = "graph @g {\n  input %x : f32[1]\n";
    int depth = 80;
    for (int i = 0; i < depth; ++i)
      src += "%y : f32[1] = fused(%x) {\n input %x : f32[1]\n";
    auto parsed = parseGraph(src);
    QVERIFY(!parsed.ok());
    QVERIFY2(parsed.error().message().find("nested more than 64 deep") != std::string::npos,
             parsed.error().message().c_str());
    // 64 levels are fine.
    std::string ok = "graph @g {\n  input %x : f32[1]\n";
    for (int i = 0; i < 64; ++i)
      ok += "%y : f32[1] = fused(%x) {\n input %x : f32[1]\n";
    ok += "output %x\n";
    for (int i = 0; i < 64; ++i)
      ok += "}\n output %y\n";
    ok += "}\n";
    auto parsedOk = parseGraph(ok);
    QVERIFY2(parsedOk.ok(), parsedOk.ok() ? "" : parsedOk.error().message().c_str());
    QCOMPARE(printGraph(**parseGraph(printGraph(**parsedOk))), printGraph(**parsedOk));
  }

  void survivesMangledInput() {
    // A small in-process fuzzer: truncations and byte flips of a valid file must give an error
    // or a graph, never a crash (the libFuzzer target does this at scale).
    auto g = buildRichGraph();
    std::string text = printGraph(*g, savedForm());
    std::mt19937 rng(1234);
    const char alphabet[] = "%@#{}[]()<>,:=?_\"\\-.0123456789eafn \n/";
    int parsedCount = 0;
    for (int iter = 0; iter < 3000; ++iter) {
      std::string m = text;
      if (iter % 3 == 0) {
        m.resize(rng() % m.size());
      } else {
        int flips = 1 + int(rng() % 4);
        for (int k = 0; k < flips; ++k)
          m[rng() % m.size()] = alphabet[rng() % (sizeof alphabet - 1)];
      }
      auto parsed = parseGraph(m);
      if (parsed.ok()) {
        ++parsedCount;
        // Whatever parses prints to text that parses to the same text again.
        std::string p = printGraph(**parsed, savedForm());
        auto again = parseGraph(p);
        QVERIFY2(again.ok(), again.ok() ? "" : again.error().message().c_str());
        QCOMPARE(printGraph(**again, savedForm()), p);
      } else {
        QVERIFY(parsed.error().message().rfind("<input>:", 0) == 0);
      }
    }
    QVERIFY(parsedCount > 0);
  }

  void parsesFileFromDisk() {
    auto missing = parseGraphFile("/nonexistent/model.fbir");
    QVERIFY(!missing.ok());
    QVERIFY(missing.error().message().find("/nonexistent/model.fbir") == 0);
    QTemporaryDir dir;
    QString path = dir.filePath("m.fbir");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("graph @m opset 13 {\n  input %x : f32[1]\n  %y : f32[1] = Foo(%x)\n}\n");
    f.close();
    auto parsed = parseGraphFile(path.toStdString());
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.error().message(), path.toStdString() + ":3:17: unknown op 'Foo'");
  }
};

QTEST_GUILESS_MAIN(TestTextIr)
#include "TestTextIr.moc"
