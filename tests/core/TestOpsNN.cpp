// Tests of the neural-network ops (Conv, ConvTranspose, pools, MatMul, Gemm, quantization):
// shape inference with symbolic dims, interpreter values, errors naming the node, FLOPs, speed.
// Expected values are hand-computed or computed with NumPy (float64, then float32) and pasted.
#include "core/Cost.h"
#include "core/Graph.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "OpTestUtil.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace fb;
using namespace fb::test;

namespace {

/// One operand of a test node: a tensor fed as a graph input, or absent.
using Operands = std::vector<Tensor>;

/// Builds a one-node graph whose present operands are graph inputs.
Node* buildOp(Graph& g, OpKind op, const Operands& operands, const AttrMap& attrs,
              size_t numOutputs = 1) {
  std::vector<Value*> ins;
  for (size_t i = 0; i < operands.size(); ++i)
    ins.push_back(operands[i].valid()
                      ? g.addInput("in" + std::to_string(i), operands[i].type())
                      : nullptr);
  Node* n = g.addNode(op, ins, numOutputs, {}, "op");
  for (const auto& [k, v] : attrs)
    n->attrs().set(k, v);
  for (size_t i = 0; i < numOutputs; ++i)
    g.addOutput(n->output(i));
  return n;
}

/// Infers shapes and interprets a one-node graph; returns every output or the first error.
Expected<std::vector<Tensor>> runOp(OpKind op, const Operands& operands, const AttrMap& attrs = {},
                                    size_t numOutputs = 1) {
  Graph g;
  buildOp(g, op, operands, attrs, numOutputs);
  Status st = inferShapes(g);
  if (!st.ok())
    return st.error();
  Operands present;
  for (const Tensor& t : operands)
    if (t.valid())
      present.push_back(t);
  auto r = interpret(g, present);
  if (!r.ok())
    return r.error();
  return r->outputs;
}

/// The inferred type of output 0 for operands of the given types, or the error.
Expected<TensorType> inferOp(OpKind op, const std::vector<TensorType>& types,
                             const AttrMap& attrs = {}) {
  Graph g;
  std::vector<Value*> ins;
  for (size_t i = 0; i < types.size(); ++i)
    ins.push_back(g.addInput("in" + std::to_string(i), types[i]));
  Node* n = g.addNode(op, ins, 1, {}, "op");
  for (const auto& [k, v] : attrs)
    n->attrs().set(k, v);
  g.addOutput(n->output(0));
  Status st = inferShapes(g);
  if (!st.ok())
    return st.error();
  return n->output(0)->type();
}

using Ints = std::vector<int64_t>;

Tensor f32(Ints sizes, std::vector<float> v) { return Tensor::fromVector<float>(sizes, v); }

/// start, start+1, ... as f32 of the given sizes.
Tensor iotaF32(Ints sizes, float start = 0) {
  Tensor t(DType::F32, sizes);
  auto d = t.mutableData<float>();
  for (size_t i = 0; i < d.size(); ++i)
    d[i] = start + float(i);
  return t;
}

/// Sizes equal and every element within tol (relative to max(1, |want|)).
bool near(const Tensor& got, const Ints& sizes, const std::vector<double>& want,
          double tol = 1e-5) {
  if (got.sizes() != sizes) {
    qWarning("sizes differ: got %s", got.type().str().c_str());
    return false;
  }
  return fb::test::near(values(got), want, tol);
}

#define RUN_OK(var, expr)                                                                          \
  auto var = (expr);                                                                               \
  QVERIFY2(var.ok(), var.ok() ? "" : var.error().message().c_str())

/// A naive direct convolution in double, independent of the interpreter's im2col + GEMM.
std::vector<double> naiveConv2d(const Tensor& x, const Tensor& w, int64_t pad, int64_t stride) {
  const auto& xs = x.sizes();
  const auto& ws = w.sizes();
  int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], m = ws[0], kh = ws[2], kw = ws[3];
  int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (wd + 2 * pad - kw) / stride + 1;
  auto xv = x.data<float>();
  auto wv = w.data<float>();
  std::vector<double> y;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = 0;
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                int64_t ih = i * stride - pad + a, iw = j * stride - pad + e;
                if (ih >= 0 && ih < h && iw >= 0 && iw < wd)
                  s += double(xv[size_t(((b * c + ci) * h + ih) * wd + iw)]) *
                       double(wv[size_t(((o * c + ci) * kh + a) * kw + e)]);
              }
          y.push_back(s);
        }
  return y;
}

