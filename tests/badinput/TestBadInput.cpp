// Hostile ONNX inputs give one clear error naming what and where, never a crash; plus the
// import → export → import round trip and opset upgrade.
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/onnx/OnnxExport.h"
#include "core/onnx/OnnxImport.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace fb;

namespace {

onnx::ModelProto makeModel(int64_t opset = 17, int64_t irVersion = 8) {
  onnx::ModelProto m;
  m.set_ir_version(irVersion);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

void setType(onnx::ValueInfoProto* v, const std::string& name, int elemType,
             const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elemType);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    if (d == -1)
      shape->add_dim()->set_dim_param("N");
    else
      shape->add_dim()->set_dim_value(d);
  }
}

void addInput(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& dims,
              int elemType = onnx::TensorProto::FLOAT) {
  setType(m.mutable_graph()->add_input(), name, elemType, dims);
}

void addOutput(onnx::ModelProto& m, const std::string& name) {
  m.mutable_graph()->add_output()->set_name(name);
}

onnx::NodeProto* addNode(onnx::ModelProto& m, const std::string& op,
                         const std::vector<std::string>& ins,
                         const std::vector<std::string>& outs, const std::string& name) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : ins)
    n->add_input(i);
  for (const auto& o : outs)
    n->add_output(o);
  return n;
}

void addIntsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}

void addIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

onnx::TensorProto* addFloatInit(onnx::ModelProto& m, const std::string& name,
                                const std::vector<int64_t>& dims, const std::vector<float>& v) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    t->add_dims(d);
  t->set_raw_data(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  return t;
}

/// Deterministic filler values for weights.
std::vector<float> iota(size_t n, float scale = 0.01f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(int(i % 17) - 8) * scale;
  return v;
}

