// Normalization ops: inference-mode BatchNormalization, LayerNormalization,
// InstanceNormalization and GroupNormalization. Statistics are computed in double whatever the
// storage type.
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

namespace fb {

using namespace math;

namespace {

/// Reads a tensor of any float dtype as doubles (per-channel parameters are small).
std::vector<double> toDoubles(const Tensor& t) {
  std::vector<double> out(size_t(t.numElements()));
  for (int64_t i = 0; i < t.numElements(); ++i)
    out[size_t(i)] = t.getAsDouble(i);
  return out;
}

/// Checks that input i is a 1-D tensor of C elements (C = dim 1 of X), naming `what`.
Status checkPerChannel(const InferContext& ctx, size_t i, const char* what, const Dim& channels) {
  const TensorType& t = ctx.inputType(i);
  if (t.rank() != 1 || dimsConflict(t.dims[0], channels))
    return ctx.error("input ", i, " (", what, ") must have shape [", channels.str(), "], got ",
                     t.str());
  return Status::success();
}

/// Runtime counterpart of checkPerChannel.
Status checkPerChannel(const EvalContext& ctx, size_t i, const char* what, int64_t channels) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 1 || t.sizes()[0] != channels)
    return ctx.error("input ", i, " (", what, ") must have shape [", channels, "], got ",
                     t.type().str());
  return Status::success();
}

/// Writes y[i] = x[i] * a + b for one contiguous run, in X's element type.
void scaleShift(const Tensor& x, Tensor& y, int64_t begin, int64_t count, double a, double b) {
  dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatLike<T>) {
      const T* in = x.data<T>().data() + begin;
      T* out = y.mutableData<T>().data() + begin;
      const float fa = float(a), fb = float(b);
      for (int64_t i = 0; i < count; ++i)
        out[i] = T(float(in[i]) * fa + fb);
    } else {
      assert(false && "normalization of a non-float tensor");
    }
  });
}

/// Mean and 1/sqrt(variance + epsilon) of `count` contiguous elements of x from `begin`.
std::pair<double, double> moments(const Tensor& x, int64_t begin, int64_t count, double epsilon) {
  double sum = 0, sumSq = 0;
  dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatLike<T>) {
      const T* in = x.data<T>().data() + begin;
      for (int64_t i = 0; i < count; ++i)
        sum += double(float(in[i]));
      const double mean = count ? sum / double(count) : 0.0;
      // Two passes: the variance of centred values does not cancel catastrophically.
      for (int64_t i = 0; i < count; ++i) {
        const double d = double(float(in[i])) - mean;
        sumSq += d * d;
      }
    } else {
      assert(false && "normalization of a non-float tensor");
    }
  });
  const double mean = count ? sum / double(count) : 0.0;
  const double var = count ? sumSq / double(count) : 0.0;
  return {mean, 1.0 / std::sqrt(var + epsilon)};
}

// ---------------------------------------------------------------------------------------------
// BatchNormalization (inference): y = (x - mean) / sqrt(var + epsilon) * scale + B per channel.

/// Rejects training mode, which needs batch statistics and extra outputs.
Status checkBatchNormMode(const InferContext& ctx) {
  FB_ASSIGN_OR_RETURN(int64_t training, intAttr(ctx, "training_mode", 0));
  if (training)
    return ctx.unsupported("training_mode=1 (only inference-mode BatchNormalization is "
                           "implemented)");
  if (ctx.numOutputs() > 1)
    return ctx.unsupported("running mean/var outputs (they exist only in training mode)");
  return Status::success();
}

