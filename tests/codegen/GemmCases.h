// The GEMM generator's test cases (TestGemm, TestGemmColumnTile): MatMul/Gemm/Conv kernels
// with their argument buffers and a naive double-precision reference, and the harness call that
// compiles, runs and compares one.
#pragma once

#include "codegen/gemm/GemmEmitter.h"
#include "codegen/gemm/GemmPlan.h"
#include "tests/support/GemmHarness.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace fb::gemmcases {

using namespace fb::cg;

/// Deterministic uniform values in [-1, 1).
inline std::vector<float> randomData(int64_t n, uint64_t seed) {
  std::vector<float> v(size_t(std::max<int64_t>(n, 0)));
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = float(double(s >> 40) / double(1ull << 24) * 2.0 - 1.0);
  }
  return v;
}

inline double applyEpilogueRef(const EpilogueOp& op, double x, double residual) {
  switch (op.kind) {
  case EpilogueOp::Kind::Relu:
    return std::max(x, 0.0);
  case EpilogueOp::Kind::Clip:
    return std::min(std::max(x, double(op.lo)), double(op.hi));
  case EpilogueOp::Kind::LeakyRelu:
    return x < 0 ? op.alpha * x : x;
  case EpilogueOp::Kind::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case EpilogueOp::Kind::HardSigmoid:
    return std::max(0.0, std::min(1.0, op.alpha * x + op.beta));
  case EpilogueOp::Kind::HardSwish:
    return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
  case EpilogueOp::Kind::Silu:
    return x / (1.0 + std::exp(-x));
  case EpilogueOp::Kind::Gelu:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case EpilogueOp::Kind::GeluTanh:
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  case EpilogueOp::Kind::AddTensor:
    return x + residual;
  case EpilogueOp::Kind::MulTensor:
    return x * residual;
  }
  return x;
}

/// One GEMM problem: the kernel, its argument buffers and the reference result.
struct Problem {
  Kernel kernel;
  std::vector<std::vector<float>> buffers; ///< one per argument before packing
  std::vector<double> expected;            ///< C after bias and epilogue
  std::vector<double> tolerance;           ///< per element
};

struct MatMulCase {
  int64_t batch = 1, M = 1, N = 1, K = 1;
  bool transA = false, transB = false, broadcastA = false, broadcastB = false;
  bool constA = false, constB = false;
  GemmSpec::Bias bias = GemmSpec::Bias::None;
  float alpha = 1.0f, beta = 1.0f;
  std::vector<EpilogueOp> epilogue; ///< AddTensor/MulTensor get their arg assigned
  int64_t mr = 0, nr = 0, mc = 0, kc = 0, nc = 0;
  int registers = 0; ///< the target's vector registers (16: AVX2, no scatter); 0: the host's
  GemmSpec::TileVectors vectors = GemmSpec::TileVectors::Auto;
};

inline KernelArg bufferArg(const std::string& name, KernelArg::Role role, int64_t elements) {
  KernelArg a;
  a.role = role;
  a.name = name;
  a.sizes = {elements};
  a.bytes = elements * 4;
  return a;
}

