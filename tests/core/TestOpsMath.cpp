// Tests of the math ops (unary, Clip, Cast, Dropout, broadcasting binary ops, reductions,
// softmax, normalization): shape inference with symbolic dims, interpreter values, errors, costs.
// Expected values are hand-computed or computed with NumPy (float32) and pasted.
#include "core/Graph.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/ops/OpContext.h"
#include "OpTestUtil.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace fb;
using namespace fb::test;

namespace {

/// Infers shapes, then interprets; returns the outputs or the first error.
Expected<std::vector<Tensor>> run(Graph& g, const std::vector<Tensor>& inputs) {
  Status st = inferShapes(g);
  if (!st.ok())
    return st.error();
  auto r = interpret(g, inputs);
  if (!r.ok())
    return r.error();
  return r->outputs;
}

/// Builds `op` on one input tensor of `type`, runs it on `x` and returns output 0.
Expected<Tensor> runUnary(OpKind op, const Tensor& x, const AttrMap& attrs = {}) {
  Graph g;
  Value* in = g.addInput("x", x.type());
  Node* n = g.addNode(op, {in}, 1, {"y"}, "op");
  for (const auto& [k, v] : attrs)
    n->attrs().set(k, v);
  g.addOutput(n->output(0));
  auto r = run(g, {x});
  if (!r.ok())
    return r.error();
  return (*r)[0];
}

TensorType sym(DType d, std::vector<Dim> dims) {
  return TensorType(d, std::move(dims));
}

const Tensor kX4 = Tensor::fromVector<float>({4}, {-2.f, -0.5f, 0.5f, 2.f});

} // namespace

class TestOpsMath : public QObject {
  Q_OBJECT
private Q_SLOTS:
  // -- unary ------------------------------------------------------------------------------------

  void unaryFloatValues() {
    struct Case {
      OpKind op;
      std::vector<double> want;
    };
    const Case cases[] = {
        {OpKind::Relu, {0, 0, 0.5, 2}},
        {OpKind::LeakyRelu, {-0.02, -0.005, 0.5, 2}},
        {OpKind::Sigmoid, {0.119202934, 0.37754068, 0.62245935, 0.880797}},
        {OpKind::HardSigmoid, {0.099999994, 0.4, 0.6, 0.9}},
        {OpKind::HardSwish, {-0.3333333, -0.20833333, 0.29166666, 1.6666667}},
        {OpKind::Tanh, {-0.9640276, -0.4621172, 0.4621172, 0.9640276}},
        {OpKind::Erf, {-0.9953223, -0.5204999, 0.5204999, 0.9953223}},
        {OpKind::Exp, {0.13533528, 0.60653067, 1.6487212, 7.3890557}},
        {OpKind::Neg, {2, 0.5, -0.5, -2}},
        {OpKind::Abs, {2, 0.5, 0.5, 2}},
        {OpKind::Reciprocal, {-0.5, -2, 2, 0.5}},
        {OpKind::Floor, {-2, -1, 0, 2}},
        {OpKind::Ceil, {-2, -0, 1, 2}},
        {OpKind::Identity, {-2, -0.5, 0.5, 2}},
    };
    for (const Case& c : cases) {
      auto y = runUnary(c.op, kX4);
      QVERIFY2(y.ok(), y.ok() ? "" : y.error().message().c_str());
      QCOMPARE(y->dtype(), DType::F32);
      QVERIFY2(near(values(*y), c.want), opName(c.op));
    }
    Tensor p = Tensor::fromVector<float>({4}, {0.25f, 1.f, 4.f, 9.f});
    QVERIFY(near(values(*runUnary(OpKind::Log, p)), {-1.3862944, 0, 1.3862944, 2.1972246}));
    QVERIFY(near(values(*runUnary(OpKind::Sqrt, p)), {0.5, 1, 2, 3}));
    AttrMap a;
    a.set("alpha", 0.5f);
    QVERIFY(near(values(*runUnary(OpKind::LeakyRelu, kX4, a)), {-1, -0.25, 0.5, 2}));
    // Large magnitudes: the split sigmoid neither overflows nor returns NaN.
    Tensor big = Tensor::fromVector<float>({2}, {-1000.f, 1000.f});
    QVERIFY(near(values(*runUnary(OpKind::Sigmoid, big)), {0, 1}));
  }

  void unaryIntegerAndBool() {
    auto relu = runUnary(OpKind::Relu, Tensor::fromVector<int32_t>({3}, {-5, 0, 7}));
    QVERIFY(relu.ok());
    QCOMPARE(relu->dtype(), DType::I32);
    QCOMPARE(values(*relu), (std::vector<double>{0, 0, 7}));
    // abs(-128) wraps to -128 in int8, as NumPy does.
    auto abs = runUnary(OpKind::Abs, Tensor::fromVector<int8_t>({3}, {-128, -3, 4}));
    QCOMPARE(values(*abs), (std::vector<double>{-128, 3, 4}));
    auto absU8 = runUnary(OpKind::Abs, Tensor::fromVector<uint8_t>({2}, {200, 3}));
    QCOMPARE(values(*absU8), (std::vector<double>{200, 3}));
    auto neg = runUnary(OpKind::Neg, Tensor::fromVector<int64_t>({2}, {5, -9}));
    QCOMPARE(values(*neg), (std::vector<double>{-5, 9}));
    auto nt = runUnary(OpKind::Not, Tensor::fromVector<bool>({2}, {true, false}));
    QCOMPARE(nt->dtype(), DType::Bool);
    QCOMPARE(values(*nt), (std::vector<double>{0, 1}));
  }

