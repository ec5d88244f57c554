// Tests of the ops added for the ONNX node tests, where their semantics are subtle: the losses
// (reductions, weights, ignore_index, N-d inputs, log_prob, out-of-range targets), Einsum
// (batched products, attention scores, diagonals, transposes, sums, ellipses, implicit output),
// Det, Compress, ReverseSequence, EyeLike and Shrink, against numbers computed with NumPy and the
// ONNX reference implementations.
#include "OpTestUtil.h"

#include "core/Interpreter.h"
#include "core/ShapeInference.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::test;

namespace {

Tensor f32(std::vector<int64_t> sizes, std::vector<float> v) {
  return Tensor::fromVector<float>(std::move(sizes), v);
}
Tensor i64(std::vector<int64_t> sizes, std::vector<int64_t> v) {
  return Tensor::fromVector<int64_t>(std::move(sizes), v);
}
/// Values 0, 1, 2, ... times `scale` plus `offset`.
Tensor ramp(std::vector<int64_t> sizes, float scale, float offset) {
  Tensor t(DType::F32, std::move(sizes));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFromDouble(i, double(float(i) * scale + offset));
  return t;
}

/// The outputs and inferred output types of one node run on graph inputs `feeds`.
struct OneNode {
  std::vector<Tensor> outputs;
  std::vector<TensorType> types;
};
Expected<OneNode> runOne(OpKind op, const std::vector<Tensor>& feeds, const AttrMap& a = {},
                         size_t numOutputs = 1) {
  Graph g;
  std::vector<Value*> ins;
  for (size_t i = 0; i < feeds.size(); ++i)
    ins.push_back(g.addInput("x" + std::to_string(i), feeds[i].type()));
  Node* n = g.addNode(op, ins, numOutputs, {}, "n");
  n->attrs() = a;
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

#define RUN_ONE(res, ...)                                                                          \
  auto res##Or = runOne(__VA_ARGS__);                                                              \
  QVERIFY2(res##Or.ok(), res##Or.ok() ? "" : res##Or.error().message().c_str());                   \
  auto& res = *res##Or

// Scores (2, 3, 2): N = 2, C = 3, d1 = 2; targets with one ignored element (-1).
Tensor scores() {
  return f32({2, 3, 2}, {0.5f, -1.0f, 1.5f, 0.25f, -0.75f, 2.0f, 1.0f, 0.0f, -0.5f, 0.5f, 0.25f,
                         -1.25f});
}
Tensor targets() { return i64({2, 2}, {0, 2, 1, -1}); }
Tensor weights() { return f32({3}, {0.5f, 1.0f, 2.0f}); }

} // namespace

class TestOpsAdded : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void nllReductions() {
    AttrMap ii = attrs({{"ignore_index", int64_t(-1)}, {"reduction", std::string("none")}});
    RUN_ONE(none, OpKind::NegativeLogLikelihoodLoss, {scores(), targets(), weights()}, ii);
    QVERIFY(near(values(none.outputs[0]), {-0.25, -4.0, 0.5, 0.0}));
    QCOMPARE(none.types[0], TensorType::of(DType::F32, {2, 2}));
    ii.set("reduction", std::string("sum"));
    RUN_ONE(sum, OpKind::NegativeLogLikelihoodLoss, {scores(), targets(), weights()}, ii);
    QVERIFY(near(values(sum.outputs[0]), {-3.75}));
    QCOMPARE(sum.types[0], TensorType::of(DType::F32, {}));
    // 'mean' divides by the sum of the weights of the targets that count: -3.75 / 3.5.
    ii.set("reduction", std::string("mean"));
    RUN_ONE(mean, OpKind::NegativeLogLikelihoodLoss, {scores(), targets(), weights()}, ii);
    QVERIFY(near(values(mean.outputs[0]), {-1.0714285}));
    // Unweighted, by the number of targets that count (3, not 4).
    RUN_ONE(meanNw, OpKind::NegativeLogLikelihoodLoss, {scores(), targets()}, ii);
    QVERIFY(near(values(meanNw.outputs[0]), {-0.6666667}));
  }

  void nllTargetOutOfRange() {
    // -1 is a valid target only when it is the ignore_index.
    auto r = runOne(OpKind::NegativeLogLikelihoodLoss, {scores(), targets()});
    QVERIFY(!r.ok());
    QVERIFY(contains(r.error(), "index -1 is out of range for axis 1 of size 3"));
    auto big = runOne(OpKind::NegativeLogLikelihoodLoss, {scores(), i64({2, 2}, {0, 3, 1, 1})});
    QVERIFY(!big.ok());
    QVERIFY(contains(big.error(), "index 3 is out of range"));
    QVERIFY(contains(big.error(), "NegativeLogLikelihoodLoss"));
    // Target dims that do not match the scores' (N, d1).
    auto shape = runOne(OpKind::NegativeLogLikelihoodLoss, {scores(), i64({2, 3}, {0, 0, 0, 0, 0, 0})});
    QVERIFY(!shape.ok());
    QVERIFY(contains(shape.error(), "input 1 (target)"));
  }

  void softmaxCrossEntropy() {
    AttrMap a = attrs({{"ignore_index", int64_t(-1)}});
    RUN_ONE(mean, OpKind::SoftmaxCrossEntropyLoss, {scores(), targets(), weights()}, a, 2);
    QVERIFY(near(values(mean.outputs[0]), {0.89292914}));
    QVERIFY(near(values(mean.outputs[1]),
                 {-1.3874903, -3.2017655, -0.3874903, -1.9517654, -2.6374903, -0.2017655,
                  -0.5279757, -1.0767845, -2.0279758, -0.5767846, -1.2779758, -2.3267846}));
    QCOMPARE(mean.types[1], TensorType::of(DType::F32, {2, 3, 2}));
    a.set("reduction", std::string("none"));
    RUN_ONE(none, OpKind::SoftmaxCrossEntropyLoss, {scores(), targets()}, a);
    QVERIFY(near(values(none.outputs[0]), {1.3874903, 0.2017655, 2.0279758, 0.0}));
  }

  void einsumForms() {
    AttrMap bmm = attrs({{"equation", std::string("bij,bjk->bik")}});
    RUN_ONE(mm, OpKind::Einsum, {ramp({2, 3, 4}, 0.25f, -1), ramp({2, 4, 3}, 0.5f, -2)}, bmm);
    QVERIFY(near(values(mm.outputs[0]), {1.25, 0, -1.25, 2.25, 3, 3.75, 3.25, 6, 8.75, 61.25, 66,
                                         70.75, 86.25, 93, 99.75, 111.25, 120, 128.75}));
    QCOMPARE(mm.types[0], TensorType::of(DType::F32, {2, 3, 3}));
    // Attention scores: q·kᵀ per batch and head.
    AttrMap att = attrs({{"equation", std::string("bhid,bhjd->bhij")}});
    RUN_ONE(s, OpKind::Einsum, {ramp({1, 2, 3, 4}, 0.1f, -1), ramp({1, 2, 5, 4}, 0.05f, -1)}, att);
    QCOMPARE(s.types[0], TensorType::of(DType::F32, {1, 2, 3, 5}));
    QVERIFY(near({values(s.outputs[0])[0], values(s.outputs[0])[29]}, {3.17, 4.05}, 1e-5));
    Tensor m = ramp({3, 3}, 1, 0);
    RUN_ONE(diag, OpKind::Einsum, {m}, attrs({{"equation", std::string("ii->i")}}));
    QVERIFY(near(values(diag.outputs[0]), {0, 4, 8}));
    RUN_ONE(trace, OpKind::Einsum, {m}, attrs({{"equation", std::string("ii")}}));
    QVERIFY(near(values(trace.outputs[0]), {12}));
    QCOMPARE(trace.types[0], TensorType::of(DType::F32, {}));
    Tensor a = ramp({3, 4}, 0.25f, -1);
    RUN_ONE(t, OpKind::Einsum, {a}, attrs({{"equation", std::string("ij->ji")}}));
    QVERIFY(near(values(t.outputs[0]), {-1, 0, 1, -0.75, 0.25, 1.25, -0.5, 0.5, 1.5, -0.25, 0.75, 1.75}));
    RUN_ONE(total, OpKind::Einsum, {a}, attrs({{"equation", std::string("ij->")}}));
    QVERIFY(near(values(total.outputs[0]), {4.5}));
    // Ellipsis and implicit output: "...ij,...jk" is a batched product over the leading dims.
    RUN_ONE(e, OpKind::Einsum, {ramp({2, 3, 4}, 0.25f, -1), ramp({2, 4, 3}, 0.5f, -2)},
            attrs({{"equation", std::string("...ij,...jk")}}));
    QVERIFY(near(values(e.outputs[0]), values(mm.outputs[0])));
    auto bad = runOne(OpKind::Einsum, {a}, attrs({{"equation", std::string("ijk->i")}}));
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "3 letters for an operand of rank 2"));
  }

  void det() {
    RUN_ONE(d, OpKind::Det, {f32({3, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0, 2, 0, 0, 0})});
    QVERIFY(near(values(d.outputs[0]), {-2, -1, 0}));
    QCOMPARE(d.types[0], TensorType::of(DType::F32, {3}));
    // A zero first pivot needs a row swap.
    RUN_ONE(p, OpKind::Det, {f32({3, 3}, {0, 2, 1, 1, 1, 1, 2, 0, 3})});
    QVERIFY(near(values(p.outputs[0]), {-4}));
  }

  void compressAndReverse() {
    Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
    Tensor c = Tensor::fromVector<bool>({3}, {false, true, true});
    RUN_ONE(r, OpKind::Compress, {x, c}, attrs({{"axis", int64_t(0)}}));
    QVERIFY(near(values(r.outputs[0]), {3, 4, 5, 6}));
    QCOMPARE(r.outputs[0].sizes(), (std::vector<int64_t>{2, 2}));
    QVERIFY(!r.types[0].isStatic()); // the count depends on the data
    RUN_ONE(flat, OpKind::Compress, {x, Tensor::fromVector<bool>({5}, {false, true, false, false, true})});
    QVERIFY(near(values(flat.outputs[0]), {2, 5}));
    auto longer = runOne(OpKind::Compress, {x, Tensor::fromVector<bool>({4}, {false, false, false, true})},
                         attrs({{"axis", int64_t(0)}}));
    QVERIFY(!longer.ok());
    QVERIFY(contains(longer.error(), "condition element 3 is true"));

    // Batch axis 0, time axis 1: each row reversed over its first len elements.
    Tensor s = ramp({4, 4}, 1, 0);
    RUN_ONE(rev, OpKind::ReverseSequence, {s, i64({4}, {1, 2, 3, 4})},
            attrs({{"time_axis", int64_t(1)}, {"batch_axis", int64_t(0)}}));
    QVERIFY(near(values(rev.outputs[0]), {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
    auto bad = runOne(OpKind::ReverseSequence, {s, i64({4}, {1, 2, 3, 5})},
                      attrs({{"time_axis", int64_t(1)}, {"batch_axis", int64_t(0)}}));
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "sequence_lens[3] = 5 is outside [0, 4]"));
  }

  void eyeLikeAndShrink() {
    RUN_ONE(e, OpKind::EyeLike, {ramp({3, 4}, 1, 0)}, attrs({{"k", int64_t(1)}, {"dtype", int64_t(7)}}));
    QVERIFY(near(values(e.outputs[0]), {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
    QCOMPARE(e.types[0], TensorType::of(DType::I64, {3, 4}));
    RUN_ONE(s, OpKind::Shrink, {f32({5}, {-2, -1, 0, 1, 2})},
            attrs({{"lambd", 1.5f}, {"bias", 1.5f}}));
    QVERIFY(near(values(s.outputs[0]), {-0.5, 0, 0, 0, 0.5}));
  }
};

QTEST_GUILESS_MAIN(TestOpsAdded)
#include "TestOpsAdded.moc"