/// Fills the per-element reference: value = epilogue(alpha*sum + beta*bias), and a tolerance
/// from the magnitude of the products (fp32 accumulation error bound).
inline void finishReference(Problem& pr, const GemmSpec& s, int64_t cols, int64_t K,
                            const std::vector<double>& sums, const std::vector<double>& mags,
                            const std::vector<float>* bias, int64_t biasRowBase,
                            const std::function<int64_t(int64_t)>& rowOfIndex,
                            const std::function<int64_t(int64_t)>& colOfIndex) {
  pr.expected.resize(sums.size());
  pr.tolerance.resize(sums.size());
  for (size_t e = 0; e < sums.size(); ++e) {
    int64_t r = rowOfIndex(int64_t(e)) + biasRowBase, col = colOfIndex(int64_t(e));
    double x = s.alpha * sums[e];
    double bv = 0;
    if (bias) {
      switch (s.bias) {
      case GemmSpec::Bias::None:
        break;
      case GemmSpec::Bias::PerRow:
        bv = (*bias)[size_t(r)];
        break;
      case GemmSpec::Bias::PerColumn:
        bv = (*bias)[size_t(col)];
        break;
      case GemmSpec::Bias::Full:
        bv = (*bias)[size_t(r * cols + col)];
        break;
      }
    }
    x += s.beta * bv;
    double tol =
        1e-5 + 4.0 * double(K + 4) * 6e-8 * (std::abs(s.alpha) * mags[e] + std::abs(s.beta * bv));
    for (const EpilogueOp& op : s.epilogue) {
      size_t at = e;
      if (op.batchMod > 0) { // the operand's matrix for C's batch step e / (M·N)
        size_t matrix = size_t(s.M * s.N);
        at = (e / matrix / size_t(op.batchDiv)) % size_t(op.batchMod) * matrix + e % matrix;
      }
      double res = op.arg < 0  ? 0.0
                   : op.perRow ? pr.buffers[size_t(op.arg)][size_t(r)]
                               : pr.buffers[size_t(op.arg)][at];
      x = applyEpilogueRef(op, x, res);
      if (op.kind == EpilogueOp::Kind::MulTensor)
        tol *= std::max(1.0, std::abs(res));
    }
    pr.expected[e] = x;
    pr.tolerance[e] = tol + 2e-6 * std::abs(x);
  }
}

inline Problem makeMatMul(const MatMulCase& mc) {
  Problem pr;
  Kernel& k = pr.kernel;
  k.name = "k_matmul";
  k.opSummary = "MatMul";
  GemmSpec s;
  s.batch = mc.batch;
  s.M = mc.M;
  s.N = mc.N;
  s.K = mc.K;
  int64_t aSlice = mc.M * mc.K, bSlice = mc.K * mc.N;
  s.aBatchStride = mc.broadcastA ? 0 : aSlice;
  s.bBatchStride = mc.broadcastB ? 0 : bSlice;
  if (mc.transA) {
    s.aRowStride = 1;
    s.aColStride = mc.M;
  } else {
    s.aRowStride = mc.K;
    s.aColStride = 1;
  }
  if (mc.transB) {
    s.bRowStride = 1;
    s.bColStride = mc.K;
  } else {
    s.bRowStride = mc.N;
    s.bColStride = 1;
  }
  s.cBatchStride = mc.M * mc.N;
  s.cRowStride = mc.N;
  s.alpha = mc.alpha;
  s.beta = mc.beta;
  s.mr = mc.mr;
  s.vectorRegisters = mc.registers;
  s.tileVectors = mc.vectors;
  s.nr = mc.nr;
  s.mc = mc.mc;
  s.kc = mc.kc;
  s.nc = mc.nc;
  int64_t aElems = (mc.broadcastA ? 1 : mc.batch) * aSlice;
  int64_t bElems = (mc.broadcastB ? 1 : mc.batch) * bSlice;
  int64_t cElems = mc.batch * mc.M * mc.N;
  k.args.push_back(
      bufferArg("a", mc.constA ? KernelArg::Role::Weight : KernelArg::Role::Input, aElems));
  k.args.push_back(
      bufferArg("b", mc.constB ? KernelArg::Role::Weight : KernelArg::Role::Input, bElems));
  k.args.push_back(bufferArg("c", KernelArg::Role::Output, cElems));
  pr.buffers.push_back(randomData(aElems, 11));
  pr.buffers.push_back(randomData(bElems, 22));
  pr.buffers.push_back(std::vector<float>(size_t(cElems), std::nanf("")));
  s.aArg = 0;
  s.bArg = 1;
  s.cArg = 2;
  if (mc.constA)
    s.constantA = Tensor::fromVector<float>({aElems}, pr.buffers[0]);
  if (mc.constB)
    s.constantB = Tensor::fromVector<float>({bElems}, pr.buffers[1]);
  const std::vector<float>* bias = nullptr;
  if (mc.bias != GemmSpec::Bias::None) {
    int64_t n = mc.bias == GemmSpec::Bias::PerRow      ? mc.M
                : mc.bias == GemmSpec::Bias::PerColumn ? mc.N
                                                       : mc.M * mc.N;
    s.bias = mc.bias;
    s.biasArg = int(k.args.size());
    k.args.push_back(bufferArg("bias", KernelArg::Role::Input, n));
    pr.buffers.push_back(randomData(n, 33));
  }
  for (EpilogueOp op : mc.epilogue) {
    if (op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor) {
      op.arg = int(k.args.size());
      int64_t n = op.batchMod > 0 ? op.batchMod * mc.M * mc.N : cElems;
      k.args.push_back(bufferArg("residual" + std::to_string(op.arg), KernelArg::Role::Input, n));
      pr.buffers.push_back(randomData(n, 44 + uint64_t(op.arg)));
    }
    s.epilogue.push_back(op);
  }
  if (s.bias != GemmSpec::Bias::None)
    bias = &pr.buffers[size_t(s.biasArg)];
  std::vector<double> sums(static_cast<size_t>(cElems)), mags(static_cast<size_t>(cElems));
  const auto& A = pr.buffers[0];
  const auto& B = pr.buffers[1];
  for (int64_t b = 0; b < mc.batch; ++b)
    for (int64_t m = 0; m < mc.M; ++m)
      for (int64_t n = 0; n < mc.N; ++n) {
        double sum = 0, mag = 0;
        for (int64_t kk = 0; kk < mc.K; ++kk) {
          double x = A[size_t(b * s.aBatchStride + m * s.aRowStride + kk * s.aColStride)];
          double y = B[size_t(b * s.bBatchStride + kk * s.bRowStride + n * s.bColStride)];
          sum += x * y;
          mag += std::abs(x * y);
        }
        size_t e = size_t(b * s.cBatchStride + m * s.cRowStride + n);
        sums[e] = sum;
        mags[e] = mag;
      }
  k.gemm = std::move(s);
  int64_t M = mc.M, N = mc.N;
  finishReference(
      pr, *k.gemm, N, mc.K, sums, mags, bias, 0, [=](int64_t e) { return (e % (M * N)) / N; },
      [=](int64_t e) { return e % N; });
  return pr;
}

