// Tests of the data-movement, Resize and shape ops: shape inference (static, symbolic and through
// shape values), interpreter results against NumPy / ONNX-reference numbers, and error messages.
#include "core/Graph.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>

using namespace fb;

namespace {

Value* constI64(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  return g.addConstant(name, Tensor::fromVector<int64_t>({int64_t(v.size())}, v));
}

Value* constF32(Graph& g, const std::string& name, const std::vector<float>& v) {
  return g.addConstant(name, Tensor::fromVector<float>({int64_t(v.size())}, v));
}

/// A tensor of `sizes` holding 0, 1, 2, ... converted to `dtype` (bool: i % 2).
Tensor iota(DType dtype, const std::vector<int64_t>& sizes) {
  Tensor t(dtype, sizes);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFromDouble(i, dtype == DType::Bool ? double(i % 2) : double(i));
  return t;
}

std::vector<double> valuesOf(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(t.getAsDouble(i));
  return v;
}

/// Infers shapes and runs the graph.
Expected<std::vector<Tensor>> runGraph(Graph& g, const std::vector<Tensor>& inputs) {
  FB_TRY(inferShapes(g));
  auto r = interpret(g, inputs);
  if (!r.ok())
    return r.error();
  return std::move(r->outputs);
}

/// Declares `out` as the graph's outputs, or fails the test with the error.
#define RUN_GRAPH(out, g, ...)                                                                     \
  auto out##Or = runGraph(g, __VA_ARGS__);                                                         \
  QVERIFY2(out##Or.ok(), out##Or.ok() ? "" : out##Or.error().message().c_str());                   \
  auto& out = *out##Or

bool closeTo(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-6) {
  if (got.size() != want.size())
    return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > tol)
      return false;
  return true;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Runs one Resize of a 1x1x2x2 input [1, 2, 3, 4] by scales [1, 1, 2, 2].
Expected<std::vector<double>> resize2x2(const std::string& mode, const std::string& coord) {
  Graph g;
  Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 1, 2, 2}));
  Value* scales = constF32(g, "scales", {1, 1, 2, 2});
  Node* n = g.addNode(OpKind::Resize, {x, nullptr, scales}, 1, {"y"}, "resize");
  n->attrs().set("mode", mode);
  n->attrs().set("coordinate_transformation_mode", coord);
  g.addOutput(n->output(0));
  FB_ASSIGN_OR_RETURN(auto out, runGraph(g, {Tensor::fromVector<float>({1, 1, 2, 2}, {1, 2, 3, 4})}));
  if (n->output(0)->type() != TensorType::of(DType::F32, {1, 1, 4, 4}))
    return makeError("inferred ", n->output(0)->type().str());
  return valuesOf(out[0]);
}

} // namespace

