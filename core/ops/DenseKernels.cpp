// Blocked GEMM, im2col/col2im convolution and batched matmul for the reference interpreter.
#include "core/ops/DenseKernels.h"
#include "core/ops/KernelUtil.h"

#include <algorithm>

namespace fb {

namespace {

// Register tile of the GEMM micro-kernel: kMR rows of A times a packed panel of kNR columns of
// B. The fixed-size inner loops let GCC keep the tile in registers (and vectorize it at -O2);
// kKC bounds the packed panel so it stays in L1 across the row blocks that reuse it.
constexpr int64_t kMR = 4;
constexpr int64_t kNR = 8;
constexpr int64_t kKC = 256;

template <typename T, int64_t MR>
void microKernel(int64_t kc, const T* a, int64_t lda, const T* panel, T* c, int64_t ldc,
                 int64_t nr) {
  T acc[MR][kNR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const T* b = panel + k * kNR;
    for (int64_t r = 0; r < MR; ++r) {
      const T av = a[r * lda + k];
      for (int64_t j = 0; j < kNR; ++j)
        acc[r][j] += av * b[j];
    }
  }
  for (int64_t r = 0; r < MR; ++r)
    for (int64_t j = 0; j < nr; ++j)
      c[r * ldc + j] += acc[r][j];
}

/// The range [lo, hi) of output positions o whose input o*stride + base lies in [0, size).
void validRange(int64_t base, int64_t stride, int64_t size, int64_t outSize, int64_t& lo,
                int64_t& hi) {
  lo = base >= 0 ? 0 : (-base + stride - 1) / stride;
  hi = base >= size ? 0 : std::min(outSize, (size - 1 - base) / stride + 1);
  lo = std::min(lo, outSize);
  hi = std::max(hi, lo);
}

/// Unfolds the channels of one image group into columns: row (c, kd, kh, kw), column
/// (od, oh, ow); positions in the padding read as zero.
template <typename T>
void im2col(const ConvProblem& p, int64_t channels, const T* x, T* col) {
  const int64_t inSpatial = p.inSpatial();
  const int64_t outW = p.out[2];
  T* dst = col;
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * inSpatial;
    for (int64_t kd = 0; kd < p.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < p.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
          const int64_t wBase = kw * p.dilation[2] - p.padBegin[2];
          int64_t lo, hi;
          validRange(wBase, p.stride[2], p.in[2], outW, lo, hi);
          for (int64_t od = 0; od < p.out[0]; ++od) {
            const int64_t id = od * p.stride[0] - p.padBegin[0] + kd * p.dilation[0];
            for (int64_t oh = 0; oh < p.out[1]; ++oh, dst += outW) {
              const int64_t ih = oh * p.stride[1] - p.padBegin[1] + kh * p.dilation[1];
              if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1]) {
                std::fill(dst, dst + outW, T(0));
                continue;
              }
              const T* xrow = xc + (id * p.in[1] + ih) * p.in[2];
              std::fill(dst, dst + lo, T(0));
              if (p.stride[2] == 1)
                std::copy(xrow + (wBase + lo), xrow + (wBase + hi), dst + lo);
              else
                for (int64_t ow = lo; ow < hi; ++ow)
                  dst[ow] = xrow[wBase + ow * p.stride[2]];
              std::fill(dst + hi, dst + outW, T(0));
            }
          }
        }
  }
}

/// Folds columns back onto an image: the adjoint of im2col, accumulating into y. Here p.in is
/// the folded image (ConvTranspose's output) and p.out the column positions (its input).
template <typename T>
void col2im(const ConvProblem& p, int64_t channels, const T* col, T* y) {
  const int64_t imgSpatial = p.inSpatial();
  const int64_t colW = p.out[2];
  const T* src = col;
  for (int64_t c = 0; c < channels; ++c) {
    T* yc = y + c * imgSpatial;
    for (int64_t kd = 0; kd < p.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < p.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
          const int64_t wBase = kw * p.dilation[2] - p.padBegin[2];
          int64_t lo, hi;
          validRange(wBase, p.stride[2], p.in[2], colW, lo, hi);
          for (int64_t od = 0; od < p.out[0]; ++od) {
            const int64_t id = od * p.stride[0] - p.padBegin[0] + kd * p.dilation[0];
            for (int64_t oh = 0; oh < p.out[1]; ++oh, src += colW) {
              const int64_t ih = oh * p.stride[1] - p.padBegin[1] + kh * p.dilation[1];
              if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1])
                continue;
              T* yrow = yc + (id * p.in[1] + ih) * p.in[2];
              for (int64_t ow = lo; ow < hi; ++ow)
                yrow[wBase + ow * p.stride[2]] += src[ow];
            }
          }
        }
  }
}

} // namespace