struct ConvCase {
  ConvGeometry g;
  bool constWeights = true;
  GemmSpec::Bias bias = GemmSpec::Bias::None;
  std::vector<EpilogueOp> epilogue;
  GemmSpec::TileVectors vectors = GemmSpec::TileVectors::Auto;
  int64_t mr = 0, nr = 0, kc = 0;
  int registers = 0; ///< 0: the host's
};

inline ConvCase conv(int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh,
                     int64_t kw, int64_t stride, int64_t pad, int64_t dilation, int64_t groups) {
  ConvCase c;
  ConvGeometry& g = c.g;
  g.batch = n;
  g.inChannels = cin;
  g.inH = h;
  g.inW = w;
  g.outChannels = cout;
  g.kernelH = kh;
  g.kernelW = kw;
  g.strideH = g.strideW = stride;
  g.padTop = g.padLeft = pad;
  g.dilationH = g.dilationW = dilation;
  g.groups = groups;
  g.outH = (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1;
  g.outW = (w + 2 * pad - dilation * (kw - 1) - 1) / stride + 1;
  return c;
}

inline Problem makeConv(const ConvCase& cc) {
  Problem pr;
  const ConvGeometry& g = cc.g;
  Kernel& k = pr.kernel;
  k.name = "k_conv";
  k.opSummary = "Conv";
  int64_t cinG = g.inChannels / g.groups, coutG = g.outChannels / g.groups;
  int64_t K = cinG * g.kernelH * g.kernelW, hw = g.outH * g.outW;
  int64_t wElems = g.outChannels * K, xElems = g.batch * g.inChannels * g.inH * g.inW;
  int64_t yElems = g.batch * g.outChannels * hw;
  k.args.push_back(bufferArg("x", KernelArg::Role::Input, xElems));
  k.args.push_back(
      bufferArg("w", cc.constWeights ? KernelArg::Role::Weight : KernelArg::Role::Input, wElems));
  k.args.push_back(bufferArg("y", KernelArg::Role::Output, yElems));
  pr.buffers.push_back(randomData(xElems, 5));
  pr.buffers.push_back(randomData(wElems, 6));
  pr.buffers.push_back(std::vector<float>(size_t(yElems), std::nanf("")));
  GemmSpec s;
  s.conv = g;
  s.bArg = 0;
  s.aArg = 1;
  s.cArg = 2;
  s.tileVectors = cc.vectors;
  s.mr = cc.mr;
  s.nr = cc.nr;
  s.kc = cc.kc;
  s.vectorRegisters = cc.registers;
  if (cc.constWeights)
    s.constantA =
        Tensor::fromVector<float>({g.outChannels, cinG, g.kernelH, g.kernelW}, pr.buffers[1]);
  if (cc.bias != GemmSpec::Bias::None) {
    s.bias = cc.bias;
    s.biasArg = int(k.args.size());
    k.args.push_back(bufferArg("bias", KernelArg::Role::Input, g.outChannels));
    pr.buffers.push_back(randomData(g.outChannels, 7));
  }
  for (EpilogueOp op : cc.epilogue) {
    if (op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor) {
      // A per-row operand holds one value per output channel.
      const int64_t n = op.perRow ? g.outChannels : yElems;
      op.arg = int(k.args.size());
      k.args.push_back(bufferArg("residual", KernelArg::Role::Input, n));
      pr.buffers.push_back(randomData(n, 8 + unsigned(op.arg)));
    }
    s.epilogue.push_back(op);
  }
  const auto& X = pr.buffers[0];
  const auto& W = pr.buffers[1];
  std::vector<double> sums(static_cast<size_t>(yElems)), mags(static_cast<size_t>(yElems));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.outChannels; ++co) {
      int64_t grp = co / coutG;
      for (int64_t oh = 0; oh < g.outH; ++oh)
        for (int64_t ow = 0; ow < g.outW; ++ow) {
          double sum = 0, mag = 0;
          for (int64_t ci = 0; ci < cinG; ++ci)
            for (int64_t kh = 0; kh < g.kernelH; ++kh)
              for (int64_t kw = 0; kw < g.kernelW; ++kw) {
                int64_t ih = oh * g.strideH - g.padTop + kh * g.dilationH;
                int64_t iw = ow * g.strideW - g.padLeft + kw * g.dilationW;
                if (ih < 0 || ih >= g.inH || iw < 0 || iw >= g.inW)
                  continue;
                double x =
                    X[size_t(((n * g.inChannels + grp * cinG + ci) * g.inH + ih) * g.inW + iw)];
                double w = W[size_t(((co * cinG + ci) * g.kernelH + kh) * g.kernelW + kw)];
                sum += x * w;
                mag += std::abs(x * w);
              }
          size_t e = size_t((n * g.outChannels + co) * hw + oh * g.outW + ow);
          sums[e] = sum;
          mags[e] = mag;
        }
    }
  const std::vector<float>* bias =
      s.bias != GemmSpec::Bias::None ? &pr.buffers[size_t(s.biasArg)] : nullptr;
  k.gemm = std::move(s);
  int64_t cout = g.outChannels;
  finishReference(
      pr, *k.gemm, hw, K, sums, mags, bias, 0, [=](int64_t e) { return (e / hw) % cout; },
      [=](int64_t e) { return e % hw; });
  return pr;
}

/// Compiles and runs a problem and compares every output element with the reference.
/// Returns a failure description, or an empty string.
inline std::string runAndCompare(GemmHarness& jit, Problem pr, int threads, bool optimize = true) {
  GemmHarness::setThreads(threads);
  auto fn = jit.compile(pr.kernel, optimize);
  if (!fn)
    return "compile failed: " + fn.error().message();
  GemmHarness::run(*fn, pr.kernel, pr.buffers);
  const std::vector<float>& out = pr.buffers[size_t(pr.kernel.gemm->cArg)];
  for (size_t e = 0; e < out.size(); ++e) {
    double err = std::abs(double(out[e]) - pr.expected[e]);
    if (!(err <= pr.tolerance[e]))
      return "element " + std::to_string(e) + " of " + std::to_string(out.size()) + ": got " +
             std::to_string(out[e]) + ", expected " + std::to_string(pr.expected[e]) + " (tol " +
             std::to_string(pr.tolerance[e]) + ")";
  }
  return {};
}

inline EpilogueOp op(EpilogueOp::Kind kind) {
  EpilogueOp e;
  e.kind = kind;
  return e;
}

} // namespace fb::gemmcases
