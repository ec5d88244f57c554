// Tests of the trigonometric and hyperbolic ops, Sign, Round, IsNaN/IsInf, the ELU family and
// other activations, and of Mod, LessOrEqual, GreaterOrEqual, Xor and BitShift: interpreter
// values, attributes, dtype checks and costs. Expected values are computed with NumPy (float32,
// the ONNX reference definitions) and pasted.
#include "core/Graph.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/ops/OpContext.h"
#include "OpTestUtil.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>

using namespace fb;
using namespace fb::test;

namespace {

/// Infers shapes, then interprets; returns output 0 or the first error.
Expected<Tensor> run(Graph& g, const std::vector<Tensor>& inputs) {
  Status st = inferShapes(g);
  if (!st.ok())
    return st.error();
  auto r = interpret(g, inputs);
  if (!r.ok())
    return r.error();
  return r->outputs[0];
}

/// Builds `op` on the inputs' types with `attrs`, runs it and returns output 0.
Expected<Tensor> runOp(OpKind op, const std::vector<Tensor>& ins, const AttrMap& attrs = {}) {
  Graph g;
  std::vector<Value*> vs;
  for (size_t i = 0; i < ins.size(); ++i)
    vs.push_back(g.addInput("x" + std::to_string(i), ins[i].type()));
  Node* n = g.addNode(op, vs, 1, {"y"}, "op");
  for (const auto& [k, v] : attrs)
    n->attrs().set(k, v);
  g.addOutput(n->output(0));
  return run(g, ins);
}

const Tensor kX4 = Tensor::fromVector<float>({4}, {-2.f, -0.5f, 0.5f, 2.f});
/// Inside (-1, 1), for Asin, Acos and Atanh.
const Tensor kUnit4 = Tensor::fromVector<float>({4}, {-0.9f, -0.5f, 0.25f, 0.75f});

} // namespace

