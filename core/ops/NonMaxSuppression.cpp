// NonMaxSuppression: per batch entry and class, greedily keeps the highest-scoring boxes whose
// overlap (IoU) with every box kept before is at most iou_threshold, as ONNX Runtime does. The
// number of kept boxes depends on the data.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <algorithm>
#include <numeric>

namespace fb {

using namespace math;

namespace {

/// selected_indices: (num_selected, 3) i64 of [batch, class, box]; num_selected is unknown.
Status inferNonMaxSuppression(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  FB_TRY(checkSameDType(ctx, 0, 1));
  const TensorType& boxes = ctx.inputType(0);
  const TensorType& scores = ctx.inputType(1);
  if (boxes.rank() != 3 || dimsConflict(boxes.dims[2], Dim(4)))
    return ctx.error("input 0 (boxes) must be (N, boxes, 4), got ", boxes.str());
  if (scores.rank() != 3 || dimsConflict(scores.dims[0], boxes.dims[0]) ||
      dimsConflict(scores.dims[2], boxes.dims[1]))
    return ctx.error("input 1 (scores) must be (N, classes, boxes) for boxes ", boxes.str(),
                     ", got ", scores.str());
  FB_ASSIGN_OR_RETURN(int64_t center, intAttr(ctx, "center_point_box", 0));
  if (center != 0 && center != 1)
    return ctx.error("center_point_box = ", center, " must be 0 or 1");
  ctx.setOutputType(0, TensorType(DType::I64, {Dim::unknown(), Dim(3)}));
  return Status::success();
}

/// A box as corners (y1 <= y2, x1 <= x2).
struct Box {
  double y1, x1, y2, x2;
  double area() const { return (y2 - y1) * (x2 - x1); }
};

/// Intersection over union; 0 when either box has no area (such boxes suppress nothing).
double iou(const Box& a, const Box& b) {
  if (a.area() <= 0 || b.area() <= 0)
    return 0;
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0)
    return 0;
  const double inter = ih * iw;
  return inter / (a.area() + b.area() - inter);
}

/// For each batch entry and class: the boxes scoring above score_threshold (when given), by
/// score descending (ties: lower box index first), each kept unless its IoU with a kept box
/// exceeds iou_threshold, at most max_output_boxes_per_class (0 or absent: none) of them.
Status evalNonMaxSuppression(EvalContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  const std::vector<int64_t> bs = boxes.sizes(), ss = scores.sizes();
  const int64_t N = bs[0], B = bs[1], C = ss[1];
  if (ss[0] != N || ss[2] != B)
    return ctx.error("input 1 (scores) ", scores.type().str(), " does not match boxes ",
                     boxes.type().str());
  auto scalar = [&](size_t i, double dflt) -> Expected<double> {
    if (!ctx.hasInput(i) || ctx.input(i).numElements() == 0)
      return dflt;
    if (ctx.input(i).numElements() != 1)
      return ctx.error("input ", i, " must be a scalar, got ", ctx.input(i).type().str());
    return ctx.input(i).getAsDouble(0);
  };
  FB_ASSIGN_OR_RETURN(double maxPerClass, scalar(2, 0));
  FB_ASSIGN_OR_RETURN(double iouThreshold, scalar(3, 0));
  const bool hasScoreThreshold = ctx.hasInput(4) && ctx.input(4).numElements() > 0;
  FB_ASSIGN_OR_RETURN(double scoreThreshold, scalar(4, 0));
  FB_ASSIGN_OR_RETURN(int64_t center, intAttr(ctx, "center_point_box", 0));
  auto boxAt = [&](int64_t n, int64_t b) {
    const int64_t o = (n * B + b) * 4;
    const double v0 = boxes.getAsDouble(o), v1 = boxes.getAsDouble(o + 1),
                 v2 = boxes.getAsDouble(o + 2), v3 = boxes.getAsDouble(o + 3);
    if (center) // [x_center, y_center, width, height]
      return Box{v1 - v3 / 2, v0 - v2 / 2, v1 + v3 / 2, v0 + v2 / 2};
    return Box{std::min(v0, v2), std::min(v1, v3), std::max(v0, v2), std::max(v1, v3)};
  };
  std::vector<int64_t> selected;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      auto score = [&](int64_t b) { return scores.getAsDouble((n * C + c) * B + b); };
      std::vector<int64_t> order;
      for (int64_t b = 0; b < B; ++b)
        if (!hasScoreThreshold || score(b) > scoreThreshold)
          order.push_back(b);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t p, int64_t q) { return score(p) > score(q); });
      std::vector<Box> kept;
      for (int64_t b : order) {
        if (double(kept.size()) >= maxPerClass)
          break;
        const Box box = boxAt(n, b);
        if (std::any_of(kept.begin(), kept.end(),
                        [&](const Box& k) { return iou(k, box) > iouThreshold; }))
          continue;
        kept.push_back(box);
        selected.insert(selected.end(), {n, c, b});
      }
    }
  ctx.setOutput(0, Tensor::fromVector<int64_t>({int64_t(selected.size() / 3), 3}, selected));
  return Status::success();
}

/// Each box against the kept ones: about 10 FLOPs per pair of boxes in the worst case.
OpCost nmsCost(const CostContext& ctx) {
  const double boxes =
      ctx.inputType(0).dims[1].isStatic() ? double(ctx.inputType(0).dims[1].size()) : 1;
  return OpCost{ctx.inputElements(1) * boxes * 10, 0};
}

} // namespace

void registerNonMaxSuppressionOps(OpRegistry& r) {
  r.set(OpKind::NonMaxSuppression, inferNonMaxSuppression, evalNonMaxSuppression, nmsCost);
}

} // namespace fb
