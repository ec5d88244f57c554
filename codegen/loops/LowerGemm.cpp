// GEMM specs for MatMul, Gemm and Conv kernels: the operand strides, batch, bias and conv
// geometry the micro-kernel generator compiles (codegen/gemm/GemmSpec.h).
#include "codegen/loops/LowerContext.h"
#include "core/ops/ConvGeometry.h"

namespace fb::cg::lower {

std::optional<GemmSpec> gemmSpecFor(KernelBuilder& b, const Node& n, const BufferPtr& out) {
  if (out->dtype != DType::F32)
    return std::nullopt;
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
    std::vector<Dim> wk = {Dim(ws[2]), Dim(ws[3])};
    auto w = windowOf(n, WindowKind::Conv, xs, os, wk);
    if (!w.ok())
      return std::nullopt;
    ConvGeometry c;
    c.batch = xs[0];
    c.inChannels = xs[1];
    c.inH = xs[2];
    c.inW = xs[3];
    c.outChannels = os[1];
    c.outH = os[2];
    c.outW = os[3];
    c.kernelH = ws[2];
    c.kernelW = ws[3];
    c.strideH = w->stride[0];
    c.strideW = w->stride[1];
    c.padTop = w->padBegin[0];
    c.padLeft = w->padBegin[1];
    c.dilationH = w->dilation[0];
    c.dilationW = w->dilation[1];
    c.groups = *groups;
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

} // namespace fb::cg::lower