template <typename T>
void gemmAccumulate(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                    int64_t ldb, T* c, int64_t ldc) {
  std::vector<T> panel(size_t(kKC * kNR));
  for (int64_t k0 = 0; k0 < k; k0 += kKC) {
    const int64_t kc = std::min(kKC, k - k0);
    for (int64_t j0 = 0; j0 < n; j0 += kNR) {
      const int64_t nr = std::min(kNR, n - j0);
      for (int64_t kk = 0; kk < kc; ++kk) {
        const T* src = b + (k0 + kk) * ldb + j0;
        T* dst = panel.data() + kk * kNR;
        for (int64_t j = 0; j < nr; ++j)
          dst[j] = src[j];
        for (int64_t j = nr; j < kNR; ++j)
          dst[j] = T(0);
      }
      int64_t i0 = 0;
      for (; i0 + kMR <= m; i0 += kMR)
        microKernel<T, kMR>(kc, a + i0 * lda + k0, lda, panel.data(), c + i0 * ldc + j0, ldc, nr);
      const T* aRest = a + i0 * lda + k0;
      T* cRest = c + i0 * ldc + j0;
      switch (m - i0) {
      case 0: break;
      case 1: microKernel<T, 1>(kc, aRest, lda, panel.data(), cRest, ldc, nr); break;
      case 2: microKernel<T, 2>(kc, aRest, lda, panel.data(), cRest, ldc, nr); break;
      case 3: microKernel<T, 3>(kc, aRest, lda, panel.data(), cRest, ldc, nr); break;
      default: assert(false && "row remainder is below kMR"); break;
      }
    }
  }
}

template <typename T> void convForward(const ConvProblem& p, const T* x, const T* w, T* y) {
  const int64_t cg = p.inChannels / p.groups;
  const int64_t mg = p.outChannels / p.groups;
  const int64_t kdim = cg * p.kernelSize();
  const int64_t outSp = p.outSpatial();
  const int64_t inSp = p.inSpatial();
  // A 1x1 kernel with unit stride and no padding reads X itself as the column matrix.
  bool pointwise = true;
  for (int i = 0; i < 3; ++i)
    pointwise = pointwise && p.kernel[i] == 1 && p.stride[i] == 1 && p.padBegin[i] == 0 &&
                p.in[i] == p.out[i];
  std::vector<T> col(pointwise ? 0 : size_t(kdim * outSp));
  std::fill(y, y + p.batch * p.outChannels * outSp, T(0));
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.groups; ++g) {
      const T* xg = x + (n * p.inChannels + g * cg) * inSp;
      const T* bmat = xg;
      if (!pointwise) {
        im2col(p, cg, xg, col.data());
        bmat = col.data();
      }
      T* yg = y + (n * p.outChannels + g * mg) * outSp;
      gemmAccumulate<T>(mg, outSp, kdim, w + g * mg * kdim, kdim, bmat, outSp, yg, outSp);
    }
}

template <typename T> void convTransposed(const ConvProblem& p, const T* x, const T* w, T* y) {
  const int64_t cg = p.inChannels / p.groups;
  const int64_t mg = p.outChannels / p.groups;
  const int64_t ksp = p.kernelSize();
  const int64_t inSp = p.inSpatial();
  const int64_t outSp = p.outSpatial();
  // col2im's view: the folded image is Y (p.out) and the column positions are X's (p.in).
  ConvProblem fold = p;
  std::copy(p.out, p.out + 3, fold.in);
  std::copy(p.in, p.in + 3, fold.out);
  // W of group g is [cg, mg*ksp]; the GEMM wants its transpose [mg*ksp, cg].
  std::vector<T> wt(size_t(mg * ksp * cg));
  std::vector<T> col(size_t(mg * ksp * inSp));
  std::fill(y, y + p.batch * p.outChannels * outSp, T(0));
  for (int64_t g = 0; g < p.groups; ++g) {
    const T* wg = w + g * cg * mg * ksp;
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t r = 0; r < mg * ksp; ++r)
        wt[size_t(r * cg + c)] = wg[c * mg * ksp + r];
    for (int64_t n = 0; n < p.batch; ++n) {
      std::fill(col.begin(), col.end(), T(0));
      const T* xg = x + (n * p.inChannels + g * cg) * inSp;
      gemmAccumulate<T>(mg * ksp, inSp, cg, wt.data(), cg, xg, inSp, col.data(), inSp);
      col2im(fold, mg, col.data(), y + (n * p.outChannels + g * mg) * outSp);
    }
  }
}

template <typename T>
void batchedMatMul(const std::vector<int64_t>& aSizes, const T* a,
                   const std::vector<int64_t>& bSizes, const T* b, T* y) {
  std::vector<int64_t> as = aSizes, bs = bSizes;
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  std::vector<int64_t> aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  auto outBatch = broadcastSizes(aBatch, bBatch);
  assert(outBatch.ok() && "batch dims were checked by shape inference");
  int64_t total = 1;
  for (int64_t s : *outBatch)
    total *= s;
  std::fill(y, y + total * m * n, T(0));
  if (total == 0 || m == 0 || n == 0)
    return;
  forEachBroadcast(*outBatch,
                   {broadcastStrides(aBatch, *outBatch), broadcastStrides(bBatch, *outBatch)},
                   [&](int64_t out, const int64_t* offs) {
                     gemmAccumulate<T>(m, n, k, a + offs[0] * m * k, k, b + offs[1] * k * n, n,
                                       y + out * m * n, n);
                   });
}