  void unarySixteenBitFloats() {
    auto h = runUnary(OpKind::Relu, Tensor::fromVector<f16_t>({3}, {-1.5f, 0.f, 2.5f}));
    QVERIFY(h.ok());
    QCOMPARE(h->dtype(), DType::F16);
    QCOMPARE(values(*h), (std::vector<double>{0, 0, 2.5}));
    auto b = runUnary(OpKind::Exp, Tensor::fromVector<bf16_t>({2}, {0.f, 1.f}));
    QCOMPARE(b->dtype(), DType::BF16);
    // bf16(e) = 2.71875 (8 mantissa bits, round to nearest).
    QCOMPARE(values(*b), (std::vector<double>{1, 2.71875}));
  }

  void unaryRejectsDType() {
    auto r = runUnary(OpKind::Sigmoid, Tensor::fromVector<int32_t>({1}, {1}));
    QVERIFY(!r.ok());
    QVERIFY(contains(r.error(), "\"op\" (Sigmoid)"));
    QVERIFY(contains(r.error(), "i32"));
    auto u = runUnary(OpKind::Relu, Tensor::fromVector<uint8_t>({1}, {1}));
    QVERIFY(!u.ok());
    QVERIFY(contains(u.error(), "u8"));
  }

  void clip() {
    Tensor x = Tensor::fromVector<float>({4}, {-3.f, -1.f, 1.f, 3.f});
    auto clipWith = [&](std::optional<float> lo, std::optional<float> hi) {
      Graph g;
      Value* in = g.addInput("x", x.type());
      Value* l = lo ? g.addConstant("lo", Tensor::scalar<float>(*lo)) : nullptr;
      Value* h = hi ? g.addConstant("hi", Tensor::scalar<float>(*hi)) : nullptr;
      Node* n = g.addNode(OpKind::Clip, {in, l, h}, 1, {"y"});
      g.addOutput(n->output(0));
      auto r = run(g, {x});
      return r.ok() ? values((*r)[0]) : std::vector<double>{};
    };
    QCOMPARE(clipWith(-2.f, 2.f), (std::vector<double>{-2, -1, 1, 2}));
    QCOMPARE(clipWith(0.f, std::nullopt), (std::vector<double>{0, 0, 1, 3}));
    QCOMPARE(clipWith(std::nullopt, 0.f), (std::vector<double>{-3, -1, 0, 0}));
    QCOMPARE(clipWith(std::nullopt, std::nullopt), (std::vector<double>{-3, -1, 1, 3}));
    QCOMPARE(clipWith(2.f, 1.f), (std::vector<double>{1, 1, 1, 1})); // min > max gives max

    Graph g;
    Value* in = g.addInput("x", TensorType::of(DType::I8, {3}));
    Value* h = g.addConstant("hi", Tensor::scalar<int8_t>(5));
    Node* n = g.addNode(OpKind::Clip, {in, nullptr, h}, 1, {"y"});
    g.addOutput(n->output(0));
    auto r = run(g, {Tensor::fromVector<int8_t>({3}, {-100, 4, 100})});
    QVERIFY(r.ok());
    QCOMPARE(values((*r)[0]), (std::vector<double>{-100, 4, 5}));
  }

  void cast() {
    Tensor x = Tensor::fromVector<float>({5}, {-1.7f, 2.9f, 0.f, 300.5f, -0.2f});
    auto castTo = [&](const Tensor& t, int64_t to) {
      AttrMap a;
      a.set("to", to);
      return runUnary(OpKind::Cast, t, a);
    };
    auto i32 = castTo(x, 6);
    QVERIFY(i32.ok());
    QCOMPARE(i32->dtype(), DType::I32);
    QCOMPARE(values(*i32), (std::vector<double>{-1, 2, 0, 300, 0})); // truncation toward zero
    auto u8 = castTo(Tensor::fromVector<float>({2}, {2.9f, 255.f}), 2);
    QCOMPARE(values(*u8), (std::vector<double>{2, 255}));
    auto b = castTo(x, 9);
    QCOMPARE(b->dtype(), DType::Bool);
    QCOMPARE(values(*b), (std::vector<double>{1, 1, 0, 1, 1}));
    auto f = castTo(Tensor::fromVector<bool>({2}, {true, false}), 1);
    QCOMPARE(values(*f), (std::vector<double>{1, 0}));
    auto h = castTo(Tensor::fromVector<float>({2}, {0.1f, 65504.f}), 10);
    QCOMPARE(h->dtype(), DType::F16);
    QCOMPARE(values(*h), (std::vector<double>{0.0999755859375, 65504}));
    auto wrap = castTo(Tensor::fromVector<int32_t>({2}, {300, -1}), 2); // i32 -> u8 wraps
    QCOMPARE(values(*wrap), (std::vector<double>{44, 255}));
    auto dbl = castTo(x, 11);
    QVERIFY(!dbl.ok());
    QVERIFY(dbl.error().isUnsupported());
    QVERIFY(contains(dbl.error(), "(Cast)"));
  }

