// Opset-18 models: the forms the IR shares with opset 18 import and export (in opset-17
// spelling, which ONNX's checker accepts), the features it cannot express are refused by name,
// and GroupNormalization needs opset 18.
#include "core/ShapeInference.h"
#include "core/onnx/OnnxExport.h"
#include "core/onnx/OnnxImport.h"

#include <onnx/onnx_pb.h>

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>

using namespace fb;

namespace {

onnx::ModelProto makeModel(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

void addInput(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& dims) {
  auto* v = m.mutable_graph()->add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    t->mutable_shape()->add_dim()->set_dim_value(d);
}

void addOutput(onnx::ModelProto& m, const std::string& name) {
  m.mutable_graph()->add_output()->set_name(name);
}

void addInts(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& v) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(int64_t(v.size()));
  for (int64_t x : v)
    t->add_int64_data(x);
}

void addFloats(onnx::ModelProto& m, const std::string& name, const std::vector<float>& v) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(int64_t(v.size()));
  for (float x : v)
    t->add_float_data(x);
}

onnx::NodeProto* addNode(onnx::ModelProto& m, const std::string& op,
                         const std::vector<std::string>& ins,
                         const std::vector<std::string>& outs) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(op + "0");
  for (const auto& i : ins)
    n->add_input(i);
  for (const auto& o : outs)
    n->add_output(o);
  return n;
}

void setInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void setString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// The node of the exported model that has op type `op`.
const onnx::NodeProto* findNode(const onnx::ModelProto& m, const std::string& op) {
  for (const auto& n : m.graph().node())
    if (n.op_type() == op)
      return &n;
  return nullptr;
}

} // namespace

class TestOpset18Import : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;

  Expected<std::unique_ptr<Graph>> import(const std::string& name, const onnx::ModelProto& m) {
    const std::string p = (std::filesystem::path(m_dir.path().toStdString()) / name).string();
    std::ofstream(p, std::ios::binary) << m.SerializeAsString();
    return importOnnxFile(p);
  }

  /// Exports `g` and parses the bytes back as a ModelProto (the exporter runs ONNX's checker).
  onnx::ModelProto exported(const Graph& g) {
    auto bytes = exportOnnxBytes(g);
    if (!bytes.ok())
      qFatal("export failed: %s", bytes.error().message().c_str());
    onnx::ModelProto m;
    m.ParseFromString(*bytes);
    return m;
  }