/// X is (N, C, ...); the four parameters are [C].
Status inferBatchNorm(InferContext& ctx) {
  FB_TRY(checkBatchNormMode(ctx));
  FB_ASSIGN_OR_RETURN(float epsilon, floatAttr(ctx, "epsilon", 1e-5f));
  (void)epsilon;
  for (size_t i = 0; i < 5; ++i)
    FB_TRY(checkInputDType(ctx, i, kFloatTypes));
  FB_TRY(checkSameDType(ctx, 1, 2)); // scale and B share a type, as do mean and var
  FB_TRY(checkSameDType(ctx, 3, 4));
  const TensorType& x = ctx.inputType(0);
  if (x.rank() < 2)
    return ctx.error("X must have rank >= 2 (N, C, ...), got ", x.str());
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i)
    FB_TRY(checkPerChannel(ctx, i, names[i], x.dims[1]));
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// Folds each channel's parameters into one multiply-add.
Status evalBatchNorm(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(int64_t training, intAttr(ctx, "training_mode", 0));
  if (training || ctx.numOutputs() > 1)
    return ctx.unsupported("training-mode BatchNormalization");
  FB_ASSIGN_OR_RETURN(float epsilon, floatAttr(ctx, "epsilon", 1e-5f));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2)
    return ctx.error("X must have rank >= 2 (N, C, ...), got ", x.type().str());
  const int64_t n = x.sizes()[0], c = x.sizes()[1],
                spatial = x.numElements() / std::max<int64_t>(n * c, 1);
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i)
    FB_TRY(checkPerChannel(ctx, i, names[i], c));
  const auto scale = toDoubles(ctx.input(1)), bias = toDoubles(ctx.input(2));
  const auto mean = toDoubles(ctx.input(3)), var = toDoubles(ctx.input(4));
  Tensor y(x.dtype(), x.sizes());
  for (int64_t ch = 0; ch < c; ++ch) {
    // Folded into one multiply-add per element.
    const double a = scale[size_t(ch)] / std::sqrt(var[size_t(ch)] + double(epsilon));
    const double b = bias[size_t(ch)] - mean[size_t(ch)] * a;
    for (int64_t b0 = 0; b0 < n; ++b0)
      scaleShift(x, y, (b0 * c + ch) * spatial, spatial, a, b);
  }
  ctx.setOutput(0, std::move(y));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// LayerNormalization: normalizes over dims [axis, rank); Mean and InvStdDev keep those dims as 1.

/// LayerNormalization's `axis` (default -1), normalized against the rank.
template <typename Ctx> Expected<int64_t> layerNormAxis(const Ctx& ctx, size_t rank) {
  FB_ASSIGN_OR_RETURN(int64_t axis, intAttr(ctx, "axis", -1));
  auto a = normalizeAxis(axis, int64_t(rank));
  if (!a || rank == 0)
    return ctx.error(a ? std::string("X must have rank >= 1") : a.error().message());
  return *a;
}

/// Y has X's type; Mean and InvStdDev have the stash type and X[:axis] + ones.
Status inferLayerNorm(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  FB_TRY(checkSameDType(ctx, 0, 1));
  if (ctx.hasInput(2))
    FB_TRY(checkSameDType(ctx, 0, 2));
  const TensorType& x = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, layerNormAxis(ctx, x.rank()));
  FB_ASSIGN_OR_RETURN(float epsilon, floatAttr(ctx, "epsilon", 1e-5f));
  (void)epsilon;
  FB_ASSIGN_OR_RETURN(int64_t stashType, intAttr(ctx, "stash_type", 1));
  auto stash = dtypeFromOnnxElemType(stashType);
  if (!stash || !isFloat(*stash))
    return ctx.unsupported("stash_type ", stashType,
                           " (Fusebox computes statistics in f32, "
                           "f16 or bf16)");
  // Scale and B broadcast to the normalized shape X[axis:], right-aligned.
  const std::vector<Dim> normDims(x.dims.begin() + axis, x.dims.end());
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.hasInput(i))
      continue;
    const TensorType& p = ctx.inputType(i);
    bool ok = p.rank() <= normDims.size();
    for (size_t k = 0; ok && k < p.rank(); ++k) {
      const Dim& pd = p.dims[p.rank() - 1 - k];
      ok =
          !(pd.isStatic() && pd.size() != 1 && dimsConflict(pd, normDims[normDims.size() - 1 - k]));
    }
    if (!ok)
      return ctx.error("input ", i, " (", i == 1 ? "Scale" : "B", ") ", p.str(),
                       " does not broadcast to the normalized shape of X ", x.str(), " from axis ",
                       axis);
  }
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  std::vector<Dim> statDims(x.dims.begin(), x.dims.begin() + axis);
  statDims.resize(x.rank(), Dim(1));
  for (size_t i = 1; i < ctx.numOutputs() && i < 3; ++i)
    ctx.setOutputType(i, TensorType(*stash, statDims));
  return Status::success();
}