  void dropout() {
    Graph g;
    Value* in = g.addInput("x", sym(DType::F32, {Dim::symbol("N"), 2}));
    Value* ratio = g.addConstant("ratio", Tensor::scalar<float>(0.5f));
    Node* n = g.addNode(OpKind::Dropout, {in, ratio}, 2, {"y", "mask"});
    g.addOutput(n->output(0));
    g.addOutput(n->output(1));
    auto r = run(g, {Tensor::fromVector<float>({1, 2}, {3.f, -4.f})});
    QVERIFY(r.ok());
    QCOMPARE(n->output(1)->type().str(), std::string("bool[N, 2]"));
    QCOMPARE(values((*r)[0]), (std::vector<double>{3, -4}));
    QCOMPARE(values((*r)[1]), (std::vector<double>{1, 1}));

    Graph t;
    Value* tin = t.addInput("x", TensorType::of(DType::F32, {2}));
    Value* train = t.addConstant("train", Tensor::scalar<bool>(true));
    Node* tn = t.addNode(OpKind::Dropout, {tin, nullptr, train}, 1, {"y"});
    t.addOutput(tn->output(0));
    Status st = inferShapes(t);
    QVERIFY(!st.ok());
    QVERIFY(st.error().isUnsupported());
  }

  // -- binary -----------------------------------------------------------------------------------

