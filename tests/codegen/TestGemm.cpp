// Tests of the GEMM micro-kernel generator: generated MatMul/Gemm/Conv kernels against a naive
// double-precision reference, for odd sizes, strides, constant operands, bias kinds, every
// epilogue, convolution geometries, blocking overrides and 1 or 2 threads.
#include "codegen/gemm/GemmEmitter.h"
#include "codegen/gemm/GemmPlan.h"
#include "tests/support/GemmHarness.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <thread>

using namespace fb;
using namespace fb::cg;

namespace {

/// Deterministic uniform values in [-1, 1).
std::vector<float> randomData(int64_t n, uint64_t seed) {
  std::vector<float> v(size_t(std::max<int64_t>(n, 0)));
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = float(double(s >> 40) / double(1ull << 24) * 2.0 - 1.0);
  }
  return v;
}

double applyEpilogueRef(const EpilogueOp& op, double x, double residual) {
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

KernelArg bufferArg(const std::string& name, KernelArg::Role role, int64_t elements) {
  KernelArg a;
  a.role = role;
  a.name = name;
  a.sizes = {elements};
  a.bytes = elements * 4;
  return a;
}

/// Fills the per-element reference: value = epilogue(alpha*sum + beta*bias), and a tolerance
/// from the magnitude of the products (fp32 accumulation error bound).
void finishReference(Problem& pr, const GemmSpec& s, int64_t cols, int64_t K,
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
      double res = op.arg < 0  ? 0.0
                   : op.perRow ? pr.buffers[size_t(op.arg)][size_t(r)]
                               : pr.buffers[size_t(op.arg)][e];
      x = applyEpilogueRef(op, x, res);
      if (op.kind == EpilogueOp::Kind::MulTensor)
        tol *= std::max(1.0, std::abs(res));
    }
    pr.expected[e] = x;
    pr.tolerance[e] = tol + 2e-6 * std::abs(x);
  }
}

