// Tests of the indexing, scan, selection and added reduction ops (Trilu, CumSum, ReduceProd/L1/
// L2/LogSumExp/SumSquare/LogSum, ArgMin, Hardmax, GatherElements, GatherND, ScatterElements,
// ScatterND, OneHot, TopK, NonZero, DepthToSpace, SpaceToDepth): inferred types and interpreter
// results against numbers computed with NumPy, and the errors for out-of-range indices.
#include "core/Graph.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace fb;

namespace {

/// One operand of a single-node test graph: a graph input (fed at run time) or a constant.
struct Operand {
  Tensor data;
  bool constant = false;
};
Operand in(Tensor t) { return {std::move(t), false}; }
Operand cst(Tensor t) { return {std::move(t), true}; }

Tensor f32(std::vector<int64_t> sizes, std::vector<float> v) {
  return Tensor::fromVector<float>(std::move(sizes), v);
}
Tensor i64(std::vector<int64_t> sizes, std::vector<int64_t> v) {
  return Tensor::fromVector<int64_t>(std::move(sizes), v);
}

/// The result of running one node: its outputs and inferred output types, or the error.
struct OneNode {
  std::vector<Tensor> outputs;
  std::vector<TensorType> types;
};

/// Builds a graph of one `op` node over `operands` (absent ones as nullptr when data is
/// invalid), infers shapes and interprets it.
Expected<OneNode> runOne(OpKind op, const std::vector<Operand>& operands,
                         const std::vector<std::pair<std::string, AttrValue>>& attrs = {},
                         size_t numOutputs = 1) {
  Graph g;
  std::vector<Value*> ins;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Operand& o = operands[i];
    std::string name = "x" + std::to_string(i);
    if (!o.data.valid())
      ins.push_back(nullptr);
    else if (o.constant)
      ins.push_back(g.addConstant(name, o.data));
    else {
      ins.push_back(g.addInput(name, o.data.type()));
      feeds.push_back(o.data);
    }
  }
  Node* n = g.addNode(op, ins, numOutputs, {}, "n");
  for (const auto& [k, v] : attrs)
    n->attrs().set(k, v);
  for (size_t i = 0; i < numOutputs; ++i)
    g.addOutput(n->output(i));
  FB_TRY(inferShapes(g));
  FB_ASSIGN_OR_RETURN(auto r, interpret(g, feeds));
  OneNode res;
  res.outputs = std::move(r.outputs);
  for (size_t i = 0; i < numOutputs; ++i)
    res.types.push_back(n->output(i)->type());
  return res;
}

std::vector<double> valuesOf(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(t.getAsDouble(i));
  return v;
}

/// True when got matches want element by element within tol (relative to max(1, |want|)).
bool closeTo(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-5) {
  if (got.size() != want.size())
    return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * std::max(1.0, std::fabs(want[i]))))
      return false;
  return true;
}

std::string str(const std::vector<double>& v) {
  std::string s = "[";
  for (double x : v)
    s += (s.size() > 1 ? ", " : "") + std::to_string(x);
  return s + "]";
}

#define RUN_ONE(res, ...)                                                                          \
  auto res##Or = runOne(__VA_ARGS__);                                                              \
  QVERIFY2(res##Or.ok(), res##Or.ok() ? "" : res##Or.error().message().c_str());                   \
  auto& res = *res##Or

#define CHECK_VALUES(t, ...)                                                                       \
  do {                                                                                             \
    std::vector<double> got_ = valuesOf(t), want_ = __VA_ARGS__;                                   \
    QVERIFY2(closeTo(got_, want_), (str(got_) + " != " + str(want_)).c_str());                     \
  } while (0)

/// The error message of a run that must fail.
std::string errorOf(const Expected<OneNode>& r) { return r.ok() ? "(no error)" : r.error().message(); }

} // namespace