  void symbolicBroadcastFlows() {
    Graph g;
    Value* x = g.addInput("x", sym(DType::F32, {Dim::symbol("N"), 1, 3}));
    Value* b = g.addInput("b", sym(DType::F32, {4, 1}));
    Node* add = g.addNode(OpKind::Add, {x, b}, 1, {"s"}, "add");
    Node* relu = g.addNode(OpKind::Relu, {add->output(0)}, 1, {"r"});
    Node* mean = g.addNode(OpKind::ReduceMean, {relu->output(0)}, 1, {"m"});
    mean->attrs().set("axes", std::vector<int64_t>{-1});
    Node* sum = g.addNode(OpKind::ReduceSum, {relu->output(0)}, 1, {"t"});
    sum->attrs().set("keepdims", int64_t(0));
    sum->attrs().set("axes", std::vector<int64_t>{1});
    Node* sm = g.addNode(OpKind::Softmax, {mean->output(0)}, 1, {"p"});
    sm->attrs().set("axis", int64_t(-1));
    g.addOutput(sum->output(0));
    g.addOutput(sm->output(0));
    QVERIFY(inferShapes(g).ok());
    QCOMPARE(add->output(0)->type().str(), std::string("f32[N, 4, 3]"));
    QCOMPARE(relu->output(0)->type().str(), std::string("f32[N, 4, 3]"));
    QCOMPARE(mean->output(0)->type().str(), std::string("f32[N, 4, 1]"));
    QCOMPARE(sum->output(0)->type().str(), std::string("f32[N, 3]"));
    QCOMPARE(sm->output(0)->type().str(), std::string("f32[N, 4, 1]"));

    Tensor xv = Tensor::fromVector<float>({2, 1, 3}, {1, -2, 3, 0, 5, -6});
    Tensor bv = Tensor::fromVector<float>({4, 1}, {0, 1, -1, 10});
    auto r = interpret(g, {xv, bv});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    // relu(x + b) summed over the 4 rows of b: x=[1,-2,3] gives [1+2+0+11, 0+0+0+8, 3+4+2+13].
    QCOMPARE(values(r->outputs[0]), (std::vector<double>{14, 8, 22, 11, 30, 4}));
    QCOMPARE(r->outputs[1].sizes(), (std::vector<int64_t>{2, 4, 1}));
    QCOMPARE(values(r->outputs[1]), (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1}));
  }

  void arithmetic() {
    auto binary = [](OpKind op, const Tensor& a, const Tensor& b) -> Expected<Tensor> {
      Graph g;
      Value* x = g.addInput("a", a.type());
      Value* y = g.addInput("b", b.type());
      Node* n = g.addNode(op, {x, y}, 1, {"z"}, "bin");
      g.addOutput(n->output(0));
      auto r = run(g, {a, b});
      if (!r.ok())
        return r.error();
      return (*r)[0];
    };
    Tensor a = Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor row = Tensor::fromVector<float>({3}, {10, 20, 30});
    Tensor s = Tensor::scalar<float>(2);
    QCOMPARE(values(*binary(OpKind::Add, a, row)), (std::vector<double>{11, 22, 33, 14, 25, 36}));
    QCOMPARE(values(*binary(OpKind::Sub, row, a)), (std::vector<double>{9, 18, 27, 6, 15, 24}));
    QCOMPARE(values(*binary(OpKind::Mul, a, s)), (std::vector<double>{2, 4, 6, 8, 10, 12}));
    QCOMPARE(
        values(*binary(OpKind::Div, s, a)),
        (std::vector<double>{2, 1, double(2.f / 3.f), 0.5, double(2.f / 5.f), double(2.f / 6.f)}));
    QCOMPARE(values(*binary(OpKind::Pow, a, s)), (std::vector<double>{1, 4, 9, 16, 25, 36}));
    // Integer division truncates toward zero; division by zero gives 0 instead of trapping.
    Tensor n = Tensor::fromVector<int32_t>({4}, {-7, 7, 7, 5});
    Tensor d = Tensor::fromVector<int32_t>({4}, {2, -2, 2, 0});
    QCOMPARE(values(*binary(OpKind::Div, n, d)), (std::vector<double>{-3, -3, 3, 0}));
    // uint8 arithmetic wraps (test_add_uint8 style).
    Tensor u = Tensor::fromVector<uint8_t>({2}, {250, 3});
    Tensor v = Tensor::fromVector<uint8_t>({2}, {10, 5});
    QCOMPARE(values(*binary(OpKind::Add, u, v)), (std::vector<double>{4, 8}));
    QCOMPARE(values(*binary(OpKind::Sub, v, u)), (std::vector<double>{16, 2}));
    // Pow with an exponent of another dtype keeps the base dtype (test_pow_types_int32_float32).
    auto p = binary(OpKind::Pow, Tensor::fromVector<int32_t>({3}, {1, 2, 3}),
                    Tensor::fromVector<float>({3}, {4, 5, 6}));
    QCOMPARE(p->dtype(), DType::I32);
    QCOMPARE(values(*p), (std::vector<double>{1, 32, 729}));
    auto pi = binary(OpKind::Pow, Tensor::fromVector<int64_t>({3}, {3, -2, 2}),
                     Tensor::fromVector<int64_t>({3}, {3, 3, -1}));
    QCOMPARE(values(*pi), (std::vector<double>{27, -8, 0}));
    auto pf = binary(OpKind::Pow, Tensor::fromVector<float>({2}, {4, 2}),
                     Tensor::fromVector<int64_t>({2}, {-1, 10}));
    QCOMPARE(values(*pf), (std::vector<double>{0.25, 1024}));
    // PRelu: slope [3] broadcasts along the last axis of X.
    Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 2, -3, 4, -5, -6});
    Tensor slope = Tensor::fromVector<float>({3}, {0.5, 0.25, 2});
    QCOMPARE(values(*binary(OpKind::PRelu, x, slope)),
             (std::vector<double>{-0.5, 2, -6, 4, -1.25, -12}));
    // f16 arithmetic computes in float and rounds once.
    auto h = binary(OpKind::Add, Tensor::fromVector<f16_t>({2}, {1.f, 0.1f}),
                    Tensor::fromVector<f16_t>({2}, {1024.f, 0.2f}));
    QCOMPARE(h->dtype(), DType::F16);
    QCOMPARE(values(*h), (std::vector<double>{
                             1025, double(float(f16_t(float(f16_t(0.1f)) + float(f16_t(0.2f)))))}));
  }

  void comparisonLogicWhere() {
    Graph g;
    Value* a = g.addInput("a", TensorType::of(DType::I64, {2, 2}));
    Value* b = g.addInput("b", TensorType::of(DType::I64, {2}));
    Node* eq = g.addNode(OpKind::Equal, {a, b}, 1, {"eq"});
    Node* lt = g.addNode(OpKind::Less, {a, b}, 1, {"lt"});
    Node* gt = g.addNode(OpKind::Greater, {a, b}, 1, {"gt"});
    Node* orN = g.addNode(OpKind::Or, {eq->output(0), lt->output(0)}, 1, {"le"});
    Node* andN = g.addNode(OpKind::And, {orN->output(0), gt->output(0)}, 1, {"never"});
    Value* big = g.addConstant("big", Tensor::scalar<int64_t>(100));
    Node* w = g.addNode(OpKind::Where, {gt->output(0), big, a}, 1, {"w"});
    for (Node* n : {eq, lt, gt, andN, w})
      g.addOutput(n->output(0));
    auto r = run(g, {Tensor::fromVector<int64_t>({2, 2}, {1, 5, 3, 2}),
                     Tensor::fromVector<int64_t>({2}, {3, 2})});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE(eq->output(0)->type().str(), std::string("bool[2, 2]"));
    QCOMPARE(values((*r)[0]), (std::vector<double>{0, 0, 1, 1}));
    QCOMPARE(values((*r)[1]), (std::vector<double>{1, 0, 0, 0}));
    QCOMPARE(values((*r)[2]), (std::vector<double>{0, 1, 0, 0}));
    QCOMPARE(values((*r)[3]), (std::vector<double>{0, 0, 0, 0}));
    QCOMPARE(w->output(0)->type().str(), std::string("i64[2, 2]"));
    QCOMPARE(values((*r)[4]), (std::vector<double>{1, 100, 3, 2}));
  }

  void variadic() {
    Graph g;
    Value* a = g.addInput("a", TensorType::of(DType::F32, {2, 2}));
    Value* b = g.addInput("b", TensorType::of(DType::F32, {2}));
    Value* c = g.addInput("c", TensorType::of(DType::F32, {2, 1}));
    Node* mx = g.addNode(OpKind::Max, {a, b, c}, 1, {"mx"});
    Node* mn = g.addNode(OpKind::Min, {a, b, c}, 1, {"mn"});
    Node* sm = g.addNode(OpKind::Sum, {a, b, c}, 1, {"sm"});
    Node* me = g.addNode(OpKind::Mean, {a, b, c}, 1, {"me"});
    Node* one = g.addNode(OpKind::Max, {b}, 1, {"one"});
    for (Node* n : {mx, mn, sm, me, one})
      g.addOutput(n->output(0));
    auto r =
        run(g, {Tensor::fromVector<float>({2, 2}, {1, 8, -3, 0}),
                Tensor::fromVector<float>({2}, {2, 4}), Tensor::fromVector<float>({2, 1}, {0, 6})});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE(values((*r)[0]), (std::vector<double>{2, 8, 6, 6}));
    QCOMPARE(values((*r)[1]), (std::vector<double>{0, 0, -3, 0}));
    QCOMPARE(values((*r)[2]), (std::vector<double>{3, 12, 5, 10}));
    QCOMPARE(values((*r)[3]), (std::vector<double>{1, 4, double(5.f / 3.f), double(10.f / 3.f)}));
    QCOMPARE(values((*r)[4]), (std::vector<double>{2, 4}));
  }

  void binaryErrors() {
    Graph g;
    Value* a = g.addInput("a", TensorType::of(DType::F32, {2, 3}));
    Value* b = g.addInput("b", TensorType::of(DType::F32, {4}));
    Node* n = g.addNode(OpKind::Add, {a, b}, 1, {"z"}, "badAdd");
    g.addOutput(n->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY(contains(st.error(), "\"badAdd\" (Add)"));
    QVERIFY(contains(st.error(), "cannot be broadcast"));

    Graph m;
    Value* x = m.addInput("x", TensorType::of(DType::F32, {2}));
    Value* i = m.addInput("i", TensorType::of(DType::I32, {2}));
    Node* mul = m.addNode(OpKind::Mul, {x, i}, 1, {"z"}, "mixed");
    m.addOutput(mul->output(0));
    st = inferShapes(m);
    QVERIFY(!st.ok());
    QVERIFY(contains(st.error(), "\"mixed\" (Mul)"));
    QVERIFY(contains(st.error(), "i32"));

    Graph p;
    Value* px = p.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Value* ps = p.addInput("s", TensorType::of(DType::F32, {2}));
    Node* pr = p.addNode(OpKind::PRelu, {px, ps}, 1, {"z"}, "prelu");
    p.addOutput(pr->output(0));
    st = inferShapes(p);
    QVERIFY(!st.ok());
    QVERIFY(contains(st.error(), "\"prelu\" (PRelu)"));

    // A symbolic dim that turns out not to broadcast fails at run time, naming the node.
    Graph s;
    Value* sx = s.addInput("x", sym(DType::F32, {Dim::symbol("N")}));
    Value* sy = s.addInput("y", TensorType::of(DType::F32, {3}));
    Node* sn = s.addNode(OpKind::Sub, {sx, sy}, 1, {"z"}, "late");
    s.addOutput(sn->output(0));
    auto r =
        run(s, {Tensor::fromVector<float>({2}, {1, 2}), Tensor::fromVector<float>({3}, {1, 2, 3})});
    QVERIFY(!r.ok());
    QVERIFY(contains(r.error(), "\"late\" (Sub)"));
  }

  void shapeValueArithmetic() {
    Graph g;
    Value* shape = g.addInput("shape", TensorType::of(DType::I64, {2}));
    shape->setShapeValue(std::vector<Dim>{Dim::symbol("N"), Dim(6)});
    Value* ones = g.addConstant("ones", Tensor::fromVector<int64_t>({2}, {1, 2}));
    Value* two = g.addConstant("two", Tensor::fromVector<int64_t>({1}, {2}));
    Value* c = g.addConstant("c", Tensor::fromVector<int64_t>({2}, {4, 9}));
    Node* mul = g.addNode(OpKind::Mul, {shape, ones}, 1, {"m"}); // [N, 12]
    Node* div = g.addNode(OpKind::Div, {c, two}, 1, {"d"});      // [2, 4]
    Node* add = g.addNode(OpKind::Add, {c, two}, 1, {"a"});      // [6, 11]
    Node* sub = g.addNode(OpKind::Sub, {shape, two}, 1, {"s"});  // N - 2: unknown
    Node* neg = g.addNode(OpKind::Neg, {two}, 1, {"n"});         // [-2]
    Node* cast = g.addNode(OpKind::Cast, {mul->output(0)}, 1, {"c32"});
    cast->attrs().set("to", int64_t(6));
    for (Node* n : {mul, div, add, sub, neg, cast})
      g.addOutput(n->output(0));
    QVERIFY(inferShapes(g).ok());
    QVERIFY(mul->output(0)->shapeValue().has_value());
    QCOMPARE(*mul->output(0)->shapeValue(), (std::vector<Dim>{Dim::symbol("N"), Dim(12)}));
    QCOMPARE(*div->output(0)->shapeValue(), (std::vector<Dim>{Dim(2), Dim(4)}));
    QCOMPARE(*add->output(0)->shapeValue(), (std::vector<Dim>{Dim(6), Dim(11)}));
    QVERIFY(!sub->output(0)->shapeValue().has_value());
    QCOMPARE(*neg->output(0)->shapeValue(), (std::vector<Dim>{Dim(-2)}));
    QCOMPARE(*cast->output(0)->shapeValue(), (std::vector<Dim>{Dim::symbol("N"), Dim(12)}));
  }

  // -- reductions -------------------------------------------------------------------------------

  void reductions() {
    Tensor x = Tensor::fromVector<float>({2, 3}, {1, 5, 3, -4, 2, 8});
    auto reduce = [&](OpKind op, const Tensor& in, std::vector<int64_t> axes, int64_t keepdims,
                      bool axesAsInput = false, int64_t noop = 0) -> Expected<Tensor> {
      Graph g;
      Value* v = g.addInput("x", in.type());
      std::vector<Value*> ins{v};
      if (axesAsInput)
        ins.push_back(
            g.addConstant("axes", Tensor::fromVector<int64_t>({int64_t(axes.size())}, axes)));
      Node* n = g.addNode(op, ins, 1, {"y"}, "red");
      if (!axesAsInput && !axes.empty())
        n->attrs().set("axes", axes);
      n->attrs().set("keepdims", keepdims);
      if (noop)
        n->attrs().set("noop_with_empty_axes", noop);
      g.addOutput(n->output(0));
      auto r = run(g, {in});
      if (!r.ok())
        return r.error();
      return (*r)[0];
    };
    auto m = reduce(OpKind::ReduceMean, x, {1}, 1);
    QVERIFY(m.ok());
    QCOMPARE(m->sizes(), (std::vector<int64_t>{2, 1}));
    QCOMPARE(values(*m), (std::vector<double>{3, 2}));
    auto mx = reduce(OpKind::ReduceMax, x, {-2}, 0);
    QCOMPARE(mx->sizes(), (std::vector<int64_t>{3}));
    QCOMPARE(values(*mx), (std::vector<double>{1, 5, 8}));
    auto mn = reduce(OpKind::ReduceMin, x, {}, 1); // empty axes: all of them
    QCOMPARE(mn->sizes(), (std::vector<int64_t>{1, 1}));
    QCOMPARE(values(*mn), (std::vector<double>{-4}));
    auto s = reduce(OpKind::ReduceSum, x, {0}, 1, /*axesAsInput=*/true);
    QCOMPARE(s->sizes(), (std::vector<int64_t>{1, 3}));
    QCOMPARE(values(*s), (std::vector<double>{-3, 7, 11}));
    auto all = reduce(OpKind::ReduceSum, x, {}, 0, /*axesAsInput=*/false);
    QCOMPARE(all->rank(), size_t(0));
    QCOMPARE(values(*all), (std::vector<double>{15}));
    auto noop = reduce(OpKind::ReduceSum, x, {}, 1, /*axesAsInput=*/false, /*noop=*/1);
    QCOMPARE(noop->sizes(), (std::vector<int64_t>{2, 3}));
    QCOMPARE(values(*noop), values(x));
    // Integer mean truncates toward zero, as NumPy's mean cast back to int does.
    auto im = reduce(OpKind::ReduceMean, Tensor::fromVector<int32_t>({3}, {-1, -2, -4}), {}, 0);
    QCOMPARE(im->dtype(), DType::I32);
    QCOMPARE(values(*im), (std::vector<double>{-2}));
    auto u8 = reduce(OpKind::ReduceMax, Tensor::fromVector<uint8_t>({3}, {7, 200, 3}), {0}, 0);
    QCOMPARE(values(*u8), (std::vector<double>{200}));
    auto bad = reduce(OpKind::ReduceMean, Tensor::fromVector<uint8_t>({1}, {7}), {0}, 0);
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "u8"));
  }

  void argMax() {
    Tensor x = Tensor::fromVector<float>({2, 3}, {1, 7, 7, 9, 2, 9});
    auto arg = [&](int64_t axis, int64_t keepdims, int64_t last) {
      Graph g;
      Value* v = g.addInput("x", sym(DType::F32, {Dim::symbol("N"), 3}));
      Node* n = g.addNode(OpKind::ArgMax, {v}, 1, {"y"});
      n->attrs().set("axis", axis);
      n->attrs().set("keepdims", keepdims);
      n->attrs().set("select_last_index", last);
      g.addOutput(n->output(0));
      auto r = run(g, {x});
      return std::make_pair(n->output(0)->type().str(),
                            r.ok() ? values((*r)[0]) : std::vector<double>{});
    };
    QCOMPARE(arg(1, 1, 0), std::make_pair(std::string("i64[N, 1]"), std::vector<double>{1, 0}));
    QCOMPARE(arg(-1, 0, 1), std::make_pair(std::string("i64[N]"), std::vector<double>{2, 2}));
    QCOMPARE(arg(0, 0, 0), std::make_pair(std::string("i64[3]"), std::vector<double>{1, 0, 1}));
  }

  void softmax() {
    Tensor x = Tensor::fromVector<float>({2, 3}, {1, 2, 3, 1, 1, 1});
    for (bool log : {false, true}) {
      auto y = runUnary(log ? OpKind::LogSoftmax : OpKind::Softmax, x);
      QVERIFY(y.ok());
      if (log)
        QVERIFY(near(values(*y),
                     {-2.4076061, -1.407606, -0.407606, -1.0986123, -1.0986123, -1.0986123}));
      else
        QVERIFY(near(values(*y), {0.09003057, 0.24472846, 0.66524094, 1.0 / 3, 1.0 / 3, 1.0 / 3}));
    }
    AttrMap a0;
    a0.set("axis", int64_t(0));
    QVERIFY(near(values(*runUnary(OpKind::Softmax, Tensor::fromVector<float>({2, 1}, {3, 3}), a0)),
                 {0.5, 0.5}));
    // Max subtraction keeps huge logits finite.
    auto big = runUnary(OpKind::Softmax, Tensor::fromVector<float>({2}, {10000.f, 10000.f}));
    QVERIFY(near(values(*big), {0.5, 0.5}));
    auto bf = runUnary(OpKind::Softmax, Tensor::fromVector<bf16_t>({2}, {0.f, 0.f}));
    QCOMPARE(bf->dtype(), DType::BF16);
    QCOMPARE(values(*bf), (std::vector<double>{0.5, 0.5}));
  }

  void reductionErrors() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Node* n = g.addNode(OpKind::ReduceMean, {x}, 1, {"y"}, "badMean");
    n->attrs().set("axes", std::vector<int64_t>{2});
    g.addOutput(n->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY(contains(st.error(), "\"badMean\" (ReduceMean)"));
    QVERIFY(contains(st.error(), "axis 2 is out of range"));

    Graph s;
    Value* sx = s.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Node* sm = s.addNode(OpKind::Softmax, {sx}, 1, {"y"}, "badSoftmax");
    sm->attrs().set("axis", int64_t(-3));
    s.addOutput(sm->output(0));
    st = inferShapes(s);
    QVERIFY(!st.ok());
    QVERIFY(contains(st.error(), "\"badSoftmax\" (Softmax)"));

    Graph r;
    Value* rx = r.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Node* rn = r.addNode(OpKind::ReduceSum, {rx, rx}, 1, {"y"}, "floatAxes");
    r.addOutput(rn->output(0));
    st = inferShapes(r);
    QVERIFY(!st.ok());
    QVERIFY(contains(st.error(), "axes"));
  }

  // -- normalization ----------------------------------------------------------------------------

  void batchNorm() {
    Graph g;
    Value* x = g.addInput("x", sym(DType::F32, {Dim::symbol("N"), 2, 2}));
    Value* scale = g.addConstant("scale", Tensor::fromVector<float>({2}, {2, 1}));
    Value* bias = g.addConstant("bias", Tensor::fromVector<float>({2}, {1, 0}));
    Value* mean = g.addConstant("mean", Tensor::fromVector<float>({2}, {1, -1}));
    Value* var = g.addConstant("var", Tensor::fromVector<float>({2}, {4, 0.25}));
    Node* n = g.addNode(OpKind::BatchNormalization, {x, scale, bias, mean, var}, 1, {"y"}, "bn");
    n->attrs().set("epsilon", 0.f);
    g.addOutput(n->output(0));
    auto r = run(g, {Tensor::fromVector<float>({1, 2, 2}, {3, -1, 0, 1})});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE(n->output(0)->type().str(), std::string("f32[N, 2, 2]"));
    // Channel 0: (x - 1) / 2 * 2 + 1; channel 1: (x + 1) / 0.5.
    QCOMPARE(values((*r)[0]), (std::vector<double>{3, -1, 2, 4}));

    n->attrs().set("training_mode", int64_t(1));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY(st.error().isUnsupported());

    Graph b;
    Value* bx = b.addInput("x", TensorType::of(DType::F32, {1, 3, 2}));
    Value* p = b.addConstant("p", Tensor::fromVector<float>({2}, {1, 1}));
    Node* bn = b.addNode(OpKind::BatchNormalization, {bx, p, p, p, p}, 1, {"y"}, "badBn");
    b.addOutput(bn->output(0));
    st = inferShapes(b);
    QVERIFY(!st.ok());
    QVERIFY(contains(st.error(), "\"badBn\" (BatchNormalization)"));
    QVERIFY(contains(st.error(), "scale"));
  }

  void layerNorm() {
    Graph g;
    Value* x = g.addInput("x", sym(DType::F32, {Dim::symbol("N"), 3}));
    Value* scale = g.addConstant("scale", Tensor::fromVector<float>({3}, {1, 2, 0.5}));
    Value* bias = g.addConstant("bias", Tensor::fromVector<float>({3}, {0, 1, -1}));
    Node* n = g.addNode(OpKind::LayerNormalization, {x, scale, bias}, 3, {"y", "mean", "inv"});
    for (size_t i = 0; i < 3; ++i)
      g.addOutput(n->output(i));
    auto r = run(g, {Tensor::fromVector<float>({2, 3}, {1, 2, 3, 2, 4, 9})});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE(n->output(0)->type().str(), std::string("f32[N, 3]"));
    QCOMPARE(n->output(1)->type().str(), std::string("f32[N, 1]"));
    QCOMPARE(n->output(2)->type().str(), std::string("f32[N, 1]"));
    QVERIFY(near(values((*r)[0]), {-1.2247356, 1, -0.3876322, -1.0190487, 0.3206342, -0.3206342}));
    QVERIFY(near(values((*r)[1]), {2, 5}));
    QVERIFY(near(values((*r)[2]), {1.2247356, 0.3396829}));

    // axis 0 normalizes everything; Scale of shape [3] broadcasts over [2, 3].
    Graph a;
    Value* ax = a.addInput("x", TensorType::of(DType::F16, {2, 3}));
    Value* s16 = a.addConstant("s", Tensor::fromVector<f16_t>({3}, {1.f, 1.f, 1.f}));
    Node* an = a.addNode(OpKind::LayerNormalization, {ax, s16}, 2, {"y", "mean"});
    an->attrs().set("axis", int64_t(0));
    a.addOutput(an->output(0));
    a.addOutput(an->output(1));
    auto ar = run(a, {Tensor::fromVector<f16_t>({2, 3}, {1.f, 1.f, 1.f, 3.f, 3.f, 3.f})});
    QVERIFY2(ar.ok(), ar.ok() ? "" : ar.error().message().c_str());
    QCOMPARE(an->output(1)->type().str(), std::string("f32[1, 1]")); // stash_type f32
    QCOMPARE(values((*ar)[1]), (std::vector<double>{2}));
    QVERIFY(near(values((*ar)[0]), {-1, -1, -1, 1, 1, 1}, 1e-3));

    Graph e;
    Value* ex = e.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Value* es = e.addConstant("s", Tensor::fromVector<float>({2}, {1, 1}));
    Node* en = e.addNode(OpKind::LayerNormalization, {ex, es}, 1, {"y"}, "badLn");
    e.addOutput(en->output(0));
    Status st = inferShapes(e);
    QVERIFY(!st.ok());
    QVERIFY(contains(st.error(), "\"badLn\" (LayerNormalization)"));
  }

  void instanceNorm() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 2, 3}));
    Value* scale = g.addConstant("scale", Tensor::fromVector<float>({2}, {2, 1}));
    Value* bias = g.addConstant("bias", Tensor::fromVector<float>({2}, {0.5, 0}));
    Node* n = g.addNode(OpKind::InstanceNormalization, {x, scale, bias}, 1, {"y"});
    g.addOutput(n->output(0));
    auto r = run(g, {Tensor::fromVector<float>({1, 2, 3}, {1, 2, 3, 4, 4, 10})});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QVERIFY(
        near(values((*r)[0]), {-1.9494712, 0.5, 2.9494712, -0.70710635, -0.70710635, 1.4142127}));
  }

  // -- costs ------------------------------------------------------------------------------------

  void costs() {
    Graph g;
    Value* x = g.addInput("x", sym(DType::F32, {Dim::symbol("N"), 4, 8}));
    Node* sig = g.addNode(OpKind::Sigmoid, {x}, 1, {"s"});
    Node* add = g.addNode(OpKind::Add, {x, sig->output(0)}, 1, {"a"});
    Node* red = g.addNode(OpKind::ReduceSum, {add->output(0)}, 1, {"r"});
    Node* sm = g.addNode(OpKind::Softmax, {add->output(0)}, 1, {"p"});
    g.addOutput(red->output(0));
    g.addOutput(sm->output(0));
    QVERIFY(inferShapes(g).ok());
    auto flops = [](const Node* n) { return n->info().cost(CostContext(*n)).flops; };
    // Symbolic N counts as 1: 32 elements.
    QCOMPARE(flops(sig), 6.0 * 32);
    QCOMPARE(flops(add), 32.0);
    QCOMPARE(flops(red), 32.0);
    QCOMPARE(flops(sm), 5.0 * 32);
    QCOMPARE(red->output(0)->type().str(), std::string("f32[1, 1, 1]"));
  }
};

QTEST_GUILESS_MAIN(TestOpsMath)
#include "TestOpsMath.moc"