/// Expands a Scale or B tensor to `count` doubles over the normalized shape.
Expected<std::vector<double>> expandParam(const EvalContext& ctx, size_t i,
                                          const std::vector<int64_t>& normSizes, int64_t count) {
  const Tensor& p = ctx.input(i);
  auto b = broadcastSizes(p.sizes(), normSizes);
  if (!b || *b != normSizes)
    return ctx.error("input ", i, " ", p.type().str(),
                     " does not broadcast to the normalized "
                     "shape ",
                     TensorType::of(p.dtype(), normSizes).str());
  const auto values = toDoubles(p);
  std::vector<double> out(static_cast<size_t>(count));
  std::array<std::vector<int64_t>, 1> strides{broadcastStrides(p.sizes(), normSizes)};
  forEachBroadcastN<1>(normSizes, strides, [&](int64_t k, const std::array<int64_t, 1>& off) {
    out[size_t(k)] = values[size_t(off[0])];
  });
  return out;
}

/// Normalizes each row of the [outer, inner] view of X.
Status evalLayerNorm(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(int64_t axis, layerNormAxis(ctx, x.rank()));
  FB_ASSIGN_OR_RETURN(float epsilon, floatAttr(ctx, "epsilon", 1e-5f));
  const std::vector<int64_t> normSizes(x.sizes().begin() + axis, x.sizes().end());
  int64_t inner = 1;
  for (int64_t s : normSizes)
    inner *= s;
  const int64_t outer = inner ? x.numElements() / inner : 0;
  FB_ASSIGN_OR_RETURN(std::vector<double> scale, expandParam(ctx, 1, normSizes, inner));
  std::vector<double> bias(size_t(inner), 0.0);
  if (ctx.hasInput(2)) {
    FB_ASSIGN_OR_RETURN(bias, expandParam(ctx, 2, normSizes, inner));
  }
  std::vector<int64_t> statSizes(x.sizes().begin(), x.sizes().begin() + axis);
  statSizes.resize(x.rank(), 1);
  Tensor y(x.dtype(), x.sizes());
  std::vector<Tensor> stats;
  for (size_t i = 1; i < ctx.numOutputs() && i < 3; ++i)
    stats.emplace_back(ctx.outputType(i).dtype, statSizes);
  dispatchDType(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatLike<T>) {
      const T* in = x.data<T>().data();
      T* out = y.mutableData<T>().data();
      for (int64_t r = 0; r < outer; ++r) {
        auto [mean, inv] = moments(x, r * inner, inner, double(epsilon));
        const T* row = in + r * inner;
        T* dst = out + r * inner;
        for (int64_t k = 0; k < inner; ++k)
          dst[k] =
              T(float((double(float(row[k])) - mean) * inv * scale[size_t(k)] + bias[size_t(k)]));
        if (!stats.empty())
          stats[0].setFromDouble(r, mean);
        if (stats.size() > 1)
          stats[1].setFromDouble(r, inv);
      }
    } else {
      assert(false && "LayerNormalization of a non-float tensor");
    }
  });
  ctx.setOutput(0, std::move(y));
  for (size_t i = 0; i < stats.size(); ++i)
    ctx.setOutput(i + 1, std::move(stats[i]));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// InstanceNormalization: per (n, c), normalize over the spatial dims, then scale and shift by c.

