// GEMM specs for MatMul, Gemm and Conv kernels: the operand strides, batch, bias and conv
// geometry the micro-kernel generator compiles (codegen/kernel/GemmSpec.h), and the fused
// elementwise chain after them mapped onto the spec's bias and epilogue ops.
#include "codegen/loops/EpilogueActivation.h"
#include "codegen/loops/LowerContext.h"
#include "core/ops/ConvGeometry.h"

#include <limits>
#include <tuple>
#include <utility>

namespace fb::cg::lower {

namespace {

/// The convolution geometry of a 2-D window over X (xs) into Y (ys), `groups` groups.
ConvGeometry geometryOf(const Window& w, const std::vector<int64_t>& xs,
                        const std::vector<int64_t>& ys, int64_t groups) {
  ConvGeometry c;
  c.batch = xs[0];
  c.inChannels = xs[1];
  c.inH = xs[2];
  c.inW = xs[3];
  c.outChannels = ys[1];
  c.outH = ys[2];
  c.outW = ys[3];
  c.kernelH = w.kernel[0];
  c.kernelW = w.kernel[1];
  c.strideH = w.stride[0];
  c.strideW = w.stride[1];
  c.padTop = w.padBegin[0];
  c.padLeft = w.padBegin[1];
  c.dilationH = w.dilation[0];
  c.dilationW = w.dilation[1];
  c.groups = groups;
  return c;
}

/// The spec of a 2-D MaxPool, or of an AveragePool whose windows all count the same taps
/// (count_include_pad, or no padding and no ceil-mode overhang): a depthwise window without
/// weights for the direct generator. None with an Indices output, or any other shape.
std::optional<GemmSpec> poolingSpecFor(KernelBuilder& b, const Node& n, const BufferPtr& out) {
  const Value* X = n.input(0);
  const std::vector<int64_t>& os = out->sizes;
  if (os.size() != 4 || X->type().dtype != DType::F32 ||
      (n.numOutputs() > 1 && n.output(1) && !n.output(1)->uses().empty()))
    return std::nullopt;
  BufferPtr xb = b.directBuffer(X);
  if (!xb)
    return std::nullopt;
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  // An empty tensor (no images, channels or pixels) has nothing to pool: its loop nest does
  // nothing, which is all it needs.
  for (int64_t d : xs)
    if (d < 1)
      return std::nullopt;
  for (int64_t d : os)
    if (d < 1)
      return std::nullopt;
  auto w = windowOf(n, WindowKind::Pool, xs, os, {});
  if (!w.ok() || w->s != 2 || xs[1] != os[1])
    return std::nullopt;
  GemmSpec g;
  g.pooling = n.op() == OpKind::MaxPool ? GemmSpec::Pooling::Max : GemmSpec::Pooling::Average;
  if (g.pooling == GemmSpec::Pooling::Average) {
    auto includePad = n.attrs().getInt("count_include_pad", 0);
    if (!includePad.ok())
      return std::nullopt;
    // Every window must count the whole kernel (lowerPool divides by countedTaps).
    for (size_t d = 0; d < 2; ++d)
      for (int64_t o = 0; o < w->out[d]; ++o)
        if (countedTaps(*w, d, o, *includePad != 0) != w->kernel[d])
          return std::nullopt;
    g.poolScale = float(1.0 / double(w->kernel[0] * w->kernel[1]));
  }
  ConvGeometry c = geometryOf(*w, xs, os, xs[1]);
  g.conv = c;
  g.batch = xs[0];
  g.M = 1;
  g.N = os[2] * os[3];
  g.K = c.kernelH * c.kernelW;
  g.bArg = b.argIndexOf(xb);
  g.bBatchStride = xs[1] * xs[2] * xs[3];
  g.cArg = b.argIndexOf(out);
  g.cBatchStride = os[1] * os[2] * os[3];
  g.cRowStride = g.N;
  return g;
}

} // namespace

std::optional<ConvGeometry> convGeometryOf(const Node& n, const std::vector<int64_t>& xs,
                                           const std::vector<int64_t>& ws,
                                           const std::vector<int64_t>& ys, int64_t groups) {
  std::vector<Dim> wk = {Dim(ws[2]), Dim(ws[3])};
  auto w = windowOf(n, WindowKind::Conv, xs, ys, wk);
  if (!w.ok() || w->kernel.size() != 2)
    return std::nullopt;
  return geometryOf(*w, xs, ys, groups);
}

std::optional<GemmSpec> gemmSpecFor(KernelBuilder& b, const Node& n, const BufferPtr& out) {
  if (out->dtype != DType::F32)
    return std::nullopt;
  if (n.op() == OpKind::MaxPool || n.op() == OpKind::AveragePool)
    return poolingSpecFor(b, n, out);
  GemmSpec g;
  g.cArg = b.argIndexOf(out);
  const std::vector<int64_t>& os = out->sizes;
  if (n.op() == OpKind::Conv) {
    const Value *X = n.input(0), *W = n.input(1);
    const Value* Bias = n.numInputs() > 2 ? n.input(2) : nullptr;
    auto groups = n.attrs().getInt("group", 1);
    if (!groups.ok() || os.size() != 4 || X->type().dtype != DType::F32)
      return std::nullopt;
    // Depthwise-like convolutions (one input channel per group) get a spec too: its epilogue
    // is fused the same way, and the direct depthwise generator (gemm/DepthwiseEmitter.h)
    // compiles it instead of the GEMM generator (K = kernel taps has nothing to block).
    BufferPtr xb = b.directBuffer(X), wb = b.directBuffer(W);
    if (!xb || !wb)
      return std::nullopt;
    std::vector<int64_t> xs = KernelBuilder::sizesOf(X), ws = KernelBuilder::sizesOf(W);
    std::optional<ConvGeometry> c = convGeometryOf(n, xs, ws, os, *groups);
    if (!c)
      return std::nullopt;
    g.conv = c;
    g.batch = xs[0];
    g.M = os[1] / *groups;
    g.N = os[2] * os[3];
    g.K = ws[1] * ws[2] * ws[3];
    g.aArg = b.argIndexOf(wb);
    g.aRowStride = g.K;
    g.aColStride = 1;
    g.bArg = b.argIndexOf(xb);
    g.bBatchStride = xs[1] * xs[2] * xs[3];
    g.cBatchStride = os[1] * os[2] * os[3];
    g.cRowStride = g.N;
    if (const Tensor* t = b.constantOf(W))
      g.constantA = *t;
    if (Bias) {
      BufferPtr bb = b.directBuffer(Bias);
      if (!bb || Bias->type().dtype != DType::F32)
        return std::nullopt;
      g.bias = GemmSpec::Bias::PerRow;
      g.biasArg = b.argIndexOf(bb);
    }
    return g;
  }
  const Value *A = n.input(0), *B = n.input(1);
  if (A->type().dtype != DType::F32 || B->type().dtype != DType::F32)
    return std::nullopt;
  BufferPtr ab = b.directBuffer(A), bb = b.directBuffer(B);
  if (!ab || !bb)
    return std::nullopt;
  std::vector<int64_t> as = KernelBuilder::sizesOf(A), bs = KernelBuilder::sizesOf(B);
  g.aArg = b.argIndexOf(ab);
  g.bArg = b.argIndexOf(bb);
  if (n.op() == OpKind::Gemm) {
    auto transA = n.attrs().getInt("transA", 0), transB = n.attrs().getInt("transB", 0);
    auto alpha = n.attrs().getFloat("alpha", 1.f), beta = n.attrs().getFloat("beta", 1.f);
    if (!transA.ok() || !transB.ok() || !alpha.ok() || !beta.ok())
      return std::nullopt;
    g.M = os[0];
    g.N = os[1];
    g.K = *transA ? as[0] : as[1];
    g.aRowStride = *transA ? 1 : as[1];
    g.aColStride = *transA ? as[1] : 1;
    g.bRowStride = *transB ? 1 : bs[1];
    g.bColStride = *transB ? bs[1] : 1;
    g.cRowStride = g.N;
    g.alpha = *alpha;
    g.beta = *beta;
    const Value* C = n.numInputs() > 2 ? n.input(2) : nullptr;
    if (C) {
      BufferPtr cb = b.directBuffer(C);
      if (!cb || C->type().dtype != DType::F32)
        return std::nullopt;
      std::vector<int64_t> cs = KernelBuilder::sizesOf(C);
      int64_t numel = 1;
      for (int64_t s : cs)
        numel *= s;
      if (cs == std::vector<int64_t>{g.M, g.N})
        g.bias = GemmSpec::Bias::Full;
      else if (numel == g.N && (cs.size() == 1 || cs == std::vector<int64_t>{1, g.N}))
        g.bias = GemmSpec::Bias::PerColumn;
      else if (cs == std::vector<int64_t>{g.M, 1})
        g.bias = GemmSpec::Bias::PerRow;
      else
        return std::nullopt; // a scalar bias has no GemmSpec form
      if (g.M == g.N && g.bias != GemmSpec::Bias::Full && numel == 1)
        return std::nullopt;
      g.biasArg = b.argIndexOf(cb);
    }
  } else {
    size_t rA = as.size(), rB = bs.size();
    if (rB == 1) {
      // y[.., m] = A[.., m, :] . b: N = 1.
      if (rA < 2)
        return std::nullopt;
      int64_t batchA = 1;
      for (size_t d = 0; d + 2 < rA; ++d)
        batchA *= as[d];
      g.M = batchA * as[rA - 2];
      g.K = as[rA - 1];
      g.N = 1;
      g.aRowStride = g.K;
      g.bRowStride = 1;
      g.cRowStride = 1;
    } else if (rA == 1) {
      if (rB != 2)
        return std::nullopt;
      g.M = 1;
      g.K = as[0];
      g.N = bs[1];
      g.aRowStride = g.K;
      g.bRowStride = g.N;
      g.cRowStride = g.N;
    } else if (rB == 2) {
      // Leading dims of A fold into M.
      int64_t batchA = 1;
      for (size_t d = 0; d + 2 < rA; ++d)
        batchA *= as[d];
      g.M = batchA * as[rA - 2];
      g.K = as[rA - 1];
      g.N = bs[1];
      g.aRowStride = g.K;
      g.bRowStride = g.N;
      g.cRowStride = g.N;
    } else {
      // Batched: batch dims of each operand equal the output's or are absent.
      std::vector<int64_t> ob(os.begin(), os.end() - 2);
      std::vector<int64_t> abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
      if ((rA > 2 && abatch != ob) || (bbatch != ob))
        return std::nullopt;
      int64_t batch = 1;
      for (int64_t s : ob)
        batch *= s;
      g.batch = batch;
      g.M = as[rA - 2];
      g.K = as[rA - 1];
      g.N = bs[rB - 1];
      g.aRowStride = g.K;
      g.bRowStride = g.N;
      g.cRowStride = g.N;
      g.aBatchStride = rA > 2 ? g.M * g.K : 0;
      g.bBatchStride = g.K * g.N;
      g.cBatchStride = g.M * g.N;
    }
  }
  if (const Tensor* t = b.constantOf(A))
    g.constantA = *t;
  if (const Tensor* t = b.constantOf(B))
    g.constantB = *t;
  return g;
}

namespace {

/// The Mul of `Mul(v, Sigmoid(v))` when `v` has exactly those two uses (in either order of
/// the Mul's operands), else null.
const Node* siluMulOf(const Value* v) {
  if (v->uses().size() != 2)
    return nullptr;
  for (int s = 0; s < 2; ++s) {
    const Node* sig = v->uses()[size_t(s)].user;
    const Node* mul = v->uses()[size_t(1 - s)].user;
    if (sig->op() != OpKind::Sigmoid || mul->op() != OpKind::Mul || sig->numOutputs() != 1 ||
        mul->numInputs() != 2 || sig->output(0)->uses().size() != 1 ||
        sig->output(0)->uses()[0].user != mul)
      continue;
    const Value* a = mul->input(0);
    const Value* b = mul->input(1);
    if ((a == v && b == sig->output(0)) || (b == v && a == sig->output(0)))
      return mul;
  }
  return nullptr;
}

/// The bias kind of an Add operand of sizes `os` on a GEMM output of sizes `out`.
GemmSpec::Bias biasKind(const GemmSpec& spec, const std::vector<int64_t>& os,
                        const std::vector<int64_t>& out) {
  if (os.size() > out.size())
    return GemmSpec::Bias::None;
  // Which output dims the operand varies along (right-aligned broadcasting).
  std::vector<bool> varies(out.size(), false);
  int64_t n = 1;
  for (size_t d = 0; d < os.size(); ++d) {
    size_t od = out.size() - os.size() + d;
    if (os[d] != 1 && os[d] != out[od])
      return GemmSpec::Bias::None;
    varies[od] = os[d] != 1;
    n *= os[d];
  }
  if (spec.conv) {
    // Output [B, C, H, W]: per channel is per row.
    bool onlyC = out.size() == 4 && !varies[0] && !varies[2] && !varies[3];
    if (onlyC && n == spec.conv->outChannels)
      return GemmSpec::Bias::PerRow;
    return GemmSpec::Bias::None;
  }
  size_t r = out.size();
  bool batchFree = true;
  for (size_t d = 0; d + 2 < r; ++d)
    batchFree &= !varies[d];
  if (!batchFree || r < 2) {
    if (r == 1 && n == spec.N)
      return GemmSpec::Bias::PerColumn;
    return GemmSpec::Bias::None;
  }
  bool vRow = varies[r - 2], vCol = varies[r - 1];
  // A folded batch (M covers several leading dims) only admits per-column bias.
  bool foldedM = spec.M != out[r - 2];
  if (!vRow && vCol && n == spec.N)
    return GemmSpec::Bias::PerColumn;
  if (vRow && !vCol && !foldedM && n == spec.M)
    return GemmSpec::Bias::PerRow;
  if (vRow && vCol && !foldedM && spec.batch == 1 && n == spec.M * spec.N)
    return GemmSpec::Bias::Full;
  if (!vRow && !vCol && n == 1)
    return GemmSpec::Bias::None;
  return GemmSpec::Bias::None;
}

/// For an operand of sizes `os` on a batched MatMul's output `out` whose M×N matrix the operand
/// matches but whose batch dims it only partly has (1 elsewhere, right-aligned): the (div, mod)
/// of EpilogueOp::batchDiv/batchMod. Only one run of adjacent batch dims may vary.
std::optional<std::pair<int64_t, int64_t>>
batchRepeat(const GemmSpec& spec, const std::vector<int64_t>& os, const std::vector<int64_t>& out) {
  size_t r = out.size();
  if (spec.conv || spec.batch < 2 || r < 3 || os.size() < 2 || os.size() > r ||
      spec.M != out[r - 2] || spec.N != out[r - 1] || os[os.size() - 2] != spec.M ||
      os[os.size() - 1] != spec.N)
    return std::nullopt;
  // The operand's size along each of the output's batch dims (1 where it has none).
  std::vector<int64_t> ob(r - 2, 1);
  for (size_t d = 0; d + 2 < os.size(); ++d)
    ob[r - os.size() + d] = os[d];
  int64_t div = 1, mod = 1;
  bool seen = false, ended = false;
  for (size_t d = r - 2; d-- > 0;) {
    if (ob[d] != 1 && ob[d] != out[d])
      return std::nullopt;
    bool varies = ob[d] != 1 && out[d] != 1;
    if (varies && ended)
      return std::nullopt;
    if (varies) {
      seen = true;
      mod *= out[d];
    } else if (seen) {
      ended = out[d] != 1 || ended;
    } else {
      div *= out[d];
    }
  }
  return std::make_pair(div, mod);
}

} // namespace

std::optional<GemmSpec> gemmSpecWithEpilogue(KernelBuilder& b, const Node& anchor,
                                             const Value* from, const Value* y,
                                             const BufferPtr& out) {
  std::optional<GemmSpec> spec = gemmSpecFor(b, anchor, out);
  if (!spec)
    return std::nullopt;
  const Value* cur = from;
  std::vector<int64_t> outSizes = KernelBuilder::sizesOf(y);
  while (cur != y) {
    // x·Sigmoid(x) (SiLU, as exporters write it): the value feeds a Sigmoid and a Mul that
    // also takes the Sigmoid's output.
    if (const Node* silu = siluMulOf(cur)) {
      spec->epilogue.push_back({EpilogueOp::Kind::Silu});
      cur = silu->output(0);
      continue;
    }
    // GELU and other activations written as a small elementwise subgraph (several uses of x).
    if (auto act = matchActivation(cur, [&](const Value* v) { return b.constantOf(v); })) {
      spec->epilogue.push_back({act->kind});
      cur = act->last->output(0);
      continue;
    }
    if (cur->uses().size() != 1)
      return std::nullopt;
    const Node* u = cur->uses()[0].user;
    if (u->numOutputs() != 1 && u->op() != OpKind::Dropout)
      return std::nullopt;
    const Value* other = nullptr;
    for (const Value* in : u->inputs())
      if (in && in != cur)
        other = in;
    EpilogueOp op{};
    switch (u->op()) {
    case OpKind::Identity:
    case OpKind::Dropout:
      break;
    case OpKind::Relu:
      spec->epilogue.push_back({EpilogueOp::Kind::Relu});
      break;
    case OpKind::Sigmoid:
      spec->epilogue.push_back({EpilogueOp::Kind::Sigmoid});
      break;
    case OpKind::HardSwish:
      spec->epilogue.push_back({EpilogueOp::Kind::HardSwish});
      break;
    case OpKind::LeakyRelu: {
      op.kind = EpilogueOp::Kind::LeakyRelu;
      auto alpha = u->attrs().getFloat("alpha", 0.01f);
      if (!alpha.ok())
        return std::nullopt;
      op.alpha = *alpha;
      spec->epilogue.push_back(op);
      break;
    }
    case OpKind::HardSigmoid: {
      op.kind = EpilogueOp::Kind::HardSigmoid;
      auto alpha = u->attrs().getFloat("alpha", 0.2f);
      auto beta = u->attrs().getFloat("beta", 0.5f);
      if (!alpha.ok() || !beta.ok())
        return std::nullopt;
      op.alpha = *alpha;
      op.beta = *beta;
      spec->epilogue.push_back(op);
      break;
    }
    case OpKind::Clip: {
      op.kind = EpilogueOp::Kind::Clip;
      op.lo = -std::numeric_limits<float>::infinity();
      op.hi = std::numeric_limits<float>::infinity();
      for (size_t i = 1; i < 3; ++i) {
        const Value* bound = u->input(i);
        if (!bound)
          continue;
        const Tensor* t = b.constantOf(bound);
        if (!t || t->numElements() != 1 || t->dtype() != DType::F32)
          return std::nullopt;
        (i == 1 ? op.lo : op.hi) = float(t->getAsDouble(0));
      }
      spec->epilogue.push_back(op);
      break;
    }
    case OpKind::Add:
    case OpKind::Mul: {
      if (!other || other->type().dtype != DType::F32)
        return std::nullopt;
      BufferPtr ob = b.directBuffer(other);
      if (!ob)
        return std::nullopt;
      std::vector<int64_t> os = KernelBuilder::sizesOf(other);
      if (u->op() == OpKind::Add && spec->bias == GemmSpec::Bias::None && spec->epilogue.empty()) {
        GemmSpec::Bias kind = biasKind(*spec, os, outSizes);
        if (kind != GemmSpec::Bias::None) {
          spec->bias = kind;
          spec->biasArg = b.argIndexOf(ob);
          spec->beta = 1.0f;
          break;
        }
      }
      // The output's shape, one value per output channel (per row) broadcast over the rest, or
      // C's M×N matrices repeating over some of a batched MatMul's batch dims.
      if (os != outSizes) {
        if (spec->conv && biasKind(*spec, os, outSizes) == GemmSpec::Bias::PerRow)
          op.perRow = true;
        else if (auto repeat = batchRepeat(*spec, os, outSizes))
          std::tie(op.batchDiv, op.batchMod) = *repeat;
        else
          return std::nullopt;
      }
      op.kind = u->op() == OpKind::Add ? EpilogueOp::Kind::AddTensor : EpilogueOp::Kind::MulTensor;
      op.arg = b.argIndexOf(ob);
      spec->epilogue.push_back(op);
      break;
    }
    default:
      return std::nullopt;
    }
    cur = u->output(0);
  }
  return spec;
}

} // namespace fb::cg::lower