Problem makeMatMul(const MatMulCase& mc) {
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
      k.args.push_back(
          bufferArg("residual" + std::to_string(op.arg), KernelArg::Role::Input, cElems));
      pr.buffers.push_back(randomData(cElems, 44 + uint64_t(op.arg)));
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

ConvCase conv(int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw,
              int64_t stride, int64_t pad, int64_t dilation, int64_t groups) {
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

Problem makeConv(const ConvCase& cc) {
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
std::string runAndCompare(GemmHarness& jit, Problem pr, int threads, bool optimize = true) {
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

EpilogueOp op(EpilogueOp::Kind kind) {
  EpilogueOp e;
  e.kind = kind;
  return e;
}

} // namespace

class TestGemm : public QObject {
  Q_OBJECT
  std::unique_ptr<GemmHarness> m_jit;

  void check(Problem pr, int threads, const char* what) {
    std::string failure = runAndCompare(*m_jit, std::move(pr), threads);
    if (!failure.empty())
      QFAIL((std::string(what) + " (threads " + std::to_string(threads) + "): " + failure).c_str());
  }

private Q_SLOTS:
  void initTestCase() {
    auto jit = GemmHarness::create();
    QVERIFY2(jit.ok(), jit.ok() ? "" : jit.error().message().c_str());
    m_jit = std::move(*jit);
  }

  /// Odd sizes through every register tile (skinny M included) and edge path.
  void matmulSizes_data() {
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("K");
    QTest::addColumn<int>("threads");
    int sizes[][3] = {{1, 1, 1},  {7, 13, 5},    {67, 129, 33},  {1, 100, 70},
                      {2, 50, 9}, {3, 33, 17},   {4, 77, 3},     {5, 16, 300},
                      {6, 16, 8}, {12, 32, 600}, {150, 260, 270}};
    for (auto& sz : sizes)
      for (int threads : {1, 2})
        QTest::newRow((std::to_string(sz[0]) + "x" + std::to_string(sz[1]) + "x" +
                       std::to_string(sz[2]) + " t" + std::to_string(threads))
                          .c_str())
            << sz[0] << sz[1] << sz[2] << threads;
  }
  void matmulSizes() {
    QFETCH(int, M);
    QFETCH(int, N);
    QFETCH(int, K);
    QFETCH(int, threads);
    MatMulCase c;
    c.M = M;
    c.N = N;
    c.K = K;
    check(makeMatMul(c), threads, "runtime operands");
    c.constB = true;
    check(makeMatMul(c), threads, "constant B");
    if (threads == 1)
      return; // constant A is the same code path as run-time A past packing; once suffices
    c.constB = false;
    c.constA = true;
    check(makeMatMul(c), threads, "constant A");
  }

  /// K = 0 still writes bias (and zeros).
  void emptyReduction() {
    MatMulCase c;
    c.M = 5;
    c.N = 9;
    c.K = 0;
    c.bias = GemmSpec::Bias::PerColumn;
    check(makeMatMul(c), 1, "K=0");
  }

  /// Transposed operands are swapped strides; batched and broadcast operands.
  void matmulStrides() {
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool constB : {false, true}) {
          MatMulCase c;
          c.batch = 3;
          c.M = 19;
          c.N = 37;
          c.K = 23;
          c.transA = ta;
          c.transB = tb;
          c.constB = constB;
          check(makeMatMul(c), 2, "transposed/batched");
        }
    MatMulCase c;
    c.batch = 4;
    c.M = 9;
    c.N = 20;
    c.K = 11;
    c.broadcastB = true;
    c.constB = true;
    check(makeMatMul(c), 2, "broadcast constant B");
    c.constB = false;
    check(makeMatMul(c), 2, "broadcast runtime B");
    c.broadcastB = false;
    c.broadcastA = true;
    c.constA = true;
    check(makeMatMul(c), 2, "broadcast constant A");
  }

  /// Every bias kind with Gemm's alpha and beta, over several K blocks.
  void biasKinds() {
    for (auto bias : {GemmSpec::Bias::PerRow, GemmSpec::Bias::PerColumn, GemmSpec::Bias::Full})
      for (int threads : {1, 2}) {
        MatMulCase c;
        c.M = 29;
        c.N = 45;
        c.K = 70;
        c.kc = 32;
        c.bias = bias;
        c.alpha = 0.5f;
        c.beta = -2.0f;
        check(makeMatMul(c), threads, "bias");
        c.constB = true;
        c.alpha = 1.0f;
        c.beta = 1.0f;
        check(makeMatMul(c), threads, "bias, constant B");
      }
  }

  /// Each epilogue op alone after a bias, then a chain, on a size with edge tiles.
  void epilogues() {
    EpilogueOp clip = op(EpilogueOp::Kind::Clip);
    clip.lo = -0.5f;
    clip.hi = 0.75f;
    EpilogueOp leaky = op(EpilogueOp::Kind::LeakyRelu);
    leaky.alpha = 0.1f;
    EpilogueOp hsig = op(EpilogueOp::Kind::HardSigmoid);
    hsig.alpha = 0.2f;
    hsig.beta = 0.5f;
    std::vector<std::vector<EpilogueOp>> chains = {{op(EpilogueOp::Kind::Relu)},
                                                   {clip},
                                                   {leaky},
                                                   {op(EpilogueOp::Kind::Sigmoid)},
                                                   {hsig},
                                                   {op(EpilogueOp::Kind::HardSwish)},
                                                   {op(EpilogueOp::Kind::Silu)},
                                                   {op(EpilogueOp::Kind::Gelu)},
                                                   {op(EpilogueOp::Kind::GeluTanh)},
                                                   {op(EpilogueOp::Kind::AddTensor)},
                                                   {op(EpilogueOp::Kind::MulTensor)},
                                                   {op(EpilogueOp::Kind::AddTensor),
                                                    op(EpilogueOp::Kind::Relu),
                                                    op(EpilogueOp::Kind::MulTensor), clip}};
    for (const auto& chain : chains) {
      MatMulCase c;
      c.M = 13;
      c.N = 27;
      c.K = 40;
      c.bias = GemmSpec::Bias::PerColumn;
      c.epilogue = chain;
      check(makeMatMul(c), 2, "epilogue");
      c.kc = 16; // several K blocks: the epilogue runs only on the last
      c.constB = true;
      check(makeMatMul(c), 1, "epilogue, K blocks");
    }
  }

  /// Sigmoid over a wide input range exercises the vector exp's clamping.
  void sigmoidRange() {
    MatMulCase c;
    c.M = 8;
    c.N = 24;
    c.K = 300; // sums up to ~±60
    c.alpha = 3.0f;
    c.epilogue = {op(EpilogueOp::Kind::Sigmoid)};
    check(makeMatMul(c), 1, "sigmoid range");
  }

  /// Blocking overrides: tiny cache blocks force every loop to iterate and every edge.
  void blockingOverrides() {
    MatMulCase c;
    c.M = 47;
    c.N = 75;
    c.K = 53;
    c.mc = 12;
    c.kc = 7;
    c.nc = 32;
    c.bias = GemmSpec::Bias::PerRow;
    for (int64_t mr : {1, 3, 6})
      for (bool constA : {false, true}) {
        c.mr = mr;
        c.nr = mr == 1 ? 64 : 16;
        c.constA = constA;
        check(makeMatMul(c), 2, "overrides");
      }
    c.mr = 8;
    c.nr = 64; // 64 accumulators in 8-float vectors, 32 in 16-float ones: fits neither 16
               // nor 32 vector registers
    Problem pr = makeMatMul(c);
    auto fn = m_jit->compile(pr.kernel);
    QVERIFY(!fn.ok());
    QVERIFY(fn.error().message().find("does not fit") != std::string::npos);
  }

  /// Convolution geometries as implicit GEMM.
  void convGeometries_data() {
    QTest::addColumn<int>("index");
    const char* names[] = {"3x3 s1 p1",          "3x3 s2 p1",
                           "1x1 s1 (pointwise)", "1x1 s2",
                           "5x5 dilation 2 p4",  "3x3 groups 2 batch 2",
                           "7x7 s2 p3 batch 2",  "3x3 s1 p0 rect",
                           "depth 4 groups",     "3x3 runtime weights groups 3"};
    for (int i = 0; i < 10; ++i)
      QTest::newRow(names[i]) << i;
  }
  void convGeometries() {
    QFETCH(int, index);
    ConvCase cases[] = {
        conv(1, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1),   conv(1, 4, 13, 10, 9, 3, 3, 2, 1, 1, 1),
        conv(1, 19, 7, 9, 23, 1, 1, 1, 0, 1, 1),  conv(1, 6, 9, 9, 10, 1, 1, 2, 0, 1, 1),
        conv(1, 3, 12, 12, 8, 5, 5, 1, 4, 2, 1),  conv(2, 6, 8, 8, 10, 3, 3, 1, 1, 1, 2),
        conv(2, 3, 23, 21, 16, 7, 7, 2, 3, 1, 1), conv(1, 2, 6, 17, 3, 3, 3, 1, 0, 1, 1),
        conv(1, 8, 6, 6, 8, 3, 3, 1, 1, 1, 4),    conv(1, 6, 10, 10, 9, 3, 3, 1, 1, 1, 3)};
    ConvCase c = cases[index];
    if (index == 9)
      c.constWeights = false;
    for (int threads : {1, 2})
      check(makeConv(c), threads, "conv");
    c.bias = GemmSpec::Bias::PerRow;
    c.epilogue = {op(EpilogueOp::Kind::AddTensor), op(EpilogueOp::Kind::Relu)};
    check(makeConv(c), 2, "conv + bias + residual + relu");
  }

  /// A ResNet-like layer big enough to go parallel over several N blocks and K blocks.
  void convLarge() {
    ConvCase c = conv(1, 32, 28, 28, 48, 3, 3, 1, 1, 1, 1);
    c.bias = GemmSpec::Bias::PerRow;
    c.epilogue = {op(EpilogueOp::Kind::Relu)};
    check(makeConv(c), 2, "conv large");
    check(makeConv(c), 1, "conv large");
  }

  /// Deep CNN layers (constant weights, more output channels than pixels) pack the im2col
  /// once into a shared scratch buffer and split M; N = 49 and 50 end in 1- and 2-column
  /// tiles that run on the column micro-kernel. Fused bias, residual and Relu on every path.
  void convSharedPackedB() {
    ConvCase cases[] = {conv(1, 64, 7, 7, 96, 3, 3, 1, 1, 1, 1),    // N = 49
                        conv(1, 32, 5, 10, 80, 3, 3, 1, 1, 1, 1),   // N = 50
                        conv(1, 48, 14, 14, 200, 3, 3, 2, 1, 1, 1), // stride 2, N = 49
                        conv(2, 40, 7, 7, 120, 1, 1, 1, 0, 1, 2),   // pointwise, groups, batch
                        conv(1, 16, 9, 2, 64, 3, 3, 1, 1, 1, 1)};   // N = 18
    for (ConvCase c : cases) {
      c.bias = GemmSpec::Bias::PerRow;
      c.epilogue = {op(EpilogueOp::Kind::AddTensor), op(EpilogueOp::Kind::Relu)};
      Problem pr = makeConv(c);
      Kernel probe = pr.kernel;
      QVERIFY(packConstantOperands(probe).ok());
      auto blocking = describeGemmBlocking(probe);
      QVERIFY(blocking.ok());
      // The shared path is what this case is about: fail if the plan stops choosing it (it
      // plans for the host's threads, and one thread has nothing to share).
      if (std::thread::hardware_concurrency() > 1)
        QVERIFY2(blocking->find("shared by the M parts") != std::string::npos, blocking->c_str());
      for (int threads : {1, 2})
        check(makeConv(c), threads, "conv, shared packed B");
    }
  }

  /// Column-kernel edges on plain GEMMs: every bias kind and an epilogue, N % 16 = 1 and 2,
  /// M not a multiple of mr, several K blocks (partial sums gathered and scattered).
  void columnEdges() {
    for (int N : {17, 18, 26, 28, 49, 52})
      for (auto bias : {GemmSpec::Bias::PerRow, GemmSpec::Bias::PerColumn, GemmSpec::Bias::Full}) {
        MatMulCase c;
        c.M = 23;
        c.N = N;
        c.K = 75;
        c.kc = 32;
        c.bias = bias;
        c.alpha = 0.5f;
        c.beta = 2.0f;
        c.epilogue = {op(EpilogueOp::Kind::AddTensor), op(EpilogueOp::Kind::Sigmoid)};
        check(makeMatMul(c), 2, "column edge");
        c.constB = true;
        check(makeMatMul(c), 1, "column edge, constant B");
        // The AVX2 tile (the host may pick 8×24): remainders of N mod 16.
        c.mr = 6;
        c.nr = 16;
        check(makeMatMul(c), 2, "column edge, 6x16 tile");
        // Planned for AVX2's 16 registers: the column tile is stored row by row (no scatter).
        c.mr = c.nr = 0;
        c.registers = 16;
        check(makeMatMul(c), 2, "column edge, AVX2 plan");
        c.constB = false;
        check(makeMatMul(c), 1, "column edge, AVX2 plan, K blocks");
      }
  }

  /// AVX-512 plans run the k loop on 16-float vectors: tiles of whole zmm slots, and of a zmm
  /// plus one 8-float vector (nr = 24, 40), edge rows and columns, several K blocks, and the
  /// fused store on the split halves.
  void wideTiles() {
    if (hostVectorRegisters() < 32)
      QSKIP("the host has no AVX-512: 16-float tiles cannot run here");
    struct Tile {
      int64_t mr, nr;
    };
    for (Tile t : {Tile{8, 48}, Tile{7, 24}, Tile{5, 40}, Tile{3, 64}, Tile{12, 32}, Tile{1, 8}})
      for (bool constB : {false, true}) {
        MatMulCase c;
        c.M = 29;
        c.N = 101;
        c.K = 70;
        c.kc = 24;
        c.mr = t.mr;
        c.nr = t.nr;
        c.registers = 32;
        c.constB = constB;
        c.bias = GemmSpec::Bias::PerColumn;
        c.epilogue = {op(EpilogueOp::Kind::AddTensor), op(EpilogueOp::Kind::Relu)};
        std::string what = std::to_string(t.mr) + "x" + std::to_string(t.nr) + " zmm tile";
        check(makeMatMul(c), 2, what.c_str());
      }
    // The default AVX-512 tile (8×48) on a convolution with an N remainder of one column
    // (7×7 = 48 + 1) and M not a multiple of 8.
    ConvCase c = conv(1, 40, 7, 7, 60, 3, 3, 1, 1, 1, 1);
    c.bias = GemmSpec::Bias::PerRow;
    c.epilogue = {op(EpilogueOp::Kind::AddTensor), op(EpilogueOp::Kind::Relu)};
    check(makeConv(c), 2, "7x7 conv, zmm tile");
  }

  /// Per-channel epilogue operands (a squeeze-excitation scale, a per-channel shift after the
  /// activation): full tiles, edge rows, the column kernel (N = 49: one column past 48) and
  /// the AVX2 plan, with K blocks.
  void perRowEpilogue() {
    EpilogueOp mulRow = op(EpilogueOp::Kind::MulTensor);
    mulRow.perRow = true;
    EpilogueOp addRow = op(EpilogueOp::Kind::AddTensor);
    addRow.perRow = true;
    for (ConvCase c :
         {conv(1, 40, 7, 7, 60, 3, 3, 1, 1, 1, 1), conv(2, 300, 5, 5, 13, 1, 1, 1, 0, 1, 1),
          conv(1, 16, 12, 9, 30, 3, 3, 2, 1, 1, 1)}) {
      c.bias = GemmSpec::Bias::PerRow;
      c.epilogue = {op(EpilogueOp::Kind::Relu), mulRow, addRow};
      check(makeConv(c), 2, "conv + relu * per-channel + per-channel");
    }
  }

  /// The column tile (vectors along M) is what a deep layer on a small image gets: 320 output
  /// channels over 6×6 pixels fill 32-row vectors where the row tile fills 36 of 48 lanes. A
  /// wide image keeps the row tile, and so does AVX2, whose 8-row column tile is no better.
  void columnTilePlan() {
    auto plan = [](ConvCase c, int registers) {
      c.registers = registers;
      Problem pr = makeConv(c);
      // Planned with placeholders for the packed weights and the shared im2col, as
      // packConstantOperands does.
      pr.kernel.gemm->packedAArg = 0;
      pr.kernel.gemm->sharedBArg = 0;
      return planGemm(pr.kernel, 2);
    };
    auto deep = plan(conv(1, 160, 6, 6, 320, 3, 3, 1, 1, 1, 1), 32);
    QVERIFY2(deep.ok(), deep.ok() ? "" : deep.error().message().c_str());
    QVERIFY(deep->mVectors);
    QCOMPARE(deep->mr, int64_t(32));
    QCOMPARE(deep->nr, int64_t(8));
    QCOMPARE(deep->kc, int64_t(1440));       // the whole K: C is scattered once
    QCOMPARE(deep->items() % 2, int64_t(0)); // 10 panels over 2 threads: balanced items
    auto tiny = plan(conv(1, 192, 3, 3, 384, 3, 3, 1, 1, 1, 1), 32);
    QVERIFY(tiny.ok() && tiny->mVectors && tiny->mr == 48);
    auto wide = plan(conv(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1), 32);
    QVERIFY(wide.ok() && !wide->mVectors);
    auto avx2 = plan(conv(1, 160, 6, 6, 320, 3, 3, 1, 1, 1, 1), 16);
    QVERIFY(avx2.ok() && !avx2->mVectors);
    auto fewChannels = plan(conv(1, 16, 3, 3, 10, 3, 3, 1, 1, 1, 1), 32);
    QVERIFY(fewChannels.ok() && !fewChannels->mVectors);
  }

  /// The column tile computes what the reference does on every path: whole and short (masked)
  /// row vectors, an N remainder narrower than 8, several K blocks (partial sums gathered and
  /// scattered), run-time weights packed per item, groups and batches, every bias kind and
  /// per-channel operands, 16-, 32- and 48-row tiles, and AVX2's plan (stored row by row).
  void columnTile() {
    using TV = GemmSpec::TileVectors;
    EpilogueOp mulRow = op(EpilogueOp::Kind::MulTensor);
    mulRow.perRow = true;
    std::vector<ConvCase> cases;
    ConvCase deep = conv(1, 160, 6, 6, 320, 3, 3, 1, 1, 1, 1); // N = 36: 4 panels and 4 columns
    deep.bias = GemmSpec::Bias::PerRow;
    deep.epilogue = {op(EpilogueOp::Kind::AddTensor), op(EpilogueOp::Kind::Relu)};
    cases.push_back(deep);
    ConvCase edges = conv(1, 50, 3, 3, 70, 3, 3, 1, 1, 1, 1); // M = 70: a short last tile; N = 9
    edges.kc = 64;
    edges.bias = GemmSpec::Bias::PerRow;
    edges.epilogue = {mulRow, op(EpilogueOp::Kind::Sigmoid)};
    cases.push_back(edges);
    ConvCase pointwise = conv(2, 200, 2, 2, 100, 1, 1, 1, 0, 1, 2); // N = 4, groups, batch
    pointwise.epilogue = {op(EpilogueOp::Kind::AddTensor)};
    cases.push_back(pointwise);
    ConvCase runtime = conv(1, 24, 5, 5, 40, 3, 3, 2, 1, 1, 1); // weights packed per item
    runtime.constWeights = false;
    runtime.bias = GemmSpec::Bias::PerRow;
    cases.push_back(runtime);
    const bool wide = hostVectorRegisters() >= 32;
    for (ConvCase c : cases) {
      c.vectors = TV::AlongM;
      for (int threads : {1, 2})
        check(makeConv(c), threads, "conv, column tile");
      ConvCase avx2 = c;
      avx2.registers = 16;
      check(makeConv(avx2), 2, "conv, column tile, AVX2 plan");
      if (!wide)
        continue;
      for (int64_t mr : {16, 48}) {
        ConvCase sized = c;
        sized.mr = mr;
        check(makeConv(sized), 2, ("conv, column tile mr=" + std::to_string(mr)).c_str());
      }
      ConvCase wider = c;
      wider.mr = 16;
      wider.nr = 16;
      check(makeConv(wider), 2, "conv, column tile 16x16");
    }
    for (auto bias : {GemmSpec::Bias::PerColumn, GemmSpec::Bias::Full}) {
      MatMulCase m;
      m.M = 37;
      m.N = 11;
      m.K = 50;
      m.kc = 20;
      m.bias = bias;
      m.alpha = 0.5f;
      m.beta = 2.0f;
      m.epilogue = {op(EpilogueOp::Kind::AddTensor), op(EpilogueOp::Kind::HardSwish)};
      m.vectors = TV::AlongM;
      check(makeMatMul(m), 2, "matmul, column tile");
      m.constA = true;
      check(makeMatMul(m), 1, "matmul, column tile, constant A");
    }
  }

  /// The unoptimized IR computes the same (the -O0 pipeline of the executor).
  void unoptimized() {
    MatMulCase c;
    c.M = 10;
    c.N = 21;
    c.K = 19;
    c.bias = GemmSpec::Bias::PerColumn;
    c.epilogue = {op(EpilogueOp::Kind::Sigmoid)};
    std::string failure = runAndCompare(*m_jit, makeMatMul(c), 2, /*optimize=*/false);
    QVERIFY2(failure.empty(), failure.c_str());
  }

  /// Bad specs are errors naming the kernel, not crashes.
  void badSpecs() {
    MatMulCase c;
    c.M = 4;
    c.N = 4;
    c.K = 4;
    Problem pr = makeMatMul(c);
    pr.kernel.gemm->cArg = 9;
    auto fn = m_jit->compile(pr.kernel);
    QVERIFY(!fn.ok());
    QVERIFY(fn.error().message().find("k_matmul") != std::string::npos);
    Problem unpacked = makeMatMul(c);
    unpacked.kernel.gemm->constantB = Tensor::fromVector<float>({16}, unpacked.buffers[1]);
    llvm::LLVMContext ctx;
    llvm::Module module("m", ctx);
    auto emitted = emitGemmKernel(module, unpacked.kernel);
    QVERIFY(!emitted.ok());
    QVERIFY(emitted.error().message().find("packConstantOperands") != std::string::npos);
    ConvCase cc = conv(1, 6, 8, 8, 9, 3, 3, 1, 1, 1, 4); // 6 channels in 4 groups
    Problem badConv = makeConv(cc);
    auto fn2 = m_jit->compile(badConv.kernel);
    QVERIFY(!fn2.ok());
    QVERIFY(fn2.error().message().find("groups") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestGemm)
#include "TestGemm.moc"