/// x: f32[2,3] → Relu → y, the smallest valid model.
onnx::ModelProto reluModel() {
  auto m = makeModel();
  addInput(m, "x", {2, 3});
  addNode(m, "Relu", {"x"}, {"y"}, "relu0");
  addOutput(m, "y");
  return m;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace

class TestBadInput : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;

  std::string path(const std::string& name) const {
    return (std::filesystem::path(m_dir.path().toStdString()) / name).string();
  }
  std::string writeBytes(const std::string& name, const std::string& bytes) {
    const std::string p = path(name);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    return p;
  }
  std::string writeModel(const std::string& name, const onnx::ModelProto& m) {
    return writeBytes(name, m.SerializeAsString());
  }
  /// Imports `file`, requires failure, and returns the error (whose message must name the file).
  Error importError(const std::string& file) {
    auto g = importOnnxFile(file);
    if (g.ok()) {
      QTest::qFail("import succeeded but should have failed", __FILE__, __LINE__);
      return Error();
    }
    const std::string& msg = g.error().message();
    qInfo("%s", msg.c_str());
    if (!contains(msg, file))
      QTest::qFail(("error does not name the file: " + msg).c_str(), __FILE__, __LINE__);
    return g.error();
  }
  /// A model whose initializer 'w' is stored externally at `location` (f32[4]).
  onnx::ModelProto externalModel(const std::string& location) {
    auto m = makeModel();
    addInput(m, "x", {4});
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value(location);
    addNode(m, "Add", {"x", "w"}, {"y"}, "add0");
    addOutput(m, "y");
    return m;
  }

private Q_SLOTS:
  void initTestCase() { QVERIFY(m_dir.isValid()); }

  void truncatedFile() {
    auto m = reluModel();
    addFloatInit(m, "unused", {256}, iota(256));
    const std::string bytes = m.SerializeAsString();
    const std::string file = writeBytes("truncated.onnx", bytes.substr(0, bytes.size() / 2));
    Error e = importError(file);
    QVERIFY(contains(e.message(), "truncated"));
  }

  void notAProtobuf() {
    const std::string file =
        writeBytes("text.onnx", "\xff\xff\xff\xff this is not an ONNX model at all\n");
    Error e = importError(file);
    QVERIFY(contains(e.message(), "not a valid ONNX model"));
  }

  void textThatParsesAsProtobuf() {
    // Some plain text happens to be a valid protobuf of unknown fields: the envelope check
    // catches it.
    const std::string file = writeBytes("hello.onnx", "hello");
    Error e = importError(file);
    QVERIFY(contains(e.message(), "not") && contains(e.message(), "ONNX model"));
  }

  void emptyFile() {
    Error e = importError(writeBytes("empty.onnx", ""));
    QVERIFY(contains(e.message(), "empty file"));
  }

  void missingFile() {
    auto g = importOnnxFile(path("does-not-exist.onnx"));
    QVERIFY(!g.ok());
    QVERIFY(contains(g.error().message(), "no such file"));
  }

  void wrongIrVersion() {
    auto m = reluModel();
    m.set_ir_version(99);
    Error e = importError(writeModel("ir99.onnx", m));
    QVERIFY(e.isUnsupported());
    QVERIFY(contains(e.message(), "IR version 99"));
  }

  void noGraph() {
    onnx::ModelProto m = makeModel();
    m.clear_graph();
    Error e = importError(writeModel("nograph.onnx", m));
    QVERIFY(contains(e.message(), "has no graph"));
  }

  void unsupportedOpset() {
    auto m = reluModel();
    m.mutable_opset_import(0)->set_version(9);
    Error e = importError(writeModel("opset9.onnx", m));
    QVERIFY(e.isUnsupported());
    QVERIFY(contains(e.message(), "opset 9"));
  }

  void missingInitializer() {
    auto m = makeModel();
    addInput(m, "x", {2, 3});
    addNode(m, "Add", {"x", "w"}, {"y"}, "add0");
    addOutput(m, "y");
    Error e = importError(writeModel("missing-init.onnx", m));
    QVERIFY(!e.isUnsupported());
    QVERIFY(contains(e.message(), "node \"add0\""));
    QVERIFY(contains(e.message(), "input 1 'w' is not defined (missing initializer?)"));
  }

  void cycle() {
    auto m = makeModel();
    addInput(m, "x", {2});
    addNode(m, "Add", {"x", "b"}, {"a"}, "first");
    addNode(m, "Relu", {"a"}, {"b"}, "second");
    addOutput(m, "b");
    Error e = importError(writeModel("cycle.onnx", m));
    QVERIFY(contains(e.message(), "cycle"));
    QVERIFY(contains(e.message(), "\"first\"") || contains(e.message(), "\"second\""));
  }

  void shapeMismatch() {
    auto m = makeModel();
    addInput(m, "x", {2, 3});
    addInput(m, "z", {4, 5});
    addNode(m, "Add", {"x", "z"}, {"y"}, "add0");
    addOutput(m, "y");
    Error e = importError(writeModel("add-mismatch.onnx", m));
    QVERIFY(!e.isUnsupported());
    QVERIFY(contains(e.message(), "add0"));
  }

  void declaredShapeMismatch() {
    auto m = reluModel();
    setType(m.mutable_graph()->mutable_output(0), "y", onnx::TensorProto::FLOAT, {2, 4});
    Error e = importError(writeModel("declared-mismatch.onnx", m));
    QVERIFY(contains(e.message(), "shape mismatch"));
    QVERIFY(contains(e.message(), "'y'"));
    QVERIFY(contains(e.message(), "f32[2, 4]") || contains(e.message(), "f32[2,4]"));
  }

  void dimsOverflow() {
    auto m = reluModel();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("huge");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(int64_t(1) << 32);
    t->add_dims(int64_t(1) << 32);
    t->add_dims(4);
    t->set_raw_data("abcd");
    Error e = importError(writeModel("overflow.onnx", m));
    QVERIFY(contains(e.message(), "initializer 'huge'"));
    QVERIFY(contains(e.message(), "overflow"));
  }

  void negativeDim() {
    auto m = reluModel();
    addFloatInit(m, "neg", {}, {1.f})->add_dims(-3);
    Error e = importError(writeModel("negative.onnx", m));
    QVERIFY(contains(e.message(), "initializer 'neg'"));
    QVERIFY(contains(e.message(), "negative"));
  }

  void tensorLargerThanData() {
    auto m = reluModel();
    addFloatInit(m, "w", {10}, {1.f, 2.f}); // declares 40 bytes, holds 8
    Error e = importError(writeModel("short-raw.onnx", m));
    QVERIFY(contains(e.message(), "initializer 'w'"));
    QVERIFY(contains(e.message(), "needs 40 bytes"));
    QVERIFY(contains(e.message(), "raw_data holds 8 bytes"));

    auto m2 = reluModel();
    auto* t = m2.mutable_graph()->add_initializer();
    t->set_name("v");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(3);
    t->add_int64_data(1);
    Error e2 = importError(writeModel("short-typed.onnx", m2));
    QVERIFY(contains(e2.message(), "initializer 'v'"));
    QVERIFY(contains(e2.message(), "int64_data"));
  }

  void unsupportedInitializerType() {
    auto m = reluModel();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("d");
    t->set_data_type(onnx::TensorProto::DOUBLE);
    t->add_dims(1);
    t->add_double_data(1.0);
    Error e = importError(writeModel("double.onnx", m));
    QVERIFY(e.isUnsupported());
    QVERIFY(contains(e.message(), "initializer 'd'"));
    QVERIFY(contains(e.message(), "DOUBLE"));
  }

  void externalDataEscapesDotDot() {
    writeBytes("secret.bin", std::string(16, 'x')); // exists: refusal must be about the path
    auto m = externalModel("../secret.bin");
    Error e = importError(writeModel("ext1/model.onnx", m));
    QVERIFY(contains(e.message(), "initializer 'w'"));
    QVERIFY(contains(e.message(), "escapes the model's folder"));

    auto m2 = externalModel("a/../../secret.bin");
    Error e2 = importError(writeModel("ext1/model2.onnx", m2));
    QVERIFY(contains(e2.message(), "escapes the model's folder"));
  }

  void externalDataAbsolute() {
    const std::string target = writeBytes("abs.bin", std::string(16, 'x'));
    auto m = externalModel(target);
    Error e = importError(writeModel("ext2/model.onnx", m));
    QVERIFY(contains(e.message(), "initializer 'w'"));
    QVERIFY(contains(e.message(), "absolute"));
  }

  void externalDataSymlinkEscapes() {
    const std::string target = writeBytes("outside.bin", std::string(16, 'x'));
    writeModel("ext3/placeholder.onnx", makeModel());
    std::error_code ec;
    std::filesystem::create_symlink(target, path("ext3/link.bin"), ec);
    if (ec)
      QSKIP("cannot create symlinks here");
    auto m = externalModel("link.bin");
    Error e = importError(writeModel("ext3/model.onnx", m));
    QVERIFY(contains(e.message(), "escapes the model's folder"));
  }

  void externalDataInsideFolder() {
    const std::vector<float> w = {1.5f, -2.f, 3.25f, 4.f};
    std::string blob(8, '\0'); // the tensor sits at offset 8
    blob.append(reinterpret_cast<const char*>(w.data()), 16);
    writeBytes("ext4/weights.bin", blob);
    auto m = externalModel("weights.bin");
    auto* e = m.mutable_graph()->mutable_initializer(0)->add_external_data();
    e->set_key("offset");
    e->set_value("8");
    auto g = importOnnxFile(writeModel("ext4/model.onnx", m));
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    Value* c = (*g)->findValue("w");
    QVERIFY(c && c->isConstant());
    auto data = c->constantData().data<float>();
    QCOMPARE(std::vector<float>(data.begin(), data.end()), w);

    // The same file is too short for an offset of 12.
    m.mutable_graph()->mutable_initializer(0)->mutable_external_data(1)->set_value("12");
    Error err = importError(writeModel("ext4/model-short.onnx", m));
    QVERIFY(contains(err.message(), "too short"));
    // A missing file is named.
    auto m3 = externalModel("nothere.bin");
    Error err3 = importError(writeModel("ext4/model-missing.onnx", m3));
    QVERIFY(contains(err3.message(), "nothere.bin"));
    QVERIFY(contains(err3.message(), "does not exist"));
    // From bytes without a folder, external data is refused.
    auto fromBytes = importOnnxBytes(m.SerializeAsString(), "", "mem.onnx");
    QVERIFY(!fromBytes.ok());
    QVERIFY(contains(fromBytes.error().message(), "refused"));
  }

  void unsupportedOp() {
    auto m = makeModel();
    addInput(m, "boxes", {1, 4, 4});
    addInput(m, "scores", {1, 1, 4});
    addNode(m, "NonMaxSuppression", {"boxes", "scores"}, {"sel"}, "/x/NMS");
    addOutput(m, "sel");
    const std::string file = writeModel("nms.onnx", m);
    Error e = importError(file);
    QVERIFY(e.isUnsupported());
    QCOMPARE(e.message(), file + ": node \"/x/NMS\" (op NonMaxSuppression, opset 17): "
                                 "unsupported op");
  }

  void unsupportedDomain() {
    auto m = reluModel();
    auto* imp = m.add_opset_import();
    imp->set_domain("com.microsoft");
    imp->set_version(1);
    auto* n = addNode(m, "FusedGemm", {"y", "y"}, {"z"}, "ms0");
    n->set_domain("com.microsoft");
    m.mutable_graph()->mutable_output(0)->set_name("z");
    Error e = importError(writeModel("msdomain.onnx", m));
    QVERIFY(e.isUnsupported());
    QVERIFY(contains(e.message(), "com.microsoft"));
    QVERIFY(contains(e.message(), "\"ms0\""));
    QVERIFY(contains(e.message(), "FusedGemm"));
  }

  void unsupportedInputType() {
    auto m = makeModel();
    addInput(m, "x", {2}, onnx::TensorProto::DOUBLE);
    addNode(m, "Relu", {"x"}, {"y"}, "relu0");
    addOutput(m, "y");
    Error e = importError(writeModel("double-input.onnx", m));
    QVERIFY(e.isUnsupported());
    QVERIFY(contains(e.message(), "graph input 'x'"));
  }

  void tensorProtoFiles() {
    onnx::TensorProto t;
    t.set_name("input_0");
    t.set_data_type(onnx::TensorProto::FLOAT16);
    t.add_dims(2);
    t.add_int32_data(0x3C00); // 1.0
    t.add_int32_data(0xC000); // -2.0
    const std::string file = writeBytes("input_0.pb", t.SerializeAsString());
    auto r = readOnnxTensorFile(file);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE(r->dtype(), DType::F16);
    QCOMPARE(r->getAsDouble(0), 1.0);
    QCOMPARE(r->getAsDouble(1), -2.0);

    const std::string bytes = t.SerializeAsString();
    auto bad = tensorFromOnnxProtoBytes(bytes.substr(0, bytes.size() - 3), "cut.pb");
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error().message(), "cut.pb"));
    t.add_dims(5); // declares 10 elements, holds 2
    auto shortData = tensorFromOnnxProtoBytes(t.SerializeAsString(), "short.pb");
    QVERIFY(!shortData.ok());
    QVERIFY(contains(shortData.error().message(), "short.pb: tensor 'input_0'"));
  }

  void constantNodesBecomeConstants() {
    auto m = makeModel();
    addInput(m, "x", {3});
    auto* c = addNode(m, "Constant", {}, {"k"}, "const0");
    auto* a = c->add_attribute();
    a->set_name("value_floats");
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float f : {1.f, 2.f, 3.f})
      a->add_floats(f);
    addNode(m, "Add", {"x", "k"}, {"y"}, "add0");
    addOutput(m, "y");
    auto g = importOnnxBytes(m.SerializeAsString(), "", "const.onnx");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QCOMPARE((*g)->numNodes(), size_t(1));
    Value* k = (*g)->findValue("k");
    QVERIFY(k && k->isConstant());
    QCOMPARE(k->constantData().getAsDouble(2), 3.0);
  }

  void idsFromTagsAreRestored() {
    auto m = reluModel();
    m.mutable_graph()->mutable_node(0)->set_doc_string("fusebox:id=40;from=3,7");
    addNode(m, "Neg", {"y"}, {"z"}, "neg0")->set_doc_string("a human comment");
    m.mutable_graph()->mutable_output(0)->set_name("z");
    auto g = importOnnxBytes(m.SerializeAsString(), "", "tags.onnx");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    const auto& nodes = (*g)->nodes();
    QCOMPARE(nodes[0]->id(), NodeId(40));
    QCOMPARE(nodes[0]->provenance(), (std::vector<NodeId>{3, 7}));
    QVERIFY(nodes[1]->id() > 40);
    QVERIFY(nodes[1]->provenance().empty());
  }

  void legacyOpsetUpgrade() {
    auto m = makeModel(/*opset=*/11, /*irVersion=*/6);
    addInput(m, "x", {2, 3, 4});
    addIntsAttr(addNode(m, "Unsqueeze", {"x"}, {"u"}, "unsq"), "axes", {0});
    addIntAttr(addNode(m, "Softmax", {"u"}, {"s"}, "sm"), "axis", 2); // softmax over 3*4
    addIntsAttr(addNode(m, "ReduceSum", {"s"}, {"r"}, "rs"), "axes", {3});
    addOutput(m, "r");
    setType(m.mutable_graph()->add_value_info(), "s", onnx::TensorProto::FLOAT, {1, 2, 3, 4});
    auto g = importOnnxBytes(m.SerializeAsString(), "", "legacy.onnx");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    Graph& graph = **g;
    QCOMPARE(graph.opset(), int64_t(17));
    std::vector<std::string> ops;
    for (const auto& n : graph.nodes())
      ops.push_back(opName(n->op()));
    QCOMPARE(ops, (std::vector<std::string>{"Unsqueeze", "Flatten", "Softmax", "Reshape",
                                            "ReduceSum"}));
    Node* unsq = graph.nodes()[0].get();
    QVERIFY(!unsq->attrs().has("axes"));
    QCOMPARE(unsq->numInputs(), size_t(2));
    QCOMPARE(unsq->input(1)->constantData().toInt64Vector(), (std::vector<int64_t>{0}));
    Node* flat = graph.nodes()[1].get();
    QCOMPARE(*flat->attrs().getInt("axis", 0), int64_t(2));
    QCOMPARE(flat->output(0)->type(), TensorType::of(DType::F32, {2, 12}));
    Node* sm = graph.nodes()[2].get();
    QCOMPARE(flat->provenance(), (std::vector<NodeId>{sm->id()}));
    QCOMPARE(graph.findValue("s")->type(), TensorType::of(DType::F32, {1, 2, 3, 4}));
    QCOMPARE(graph.findValue("s")->producer()->op(), OpKind::Reshape);
    Node* rs = graph.nodes()[4].get();
    QCOMPARE(rs->input(1)->constantData().toInt64Vector(), (std::vector<int64_t>{3}));
    QCOMPARE(graph.outputs()[0]->type(), TensorType::of(DType::F32, {1, 2, 3, 1}));

    // Softmax over the last axis needs no rewrite.
    auto m2 = makeModel(/*opset=*/12);
    addInput(m2, "x", {2, 5});
    addNode(m2, "Softmax", {"x"}, {"y"}, "sm");
    addOutput(m2, "y");
    auto g2 = importOnnxBytes(m2.SerializeAsString(), "", "legacy2.onnx");
    QVERIFY2(g2.ok(), g2.ok() ? "" : g2.error().message().c_str());
    QCOMPARE((*g2)->numNodes(), size_t(1));
  }

  void legacySoftmaxNumerics() {
    // Opset 11 Softmax(axis=1) on [2,3,2] is a softmax over each row of the [2,6] coercion; a
    // symbolic batch takes the Shape → Reshape path of the rewrite.
    auto m = makeModel(/*opset=*/11);
    addInput(m, "x", {-1, 3, 2});
    addIntAttr(addNode(m, "Softmax", {"x"}, {"y"}, "sm"), "axis", 1);
    addOutput(m, "y");
    auto g = importOnnxBytes(m.SerializeAsString(), "", "legacy-softmax.onnx");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QCOMPARE((*g)->outputs()[0]->type(), TensorType(DType::F32, {Dim::symbol("N"), 3, 2}));
    std::vector<float> xs(12);
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = 0.25f * float(i) - float(i % 5);
    auto r = interpret(**g, {Tensor::fromVector<float>({2, 3, 2}, xs)});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    const Tensor& y = r->outputs[0];
    QCOMPARE(y.sizes(), (std::vector<int64_t>{2, 3, 2}));
    for (int row = 0; row < 2; ++row) {
      double mx = -1e30, sum = 0;
      for (int j = 0; j < 6; ++j)
        mx = std::max(mx, double(xs[size_t(row * 6 + j)]));
      for (int j = 0; j < 6; ++j)
        sum += std::exp(double(xs[size_t(row * 6 + j)]) - mx);
      for (int j = 0; j < 6; ++j) {
        const double want = std::exp(double(xs[size_t(row * 6 + j)]) - mx) / sum;
        QVERIFY(std::abs(y.getAsDouble(row * 6 + j) - want) < 1e-6);
      }
    }
  }

  void roundTrip() {
    // x[N,3,8,8] → Conv(4x3x3x3, pad 1) → Relu → Flatten → Gemm(10x256, transB) → y
    auto m = makeModel();
    addInput(m, "x", {-1, 3, 8, 8});
    addFloatInit(m, "w", {4, 3, 3, 3}, iota(108));
    addFloatInit(m, "b", {4}, {0.1f, 0.2f, -0.3f, 0.f});
    addFloatInit(m, "W", {10, 256}, iota(2560, 0.001f));
    addFloatInit(m, "B", {10}, iota(10));
    auto* conv = addNode(m, "Conv", {"x", "w", "b"}, {"c"}, "/conv1/Conv");
    addIntsAttr(conv, "pads", {1, 1, 1, 1});
    addIntsAttr(conv, "kernel_shape", {3, 3});
    addNode(m, "Relu", {"c"}, {"r"}, "/relu/Relu");
    addIntAttr(addNode(m, "Flatten", {"r"}, {"f"}, "/flat/Flatten"), "axis", 1);
    auto* gemm = addNode(m, "Gemm", {"f", "W", "B"}, {"y"}, "/fc/Gemm");
    addIntAttr(gemm, "transB", 1);
    auto* alpha = gemm->add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(onnx::AttributeProto::FLOAT);
    alpha->set_f(0.5f);
    addOutput(m, "y");

    auto g1 = importOnnxBytes(m.SerializeAsString(), "", "rt.onnx");
    QVERIFY2(g1.ok(), g1.ok() ? "" : g1.error().message().c_str());
    QCOMPARE((*g1)->nodes()[0]->id(), NodeId(1)); // fresh ids in file order
    QCOMPARE((*g1)->nodes()[3]->id(), NodeId(4));
    (*g1)->nodes()[2]->setProvenance({1, 2}); // as a pass would; must survive the trip

    auto bytes = exportOnnxBytes(**g1);
    QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().message().c_str());
    onnx::ModelProto exported;
    QVERIFY(exported.ParseFromString(*bytes));
    try {
      onnx::checker::check_model(exported);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QCOMPARE(exported.ir_version(), int64_t(8));
    QCOMPARE(exported.opset_import(0).version(), int64_t(17));
    QCOMPARE(exported.producer_name(), std::string("fusebox"));

    auto g2 = importOnnxBytes(*bytes, "", "rt2.onnx");
    QVERIFY2(g2.ok(), g2.ok() ? "" : g2.error().message().c_str());
    compareGraphs(**g1, **g2);
    // A second export is byte-identical: nothing drifts across trips.
    auto bytes2 = exportOnnxBytes(**g2);
    QVERIFY(bytes2.ok());
    QVERIFY(*bytes2 == *bytes);
  }

  void fusedGroupIsInlined() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
    Node* grp = g.addNode(OpKind::Fused, {x}, 1, {"y"}, "grp");
    grp->setBody(std::make_unique<Graph>("body"));
    Graph* body = grp->body();
    Value* p = body->addInput("p0", x->type());
    Value* k = body->addConstant("k", Tensor::fromVector<float>({4}, {1.f, 2.f, 3.f, 4.f}));
    Node* relu = body->addNode(OpKind::Relu, {p}, 1, {"a"}, "relu");
    Node* add = body->addNode(OpKind::Add, {relu->output(0), k}, 1, {"y"}, "add");
    body->addOutput(add->output(0));
    g.addOutput(grp->output(0));
    Status st = inferShapes(g);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());

    auto bytes = exportOnnxBytes(g);
    QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().message().c_str());
    auto back = importOnnxBytes(*bytes, "", "fused.onnx");
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message().c_str());
    const Graph& h = **back;
    QCOMPARE(h.numNodes(), size_t(2));
    QCOMPARE(h.nodes()[0]->id(), relu->id());
    QCOMPARE(h.nodes()[1]->id(), add->id());
    QCOMPARE(h.nodes()[1]->output(0)->name(), std::string("y"));
    QCOMPARE(h.nodes()[0]->input(0)->name(), std::string("x"));
    QCOMPARE(h.outputs()[0]->type(), TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
    QCOMPARE(h.constants().size(), size_t(1));
    QVERIFY(h.constants()[0]->constantData().identical(k->constantData()));
  }

  void samplesRoundTrip() {
    // Every sample model survives import → export (checker-clean) → import unchanged.
    int seen = 0;
    for (const auto& entry : std::filesystem::directory_iterator(FUSEBOX_SAMPLES_DIR)) {
      if (entry.path().extension() != ".onnx")
        continue;
      ++seen;
      const std::string file = entry.path().string();
      auto g1 = importOnnxFile(file);
      QVERIFY2(g1.ok(), g1.ok() ? "" : g1.error().message().c_str());
      auto bytes = exportOnnxBytes(**g1);
      QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().message().c_str());
      auto g2 = importOnnxBytes(*bytes, "", file + " (re-imported)");
      QVERIFY2(g2.ok(), g2.ok() ? "" : g2.error().message().c_str());
      compareGraphs(**g1, **g2);
    }
    QVERIFY(seen >= 1);
  }