class TestOpsActivations : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void trigonometric() {
    struct Case {
      OpKind op;
      const Tensor& x;
      std::vector<double> want;
    };
    const Tensor acoshIn = Tensor::fromVector<float>({4}, {1.f, 1.5f, 2.f, 10.f});
    const Case cases[] = {
        {OpKind::Sin, kX4, {-0.909297407, -0.47942555, 0.47942555, 0.909297407}},
        {OpKind::Cos, kX4, {-0.416146815, 0.87758255, 0.87758255, -0.416146815}},
        {OpKind::Tan, kX4, {2.18504, -0.546302497, 0.546302497, -2.18504}},
        {OpKind::Atan, kX4, {-1.10714877, -0.463647604, 0.463647604, 1.10714877}},
        {OpKind::Sinh, kX4, {-3.62686038, -0.521095276, 0.521095276, 3.62686038}},
        {OpKind::Cosh, kX4, {3.76219559, 1.12762606, 1.12762606, 3.76219559}},
        {OpKind::Asinh, kX4, {-1.44363546, -0.481211811, 0.481211811, 1.44363546}},
        {OpKind::Asin, kUnit4, {-1.11976957, -0.52359879, 0.252680242, 0.848062158}},
        {OpKind::Acos, kUnit4, {2.69056582, 2.09439516, 1.31811619, 0.722734213}},
        {OpKind::Atanh, kUnit4, {-1.47221935, -0.549306154, 0.255412817, 0.972955048}},
        {OpKind::Acosh, acoshIn, {0, 0.962423623, 1.31695795, 2.99322295}},
    };
    for (const Case& c : cases) {
      auto y = runOp(c.op, {c.x});
      QVERIFY2(y.ok(), y.ok() ? "" : y.error().message().c_str());
      QCOMPARE(y->dtype(), DType::F32);
      QVERIFY2(near(values(*y), c.want), opName(c.op));
    }
    // Outside the domain: NaN, as in NumPy.
    auto asin = runOp(OpKind::Asin, {Tensor::fromVector<float>({1}, {2.f})});
    QVERIFY(asin.ok() && std::isnan(asin->getAsDouble(0)));
    // f16 computes in float and rounds once.
    auto h = runOp(OpKind::Sin, {Tensor::fromVector<f16_t>({1}, {0.5f})});
    QVERIFY(h.ok());
    QCOMPARE(h->dtype(), DType::F16);
    QVERIFY(near(values(*h), {0.479492188}, 1e-9)); // float16(0.47942555)
  }

  void activations() {
    struct Case {
      OpKind op;
      AttrMap attrs;
      std::vector<double> want;
    };
    const Case cases[] = {
        {OpKind::Elu, {}, {-0.864664733, -0.393469334, 0.5, 2}},
        {OpKind::Elu, attrs({{"alpha", 0.5f}}), {-0.432332367, -0.196734667, 0.5, 2}},
        {OpKind::Selu, {}, {-1.52016652, -0.691758215, 0.525350511, 2.10140204}},
        {OpKind::Selu, attrs({{"alpha", 2.f}, {"gamma", 3.f}}),
         {-5.1879883, -2.360816, 1.5, 6}},
        {OpKind::Celu, {}, {-0.864664733, -0.393469334, 0.5, 2}},
        {OpKind::Celu, attrs({{"alpha", 2.f}}), {-1.26424122, -0.442398548, 0.5, 2}},
        {OpKind::Softplus, {}, {0.126928046, 0.474076986, 0.974076986, 2.12692785}},
        {OpKind::Softsign, {}, {-0.666666687, -0.333333343, 0.333333343, 0.666666687}},
        {OpKind::Mish, {}, {-0.252501458, -0.220743775, 0.375245184, 1.94395888}},
        {OpKind::ThresholdedRelu, {}, {0, 0, 0, 2}},
        {OpKind::ThresholdedRelu, attrs({{"alpha", 0.4f}}), {0, 0, 0.5, 2}},
    };
    for (const Case& c : cases) {
      auto y = runOp(c.op, {kX4}, c.attrs);
      QVERIFY2(y.ok(), y.ok() ? "" : y.error().message().c_str());
      QVERIFY2(near(values(*y), c.want), opName(c.op));
    }
    // Softplus and Mish stay finite where exp overflows: softplus(100) = 100, not inf.
    Tensor big = Tensor::fromVector<float>({2}, {-100.f, 100.f});
    QVERIFY(near(values(*runOp(OpKind::Softplus, {big})), {3.72007598e-44, 100}));
    QVERIFY(near(values(*runOp(OpKind::Mish, {big})), {-3.72007598e-42, 100}));
    // Celu divides by alpha.
    auto celu0 = runOp(OpKind::Celu, {kX4}, attrs({{"alpha", 0.f}}));
    QVERIFY(!celu0.ok());
    QVERIFY(contains(celu0.error(), "alpha"));
  }

  void signAndRound() {
    auto s = runOp(OpKind::Sign, {Tensor::fromVector<int8_t>({3}, {-3, 0, 5})});
    QVERIFY(s.ok());
    QCOMPARE(s->dtype(), DType::I8);
    QCOMPARE(values(*s), (std::vector<double>{-1, 0, 1}));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto sf = runOp(OpKind::Sign, {Tensor::fromVector<float>({4}, {-2.5f, 0.f, nan, 3.f})});
    QVERIFY(sf.ok());
    std::vector<double> v = values(*sf);
    QCOMPARE(v[0], -1.0);
    QCOMPARE(v[1], 0.0);
    QVERIFY(std::isnan(v[2])); // np.sign(nan) is nan
    QCOMPARE(v[3], 1.0);
    // Half to even, as np.round.
    auto r = runOp(OpKind::Round, {Tensor::fromVector<float>(
                                      {8}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.4f, -2.6f})});
    QVERIFY(r.ok());
    QCOMPARE(values(*r), (std::vector<double>{-2, -2, -0, 0, 2, 2, 2, -3}));
    // Round takes floats only.
    auto ri = runOp(OpKind::Round, {Tensor::fromVector<int32_t>({1}, {1})});
    QVERIFY(!ri.ok());
    QVERIFY(contains(ri.error(), "i32"));
  }

  void isNanIsInf() {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Tensor x = Tensor::fromVector<float>({5}, {-inf, -1.f, 0.f, inf, nan});
    auto n = runOp(OpKind::IsNaN, {x});
    QVERIFY(n.ok());
    QCOMPARE(n->dtype(), DType::Bool);
    QCOMPARE(values(*n), (std::vector<double>{0, 0, 0, 0, 1}));
    QCOMPARE(values(*runOp(OpKind::IsInf, {x})), (std::vector<double>{1, 0, 0, 1, 0}));
    QCOMPARE(values(*runOp(OpKind::IsInf, {x}, attrs({{"detect_positive", int64_t(0)}}))),
             (std::vector<double>{1, 0, 0, 0, 0}));
    QCOMPARE(values(*runOp(OpKind::IsInf, {x}, attrs({{"detect_negative", int64_t(0)}}))),
             (std::vector<double>{0, 0, 0, 1, 0}));
    auto bad = runOp(OpKind::IsNaN, {Tensor::fromVector<int32_t>({1}, {1})});
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "(IsNaN)"));
  }

  void modulo() {
    Tensor x = Tensor::fromVector<int32_t>({7}, {-7, -7, 7, 7, 6, 0, -2147483647 - 1});
    Tensor y = Tensor::fromVector<int32_t>({7}, {3, -3, 3, -3, 0, 5, -1});
    // fmod=0: the sign of the divisor (np.mod); modulo by zero gives 0 instead of trapping,
    // and INT_MIN % -1 is 0.
    auto m = runOp(OpKind::Mod, {x, y});
    QVERIFY2(m.ok(), m.ok() ? "" : m.error().message().c_str());
    QCOMPARE(values(*m), (std::vector<double>{2, -1, 1, -2, 0, 0, 0}));
    // fmod=1: the sign of the dividend (np.fmod).
    auto f = runOp(OpKind::Mod, {x, y}, attrs({{"fmod", int64_t(1)}}));
    QCOMPARE(values(*f), (std::vector<double>{-1, -1, 1, 1, 0, 0, 0}));
    Tensor xf = Tensor::fromVector<float>({4}, {-4.3f, 4.3f, -4.3f, 4.3f});
    Tensor yf = Tensor::fromVector<float>({4}, {2.1f, -2.1f, -2.1f, 2.1f});
    auto ff = runOp(OpKind::Mod, {xf, yf}, attrs({{"fmod", int64_t(1)}}));
    QVERIFY(near(values(*ff), {-0.100000381, 0.100000381, -0.100000381, 0.100000381}));
    // Broadcast of a scalar divisor over u8.
    auto u = runOp(OpKind::Mod, {Tensor::fromVector<uint8_t>({3}, {250, 7, 9}),
                                 Tensor::fromVector<uint8_t>({1}, {4})});
    QCOMPARE(values(*u), (std::vector<double>{2, 3, 1}));
    // Float inputs need fmod=1; fmod is 0 or 1.
    auto bad = runOp(OpKind::Mod, {xf, yf});
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "fmod=0"));
    auto bad2 = runOp(OpKind::Mod, {x, y}, attrs({{"fmod", int64_t(2)}}));
    QVERIFY(!bad2.ok());
    QVERIFY(contains(bad2.error(), "'fmod'"));
  }

  void comparisonsAndXor() {
    Tensor a = Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4});
    Tensor b = Tensor::fromVector<float>({2}, {2, 3});
    auto le = runOp(OpKind::LessOrEqual, {a, b});
    QVERIFY(le.ok());
    QCOMPARE(le->dtype(), DType::Bool);
    QCOMPARE(values(*le), (std::vector<double>{1, 1, 0, 0}));
    QCOMPARE(values(*runOp(OpKind::GreaterOrEqual, {a, b})), (std::vector<double>{0, 0, 1, 1}));
    Tensor p = Tensor::fromVector<bool>({4}, {false, false, true, true});
    Tensor q = Tensor::fromVector<bool>({4}, {false, true, false, true});
    QCOMPARE(values(*runOp(OpKind::Xor, {p, q})), (std::vector<double>{0, 1, 1, 0}));
    auto bad = runOp(OpKind::Xor, {a, a});
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "(Xor)"));
  }

  void bitShift() {
    Tensor x = Tensor::fromVector<uint8_t>({4}, {16, 4, 1, 255});
    auto l = runOp(OpKind::BitShift, {x, Tensor::fromVector<uint8_t>({4}, {1, 2, 9, 1})},
                   attrs({{"direction", std::string("LEFT")}}));
    QVERIFY2(l.ok(), l.ok() ? "" : l.error().message().c_str());
    QCOMPARE(values(*l), (std::vector<double>{32, 16, 0, 254}));
    auto r = runOp(OpKind::BitShift, {x, Tensor::fromVector<uint8_t>({4}, {1, 2, 9, 7})},
                   attrs({{"direction", std::string("RIGHT")}}));
    QCOMPARE(values(*r), (std::vector<double>{8, 1, 0, 1}));
    auto missing = runOp(OpKind::BitShift, {x, x});
    QVERIFY(!missing.ok());
    QVERIFY(contains(missing.error(), "direction"));
    auto signedIn = runOp(OpKind::BitShift, {kX4, kX4}, attrs({{"direction", std::string("LEFT")}}));
    QVERIFY(!signedIn.ok());
  }

  void costs() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {4, 8}));
    Node* sin = g.addNode(OpKind::Sin, {x}, 1, {"s"});
    Node* mish = g.addNode(OpKind::Mish, {x}, 1, {"m"});
    Node* sign = g.addNode(OpKind::Sign, {x}, 1, {"g"});
    Node* nan = g.addNode(OpKind::IsNaN, {x}, 1, {"n"});
    for (Node* n : {sin, mish, sign, nan})
      g.addOutput(n->output(0));
    QVERIFY(inferShapes(g).ok());
    auto flops = [](const Node* n) { return n->info().cost(CostContext(*n)).flops; };
    QCOMPARE(flops(sin), 4.0 * 32);
    QCOMPARE(flops(mish), 14.0 * 32);
    QCOMPARE(flops(sign), 2.0 * 32);
    QCOMPARE(flops(nan), 32.0);
    QCOMPARE(nan->output(0)->type().str(), std::string("bool[4, 8]"));
  }
};

QTEST_GUILESS_MAIN(TestOpsActivations)
#include "TestOpsActivations.moc"
