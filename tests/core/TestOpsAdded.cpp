// Tests of the ops added for the ONNX node tests, where their semantics are subtle: the losses
// (reductions, weights, ignore_index, N-d inputs, log_prob, out-of-range targets), Einsum
// (batched products, attention scores, diagonals, transposes, sums, ellipses, implicit output),
// Det, Compress, ReverseSequence, EyeLike, Shrink, GridSample (every mode and padding),
// NonMaxSuppression, Unique, MaxUnpool and RoiAlign, against numbers computed with NumPy and the
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
  return f32({2, 3, 2},
             {0.5f, -1.0f, 1.5f, 0.25f, -0.75f, 2.0f, 1.0f, 0.0f, -0.5f, 0.5f, 0.25f, -1.25f});
}
Tensor targets() {
  return i64({2, 2}, {0, 2, 1, -1});
}
Tensor weights() {
  return f32({3}, {0.5f, 1.0f, 2.0f});
}

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
    auto shape =
        runOne(OpKind::NegativeLogLikelihoodLoss, {scores(), i64({2, 3}, {0, 0, 0, 0, 0, 0})});
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
    QVERIFY(near(values(t.outputs[0]),
                 {-1, 0, 1, -0.75, 0.25, 1.25, -0.5, 0.5, 1.5, -0.25, 0.75, 1.75}));
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
    RUN_ONE(flat, OpKind::Compress,
            {x, Tensor::fromVector<bool>({5}, {false, true, false, false, true})});
    QVERIFY(near(values(flat.outputs[0]), {2, 5}));
    auto longer =
        runOne(OpKind::Compress, {x, Tensor::fromVector<bool>({4}, {false, false, false, true})},
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
    RUN_ONE(e, OpKind::EyeLike, {ramp({3, 4}, 1, 0)},
            attrs({{"k", int64_t(1)}, {"dtype", int64_t(7)}}));
    QVERIFY(near(values(e.outputs[0]), {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
    QCOMPARE(e.types[0], TensorType::of(DType::I64, {3, 4}));
    RUN_ONE(s, OpKind::Shrink, {f32({5}, {-2, -1, 0, 1, 2})},
            attrs({{"lambd", 1.5f}, {"bias", 1.5f}}));
    QVERIFY(near(values(s.outputs[0]), {-0.5, 0, 0, 0, 0.5}));
  }

  void gridSample() {
    // Expected values from torch.nn.functional.grid_sample (which ONNX's outputs come from).
    struct Case {
      const char* mode;
      const char* padding;
      int64_t align;
      std::vector<double> want;
    };
    const std::vector<Case> cases = {
        {"nearest", "zeros", 0, {0.0, 2.0, 0.0, 0.0, 3.5, 2.5}},
        {"nearest", "zeros", 1, {-1.0, 2.0, 4.5, 0.0, 3.5, 2.5}},
        {"nearest", "reflection", 0, {-1.0, 2.0, 4.5, 0.0, 3.5, 2.5}},
        {"bilinear", "zeros", 0, {-0.065, 2.35, 0.77625, -0.125, 3.135, 1.33}},
        {"bilinear", "zeros", 1, {-0.56, 2.175, 3.740001, -0.25, 2.8125, 2.025}},
        {"bilinear", "border", 0, {-1.0, 2.35, 4.5, -0.25, 3.3, 1.9}},
        {"bilinear", "border", 1, {-0.8, 2.175, 4.4, -0.25, 2.8125, 2.025}},
        {"bilinear", "reflection", 1, {-0.65, 2.175, 4.325, -0.25, 2.8125, 2.025}},
        {"bicubic", "zeros", 0, {-0.075139, 2.567844, 0.806026, -0.3125, 3.404225, 1.315966}},
        {"bicubic", "border", 1, {-0.904624, 2.249813, 4.465577, -0.25, 2.916066, 1.899328}},
        {"bicubic", "reflection", 0, {-1.375, 2.489314, 4.945313, -0.625, 3.323249, 1.800251}},
        {"bicubic", "reflection", 1, {-0.91025, 2.263312, 4.476592, -0.25, 3.127091, 1.89197}},
    };
    Tensor x = ramp({1, 1, 3, 4}, 0.5f, -1);
    Tensor grid = f32({1, 2, 3, 2}, {-1.2f, -0.9f, 0.3f, 0.1f, 1.1f, 0.95f, 0.0f, -1.0f, -0.45f,
                                     0.7f, 0.9f, -0.2f});
    for (const Case& c : cases) {
      RUN_ONE(r, OpKind::GridSample, {x, grid},
              attrs({{"mode", std::string(c.mode)},
                     {"padding_mode", std::string(c.padding)},
                     {"align_corners", c.align}}));
      QVERIFY2(near(values(r.outputs[0]), c.want, 2e-6),
               (std::string(c.mode) + " " + c.padding + " " + std::to_string(c.align)).c_str());
      QCOMPARE(r.types[0], TensorType::of(DType::F32, {1, 1, 2, 3}));
    }
  }

  void nonMaxSuppression() {
    // ONNX's suppress-by-IoU case: six boxes of one class, three kept at IoU threshold 0.5.
    Tensor boxes = f32({1, 6, 4}, {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                   0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101});
    Tensor scores = f32({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
    RUN_ONE(r, OpKind::NonMaxSuppression,
            {boxes, scores, i64({1}, {3}), f32({1}, {0.5f}), f32({1}, {0.0f})});
    QVERIFY(near(values(r.outputs[0]), {0, 0, 3, 0, 0, 0, 0, 0, 5}));
    QCOMPARE(r.outputs[0].sizes(), (std::vector<int64_t>{3, 3}));
    // Without max_output_boxes_per_class nothing is selected.
    RUN_ONE(none, OpKind::NonMaxSuppression, {boxes, scores});
    QCOMPARE(none.outputs[0].sizes(), (std::vector<int64_t>{0, 3}));
    // A score threshold of 0.6 drops the boxes scoring 0.6 or less.
    RUN_ONE(t, OpKind::NonMaxSuppression,
            {boxes, scores, i64({1}, {6}), f32({1}, {0.5f}), f32({1}, {0.6f})});
    QVERIFY(near(values(t.outputs[0]), {0, 0, 3, 0, 0, 0}));
  }

  void unique() {
    RUN_ONE(s, OpKind::Unique, {f32({6}, {2, 1, 1, 3, 4, 3})}, {}, 4);
    QVERIFY(near(values(s.outputs[0]), {1, 2, 3, 4}));
    QVERIFY(near(values(s.outputs[1]), {1, 0, 3, 4}));
    QVERIFY(near(values(s.outputs[2]), {1, 0, 0, 2, 3, 2}));
    QVERIFY(near(values(s.outputs[3]), {2, 1, 2, 1}));
    RUN_ONE(u, OpKind::Unique, {f32({6}, {2, 1, 1, 3, 4, 3})}, attrs({{"sorted", int64_t(0)}}), 4);
    QVERIFY(near(values(u.outputs[0]), {2, 1, 3, 4}));
    QVERIFY(near(values(u.outputs[1]), {0, 1, 3, 4}));
    QVERIFY(near(values(u.outputs[2]), {0, 1, 1, 2, 3, 2}));
    QVERIFY(near(values(u.outputs[3]), {1, 2, 2, 1}));
    RUN_ONE(a, OpKind::Unique, {f32({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4})},
            attrs({{"axis", int64_t(0)}}), 4);
    QVERIFY(near(values(a.outputs[0]), {1, 0, 0, 2, 3, 4}));
    QCOMPARE(a.outputs[0].sizes(), (std::vector<int64_t>{2, 3}));
    QVERIFY(near(values(a.outputs[1]), {0, 2}));
    QVERIFY(near(values(a.outputs[2]), {0, 0, 1}));
    QVERIFY(near(values(a.outputs[3]), {2, 1}));
  }

  void maxUnpool() {
    AttrMap a = attrs(
        {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
    RUN_ONE(r, OpKind::MaxUnpool,
            {f32({1, 1, 2, 2}, {1, 2, 3, 4}), i64({1, 1, 2, 2}, {5, 7, 13, 15})}, a);
    QVERIFY(near(values(r.outputs[0]), {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
    QCOMPARE(r.types[0], TensorType::of(DType::F32, {1, 1, 4, 4}));
    // Indices are positions in the default 4 × 4 output; a 5 × 5 output_shape pads its ends.
    RUN_ONE(p, OpKind::MaxUnpool,
            {f32({1, 1, 2, 2}, {5, 6, 7, 8}), i64({1, 1, 2, 2}, {5, 7, 13, 15}),
             i64({4}, {1, 1, 5, 5})},
            a);
    QVERIFY(near(values(p.outputs[0]),
                 {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0}));
    auto bad = runOne(OpKind::MaxUnpool,
                      {f32({1, 1, 2, 2}, {1, 2, 3, 4}), i64({1, 1, 2, 2}, {5, 7, 13, 16})}, a);
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "index 16 is out of range"));
  }

  void roiAlign() {
    // On the linear image x + 10 y, bilinear samples are exact, so each bin averages to the
    // value at its centre: bins of 2 starting at 1 (output_half_pixel) or 0.5 (half_pixel).
    Tensor x(DType::F32, {1, 1, 10, 10});
    for (int64_t i = 0; i < 100; ++i)
      x.setFromDouble(i, double(i % 10 + 10 * (i / 10)));
    Tensor rois = f32({1, 4}, {1, 1, 5, 5});
    Tensor batch = i64({1}, {0});
    AttrMap a = attrs({{"output_height", int64_t(2)},
                       {"output_width", int64_t(2)},
                       {"sampling_ratio", int64_t(2)},
                       {"coordinate_transformation_mode", std::string("output_half_pixel")}});
    RUN_ONE(r, OpKind::RoiAlign, {x, rois, batch}, a);
    QVERIFY(near(values(r.outputs[0]), {22, 24, 42, 44}));
    QCOMPARE(r.types[0], TensorType::of(DType::F32, {1, 1, 2, 2}));
    a.set("coordinate_transformation_mode", std::string("half_pixel"));
    a.set("sampling_ratio", int64_t(0)); // adaptive: ceil(2 / 1) samples per bin side
    RUN_ONE(h, OpKind::RoiAlign, {x, rois, batch}, a);
    QVERIFY(near(values(h.outputs[0]), {16.5, 18.5, 36.5, 38.5}));
    auto bad = runOne(OpKind::RoiAlign, {x, rois, i64({1}, {1})}, a);
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error(), "index 1 is out of range for axis 0 of size 1"));
  }
};

QTEST_GUILESS_MAIN(TestOpsAdded)
#include "TestOpsAdded.moc"