class TestOpsIndexing : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void trilu() {
    Tensor x(DType::F32, {3, 4});
    for (int64_t i = 0; i < 12; ++i)
      x.setFromDouble(i, double(i));
    RUN_ONE(up, OpKind::Trilu, {in(x), cst(Tensor::scalar<int64_t>(1))});
    CHECK_VALUES(up.outputs[0], {0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11});
    RUN_ONE(lo, OpKind::Trilu, {in(x), cst(Tensor::scalar<int64_t>(-1))},
            {{"upper", int64_t(0)}});
    CHECK_VALUES(lo.outputs[0], {0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0});
    QCOMPARE(lo.types[0], TensorType::of(DType::F32, {3, 4}));
  }

  void cumSum() {
    Tensor c = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    RUN_ONE(er, OpKind::CumSum, {in(c), cst(Tensor::scalar<int64_t>(1))},
            {{"exclusive", int64_t(1)}, {"reverse", int64_t(1)}});
    CHECK_VALUES(er.outputs[0], {5, 3, 0, 11, 6, 0});
    RUN_ONE(a0, OpKind::CumSum, {in(c), cst(Tensor::scalar<int32_t>(-2))});
    CHECK_VALUES(a0.outputs[0], {1, 2, 3, 5, 7, 9});
  }

  void reductions() {
    Tensor a = f32({2, 3}, {1, -2, 3, 4, 5, -6});
    Tensor pos = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    RUN_ONE(prod, OpKind::ReduceProd, {in(a)},
            {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(0)}});
    CHECK_VALUES(prod.outputs[0], {-6, -120});
    QCOMPARE(prod.types[0], TensorType::of(DType::F32, {2}));
    // Opset 18: axes as input 1.
    RUN_ONE(l1, OpKind::ReduceL1, {in(a), cst(i64({1}, {0}))});
    CHECK_VALUES(l1.outputs[0], {5, 7, 9});
    QCOMPARE(l1.types[0], TensorType::of(DType::F32, {1, 3}));
    RUN_ONE(l2, OpKind::ReduceL2, {in(a)}, {{"keepdims", int64_t(0)}});
    CHECK_VALUES(l2.outputs[0], {9.539392471313477});
    RUN_ONE(lse, OpKind::ReduceLogSumExp, {in(a)}, {{"axes", std::vector<int64_t>{-1}}});
    CHECK_VALUES(lse.outputs[0], {3.132845163345337, 5.313273906707764});
    // Shifted by the maximum: e^200 overflows even a double, the result does not.
    RUN_ONE(big, OpKind::ReduceLogSumExp, {in(f32({2, 2}, {200, 200, 1000, -1000}))},
            {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(0)}});
    CHECK_VALUES(big.outputs[0], {200.69314718055995, 1000});
    RUN_ONE(ss, OpKind::ReduceSumSquare, {in(a)}, {{"axes", std::vector<int64_t>{1}}});
    CHECK_VALUES(ss.outputs[0], {14, 77});
    RUN_ONE(ls, OpKind::ReduceLogSum, {in(pos)}, {{"axes", std::vector<int64_t>{1}}});
    CHECK_VALUES(ls.outputs[0], {1.7917594909667969, 2.70805025100708});
    // noop_with_empty_axes keeps the input; an empty set reduces to the identity.
    RUN_ONE(noop, OpKind::ReduceProd, {in(a), cst(i64({0}, {}))},
            {{"noop_with_empty_axes", int64_t(1)}});
    CHECK_VALUES(noop.outputs[0], {1, -2, 3, 4, 5, -6});
    RUN_ONE(empty, OpKind::ReduceProd, {in(Tensor(DType::F32, {2, 0}))},
            {{"axes", std::vector<int64_t>{1}}});
    CHECK_VALUES(empty.outputs[0], {1, 1});
    // Integer sums wrap and L2 of integers truncates like NumPy's astype.
    RUN_ONE(il2, OpKind::ReduceL2, {in(i64({3}, {3, 4, 1}))}, {{"keepdims", int64_t(0)}});
    CHECK_VALUES(il2.outputs[0], {5}); // sqrt(26) = 5.09
  }

  void argMinHardmax() {
    Tensor t = f32({2, 4}, {3, 1, 1, 5, 2, 2, 0, 0});
    RUN_ONE(first, OpKind::ArgMin, {in(t)}, {{"axis", int64_t(1)}, {"keepdims", int64_t(0)}});
    CHECK_VALUES(first.outputs[0], {1, 2});
    RUN_ONE(last, OpKind::ArgMin, {in(t)}, {{"axis", int64_t(1)}, {"select_last_index", int64_t(1)}});
    CHECK_VALUES(last.outputs[0], {2, 3});
    QCOMPARE(last.types[0], TensorType::of(DType::I64, {2, 1}));
    RUN_ONE(h, OpKind::Hardmax, {in(f32({2, 4}, {1, 3, 3, 2, 0, -1, -1, -2}))});
    CHECK_VALUES(h.outputs[0], {0, 1, 0, 0, 1, 0, 0, 0});
  }

  void gathers() {
    Tensor d(DType::F32, {3, 3});
    for (int64_t i = 0; i < 9; ++i)
      d.setFromDouble(i, double(i));
    RUN_ONE(ge, OpKind::GatherElements, {in(d), in(i64({2, 3}, {1, 0, -1, 2, 2, 0}))},
            {{"axis", int64_t(1)}});
    CHECK_VALUES(ge.outputs[0], {1, 0, 2, 5, 5, 3});
    QCOMPARE(ge.types[0], TensorType::of(DType::F32, {2, 3}));
    Tensor D(DType::F32, {2, 2, 2});
    for (int64_t i = 0; i < 8; ++i)
      D.setFromDouble(i, double(i));
    RUN_ONE(nd, OpKind::GatherND, {in(D), in(i64({2, 2}, {0, 1, 1, 0}))});
    CHECK_VALUES(nd.outputs[0], {2, 3, 4, 5});
    RUN_ONE(ndb, OpKind::GatherND, {in(D), in(i64({2, 1}, {0, 1}))}, {{"batch_dims", int64_t(1)}});
    CHECK_VALUES(ndb.outputs[0], {0, 1, 6, 7});
    QCOMPARE(ndb.types[0], TensorType::of(DType::F32, {2, 2}));
    // Out of range: an error naming the index, axis and size, never a read outside data.
    std::string e = errorOf(runOne(OpKind::GatherElements, {in(d), in(i64({1, 1}, {3}))},
                                   {{"axis", int64_t(1)}}));
    QVERIFY2(e.find("index 3 is out of range for axis 1 of size 3") != std::string::npos, e.c_str());
    e = errorOf(runOne(OpKind::GatherND, {in(D), in(i64({1, 2}, {0, -3}))}));
    QVERIFY2(e.find("index -3 is out of range for axis 1 of size 2") != std::string::npos, e.c_str());
    // Empty indices give an empty result.
    RUN_ONE(none, OpKind::GatherElements, {in(d), in(i64({0, 3}, {}))});
    QCOMPARE(none.outputs[0].numElements(), int64_t(0));
  }

  void scatters() {
    Tensor ones = f32({2, 3}, {1, 1, 1, 1, 1, 1});
    RUN_ONE(add, OpKind::ScatterElements,
            {in(ones), in(i64({2, 3}, {0, 0, 2, 1, 1, -1})), in(f32({2, 3}, {1, 2, 3, 4, 5, 6}))},
            {{"axis", int64_t(1)}, {"reduction", std::string("add")}});
    CHECK_VALUES(add.outputs[0], {4, 1, 4, 1, 10, 7});
    // Without a reduction the later of two updates to one element wins.
    RUN_ONE(none, OpKind::ScatterElements,
            {in(ones), in(i64({1, 2}, {2, 2})), in(f32({1, 2}, {7, 8}))}, {{"axis", int64_t(1)}});
    CHECK_VALUES(none.outputs[0], {1, 1, 8, 1, 1, 1});
    Tensor data = f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    RUN_ONE(mul, OpKind::ScatterND,
            {in(data), in(i64({3, 1}, {1, 3, 1})), in(f32({3, 2}, {2, 3, 4, 5, 10, 10}))},
            {{"reduction", std::string("mul")}});
    CHECK_VALUES(mul.outputs[0], {1, 2, 60, 120, 5, 6, 28, 40});
    std::string e = errorOf(runOne(OpKind::ScatterND,
                                   {in(data), in(i64({1, 1}, {4})), in(f32({1, 2}, {0, 0}))}));
    QVERIFY2(e.find("index 4 is out of range for axis 0 of size 4") != std::string::npos, e.c_str());
    e = errorOf(runOne(OpKind::ScatterElements, {in(ones), in(i64({1, 1}, {-4})), in(f32({1, 1}, {0}))},
                       {{"axis", int64_t(1)}}));
    QVERIFY2(e.find("index -4 is out of range for axis 1 of size 3") != std::string::npos, e.c_str());
    e = errorOf(runOne(OpKind::ScatterElements, {in(ones), in(i64({1, 1}, {0})), in(f32({1, 1}, {0}))},
                       {{"reduction", std::string("avg")}}));
    QVERIFY2(e.find("reduction 'avg'") != std::string::npos, e.c_str());
  }

  void oneHot() {
    RUN_ONE(r, OpKind::OneHot,
            {in(i64({4}, {0, -1, 5, 2})), cst(Tensor::scalar<int64_t>(4)), in(f32({2}, {0, 9}))});
    CHECK_VALUES(r.outputs[0], {9, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 9, 0});
    QCOMPARE(r.types[0], TensorType::of(DType::F32, {4, 4}));
    RUN_ONE(a0, OpKind::OneHot,
            {in(i64({2}, {1, 0})), cst(Tensor::scalar<int64_t>(3)), in(f32({2}, {0, 1}))},
            {{"axis", int64_t(0)}});
    CHECK_VALUES(a0.outputs[0], {0, 1, 1, 0, 0, 0});
  }

  void topK() {
    Tensor v = f32({2, 5}, {1, 3, 3, 2, 5, 0, 0, -1, 4, 4});
    RUN_ONE(lg, OpKind::TopK, {in(v), cst(i64({1}, {3}))}, {}, 2);
    CHECK_VALUES(lg.outputs[0], {5, 3, 3, 4, 4, 0});
    CHECK_VALUES(lg.outputs[1], {4, 1, 2, 3, 4, 0});
    QCOMPARE(lg.types[1], TensorType::of(DType::I64, {2, 3}));
    RUN_ONE(sm, OpKind::TopK, {in(v), cst(i64({1}, {3}))}, {{"largest", int64_t(0)}}, 2);
    CHECK_VALUES(sm.outputs[0], {1, 2, 3, -1, 0, 0});
    CHECK_VALUES(sm.outputs[1], {0, 3, 1, 2, 0, 1});
    std::string e = errorOf(runOne(OpKind::TopK, {in(v), in(i64({1}, {6}))}, {}, 2));
    QVERIFY2(e.find("K = 6") != std::string::npos, e.c_str());
  }

  void nonZero() {
    RUN_ONE(r, OpKind::NonZero, {in(f32({2, 3}, {1, 0, 2, 0, 0, 3}))});
    CHECK_VALUES(r.outputs[0], {0, 0, 1, 0, 2, 2});
    QCOMPARE(r.outputs[0].sizes(), (std::vector<int64_t>{2, 3}));
    QVERIFY(!r.types[0].isStatic()); // the count depends on the data
    RUN_ONE(z, OpKind::NonZero, {in(f32({2, 2}, {0, 0, 0, 0}))});
    QCOMPARE(z.outputs[0].sizes(), (std::vector<int64_t>{2, 0}));
  }

  void depthSpace() {
    Tensor x(DType::F32, {1, 8, 1, 2});
    for (int64_t i = 0; i < 16; ++i)
      x.setFromDouble(i, double(i));
    RUN_ONE(dcr, OpKind::DepthToSpace, {in(x)}, {{"blocksize", int64_t(2)}});
    CHECK_VALUES(dcr.outputs[0], {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15});
    QCOMPARE(dcr.types[0], TensorType::of(DType::F32, {1, 2, 2, 4}));
    RUN_ONE(crd, OpKind::DepthToSpace, {in(x)}, {{"blocksize", int64_t(2)}, {"mode", std::string("CRD")}});
    CHECK_VALUES(crd.outputs[0], {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15});
    Tensor y(DType::F32, {1, 1, 4, 4});
    for (int64_t i = 0; i < 16; ++i)
      y.setFromDouble(i, double(i));
    RUN_ONE(s2d, OpKind::SpaceToDepth, {in(y)}, {{"blocksize", int64_t(2)}});
    CHECK_VALUES(s2d.outputs[0], {0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15});
    QCOMPARE(s2d.types[0], TensorType::of(DType::F32, {1, 4, 2, 2}));
  }
};

QTEST_GUILESS_MAIN(TestOpsIndexing)
#include "TestOpsIndexing.moc"