/// Deterministic pseudo-random values in [-1, 1).
Tensor randomF32(Ints sizes, uint32_t seed) {
  Tensor t(DType::F32, sizes);
  uint32_t s = seed;
  for (float& v : t.mutableData<float>()) {
    s = s * 1664525u + 1013904223u;
    v = float(s >> 8) / float(1 << 23) - 1.f;
  }
  return t;
}

} // namespace

class TestOpsNN : public QObject {
  Q_OBJECT
private Q_SLOTS:
  // -- Conv --------------------------------------------------------------------------------------

  void convPadsStridesBias() {
    // ONNX's test_conv_with_strides_padding, plus a bias of 0.5.
    RUN_OK(r, runOp(OpKind::Conv,
                    {iotaF32({1, 1, 5, 5}), f32({1, 1, 3, 3}, std::vector<float>(9, 1.f)),
                     f32({1}, {0.5f})},
                    attrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}})));
    QVERIFY(near((*r)[0], {1, 1, 3, 3},
                 {12.5, 27.5, 24.5, 63.5, 108.5, 81.5, 72.5, 117.5, 84.5}));
  }

  void convDilationsGroupsAsymmetricPads() {
    Tensor w = iotaF32({2, 2, 2, 2}, -7);
    for (float& v : w.mutableData<float>())
      v /= 4;
    RUN_OK(r, runOp(OpKind::Conv, {iotaF32({1, 4, 4, 4}), w, f32({2}, {0.5f, -1.f})},
                    attrs({{"dilations", Ints{2, 2}},
                           {"group", int64_t(2)},
                           {"pads", Ints{1, 0, 0, 1}}})));
    QVERIFY(near((*r)[0], {1, 2, 3, 3},
                 {-15.5, -18.0, -12.5, -49.5, -56.5, -35.5, -77.5, -84.5, -51.5, 263.0, 268.5,
                  122.0, 445.0, 454.0, 203.0, 481.0, 490.0, 219.0}));
  }

  void convDepthwise() {
    Tensor w = f32({3, 1, 2, 2}, {1, 2, 3, 4, -1, 0, 1, 0, 0.5f, 0.5f, 0.5f, 0.5f});
    RUN_OK(r, runOp(OpKind::Conv, {iotaF32({1, 3, 3, 3}), w}, attrs({{"group", int64_t(3)}})));
    QVERIFY(near((*r)[0], {1, 3, 2, 2}, {27, 37, 57, 67, 3, 3, 3, 3, 40, 42, 46, 48}));
  }

  void convSameUpperAndLower() {
    // 4 wide, kernel 3, stride 2: 2 outputs and one pad, at the end (UPPER) or start (LOWER).
    Operands ops = {iotaF32({1, 1, 4, 4}), iotaF32({1, 1, 3, 3})};
    RUN_OK(up, runOp(OpKind::Conv, ops,
                     attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}})));
    QVERIFY(near((*up)[0], {1, 1, 2, 2}, {258, 186, 187, 113}));
    RUN_OK(lo, runOp(OpKind::Conv, ops,
                     attrs({{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{2, 2}}})));
    QVERIFY(near((*lo)[0], {1, 1, 2, 2}, {73, 154, 279, 438}));
  }

  void conv1dAnd3d() {
    RUN_OK(r1, runOp(OpKind::Conv, {iotaF32({1, 1, 7}), f32({1, 1, 3}, {1, -1, 2})},
                     attrs({{"pads", Ints{1, 1}}, {"strides", Ints{2}}})));
    QVERIFY(near((*r1)[0], {1, 1, 4}, {2, 5, 9, -1}));
    Tensor w = iotaF32({2, 2, 2, 2, 2});
    for (float& v : w.mutableData<float>())
      v /= 8;
    RUN_OK(r3, runOp(OpKind::Conv, {iotaF32({1, 2, 3, 3, 3}), w},
                     attrs({{"pads", Ints{0, 1, 0, 0, 0, 1}}})));
    QVERIFY(near((*r3)[0], {1, 2, 2, 3, 3},
                 {220.5,  229.0,  111.5, 429.5,  444.5,  215.0,  474.5,  489.5,  236.0,
                  297.0,  305.5,  147.5, 564.5,  579.5,  278.0,  609.5,  624.5,  299.0,
                  516.5,  541.0,  271.5, 1069.5, 1116.5, 559.0,  1210.5, 1257.5, 628.0,
                  737.0,  761.5,  379.5, 1492.5, 1539.5, 766.0,  1633.5, 1680.5, 835.0}));
  }

  void convMatchesNaiveOnOddSizes() {
    // K = 30*3*3 = 270 crosses the GEMM's K block; M = 7 and N = 63 leave row and column tails.
    Tensor x = randomF32({2, 30, 7, 9}, 1), w = randomF32({7, 30, 3, 3}, 2);
    RUN_OK(r, runOp(OpKind::Conv, {x, w}, attrs({{"pads", Ints{1, 1, 1, 1}}})));
    QVERIFY(near((*r)[0], {2, 7, 7, 9}, naiveConv2d(x, w, 1, 1), 1e-4));
    RUN_OK(s, runOp(OpKind::Conv, {x, w}, attrs({{"strides", Ints{2, 2}}})));
    QVERIFY(near((*s)[0], {2, 7, 3, 4}, naiveConv2d(x, w, 0, 2), 1e-4));
  }

  void convHalfPrecision() {
    Tensor x(DType::F16, {1, 1, 3, 3}), w(DType::F16, {1, 1, 2, 2});
    for (int64_t i = 0; i < 9; ++i)
      x.setFromDouble(i, double(i));
    for (int64_t i = 0; i < 4; ++i)
      w.setFromDouble(i, 0.5);
    RUN_OK(r, runOp(OpKind::Conv, {x, w}));
    QCOMPARE((*r)[0].dtype(), DType::F16);
    QVERIFY(near((*r)[0], {1, 1, 2, 2}, {4, 6, 10, 12}));
  }

  void convShapes() {
    TensorType x(DType::F32, {Dim::symbol("N"), Dim(3), Dim(224), Dim(224)});
    auto w = TensorType::of(DType::F32, {64, 3, 7, 7});
    auto pads = attrs({{"pads", Ints{3, 3, 3, 3}}, {"strides", Ints{2, 2}}});
    RUN_OK(t, inferOp(OpKind::Conv, {x, w}, pads));
    QCOMPARE(t->str(), std::string("f32[N, 64, 112, 112]"));
    // Symbolic spatial dims give unknown output dims; the batch symbol still flows.
    TensorType xs(DType::F32, {Dim::symbol("N"), Dim(3), Dim::symbol("H"), Dim(224)});
    RUN_OK(u, inferOp(OpKind::Conv, {xs, w}, pads));
    QCOMPARE(u->str(), std::string("f32[N, 64, ?, 112]"));
    // SAME_UPPER with stride 2 gives ceil(in / 2); kernel_shape may be given explicitly.
    RUN_OK(v, inferOp(OpKind::Conv, {x, w},
                      attrs({{"auto_pad", std::string("SAME_UPPER")},
                             {"kernel_shape", Ints{7, 7}},
                             {"strides", Ints{2, 2}}})));
    QCOMPARE(v->str(), std::string("f32[N, 64, 112, 112]"));
  }

  void convErrorsNameNodeAndOperands() {
    auto x = TensorType::of(DType::F32, {1, 3, 8, 8});
    auto bad = inferOp(OpKind::Conv, {x, TensorType::of(DType::F32, {4, 2, 3, 3})});
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "\"op\" (Conv)"));
    QVERIFY(contains(bad.error(), "channel mismatch: X f32[1, 3, 8, 8] has 3 channels"));
    QVERIFY(contains(bad.error(), "W f32[4, 2, 3, 3]"));
    auto grp = inferOp(OpKind::Conv, {TensorType::of(DType::F32, {1, 4, 8, 8}),
                                      TensorType::of(DType::F32, {3, 2, 3, 3})},
                       attrs({{"group", int64_t(2)}}));
    QVERIFY(!grp.ok());
    QVERIFY(contains(grp.error(), "not divisible by group 2"));
    auto ks = inferOp(OpKind::Conv, {x, TensorType::of(DType::F32, {4, 3, 3, 3})},
                      attrs({{"kernel_shape", Ints{5, 5}}}));
    QVERIFY(!ks.ok());
    QVERIFY(contains(ks.error(), "kernel_shape"));
    auto rank = inferOp(OpKind::Conv, {x, TensorType::of(DType::F32, {4, 3, 3})});
    QVERIFY(!rank.ok());
    QVERIFY(contains(rank.error(), "rank"));
    auto dt = inferOp(OpKind::Conv, {TensorType::of(DType::I32, {1, 3, 8, 8}),
                                     TensorType::of(DType::I32, {4, 3, 3, 3})});
    QVERIFY(!dt.ok());
    QVERIFY(contains(dt.error(), "only f32, f16 and bf16"));
  }

  // -- ConvTranspose -----------------------------------------------------------------------------

  void convTransposeOutputPadding() {
    // ONNX's test_convtranspose_pad: strides (3, 2), output_padding (1, 1).
    Operands ops = {iotaF32({1, 1, 3, 3}), f32({1, 2, 3, 3}, std::vector<float>(18, 1.f))};
    std::vector<double> plane = {
        0, 0, 1, 1, 3,  2, 2,  0, 0, 0, 1, 1, 3,  2, 2,  0, 0, 0, 1, 1, 3,  2, 2,  0,
        3, 3, 7, 4, 9,  5, 5,  0, 3, 3, 7, 4, 9,  5, 5,  0, 3, 3, 7, 4, 9,  5, 5,  0,
        6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0,
        0, 0, 0, 0, 0,  0, 0,  0};
    std::vector<double> want = plane;
    want.insert(want.end(), plane.begin(), plane.end());
    RUN_OK(r, runOp(OpKind::ConvTranspose, ops,
                    attrs({{"output_padding", Ints{1, 1}}, {"strides", Ints{3, 2}}})));
    QVERIFY(near((*r)[0], {1, 2, 10, 8}, want));
    // output_shape asks for the same size; the extra row and column come out at the end.
    RUN_OK(s, runOp(OpKind::ConvTranspose, ops,
                    attrs({{"output_shape", Ints{10, 8}}, {"strides", Ints{3, 2}}})));
    QVERIFY(near((*s)[0], {1, 2, 10, 8}, want));
  }

  void convTransposeGroupsDilationsPads() {
    RUN_OK(r, runOp(OpKind::ConvTranspose, {iotaF32({1, 2, 2, 2}), iotaF32({2, 1, 2, 2}, -3)},
                    attrs({{"dilations", Ints{1, 2}},
                           {"group", int64_t(2)},
                           {"pads", Ints{1, 0, 0, 1}},
                           {"strides", Ints{2, 1}}})));
    QVERIFY(near((*r)[0], {1, 2, 3, 3},
                 {0, -1, 0, -6, -9, -4, -2, -3, 0, 12, 15, 16, 6, 7, 12, 18, 21, 24}));
  }

  void convTransposeShapes() {
    TensorType x(DType::F32, {Dim::symbol("N"), Dim(8), Dim(5), Dim::symbol("W")});
    auto w = TensorType::of(DType::F32, {8, 3, 4, 4});
    RUN_OK(t, inferOp(OpKind::ConvTranspose, {x, w},
                      attrs({{"group", int64_t(2)},
                             {"pads", Ints{1, 1, 1, 1}},
                             {"strides", Ints{2, 2}}})));
    QCOMPARE(t->str(), std::string("f32[N, 6, 10, ?]"));
    auto bad = inferOp(OpKind::ConvTranspose, {x, TensorType::of(DType::F32, {4, 3, 4, 4})});
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "(ConvTranspose): channel mismatch"));
  }

  // -- pooling -----------------------------------------------------------------------------------

  void maxPoolCeilModeAndIndices() {
    // Channel 0 is 1..16, channel 1 its negation: ceil_mode adds a clipped last window.
    Tensor x(DType::F32, {1, 2, 4, 4});
    for (int64_t i = 0; i < 16; ++i) {
      x.setFromDouble(i, double(i + 1));
      x.setFromDouble(16 + i, -double(i + 1));
    }
    auto a = attrs({{"ceil_mode", int64_t(1)}, {"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
    RUN_OK(r, runOp(OpKind::MaxPool, {x}, a, 2));
    QVERIFY(near((*r)[0], {1, 2, 2, 2}, {11, 12, 15, 16, -1, -3, -9, -11}));
    QCOMPARE((*r)[1].dtype(), DType::I64);
    QVERIFY(near((*r)[1], {1, 2, 2, 2}, {10, 11, 14, 15, 16, 18, 24, 26}));
    // storage_order 1 flattens the spatial axes column-major.
    a.set("storage_order", int64_t(1));
    RUN_OK(c, runOp(OpKind::MaxPool, {x}, a, 2));
    QVERIFY(near((*c)[1], {1, 2, 2, 2}, {10, 14, 11, 15, 16, 24, 18, 26}));
    // Without ceil_mode the partial windows are dropped.
    RUN_OK(f, runOp(OpKind::MaxPool, {x},
                    attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}})));
    QVERIFY(near((*f)[0], {1, 2, 1, 1}, {11, -1}));
  }

  void maxPoolInt8AndDilation() {
    Tensor x = Tensor::fromVector<uint8_t>({1, 1, 4}, {3, 250, 7, 1});
    RUN_OK(r, runOp(OpKind::MaxPool, {x},
                    attrs({{"dilations", Ints{2}}, {"kernel_shape", Ints{2}}})));
    QCOMPARE((*r)[0].dtype(), DType::U8);
    QVERIFY(near((*r)[0], {1, 1, 2}, {7, 250}));
  }

  void averagePoolCountIncludePad() {
    auto a = attrs({{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
    RUN_OK(exc, runOp(OpKind::AveragePool, {iotaF32({1, 1, 3, 3}, 1)}, a));
    QVERIFY(near((*exc)[0], {1, 1, 2, 2}, {1.0, 2.5, 5.5, 7.0}));
    a.set("count_include_pad", int64_t(1));
    RUN_OK(inc, runOp(OpKind::AveragePool, {iotaF32({1, 1, 3, 3}, 1)}, a));
    QVERIFY(near((*inc)[0], {1, 1, 2, 2}, {0.25, 1.25, 2.75, 7.0}));
  }

  void averagePoolCeilCountIncludePad() {
    // 1-D, 5 wide, kernel 2, stride 2, ceil: the last window hangs past the end and counts only
    // its one real tap even with count_include_pad (there is no end padding to count).
    auto a = attrs({{"ceil_mode", int64_t(1)}, {"count_include_pad", int64_t(1)},
                    {"kernel_shape", Ints{2}}, {"strides", Ints{2}}});
    RUN_OK(r, runOp(OpKind::AveragePool, {iotaF32({1, 1, 5})}, a));
    QVERIFY(near((*r)[0], {1, 1, 3}, {0.5, 2.5, 4.0}));
  }

  void globalPools() {
    Tensor x = iotaF32({1, 2, 2, 3});
    RUN_OK(avg, runOp(OpKind::GlobalAveragePool, {x}));
    QVERIFY(near((*avg)[0], {1, 2, 1, 1}, {2.5, 8.5}));
    RUN_OK(mx, runOp(OpKind::GlobalMaxPool, {x}));
    QVERIFY(near((*mx)[0], {1, 2, 1, 1}, {5, 11}));
    TensorType s(DType::F32, {Dim::symbol("N"), Dim(8), Dim::symbol("H"), Dim(7)});
    RUN_OK(t, inferOp(OpKind::GlobalAveragePool, {s}));
    QCOMPARE(t->str(), std::string("f32[N, 8, 1, 1]"));
  }

  void poolShapes() {
    TensorType x(DType::F32, {Dim::symbol("N"), Dim(64), Dim(112), Dim(112)});
    RUN_OK(t, inferOp(OpKind::MaxPool, {x},
                      attrs({{"kernel_shape", Ints{3, 3}},
                             {"pads", Ints{1, 1, 1, 1}},
                             {"strides", Ints{2, 2}}})));
    QCOMPARE(t->str(), std::string("f32[N, 64, 56, 56]"));
    // ceil_mode: floor((6 - 3) / 2) + 1 = 2 becomes 3.
    auto c = inferOp(OpKind::AveragePool, {TensorType::of(DType::F32, {1, 1, 6, 6})},
                     attrs({{"ceil_mode", int64_t(1)}, {"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}));
    QVERIFY(c.ok());
    QCOMPARE(c->str(), std::string("f32[1, 1, 3, 3]"));
    auto missing = inferOp(OpKind::MaxPool, {x});
    QVERIFY(!missing.ok());
    QVERIFY(contains(missing.error(), "(MaxPool): required attribute 'kernel_shape' is missing"));
  }

  // -- MatMul and Gemm ---------------------------------------------------------------------------

  void matmulBatchedBroadcast() {
    Tensor a = iotaF32({2, 1, 2, 3}, -5), b = iotaF32({3, 3, 2}, -8);
    for (float& v : a.mutableData<float>())
      v /= 2;
    for (float& v : b.mutableData<float>())
      v /= 4;
    RUN_OK(r, runOp(OpKind::MatMul, {a, b}));
    QVERIFY(near((*r)[0], {2, 3, 2, 2},
                 {9.5,  8.0,   2.75, 2.375,  0.5,   -1.0,  0.5, 0.125, -8.5, -10.0, -1.75, -2.125,
                  -4.0, -3.25, -10.75, -8.875, 0.5, 1.25, 0.5, 2.375, 5.0,  5.75,  11.75, 13.625}));
  }

  void matmulVectorPromotion() {
    Tensor v = f32({3}, {1, 2, -1});
    RUN_OK(left, runOp(OpKind::MatMul, {v, iotaF32({2, 3, 4})}));
    QVERIFY(near((*left)[0], {2, 4}, {0, 2, 4, 6, 24, 26, 28, 30}));
    RUN_OK(right, runOp(OpKind::MatMul, {iotaF32({2, 4, 3}), v}));
    QVERIFY(near((*right)[0], {2, 4}, {0, 6, 12, 18, 24, 30, 36, 42}));
    RUN_OK(dot, runOp(OpKind::MatMul, {v, v}));
    QVERIFY(near((*dot)[0], {}, {6}));
  }

  void matmulIntegers() {
    Tensor a = Tensor::fromVector<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor b = Tensor::fromVector<int64_t>({3, 2}, {7, 8, 9, 10, 11, 12});
    RUN_OK(r, runOp(OpKind::MatMul, {a, b}));
    QCOMPARE((*r)[0].dtype(), DType::I64);
    QVERIFY(near((*r)[0], {2, 2}, {58, 64, 139, 154}));
  }

  void matmulShapesAndErrors() {
    TensorType a(DType::F32, {Dim::symbol("N"), Dim(1), Dim(5), Dim(8)});
    RUN_OK(t, inferOp(OpKind::MatMul, {a, TensorType::of(DType::F32, {4, 8, 3})}));
    QCOMPARE(t->str(), std::string("f32[N, 4, 5, 3]"));
    auto bad = inferOp(OpKind::MatMul, {a, TensorType::of(DType::F32, {7, 3})});
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "\"op\" (MatMul): inner dimensions differ"));
    QVERIFY(contains(bad.error(), "B f32[7, 3] has K = 7"));
  }

  void gemmTransposesAlphaBeta() {
    Tensor a = iotaF32({3, 2}), b = iotaF32({4, 3}, -4);
    auto at = attrs({{"alpha", 0.5f}, {"beta", 2.f}, {"transA", int64_t(1)}, {"transB", int64_t(1)}});
    RUN_OK(r, runOp(OpKind::Gemm, {a, b, f32({4}, {1, 2, 3, 4})}, at));
    QVERIFY(near((*r)[0], {2, 4}, {-5.0, 6.0, 17.0, 28.0, -9.5, 6.0, 21.5, 37.0}));
    RUN_OK(c, runOp(OpKind::Gemm, {a, b, f32({2, 1}, {10, 20})}, at));
    QVERIFY(near((*c)[0], {2, 4}, {13.0, 22.0, 31.0, 40.0, 28.5, 42.0, 55.5, 69.0}));
    RUN_OK(noC, runOp(OpKind::Gemm, {iotaF32({2, 2}), iotaF32({2, 2})}));
    QVERIFY(near((*noC)[0], {2, 2}, {2, 3, 6, 11}));
  }

  void gemmErrors() {
    auto k = inferOp(OpKind::Gemm, {TensorType::of(DType::F32, {2, 3}),
                                    TensorType::of(DType::F32, {4, 5})});
    QVERIFY(!k.ok());
    QVERIFY(contains(k.error(), "\"op\" (Gemm): K mismatch: A f32[2, 3] (transA=0) has K = 3"));
    QVERIFY(contains(k.error(), "B f32[4, 5] (transB=0) has K = 4"));
    auto c = inferOp(OpKind::Gemm, {TensorType::of(DType::F32, {2, 3}),
                                    TensorType::of(DType::F32, {3, 4}),
                                    TensorType::of(DType::F32, {3})});
    QVERIFY(!c.ok());
    QVERIFY(contains(c.error(), "C f32[3] does not broadcast to (M, N) = (2, 4)"));
  }

  // -- quantization ------------------------------------------------------------------------------

  void quantizeRoundsHalfToEvenAndSaturates() {
    Tensor x = f32({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.f, -300.f, 3.49f});
    RUN_OK(u, runOp(OpKind::QuantizeLinear, {x, Tensor::scalar<float>(1.f)}));
    QCOMPARE((*u)[0].dtype(), DType::U8); // no zero point: u8
    QVERIFY(near((*u)[0], {8}, {0, 2, 2, 0, 0, 255, 0, 3}));
    RUN_OK(i, runOp(OpKind::QuantizeLinear,
                    {x, Tensor::scalar<float>(1.f), Tensor::scalar<int8_t>(0)}));
    QCOMPARE((*i)[0].dtype(), DType::I8);
    QVERIFY(near((*i)[0], {8}, {0, 2, 2, 0, -2, 127, -128, 3}));
    // ONNX's test_quantizelinear: scale 2, zero point 128.
    RUN_OK(o, runOp(OpKind::QuantizeLinear,
                    {f32({6}, {0, 2, 3, 1000, -254, -1000}), Tensor::scalar<float>(2.f),
                     Tensor::scalar<uint8_t>(128)}));
    QVERIFY(near((*o)[0], {6}, {128, 129, 130, 255, 1, 0}));
  }

  void quantizePerAxis() {
    Tensor x = f32({1, 2, 2}, {-4, 6, 10, 1});
    RUN_OK(r, runOp(OpKind::QuantizeLinear,
                    {x, f32({2}, {2, 4}), Tensor::fromVector<uint8_t>({2}, {10, 20})}));
    QVERIFY(near((*r)[0], {1, 2, 2}, {8, 13, 22, 20})); // 6/2=3, 10/4=2.5 -> 2, 1/4 -> 0
  }

  void dequantizePerAxis() {
    Tensor x = Tensor::fromVector<uint8_t>({1, 3, 4}, {0, 1, 2, 255, 10, 20, 30, 40, 100, 128, 200, 0});
    RUN_OK(r, runOp(OpKind::DequantizeLinear,
                    {x, f32({3}, {0.5f, 0.25f, 2.f}), Tensor::fromVector<uint8_t>({3}, {1, 20, 128})}));
    QCOMPARE((*r)[0].dtype(), DType::F32);
    QVERIFY(near((*r)[0], {1, 3, 4},
                 {-0.5, 0.0, 0.5, 127.0, -2.5, 0.0, 2.5, 5.0, -56.0, 0.0, 144.0, -256.0}));
    Tensor xi = Tensor::fromVector<int8_t>({3, 2}, {1, 2, 3, 4, 5, 6});
    RUN_OK(a, runOp(OpKind::DequantizeLinear,
                    {xi, f32({2}, {0.5f, 4.f}), Tensor::fromVector<int8_t>({2}, {1, -2})},
                    attrs({{"axis", int64_t(-1)}})));
    QVERIFY(near((*a)[0], {3, 2}, {0, 16, 1, 24, 2, 32}));
    auto bad = inferOp(OpKind::DequantizeLinear,
                       {TensorType::of(DType::U8, {1, 3, 4}), TensorType::of(DType::F32, {4})});
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "does not match X u8[1, 3, 4] along axis 1"));
  }

  void qlinearMatMul() {
    // ONNX's test_qlinearmatmul_2D.
    Tensor a = Tensor::fromVector<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29});
    Tensor b = Tensor::fromVector<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247});
    RUN_OK(r, runOp(OpKind::QLinearMatMul,
                    {a, f32({1}, {0.0066f}), Tensor::fromVector<uint8_t>({1}, {113}), b,
                     f32({1}, {0.00705f}), Tensor::fromVector<uint8_t>({1}, {114}),
                     f32({1}, {0.0107f}), Tensor::fromVector<uint8_t>({1}, {118})}));
    QCOMPARE((*r)[0].dtype(), DType::U8);
    QVERIFY(near((*r)[0], {2, 3}, {168, 115, 255, 1, 66, 151}));
  }

  void matmulIntegerPerRowAndColumnZeroPoints() {
    Tensor a = Tensor::fromVector<uint8_t>({2, 3}, {11, 7, 3, 10, 6, 2});
    Tensor b = Tensor::fromVector<uint8_t>({3, 2}, {1, 4, 2, 5, 3, 6});
    RUN_OK(r, runOp(OpKind::MatMulInteger, {a, b, Tensor::fromVector<uint8_t>({2}, {12, 0}),
                                            Tensor::fromVector<uint8_t>({2}, {0, 1})}));
    QCOMPARE((*r)[0].dtype(), DType::I32);
    QVERIFY(near((*r)[0], {2, 2}, {-38, -68, 28, 64}));
  }

  void qlinearConvPerChannelWithBias() {
    Tensor x = Tensor::fromVector<uint8_t>({1, 1, 3, 3}, {10, 200, 35, 90, 128, 255, 0, 77, 140});
    Tensor w = Tensor::fromVector<int8_t>({2, 1, 2, 2}, {3, -7, 12, -1, 100, -128, 5, 64});
    RUN_OK(r, runOp(OpKind::QLinearConv,
                    {x, Tensor::scalar<float>(0.05f), Tensor::scalar<uint8_t>(120), w,
                     f32({2}, {0.02f, 0.004f}), Tensor::fromVector<int8_t>({2}, {0, 2}),
                     Tensor::scalar<float>(0.1f), Tensor::scalar<int8_t>(-5),
                     Tensor::fromVector<int32_t>({2}, {100, -300})}));
    QCOMPARE((*r)[0].dtype(), DType::I8);
    QVERIFY(near((*r)[0], {1, 2, 2, 2}, {-17, 4, -19, -19, -47, 49, -20, -37}));
  }

  void convIntegerPadsWithZeroPoint() {
    Tensor x = Tensor::fromVector<uint8_t>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
    Tensor w = Tensor::fromVector<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1});
    RUN_OK(r, runOp(OpKind::ConvInteger, {x, w, Tensor::scalar<uint8_t>(1)},
                    attrs({{"pads", Ints{1, 1, 1, 1}}})));
    QCOMPARE((*r)[0].dtype(), DType::I32);
    QVERIFY(near((*r)[0], {1, 1, 4, 4}, {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
  }

  // -- cost and speed ----------------------------------------------------------------------------

  void costs() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim::symbol("N"), Dim(3), Dim(8), Dim(8)}));
    Value* w = g.addInput("w", TensorType::of(DType::F32, {4, 3, 3, 3}));
    Value* b = g.addInput("b", TensorType::of(DType::F32, {4}));
    Node* conv = g.addNode(OpKind::Conv, {x, w, b}, 1, {"c"});
    conv->attrs().set("pads", Ints{1, 1, 1, 1});
    Node* pool = g.addNode(OpKind::MaxPool, {conv->output(0)}, 1, {"p"});
    pool->attrs().set("kernel_shape", Ints{2, 2});
    pool->attrs().set("strides", Ints{2, 2});
    Value* a = g.addInput("a", TensorType::of(DType::F32, {5, 6}));
    Value* bm = g.addInput("bm", TensorType::of(DType::F32, {6, 7}));
    Value* c = g.addInput("cm", TensorType::of(DType::F32, {7}));
    Node* gemm = g.addNode(OpKind::Gemm, {a, bm, c}, 1, {"g"});
    g.addOutput(pool->output(0));
    g.addOutput(gemm->output(0));
    QVERIFY(inferShapes(g).ok());
    // 4*8*8 outputs, 27 MACs each, plus the bias adds (N counts as 1).
    QCOMPARE(nodeCost(*conv).flops, 2.0 * 256 * 27 + 256);
    QCOMPARE(nodeCost(*pool).flops, 4.0 * 4 * 4 * 4);
    QCOMPARE(nodeCost(*gemm).flops, 2.0 * 5 * 7 * 6 + 35);
  }

  void convSpeed() {
    // A ResNet-18 stage-1 conv: 0.23 GMACs must take well under a second on one core.
    Tensor x = randomF32({1, 64, 56, 56}, 3), w = randomF32({64, 64, 3, 3}, 4);
    Graph g;
    buildOp(g, OpKind::Conv, {x, w}, attrs({{"pads", Ints{1, 1, 1, 1}}}));
    QVERIFY(inferShapes(g).ok());
    QElapsedTimer timer;
    timer.start();
    auto r = interpret(g, {x, w});
    qint64 ms = timer.elapsed();
    QVERIFY(r.ok());
    qInfo("Conv 64->64 3x3 on 1x64x56x56: %lld ms", static_cast<long long>(ms));
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
    QVERIFY2(ms < 1000, "the reference Conv is too slow");
#else
    qInfo("not an optimized build: the time bound is not checked");
#endif
    // Spot-check against the naive loop on one output element at a corner and one inside.
    const Tensor& y = r->outputs[0];
    QCOMPARE(y.sizes(), (Ints{1, 64, 56, 56}));
    auto xv = x.data<float>();
    auto wv = w.data<float>();
    for (auto [m, i, j] : {std::tuple{0, 0, 0}, std::tuple{37, 20, 55}}) {
      double s = 0;
      for (int c = 0; c < 64; ++c)
        for (int a = 0; a < 3; ++a)
          for (int e = 0; e < 3; ++e) {
            int ih = i - 1 + a, iw = j - 1 + e;
            if (ih >= 0 && ih < 56 && iw >= 0 && iw < 56)
              s += double(xv[size_t((c * 56 + ih) * 56 + iw)]) *
                   double(wv[size_t(((m * 64 + c) * 3 + a) * 3 + e)]);
          }
      QVERIFY(std::fabs(y.getAsDouble((m * 56 + i) * 56 + j) - s) < 1e-4);
    }
  }
};

QTEST_GUILESS_MAIN(TestOpsNN)
#include "TestOpsNN.moc"