/// X is (N, C, ...); scale and B are [C].
Status inferInstanceNorm(InferContext& ctx) {
  // InstanceNormalization (opset 6) takes f16 and f32 (and f64, which Fusebox lacks).
  FB_TRY(checkInputDType(ctx, 0, dtypeBit(DType::F32) | dtypeBit(DType::F16)));
  FB_TRY(checkSameDType(ctx, 0, 1));
  FB_TRY(checkSameDType(ctx, 0, 2));
  FB_ASSIGN_OR_RETURN(float epsilon, floatAttr(ctx, "epsilon", 1e-5f));
  (void)epsilon;
  const TensorType& x = ctx.inputType(0);
  if (x.rank() < 2)
    return ctx.error("input must have rank >= 2 (N, C, ...), got ", x.str());
  FB_TRY(checkPerChannel(ctx, 1, "scale", x.dims[1]));
  FB_TRY(checkPerChannel(ctx, 2, "B", x.dims[1]));
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

/// Normalizes each (n, c) plane, then scales and shifts it.
Status evalInstanceNorm(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(float epsilon, floatAttr(ctx, "epsilon", 1e-5f));
  if (x.rank() < 2)
    return ctx.error("input must have rank >= 2 (N, C, ...), got ", x.type().str());
  const int64_t n = x.sizes()[0], c = x.sizes()[1];
  const int64_t spatial = n * c != 0 ? x.numElements() / (n * c) : 0;
  FB_TRY(checkPerChannel(ctx, 1, "scale", c));
  FB_TRY(checkPerChannel(ctx, 2, "B", c));
  const auto scale = toDoubles(ctx.input(1)), bias = toDoubles(ctx.input(2));
  Tensor y(x.dtype(), x.sizes());
  for (int64_t b0 = 0; b0 < n; ++b0)
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t begin = (b0 * c + ch) * spatial;
      auto [mean, inv] = moments(x, begin, spatial, double(epsilon));
      const double a = scale[size_t(ch)] * inv;
      scaleShift(x, y, begin, spatial, a, bias[size_t(ch)] - mean * a);
    }
  ctx.setOutput(0, std::move(y));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// GroupNormalization: the channels of each sample split into num_groups groups of C/G; each group
// (its channels and all their spatial positions) is normalized together, then scaled and shifted.
// Opset 21 takes scale and B per channel ([C]); opset 18 took them per group ([G]). Both forms
// are accepted: a [C] vector is per channel, a [G] vector (G != C) per group; when G == C the
// two readings coincide.

/// The number of groups: the required attribute num_groups, at least 1.
template <typename Ctx> Expected<int64_t> numGroups(const Ctx& ctx) {
  if (!ctx.node().attrs().has("num_groups"))
    return ctx.error("the attribute num_groups is required");
  FB_ASSIGN_OR_RETURN(int64_t g, intAttr(ctx, "num_groups", 1));
  if (g < 1)
    return ctx.error("num_groups must be at least 1, got ", g);
  return g;
}

/// Checks that input i (scale or B) has C or G elements.
Status checkGroupParam(const InferContext& ctx, size_t i, const char* what, const Dim& channels,
                       int64_t groups) {
  const TensorType& t = ctx.inputType(i);
  const bool ok =
      t.rank() == 1 && (!t.dims[0].isStatic() || !channels.isStatic() ||
                        t.dims[0].size() == channels.size() || t.dims[0].size() == groups);
  if (!ok)
    return ctx.error("input ", i, " (", what, ") must have shape [", channels.str(),
                     "] (per channel) or [", groups, "] (per group, opset 18), got ", t.str());
  return Status::success();
}

Status inferGroupNorm(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, dtypeBit(DType::F32) | dtypeBit(DType::F16)));
  FB_TRY(checkSameDType(ctx, 0, 1));
  FB_TRY(checkSameDType(ctx, 0, 2));
  FB_ASSIGN_OR_RETURN(float epsilon, floatAttr(ctx, "epsilon", 1e-5f));
  (void)epsilon;
  FB_ASSIGN_OR_RETURN(int64_t groups, numGroups(ctx));
  const TensorType& x = ctx.inputType(0);
  if (x.rank() < 2)
    return ctx.error("input must have rank >= 2 (N, C, ...), got ", x.str());
  if (x.dims[1].isStatic() && x.dims[1].size() % groups != 0)
    return ctx.error("the ", x.dims[1].size(), " channels do not split into num_groups = ", groups,
                     " equal groups");
  FB_TRY(checkGroupParam(ctx, 1, "scale", x.dims[1], groups));
  FB_TRY(checkGroupParam(ctx, 2, "B", x.dims[1], groups));
  ctx.setOutputType(0, TensorType(x.dtype, x.dims));
  return Status::success();
}