class TestOpsData : public QObject {
  Q_OBJECT
private Q_SLOTS:
  // Shape → Gather → Unsqueeze → Concat → Reshape, as exporters write a flatten with a dynamic
  // batch, must infer f32[N, 512] rather than unknown dims.
  void dynamicBatchReshapeChain() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("N"), Dim(512), Dim(1), Dim(1)}));
    Node* shape = g.addNode(OpKind::Shape, {x}, 1, {"s"});
    Value* zero = g.addConstant("zero", Tensor::scalar<int64_t>(0));
    Node* gather = g.addNode(OpKind::Gather, {shape->output(0), zero}, 1, {"n"});
    Node* unsq = g.addNode(OpKind::Unsqueeze, {gather->output(0), constI64(g, "ax", {0})}, 1, {"n1"});
    Node* cat = g.addNode(OpKind::Concat, {unsq->output(0), constI64(g, "m1", {-1})}, 1, {"shp"});
    cat->attrs().set("axis", int64_t(0));
    Node* reshape = g.addNode(OpKind::Reshape, {x, cat->output(0)}, 1, {"y"}, "flatten");
    g.addOutput(reshape->output(0));
    QVERIFY(inferShapes(g).ok());
    QCOMPARE(shape->output(0)->type().str(), std::string("i64[4]"));
    QCOMPARE(gather->output(0)->type().str(), std::string("i64[]"));
    QCOMPARE(*gather->output(0)->shapeValue(), std::vector<Dim>{Dim::symbol("N")});
    QCOMPARE(*cat->output(0)->shapeValue(), (std::vector<Dim>{Dim::symbol("N"), Dim(-1)}));
    QCOMPARE(reshape->output(0)->type().str(), std::string("f32[N, 512]"));

    Tensor in = iota(DType::F32, {2, 512, 1, 1});
    RUN_GRAPH(out, g, {in});
    QCOMPARE(out[0].sizes(), (std::vector<int64_t>{2, 512}));
    QCOMPARE(valuesOf(out[0]), valuesOf(in));
  }

  void reshapeSolvesSymbolicMinusOne() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("N"), Dim(512), Dim(1), Dim(1)}));
    Node* a = g.addNode(OpKind::Reshape, {x, constI64(g, "s1", {-1, 512})}, 1, {"a"});
    Node* b = g.addNode(OpKind::Reshape, {x, constI64(g, "s2", {0, -1})}, 1, {"b"});
    Node* c = g.addNode(OpKind::Reshape, {x, constI64(g, "s3", {-1, 256})}, 1, {"c"});
    Node* d = g.addNode(OpKind::Reshape, {x, constI64(g, "s4", {0, 2, -1})}, 1, {"d"});
    for (Node* n : {a, b, c, d})
      g.addOutput(n->output(0));
    QVERIFY(inferShapes(g).ok());
    QCOMPARE(a->output(0)->type().str(), std::string("f32[N, 512]"));
    QCOMPARE(b->output(0)->type().str(), std::string("f32[N, 512]"));
    QCOMPARE(c->output(0)->type().str(), std::string("f32[?, 256]")); // 2N: not a single symbol
    QCOMPARE(d->output(0)->type().str(), std::string("f32[N, 2, 256]"));
  }

  void reshapeCountMismatchNamesBothShapes() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Node* r = g.addNode(OpKind::Reshape, {x, constI64(g, "s", {4, 2})}, 1, {"y"}, "badReshape");
    g.addOutput(r->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    const std::string& m = st.error().message();
    QVERIFY2(contains(m, "badReshape") && contains(m, "f32[2, 3]") && contains(m, "[4, 2]"),
             m.c_str());
  }

  void flattenSqueezeUnsqueezeTile() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 1, 3, 1}));
    Node* flat = g.addNode(OpKind::Flatten, {x}, 1, {"f"});
    flat->attrs().set("axis", int64_t(-2));
    Node* sq = g.addNode(OpKind::Squeeze, {x}, 1, {"sq"});
    Node* sq1 = g.addNode(OpKind::Squeeze, {x, constI64(g, "a1", {-1})}, 1, {"sq1"});
    Node* un = g.addNode(OpKind::Unsqueeze, {sq->output(0), constI64(g, "a2", {2, 0})}, 1, {"un"});
    Value* t = g.addInput("t", TensorType::of(DType::I32, {2, 2}));
    Node* tile = g.addNode(OpKind::Tile, {t, constI64(g, "reps", {2, 3})}, 1, {"tile"});
    for (Node* n : {flat, sq, sq1, un, tile})
      g.addOutput(n->output(0));
    RUN_GRAPH(out, g, {iota(DType::F32, {2, 1, 3, 1}),
                               Tensor::fromVector<int32_t>({2, 2}, {1, 2, 3, 4})});
    QCOMPARE(flat->output(0)->type().str(), std::string("f32[2, 3]"));
    QCOMPARE(sq->output(0)->type().str(), std::string("f32[2, 3]"));
    QCOMPARE(sq1->output(0)->type().str(), std::string("f32[2, 1, 3]"));
    QCOMPARE(un->output(0)->type().str(), std::string("f32[1, 2, 1, 3]"));
    QCOMPARE(out[3].sizes(), (std::vector<int64_t>{1, 2, 1, 3}));
    QCOMPARE(tile->output(0)->type().str(), std::string("i32[4, 6]"));
    QCOMPARE(valuesOf(out[4]), (std::vector<double>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                                    1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  }

  void squeezeNonUnitAxisFails() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Node* n = g.addNode(OpKind::Squeeze, {x, constI64(g, "a", {1})}, 1, {"y"}, "sq");
    g.addOutput(n->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message(), "sq") && contains(st.error().message(), "axis 1"),
             st.error().message().c_str());
  }

  void transposeAllDTypes() {
    for (DType dt : kAllDTypes) {
      Graph g;
      Value* x = g.addInput("x", TensorType::of(dt, {2, 3, 4}));
      Node* n = g.addNode(OpKind::Transpose, {x}, 1, {"y"});
      n->attrs().set("perm", std::vector<int64_t>{1, 2, 0});
      g.addOutput(n->output(0));
      Tensor in = iota(dt, {2, 3, 4});
      RUN_GRAPH(out, g, {in});
      QCOMPARE(out[0].dtype(), dt);
      QCOMPARE(out[0].sizes(), (std::vector<int64_t>{3, 4, 2}));
      // out[j][k][i] == in[i][j][k]
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t k = 0; k < 4; ++k)
            QCOMPARE(out[0].getAsDouble((j * 4 + k) * 2 + i), in.getAsDouble((i * 3 + j) * 4 + k));
    }
  }

  void transposeBadPermFails() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Node* n = g.addNode(OpKind::Transpose, {x}, 1, {"y"}, "tr");
    n->attrs().set("perm", std::vector<int64_t>{0, 0});
    g.addOutput(n->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message(), "tr") &&
                 contains(st.error().message(), "not a permutation"),
             st.error().message().c_str());
  }

  void sliceNegativeSteps() {
    // NumPy: np.arange(20).reshape(4, 5)[::-1, 4:0:-2]
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::I64, {4, 5}));
    int64_t lo = std::numeric_limits<int64_t>::min();
    Node* n = g.addNode(OpKind::Slice,
                        {x, constI64(g, "st", {-1, 4}), constI64(g, "en", {lo, 0}),
                         constI64(g, "ax", {0, 1}), constI64(g, "sp", {-1, -2})},
                        1, {"y"});
    g.addOutput(n->output(0));
    RUN_GRAPH(out, g, {iota(DType::I64, {4, 5})});
    QCOMPARE(n->output(0)->type().str(), std::string("i64[4, 2]"));
    QCOMPARE(valuesOf(out[0]), (std::vector<double>{19, 17, 14, 12, 9, 7, 4, 2}));
  }

  void sliceAndGatherOfShapeValue() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("B"), Dim(3), Dim::symbol("T")}));
    Node* shape = g.addNode(OpKind::Shape, {x}, 1, {"s"});
    Node* tail = g.addNode(OpKind::Slice, {shape->output(0), constI64(g, "st", {1}),
                                           constI64(g, "en", {100})},
                           1, {"tail"});
    Node* pick = g.addNode(OpKind::Gather, {shape->output(0), constI64(g, "ix", {-1, 0})}, 1, {"p"});
    Node* shape2 = g.addNode(OpKind::Shape, {x}, 1, {"s2"});
    shape2->attrs().set("start", int64_t(-2));
    Node* fill = g.addNode(OpKind::ConstantOfShape, {pick->output(0)}, 1, {"z"});
    for (Node* n : {tail, pick, shape2, fill})
      g.addOutput(n->output(0));
    QVERIFY(inferShapes(g).ok());
    QCOMPARE(*tail->output(0)->shapeValue(), (std::vector<Dim>{Dim(3), Dim::symbol("T")}));
    QCOMPARE(*pick->output(0)->shapeValue(), (std::vector<Dim>{Dim::symbol("T"), Dim::symbol("B")}));
    QCOMPARE(*shape2->output(0)->shapeValue(), (std::vector<Dim>{Dim(3), Dim::symbol("T")}));
    QCOMPARE(fill->output(0)->type().str(), std::string("f32[T, B]"));
    auto r = interpret(g, {iota(DType::F32, {2, 3, 5})});
    QVERIFY(r.ok());
    QCOMPARE(valuesOf(r->outputs[0]), (std::vector<double>{3, 5}));
    QCOMPARE(valuesOf(r->outputs[1]), (std::vector<double>{5, 2}));
    QCOMPARE(valuesOf(r->outputs[2]), (std::vector<double>{3, 5}));
    QCOMPARE(r->outputs[3].sizes(), (std::vector<int64_t>{5, 2}));
  }

  void modOfShapeValue() {
    // PyTorch 2.11's exporter (MultiheadAttention) slices Shape's output up to
    // Reshape(Mod(Add(-1, 3), 3)): the Reshape target's length must be known at import.
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("B"), Dim(3), Dim(8)}));
    Node* shape = g.addNode(OpKind::Shape, {x}, 1, {"s"});
    Node* add = g.addNode(OpKind::Add, {constI64(g, "m1", {-1}), constI64(g, "r", {3})}, 1, {"a"});
    Node* mod = g.addNode(OpKind::Mod, {add->output(0), constI64(g, "r2", {3})}, 1, {"m"});
    Node* neg = g.addNode(OpKind::Mod, {constI64(g, "m4", {-4}), constI64(g, "r3", {3})}, 1, {"n"});
    Node* cFmod =
        g.addNode(OpKind::Mod, {constI64(g, "m5", {-4}), constI64(g, "r4", {3})}, 1, {"f"});
    cFmod->attrs().set("fmod", int64_t(1));
    Node* end = g.addNode(OpKind::Reshape, {mod->output(0), constI64(g, "one", {1})}, 1, {"e"});
    Node* head = g.addNode(OpKind::Slice, {shape->output(0), constI64(g, "z", {0}), end->output(0)},
                           1, {"head"});
    Node* cat = g.addNode(OpKind::Concat, {head->output(0), constI64(g, "h", {2, 4})}, 1, {"t"});
    cat->attrs().set("axis", int64_t(0));
    Node* reshape = g.addNode(OpKind::Reshape, {x, cat->output(0)}, 1, {"y"});
    g.addOutput(reshape->output(0));
    QVERIFY(inferShapes(g).ok());
    QCOMPARE(*neg->output(0)->shapeValue(), std::vector<Dim>{Dim(2)});    // np.mod(-4, 3)
    QCOMPARE(*cFmod->output(0)->shapeValue(), std::vector<Dim>{Dim(-1)}); // np.fmod(-4, 3)
    QCOMPARE(*head->output(0)->shapeValue(), (std::vector<Dim>{Dim::symbol("B"), Dim(3)}));
    QCOMPARE(reshape->output(0)->type().str(), std::string("f32[B, 3, 2, 4]"));
    RUN_GRAPH(out, g, {iota(DType::F32, {2, 3, 8})});
    QCOMPARE(out[0].sizes(), (std::vector<int64_t>{2, 3, 2, 4}));
  }

  void gatherNegativeIndicesAndRange() {
    // NumPy: np.take(np.arange(12).reshape(3, 4), [[-1, 0], [1, -3]], axis=1)
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::U8, {3, 4}));
    Value* idx = g.addConstant("idx", Tensor::fromVector<int32_t>({2, 2}, {-1, 0, 1, -3}));
    Node* n = g.addNode(OpKind::Gather, {x, idx}, 1, {"y"});
    n->attrs().set("axis", int64_t(1));
    g.addOutput(n->output(0));
    RUN_GRAPH(out, g, {iota(DType::U8, {3, 4})});
    QCOMPARE(n->output(0)->type().str(), std::string("u8[3, 2, 2]"));
    QCOMPARE(valuesOf(out[0]), (std::vector<double>{3, 0, 1, 1, 7, 4, 5, 5, 11, 8, 9, 9}));
  }

  void gatherOutOfRangeFailsAtRunTime() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {3}));
    Value* i = g.addInput("i", TensorType::of(DType::I64, {1}));
    Node* n = g.addNode(OpKind::Gather, {x, i}, 1, {"y"}, "gat");
    g.addOutput(n->output(0));
    QVERIFY(inferShapes(g).ok());
    auto r = interpret(g, {iota(DType::F32, {3}), Tensor::fromVector<int64_t>({1}, {3})});
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error().message(), "gat") && contains(r.error().message(), "index 3"),
             r.error().message().c_str());
  }

  void padModes() {
    // NumPy: np.pad([[1, 2, 3], [4, 5, 6]], ((1, 1), (2, 2)), mode)
    for (const char* mode : {"reflect", "edge"}) {
      Graph g;
      Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 3}));
      Node* n = g.addNode(OpKind::Pad, {x, constI64(g, "pads", {1, 2, 1, 2})}, 1, {"y"});
      n->attrs().set("mode", std::string(mode));
      g.addOutput(n->output(0));
      RUN_GRAPH(out, g, {Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})});
      QCOMPARE(n->output(0)->type().str(), std::string("f32[4, 7]"));
      std::vector<double> reflect = {6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1,
                                     6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1};
      std::vector<double> edge = {1, 1, 1, 2, 3, 3, 3, 1, 1, 1, 2, 3, 3, 3,
                                  4, 4, 4, 5, 6, 6, 6, 4, 4, 4, 5, 6, 6, 6};
      QCOMPARE(valuesOf(out[0]), std::string(mode) == "reflect" ? reflect : edge);
    }
    // Constant mode with a value: np.pad(x, ((0, 1), (1, 0)), constant_values=9.5)
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Value* cv = g.addConstant("cv", Tensor::scalar<float>(9.5f));
    Node* n = g.addNode(OpKind::Pad, {x, constI64(g, "pads", {0, 1, 1, 0}), cv}, 1, {"y"});
    g.addOutput(n->output(0));
    RUN_GRAPH(out, g, {Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})});
    QCOMPARE(valuesOf(out[0]), (std::vector<double>{9.5, 1, 2, 3, 9.5, 4, 5, 6, 9.5, 9.5, 9.5, 9.5}));
  }

  void resizeNearestAndLinear() {
    // Expected values from onnx.backend.test.case.node.resize.interpolate_nd.
    auto nearest = resize2x2("nearest", "half_pixel");
    auto halfPixel = resize2x2("linear", "half_pixel");
    auto alignCorners = resize2x2("linear", "align_corners");
    QVERIFY(nearest.ok() && halfPixel.ok() && alignCorners.ok());
    QCOMPARE(*nearest, (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
    QCOMPARE(*halfPixel, (std::vector<double>{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75,
                                              3.25, 3.5, 3, 3.25, 3.75, 4}));
    double t = 1.0 / 3;
    QVERIFY(closeTo(*alignCorners,
                    {1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 2 + t, 2 + 2 * t, 3,
                     3 + t, 3, 3 + t, 3 + 2 * t, 4}));
  }

  void resizeSizesNearestCeilAndLinearAsymmetric() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 1, 3, 4}));
    Node* near = g.addNode(OpKind::Resize, {x, nullptr, nullptr, constI64(g, "s1", {1, 1, 5, 3})},
                           1, {"near"});
    near->attrs().set("nearest_mode", std::string("ceil"));
    Node* lin = g.addNode(OpKind::Resize, {x, nullptr, nullptr, constI64(g, "s2", {1, 1, 2, 3})},
                          1, {"lin"});
    lin->attrs().set("mode", std::string("linear"));
    lin->attrs().set("coordinate_transformation_mode", std::string("asymmetric"));
    g.addOutput(near->output(0));
    g.addOutput(lin->output(0));
    Tensor in = iota(DType::F32, {1, 1, 3, 4});
    for (int64_t i = 0; i < 12; ++i)
      in.setFromDouble(i, double(i + 1));
    RUN_GRAPH(out, g, {in});
    QCOMPARE(near->output(0)->type().str(), std::string("f32[1, 1, 5, 3]"));
    QCOMPARE(valuesOf(out[0]),
             (std::vector<double>{2, 3, 4, 6, 7, 8, 6, 7, 8, 10, 11, 12, 10, 11, 12}));
    QVERIFY(closeTo(valuesOf(out[1]), {1, 7.0 / 3, 11.0 / 3, 7, 25.0 / 3, 29.0 / 3}, 1e-5));
  }

  void resizeCubic() {
    // Keys' cubic (A = -0.75, half_pixel) with edge clamping, against ONNX's reference
    // interpolate_nd with cubic_coeffs.
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 1, 2, 2}));
    Node* n = g.addNode(OpKind::Resize, {x, nullptr, constF32(g, "sc", {1, 1, 2, 2})}, 1, {"y"});
    n->attrs().set("mode", std::string("cubic"));
    g.addOutput(n->output(0));
    QVERIFY(inferShapes(g).ok());
    auto r = interpret(g, {iota(DType::F32, {1, 1, 2, 2})});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QVERIFY(closeTo(valuesOf(r->outputs[0]),
                    {-0.316406, 0.015625, 0.5625, 0.894531, 0.347656, 0.679688, 1.226562, 1.558594,
                     1.441406, 1.773438, 2.320312, 2.652344, 2.105469, 2.4375, 2.984375, 3.316406},
                    1e-5));
  }

  void splitDefaultAndExplicit() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::I8, {2, 6}));
    Node* eq = g.addNode(OpKind::Split, {x}, 3, {"a", "b", "c"});
    eq->attrs().set("axis", int64_t(1));
    Node* ex = g.addNode(OpKind::Split, {x, constI64(g, "sp", {1, 5})}, 2, {"d", "e"});
    ex->attrs().set("axis", int64_t(-1));
    for (Node* n : {eq, ex})
      for (Value* v : n->outputs())
        g.addOutput(v);
    RUN_GRAPH(out, g, {iota(DType::I8, {2, 6})});
    QCOMPARE(eq->output(2)->type().str(), std::string("i8[2, 2]"));
    QCOMPARE(valuesOf(out[0]), (std::vector<double>{0, 1, 6, 7}));
    QCOMPARE(valuesOf(out[2]), (std::vector<double>{4, 5, 10, 11}));
    QCOMPARE(ex->output(1)->type().str(), std::string("i8[2, 5]"));
    QCOMPARE(valuesOf(out[3]), (std::vector<double>{0, 6}));
    QCOMPARE(valuesOf(out[4]), (std::vector<double>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11}));
  }

  void splitErrors() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {7}));
    Node* bad = g.addNode(OpKind::Split, {x, constI64(g, "sp", {3, 3})}, 2, {"a", "b"}, "spl");
    g.addOutput(bad->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message(), "spl") && contains(st.error().message(), "sums to 6"),
             st.error().message().c_str());

    Graph g2; // opset 17: an equal split must divide evenly
    Value* y = g2.addInput("y", TensorType::of(DType::F32, {7}));
    Node* uneven = g2.addNode(OpKind::Split, {y}, 2, {"a", "b"}, "uneven");
    g2.addOutput(uneven->output(0));
    Status st2 = inferShapes(g2);
    QVERIFY(!st2.ok());
    QVERIFY(contains(st2.error().message(), "uneven"));
  }

  void expandBidirectional() {
    // NumPy: np.array([[1], [2], [3]]) * np.ones((2, 1, 4))
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::BF16, {3, 1}));
    Node* n = g.addNode(OpKind::Expand, {x, constI64(g, "shape", {2, 1, 4})}, 1, {"y"});
    Node* shrink = g.addNode(OpKind::Expand, {x, constI64(g, "one", {1})}, 1, {"z"});
    g.addOutput(n->output(0));
    g.addOutput(shrink->output(0));
    Tensor in(DType::BF16, {3, 1});
    for (int64_t i = 0; i < 3; ++i)
      in.setFromDouble(i, double(i + 1));
    RUN_GRAPH(out, g, {in});
    QCOMPARE(n->output(0)->type().str(), std::string("bf16[2, 3, 4]"));
    QCOMPARE(valuesOf(out[0]), (std::vector<double>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
                                                    1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
    QCOMPARE(shrink->output(0)->type().str(), std::string("bf16[3, 1]")); // 1 never shrinks
  }

  void concatAndErrors() {
    Graph g;
    Value* a = g.addInput("a", TensorType(DType::Bool, {Dim::symbol("N"), Dim(2)}));
    Value* b = g.addInput("b", TensorType(DType::Bool, {Dim::symbol("N"), Dim(1)}));
    Node* n = g.addNode(OpKind::Concat, {a, b}, 1, {"y"});
    n->attrs().set("axis", int64_t(-1));
    g.addOutput(n->output(0));
    Tensor ta = iota(DType::Bool, {2, 2}); // [[0, 1], [0, 1]]
    Tensor tb(DType::Bool, {2, 1});
    tb.setFromDouble(0, 1);
    RUN_GRAPH(out, g, {ta, tb});
    QCOMPARE(n->output(0)->type().str(), std::string("bool[N, 3]"));
    QCOMPARE(valuesOf(out[0]), (std::vector<double>{0, 1, 1, 0, 1, 0}));

    Graph g2;
    Value* c = g2.addInput("c", TensorType::of(DType::F32, {2, 3}));
    Value* d = g2.addInput("d", TensorType::of(DType::F32, {2, 3, 1}));
    Value* e = g2.addInput("e", TensorType::of(DType::F32, {4, 3}));
    Node* rank = g2.addNode(OpKind::Concat, {c, d}, 1, {"r"}, "catRank");
    rank->attrs().set("axis", int64_t(0));
    Node* dims = g2.addNode(OpKind::Concat, {c, e}, 1, {"s"}, "catDims");
    dims->attrs().set("axis", int64_t(1));
    Status st = inferNodeShapes(*rank);
    QVERIFY(!st.ok() && contains(st.error().message(), "catRank") &&
            contains(st.error().message(), "rank"));
    st = inferNodeShapes(*dims);
    QVERIFY2(!st.ok() && contains(st.error().message(), "catDims") &&
                 contains(st.error().message(), "dim 0"),
             st.ok() ? "" : st.error().message().c_str());
  }

  void symbolicExpandRangeAndRuntimeAxes() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("N"), Dim(4)}));
    Value* y = g.addInput("y", TensorType::of(DType::F32, {1, 4}));
    Value* axes = g.addInput("axes", TensorType::of(DType::I64, {2}));
    Node* shape = g.addNode(OpKind::Shape, {x}, 1, {"s"});
    Node* expand = g.addNode(OpKind::Expand, {y, shape->output(0)}, 1, {"e"});
    Node* n = g.addNode(OpKind::Gather, {shape->output(0), g.addConstant("i0", Tensor::scalar<int64_t>(0))},
                        1, {"n"});
    Node* range = g.addNode(OpKind::Range,
                            {g.addConstant("zero", Tensor::scalar<int64_t>(0)), n->output(0),
                             g.addConstant("one", Tensor::scalar<int64_t>(1))},
                            1, {"r"});
    Node* unsq = g.addNode(OpKind::Unsqueeze, {y, axes}, 1, {"u"});
    for (Node* k : {expand, range, unsq})
      g.addOutput(k->output(0));
    Tensor ty = Tensor::fromVector<float>({1, 4}, {1, 2, 3, 4});
    RUN_GRAPH(out, g, {iota(DType::F32, {3, 4}), ty, Tensor::fromVector<int64_t>({2}, {0, -1})});
    QCOMPARE(expand->output(0)->type().str(), std::string("f32[N, 4]"));
    QCOMPARE(range->output(0)->type().str(), std::string("i64[N]"));
    QCOMPARE(unsq->output(0)->type().str(), std::string("f32[?, ?, ?, ?]"));
    QCOMPARE(valuesOf(out[0]), (std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
    QCOMPARE(valuesOf(out[1]), (std::vector<double>{0, 1, 2}));
    QCOMPARE(out[2].sizes(), (std::vector<int64_t>{1, 1, 4, 1}));
  }

  void padNegativeCrops() {
    // NumPy: np.pad(np.arange(12).reshape(3, 4), ((1, 0), (0, 1)))[:-1, 2:]
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::I32, {3, 4}));
    Node* n = g.addNode(OpKind::Pad, {x, constI64(g, "pads", {1, -2, -1, 1})}, 1, {"y"});
    g.addOutput(n->output(0));
    RUN_GRAPH(out, g, {iota(DType::I32, {3, 4})});
    QCOMPARE(n->output(0)->type().str(), std::string("i32[3, 3]"));
    QCOMPARE(valuesOf(out[0]), (std::vector<double>{0, 0, 0, 2, 3, 0, 6, 7, 0}));
  }

  void shapeSizeConstantsAndRange() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F16, {Dim::symbol("N"), Dim(3), Dim(4)}));
    Node* shape = g.addNode(OpKind::Shape, {x}, 1, {"s"});
    shape->attrs().set("start", int64_t(1));
    shape->attrs().set("end", int64_t(-1));
    Node* size = g.addNode(OpKind::Size, {x}, 1, {"n"});
    Node* ints = g.addNode(OpKind::Constant, {}, 1, {"ints"});
    ints->attrs().set("value_ints", std::vector<int64_t>{2, 3});
    Node* cos = g.addNode(OpKind::ConstantOfShape, {ints->output(0)}, 1, {"cos"});
    cos->attrs().set("value", Tensor::fromVector<int32_t>({1}, {7}));
    Node* rf = g.addNode(OpKind::Range,
                         {g.addConstant("s0", Tensor::scalar<float>(1.f)),
                          g.addConstant("l0", Tensor::scalar<float>(2.f)),
                          g.addConstant("d0", Tensor::scalar<float>(0.3f))},
                         1, {"rf"});
    Node* ri = g.addNode(OpKind::Range,
                         {g.addConstant("s1", Tensor::scalar<int32_t>(10)),
                          g.addConstant("l1", Tensor::scalar<int32_t>(1)),
                          g.addConstant("d1", Tensor::scalar<int32_t>(-3))},
                         1, {"ri"});
    for (Node* n : {shape, size, cos, rf, ri})
      g.addOutput(n->output(0));
    RUN_GRAPH(out, g, {Tensor(DType::F16, {5, 3, 4})});
    QCOMPARE(shape->output(0)->type().str(), std::string("i64[1]"));
    QCOMPARE(valuesOf(out[0]), std::vector<double>{3});
    QCOMPARE(size->output(0)->type().str(), std::string("i64[]"));
    QCOMPARE(valuesOf(out[1]), std::vector<double>{60});
    QCOMPARE(cos->output(0)->type().str(), std::string("i32[2, 3]"));
    QCOMPARE(valuesOf(out[2]), std::vector<double>(6, 7));
    // ONNX defines output[i] = start + i * delta (f32 arithmetic, unlike np.arange's repeated
    // delta): NumPy float32 gives these; and np.arange(10, 1, -3).
    QCOMPARE(rf->output(0)->type().str(), std::string("f32[4]"));
    QCOMPARE(valuesOf(out[3]), (std::vector<double>{1.0, 1.2999999523162842, 1.600000023841858,
                                                    1.9000000953674316}));
    QCOMPARE(ri->output(0)->type().str(), std::string("i32[3]"));
    QCOMPARE(valuesOf(out[4]), (std::vector<double>{10, 7, 4}));
  }
};

QTEST_GUILESS_MAIN(TestOpsData)
#include "TestOpsData.moc"