private:
  void compareGraphs(const Graph& a, const Graph& b) {
    QCOMPARE(a.numNodes(), b.numNodes());
    for (size_t i = 0; i < a.numNodes(); ++i) {
      const Node& x = *a.nodes()[i];
      const Node& y = *b.nodes()[i];
      QCOMPARE(x.id(), y.id());
      QCOMPARE(x.op(), y.op());
      QCOMPARE(x.name(), y.name());
      QCOMPARE(x.provenance(), y.provenance());
      QVERIFY(x.attrs() == y.attrs());
      QCOMPARE(x.numInputs(), y.numInputs());
      for (size_t j = 0; j < x.numInputs(); ++j)
        QCOMPARE(x.input(j) ? x.input(j)->name() : "", y.input(j) ? y.input(j)->name() : "");
      QCOMPARE(x.numOutputs(), y.numOutputs());
      for (size_t j = 0; j < x.numOutputs(); ++j) {
        QCOMPARE(x.output(j)->name(), y.output(j)->name());
        QCOMPARE(x.output(j)->type(), y.output(j)->type());
      }
    }
    QCOMPARE(a.inputs().size(), b.inputs().size());
    for (size_t i = 0; i < a.inputs().size(); ++i) {
      QCOMPARE(a.inputs()[i]->name(), b.inputs()[i]->name());
      QCOMPARE(a.inputs()[i]->type(), b.inputs()[i]->type());
    }
    QCOMPARE(a.constants().size(), b.constants().size());
    for (size_t i = 0; i < a.constants().size(); ++i) {
      QCOMPARE(a.constants()[i]->name(), b.constants()[i]->name());
      QVERIFY(a.constants()[i]->constantData().identical(b.constants()[i]->constantData()));
    }
    QCOMPARE(a.outputs().size(), b.outputs().size());
    for (size_t i = 0; i < a.outputs().size(); ++i)
      QCOMPARE(a.outputs()[i]->name(), b.outputs()[i]->name());
  }
};

QTEST_GUILESS_MAIN(TestBadInput)
#include "TestBadInput.moc"
