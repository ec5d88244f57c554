// Tests of the CPU backend on the ops added for the ONNX node tests: the losses (every
// reduction, weights, ignore_index, log_prob, N-d, and the interpreter's error for a target out
// of range), Einsum (products, attention scores, diagonals, transposes, sums, broadcast
// ellipses), Det (with row swaps and a singular matrix), LRN, MeanVarianceNormalization,
// DynamicQuantizeLinear, cubic Resize, GridSample, MaxUnpool, RoiAlign, EyeLike, Shrink,
// CastLike, ReverseSequence, Compress with a constant condition and the window functions, each
// alone and under O3, against the reference interpreter; NonMaxSuppression, Unique and Compress
// with a run-time condition are refused by name.
#include "OneNodeCompare.h"

using namespace fb;
using namespace fb::cg;
using namespace fb::test;

namespace {

Tensor targets(std::vector<int64_t> sizes, int64_t classes, int64_t ignore) {
  Tensor t(DType::I64, std::move(sizes));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFromDouble(i, double(i % 5 == 3 ? ignore : (i * 7) % classes));
  return t;
}

} // namespace

class TestAddedOps : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void losses() {
    for (const char* reduction : {"none", "sum", "mean"})
      for (bool weighted : {false, true}) {
        Attrs a{{"reduction", std::string(reduction)}, {"ignore_index", int64_t(-1)}};
        Tensor w = weighted ? f32({4}, {0.5f, 1, 2, 0.25f}) : Tensor();
        CHECK_OP(OpKind::NegativeLogLikelihoodLoss,
                 (Ops{in(ramp({3, 4, 2, 3})), in(targets({3, 2, 3}, 4, -1)), in(w)}), a, 1);
        CHECK_OP(OpKind::SoftmaxCrossEntropyLoss,
                 (Ops{in(ramp({3, 4, 5})), in(targets({3, 5}, 4, -1)), in(w)}), a, 2);
        CHECK_OP(OpKind::SoftmaxCrossEntropyLoss, (Ops{in(ramp({5, 4})), in(targets({5}, 4, -1))}),
                 a, 1);
      }
    // A target outside [0, C) that is not the ignore_index: the interpreter's error.
    std::vector<Tensor> feeds;
    auto g = oneNode(OpKind::NegativeLogLikelihoodLoss, Ops{in(ramp({2, 3})), in(i64({2}, {1, 3}))},
                     Attrs{}, 1, feeds);
    std::string r = compare(*g, feeds);
    QVERIFY2(r.rfind("error: ", 0) == 0 && r.find("index 3 is out of range") != std::string::npos,
             r.c_str());
  }

  void einsumAndDet() {
    CHECK_OP(OpKind::Einsum, (Ops{in(ramp({2, 3, 4})), in(ramp({2, 4, 5}))}),
             (Attrs{{"equation", std::string("bij,bjk->bik")}}), 1);
    CHECK_OP(OpKind::Einsum, (Ops{in(ramp({1, 2, 3, 4})), in(ramp({1, 2, 5, 4}))}),
             (Attrs{{"equation", std::string("bhid,bhjd->bhij")}}), 1);
    CHECK_OP(OpKind::Einsum, (Ops{in(ramp({4, 4}))}), (Attrs{{"equation", std::string("ii->i")}}),
             1);
    CHECK_OP(OpKind::Einsum, (Ops{in(ramp({3, 4}))}), (Attrs{{"equation", std::string("ij->ji")}}),
             1);
    CHECK_OP(OpKind::Einsum, (Ops{in(ramp({3, 4}))}), (Attrs{{"equation", std::string("ij->")}}),
             1);
    CHECK_OP(OpKind::Einsum, (Ops{in(ramp({2, 1, 3, 4})), in(ramp({5, 4, 2}))}),
             (Attrs{{"equation", std::string("...ij,...jk")}}), 1);
    CHECK_OP(OpKind::Det, (Ops{in(f32({3, 3}, {0, 2, 1, 1, 1, 1, 2, 0, 3}))}), Attrs{}, 1);
    CHECK_OP(OpKind::Det, (Ops{in(f32({2, 2, 2}, {1, 2, 2, 4, 0, 1, 1, 0}))}), Attrs{}, 1);
    CHECK_OP(OpKind::Det, (Ops{in(ramp({2, 3, 4, 4}, 11))}), Attrs{}, 1);
  }

  void normalizations() {
    CHECK_OP(OpKind::LRN, (Ops{in(ramp({2, 5, 3, 3}))}),
             (Attrs{{"size", int64_t(3)}, {"alpha", 0.0002f}, {"beta", 0.5f}, {"bias", 2.0f}}), 1);
    CHECK_OP(OpKind::LRN, (Ops{in(ramp({1, 6, 4}))}), (Attrs{{"size", int64_t(4)}}), 1);
    CHECK_OP(OpKind::MeanVarianceNormalization, (Ops{in(ramp({2, 3, 2, 4}))}), Attrs{}, 1);
    CHECK_OP(OpKind::MeanVarianceNormalization, (Ops{in(ramp({2, 3, 5}))}),
             (Attrs{{"axes", std::vector<int64_t>{1}}}), 1);
    CHECK_OP(OpKind::DynamicQuantizeLinear, (Ops{in(ramp({3, 4}))}), Attrs{}, 3);
    CHECK_OP(OpKind::DynamicQuantizeLinear, (Ops{in(f32({4}, {1, 2.1f, 1.3f, 2.5f}))}), Attrs{}, 3);
  }

  void cubicResize() {
    for (const char* coord : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"})
      for (int64_t exclude : {0, 1}) {
        Attrs a{{"mode", std::string("cubic")},
                {"coordinate_transformation_mode", std::string(coord)},
                {"exclude_outside", exclude},
                {"cubic_coeff_a", -0.5f}};
        CHECK_OP(OpKind::Resize,
                 (Ops{in(ramp({1, 1, 4, 4})), Operand{}, cst(f32({4}, {1, 1, 2, 1.5f}))}), a, 1);
        CHECK_OP(OpKind::Resize,
                 (Ops{in(ramp({1, 1, 4, 4})), Operand{}, cst(f32({4}, {1, 1, 0.8f, 0.6f}))}), a, 1);
      }
  }

  void elementwiseAndIndexing() {
    CHECK_OP(OpKind::EyeLike, (Ops{in(ramp({3, 5}))}), (Attrs{{"k", int64_t(-1)}}), 1);
    CHECK_OP(OpKind::Shrink, (Ops{in(ramp({4, 5}))}), (Attrs{{"lambd", 1.0f}, {"bias", 0.5f}}), 1);
    CHECK_OP(OpKind::CastLike, (Ops{in(ramp({4, 5})), in(i64({1}, {0}))}), Attrs{}, 1);
    CHECK_OP(OpKind::ReverseSequence, (Ops{in(ramp({4, 3, 2})), in(i64({3}, {4, 1, 2}))}), Attrs{},
             1);
    CHECK_OP(OpKind::ReverseSequence, (Ops{in(ramp({3, 4})), in(i64({3}, {0, 4, 3}))}),
             (Attrs{{"time_axis", int64_t(1)}, {"batch_axis", int64_t(0)}}), 1);
    Tensor cond = Tensor::fromVector<bool>({3}, {true, false, true});
    CHECK_OP(OpKind::Compress, (Ops{in(ramp({3, 4})), cst(cond)}), (Attrs{{"axis", int64_t(0)}}),
             1);
    CHECK_OP(OpKind::Compress, (Ops{in(ramp({3, 4})), cst(cond)}), Attrs{}, 1);
    for (OpKind w : {OpKind::HannWindow, OpKind::HammingWindow, OpKind::BlackmanWindow})
      CHECK_OP(w, (Ops{cst(Tensor::scalar<int64_t>(10))}), (Attrs{{"periodic", int64_t(0)}}), 1);
  }

  void gridSample() {
    Tensor grid(DType::F32, {2, 3, 4, 2});
    for (int64_t i = 0; i < grid.numElements(); ++i)
      grid.setFromDouble(i, double((i * 37) % 29) / 11.0 - 1.3); // in and outside [-1, 1]
    for (const char* mode : {"nearest", "bilinear", "bicubic"})
      for (const char* padding : {"zeros", "border", "reflection"})
        for (int64_t align : {0, 1})
          CHECK_OP(OpKind::GridSample, (Ops{in(ramp({2, 2, 3, 5})), in(grid)}),
                   (Attrs{{"mode", std::string(mode)},
                          {"padding_mode", std::string(padding)},
                          {"align_corners", align}}),
                   1);
  }

  void unpoolAndRoiAlign() {
    Attrs k{{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}};
    CHECK_OP(OpKind::MaxUnpool,
             (Ops{in(ramp({1, 2, 2, 2})), in(i64({1, 2, 2, 2}, {0, 3, 9, 15, 16, 22, 25, 31}))}), k,
             1);
    CHECK_OP(OpKind::MaxUnpool,
             (Ops{in(f32({1, 1, 2, 2}, {5, 6, 7, 8})), in(i64({1, 1, 2, 2}, {5, 7, 13, 15})),
                  cst(i64({4}, {1, 1, 5, 5}))}),
             k, 1);
    Tensor rois = f32({3, 4}, {0, 0, 9, 9, 0, 5, 4, 9, 5.5f, 5, 9, 8.2f});
    for (const char* coord : {"half_pixel", "output_half_pixel"})
      for (const char* mode : {"avg", "max"})
        for (int64_t ratio : {0, 2})
          CHECK_OP(OpKind::RoiAlign,
                   (Ops{in(ramp({2, 3, 10, 10}, 13)), in(rois), in(i64({3}, {0, 1, 0}))}),
                   (Attrs{{"output_height", int64_t(3)},
                          {"output_width", int64_t(4)},
                          {"sampling_ratio", ratio},
                          {"spatial_scale", 0.9f},
                          {"mode", std::string(mode)},
                          {"coordinate_transformation_mode", std::string(coord)}}),
                   1);
  }

  void dataDependentShapesAreRefusedByName() {
    for (OpKind op : {OpKind::NonMaxSuppression, OpKind::Unique}) {
      std::vector<Tensor> feeds;
      Ops operands{in(ramp({1, 3, 4}))};
      if (op == OpKind::NonMaxSuppression)
        operands.push_back(in(ramp({1, 2, 3})));
      auto g = oneNode(op, operands, Attrs{}, 1, feeds);
      std::string r = compare(*g, feeds);
      QVERIFY2(r.find(opName(op)) != std::string::npos, r.c_str());
    }
  }

  void gatherIndicesAreRangeChecked() {
    // In range (negative ones count from the end) the CPU result matches; out of range it fails
    // with the interpreter's error instead of reading a clamped element.
    CHECK_OP(OpKind::Gather, (Ops{in(ramp({4, 3})), in(i64({2, 2}, {0, -1, 3, -4}))}),
             (Attrs{{"axis", int64_t(0)}}), 1);
    std::vector<Tensor> feeds;
    auto g = oneNode(OpKind::Gather, Ops{in(ramp({4, 3})), in(i64({2}, {1, 3}))},
                     Attrs{{"axis", int64_t(1)}}, 1, feeds);
    std::string r = compare(*g, feeds);
    QVERIFY2(r.rfind("error: ", 0) == 0 &&
                 r.find("index 3 is out of range for axis 1 of size 3") != std::string::npos,
             r.c_str());
  }

  void compressNeedsACompileTimeCondition() {
    std::vector<Tensor> feeds;
    auto g = oneNode(OpKind::Compress,
                     Ops{in(ramp({3, 4})), in(Tensor::fromVector<bool>({3}, {true, false, true}))},
                     Attrs{{"axis", int64_t(0)}}, 1, feeds);
    std::string r = compare(*g, feeds);
    QVERIFY2(r.find("Compress") != std::string::npos, r.c_str());
  }
};

QTEST_GUILESS_MAIN(TestAddedOps)
#include "TestAddedOps.moc"