Expected<std::vector<Dim>> matmulOutputDims(const TensorType& a, const TensorType& b) {
  if (a.rank() == 0 || b.rank() == 0)
    return makeError("matmul operands must have rank 1 or more, got A ", a.str(), " and B ",
                     b.str());
  std::vector<Dim> ad = a.dims, bd = b.dims;
  if (ad.size() == 1)
    ad.insert(ad.begin(), Dim(1));
  if (bd.size() == 1)
    bd.push_back(Dim(1));
  const Dim& ka = ad.back();
  const Dim& kb = bd[bd.size() - 2];
  if (dimsConflict(ka, kb))
    return makeError("inner dimensions differ: A ", a.str(), " has K = ", ka.str(), " but B ",
                     b.str(), " has K = ", kb.str());
  std::vector<Dim> aBatch(ad.begin(), ad.end() - 2), bBatch(bd.begin(), bd.end() - 2);
  auto batch = broadcastDims(aBatch, bBatch);
  if (!batch.ok())
    return makeError("batch dims of A ", a.str(), " and B ", b.str(), " do not broadcast: ",
                     batch.error().message());
  std::vector<Dim> out = *batch;
  if (a.rank() > 1)
    out.push_back(ad[ad.size() - 2]);
  if (b.rank() > 1)
    out.push_back(bd.back());
  return out;
}

Expected<std::vector<int64_t>> matmulOutputSizes(const std::vector<int64_t>& a,
                                                 const std::vector<int64_t>& b) {
  FB_ASSIGN_OR_RETURN(std::vector<Dim> d,
                      matmulOutputDims(TensorType::of(DType::F32, a), TensorType::of(DType::F32, b)));
  std::vector<int64_t> out;
  for (const Dim& x : d)
    out.push_back(x.size());
  return out;
}

std::vector<float> toFloatVector(const Tensor& t) {
  std::vector<float> out(size_t(t.numElements()));
  switch (t.dtype()) {
  case DType::F32: {
    auto d = t.data<float>();
    std::copy(d.begin(), d.end(), out.begin());
    break;
  }
  case DType::F16: {
    auto d = t.data<f16_t>();
    std::transform(d.begin(), d.end(), out.begin(), [](f16_t h) { return float(h); });
    break;
  }
  case DType::BF16: {
    auto d = t.data<bf16_t>();
    std::transform(d.begin(), d.end(), out.begin(), [](bf16_t h) { return float(h); });
    break;
  }
  default: assert(false && "toFloatVector takes f32, f16 or bf16"); break;
  }
  return out;
}

Tensor fromFloatVector(DType dtype, std::vector<int64_t> sizes, const std::vector<float>& v) {
  Tensor t(dtype, std::move(sizes));
  assert(size_t(t.numElements()) == v.size() && "fromFloatVector: element count mismatch");
  switch (dtype) {
  case DType::F32: std::copy(v.begin(), v.end(), t.mutableData<float>().begin()); break;
  case DType::F16: std::copy(v.begin(), v.end(), t.mutableData<f16_t>().begin()); break;
  case DType::BF16: std::copy(v.begin(), v.end(), t.mutableData<bf16_t>().begin()); break;
  default: assert(false && "fromFloatVector makes f32, f16 or bf16"); break;
  }
  return t;
}

template void gemmAccumulate<float>(int64_t, int64_t, int64_t, const float*, int64_t,
                                    const float*, int64_t, float*, int64_t);
template void gemmAccumulate<int32_t>(int64_t, int64_t, int64_t, const int32_t*, int64_t,
                                      const int32_t*, int64_t, int32_t*, int64_t);
template void gemmAccumulate<int64_t>(int64_t, int64_t, int64_t, const int64_t*, int64_t,
                                      const int64_t*, int64_t, int64_t*, int64_t);
template void convForward<float>(const ConvProblem&, const float*, const float*, float*);
template void convForward<int32_t>(const ConvProblem&, const int32_t*, const int32_t*, int32_t*);
template void convTransposed<float>(const ConvProblem&, const float*, const float*, float*);
template void batchedMatMul<float>(const std::vector<int64_t>&, const float*,
                                   const std::vector<int64_t>&, const float*, float*);
template void batchedMatMul<int32_t>(const std::vector<int64_t>&, const int32_t*,
                                     const std::vector<int64_t>&, const int32_t*, int32_t*);
template void batchedMatMul<int64_t>(const std::vector<int64_t>&, const int64_t*,
                                     const std::vector<int64_t>&, const int64_t*, int64_t*);

} // namespace fb