Status evalGroupNorm(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  FB_ASSIGN_OR_RETURN(float epsilon, floatAttr(ctx, "epsilon", 1e-5f));
  FB_ASSIGN_OR_RETURN(int64_t groups, numGroups(ctx));
  if (x.rank() < 2)
    return ctx.error("input must have rank >= 2 (N, C, ...), got ", x.type().str());
  const int64_t n = x.sizes()[0], c = x.sizes()[1];
  if (c % groups != 0)
    return ctx.error("the ", c, " channels do not split into num_groups = ", groups,
                     " equal groups");
  const int64_t perGroup = c / groups;
  const int64_t spatial = n * c != 0 ? x.numElements() / (n * c) : 0;
  const auto scale = toDoubles(ctx.input(1)), bias = toDoubles(ctx.input(2));
  for (size_t i = 1; i <= 2; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() != 1 || (t.sizes()[0] != c && t.sizes()[0] != groups))
      return ctx.error("input ", i, " (", i == 1 ? "scale" : "B", ") must have shape [", c,
                       "] or [", groups, "], got ", t.type().str());
  }
  const bool scalePerChannel = int64_t(scale.size()) == c;
  const bool biasPerChannel = int64_t(bias.size()) == c;
  Tensor y(x.dtype(), x.sizes());
  for (int64_t b0 = 0; b0 < n; ++b0)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t begin = (b0 * c + g * perGroup) * spatial;
      auto [mean, inv] = moments(x, begin, perGroup * spatial, double(epsilon));
      for (int64_t k = 0; k < perGroup; ++k) {
        const int64_t ch = g * perGroup + k;
        const double a = scale[size_t(scalePerChannel ? ch : g)] * inv;
        const double shift = bias[size_t(biasPerChannel ? ch : g)] - mean * a;
        scaleShift(x, y, begin + k * spatial, spatial, a, shift);
      }
    }
  ctx.setOutput(0, std::move(y));
  return Status::success();
}

} // namespace

void registerNormalizationOps(OpRegistry& r) {
  // BatchNormalization as ONNX writes it: subtract, divide, multiply, add per element (the
  // per-channel square roots are negligible). Compiled code folds it to a multiply-add.
  r.set(OpKind::BatchNormalization, inferBatchNorm, evalBatchNorm, costPerInputElement<4>);
  // Layer and instance normalization: mean (1), centred square and sum (3), normalize (2),
  // scale and shift (2): 8 per element.
  r.set(OpKind::LayerNormalization, inferLayerNorm, evalLayerNorm, costPerInputElement<8>);
  r.set(OpKind::InstanceNormalization, inferInstanceNorm, evalInstanceNorm, costPerInputElement<8>);
  r.set(OpKind::GroupNormalization, inferGroupNorm, evalGroupNorm, costPerInputElement<8>);
}

} // namespace fb