private Q_SLOTS:
  void reductionWithAxesInput() {
    auto m = makeModel(18);
    addInput(m, "x", {3, 4, 5});
    addInts(m, "axes", {0, -1});
    setInt(addNode(m, "ReduceMean", {"x", "axes"}, {"y"}), "keepdims", 0);
    addOutput(m, "y");
    auto g = import("reduce18.onnx", m);
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QCOMPARE((*g)->outputs()[0]->type().str(), std::string("f32[4]"));
    const onnx::ModelProto out = exported(**g);
    const onnx::NodeProto* r = findNode(out, "ReduceMean");
    QVERIFY(r);
    QCOMPARE(r->input_size(), 1); // opset 17: the axes are an attribute
    bool hasAxes = false;
    for (const auto& a : r->attribute())
      if (a.name() == "axes")
        hasAxes = a.ints_size() == 2 && a.ints(0) == 0 && a.ints(1) == -1;
    QVERIFY(hasAxes);
  }

  void splitByNumOutputs() {
    auto m = makeModel(18);
    addInput(m, "x", {2, 7});
    auto* n = addNode(m, "Split", {"x"}, {"a", "b", "c"});
    setInt(n, "axis", 1);
    setInt(n, "num_outputs", 3);
    addOutput(m, "a");
    addOutput(m, "b");
    addOutput(m, "c");
    auto g = import("split18.onnx", m);
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QCOMPARE((*g)->outputs()[2]->type().str(), std::string("f32[2, 1]"));
    const onnx::ModelProto out = exported(**g);
    const onnx::NodeProto* s = findNode(out, "Split");
    QVERIFY(s);
    QCOMPARE(s->input_size(), 2); // explicit sizes [3, 3, 1]
    for (const auto& a : s->attribute())
      QVERIFY(a.name() != "num_outputs");
  }

  void resizeFeaturesTheIrCannotExpress() {
    for (const auto& [attr, value] : std::vector<std::pair<std::string, std::string>>{
             {"antialias", ""}, {"keep_aspect_ratio_policy", "not_larger"}}) {
      auto m = makeModel(18);
      addInput(m, "x", {1, 1, 4, 4});
      addFloats(m, "scales", {1, 1, 2, 2});
      auto* n = addNode(m, "Resize", {"x", "", "scales"}, {"y"});
      if (value.empty())
        setInt(n, attr, 1);
      else
        setString(n, attr, value);
      addOutput(m, "y");
      auto g = import("resize18_" + attr + ".onnx", m);
      QVERIFY(!g.ok());
      QVERIFY(g.error().isUnsupported());
      QVERIFY2(contains(g.error().message(), attr) && contains(g.error().message(), "Resize0"),
               g.error().message().c_str());
    }
  }

  void padWithAxesInput() {
    auto m = makeModel(18);
    addInput(m, "x", {2, 3});
    addInts(m, "pads", {1, 1});
    addInts(m, "axes", {1});
    addNode(m, "Pad", {"x", "pads", "", "axes"}, {"y"});
    addOutput(m, "y");
    auto g = import("pad18.onnx", m);
    QVERIFY(!g.ok());
    QVERIFY2(g.error().isUnsupported() && contains(g.error().message(), "axes input"),
             g.error().message().c_str());
  }

  void newerOpsetsAreRefused() {
    auto m = makeModel(19);
    addInput(m, "x", {2});
    addNode(m, "Relu", {"x"}, {"y"});
    addOutput(m, "y");
    auto g = import("opset19.onnx", m);
    QVERIFY(!g.ok());
    QVERIFY2(contains(g.error().message(), "opset 19") && contains(g.error().message(), "1 to 18"),
             g.error().message().c_str());
  }

  void groupNormalization() {
    auto m = makeModel(18);
    addInput(m, "x", {2, 6, 3, 3});
    addFloats(m, "s", {1, 2, 3});
    addFloats(m, "b", {0, 0, 1});
    setInt(addNode(m, "GroupNormalization", {"x", "s", "b"}, {"y"}), "num_groups", 3);
    addOutput(m, "y");
    auto g = import("gn18.onnx", m);
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QCOMPARE((*g)->outputs()[0]->type().str(), std::string("f32[2, 6, 3, 3]"));
    // Exported as ONNX's function body for it: opset 17 has no GroupNormalization.
    const onnx::ModelProto out = exported(**g);
    QVERIFY(!findNode(out, "GroupNormalization"));
    QVERIFY(findNode(out, "InstanceNormalization"));
    QVERIFY(findNode(out, "Expand")); // the per-group scale repeated per channel

    // Opset 17 has no GroupNormalization.
    m.mutable_opset_import(0)->set_version(17);
    auto old = import("gn17.onnx", m);
    QVERIFY(!old.ok());
    QVERIFY2(contains(old.error().message(), "from opset 18"), old.error().message().c_str());

    // The channels must split evenly.
    auto bad = makeModel(18);
    addInput(bad, "x", {2, 5, 3});
    addFloats(bad, "s", {1, 2});
    addFloats(bad, "b", {0, 0});
    setInt(addNode(bad, "GroupNormalization", {"x", "s", "b"}, {"y"}), "num_groups", 2);
    addOutput(bad, "y");
    auto uneven = import("gn_uneven.onnx", bad);
    QVERIFY(!uneven.ok());
    QVERIFY2(contains(uneven.error().message(), "5 channels do not split into num_groups = 2"),
             uneven.error().message().c_str());
  }
};

QTEST_GUILESS_MAIN(TestOpset18Import)
#include "TestOpset18Import.moc"
