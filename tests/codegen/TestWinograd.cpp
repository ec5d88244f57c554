// Winograd F(2×2, 3×3) and F(4×4, 3×3) convolutions (codegen/gemm/Winograd.h) against a
// double-precision direct convolution: tile edges, padding, batches, partial channel blocks,
// several K blocks and chunks, bias and epilogues, both register plans, one and two threads;
// the transform matrices against the definition; and the per-layer choice.
#include "codegen/gemm/GemmPlan.h"
#include "codegen/gemm/Winograd.h"
#include "tests/support/GemmHarness.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <random>

using namespace fb;
using namespace fb::cg;

namespace {

struct ConvCase {
  int64_t batch = 1, cin = 1, h = 1, w = 1, cout = 1, pad = 1;
  int m = 4;
  int registers = 0;      ///< 0: the host's
  int64_t chunkBytes = 0; ///< 0: the default
  bool bias = false, residual = false, relu = false;
  bool channelScale = false; ///< times a per-channel operand (EpilogueOp::perRow)
};

struct Problem {
  Kernel kernel;
  std::vector<std::vector<float>> buffers; ///< per argument the kernel had when built
  std::vector<double> expected, magnitude;
};

std::vector<float> randomData(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v)
    x = dist(rng);
  return v;
}

KernelArg bufferArg(const std::string& name, KernelArg::Role role, int64_t elements) {
  KernelArg a;
  a.role = role;
  a.name = name;
  a.sizes = {elements};
  a.bytes = 4 * elements;
  return a;
}

Problem makeProblem(const ConvCase& cc) {
  Problem pr;
  ConvGeometry g;
  g.batch = cc.batch;
  g.inChannels = cc.cin;
  g.inH = cc.h;
  g.inW = cc.w;
  g.outChannels = cc.cout;
  g.kernelH = g.kernelW = 3;
  g.padTop = g.padLeft = cc.pad;
  g.outH = cc.h + 2 * cc.pad - 2;
  g.outW = cc.w + 2 * cc.pad - 2;
  const int64_t xs = g.batch * g.inChannels * g.inH * g.inW, ws = g.outChannels * g.inChannels * 9,
                ys = g.batch * g.outChannels * g.outH * g.outW;
  Kernel& k = pr.kernel;
  k.name = "k_wino";
  k.opSummary = "Conv";
  k.args = {bufferArg("x", KernelArg::Role::Input, xs), bufferArg("w", KernelArg::Role::Weight, ws),
            bufferArg("y", KernelArg::Role::Output, ys)};
  pr.buffers = {randomData(xs, 11), randomData(ws, 12),
                std::vector<float>(size_t(ys), std::numeric_limits<float>::quiet_NaN())};
  GemmSpec s;
  s.conv = g;
  s.bArg = 0;
  s.aArg = 1;
  s.cArg = 2;
  s.constantA = Tensor::fromVector<float>({g.outChannels, g.inChannels, 3, 3}, pr.buffers[1]);
  s.algorithm = ConvAlgorithm::Winograd;
  s.winogradTile = cc.m;
  s.vectorRegisters = cc.registers;
  if (cc.bias) {
    s.bias = GemmSpec::Bias::PerRow;
    s.biasArg = int(k.args.size());
    k.args.push_back(bufferArg("bias", KernelArg::Role::Input, g.outChannels));
    pr.buffers.push_back(randomData(g.outChannels, 13));
  }
  int residualArg = -1;
  if (cc.residual) {
    EpilogueOp add;
    add.kind = EpilogueOp::Kind::AddTensor;
    add.arg = residualArg = int(k.args.size());
    k.args.push_back(bufferArg("residual", KernelArg::Role::Input, ys));
    pr.buffers.push_back(randomData(ys, 14));
    s.epilogue.push_back(add);
  }
  if (cc.relu) {
    EpilogueOp relu;
    relu.kind = EpilogueOp::Kind::Relu;
    s.epilogue.push_back(relu);
  }
  int scaleArg = -1;
  if (cc.channelScale) {
    EpilogueOp mul;
    mul.kind = EpilogueOp::Kind::MulTensor;
    mul.perRow = true;
    mul.arg = scaleArg = int(k.args.size());
    k.args.push_back(bufferArg("scale", KernelArg::Role::Input, g.outChannels));
    pr.buffers.push_back(randomData(g.outChannels, 15));
    s.epilogue.push_back(mul);
  }
  const auto &x = pr.buffers[0], &w = pr.buffers[1];
  pr.expected.resize(size_t(ys));
  pr.magnitude.resize(size_t(ys));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.outChannels; ++co)
      for (int64_t oh = 0; oh < g.outH; ++oh)
        for (int64_t ow = 0; ow < g.outW; ++ow) {
          double sum = 0, mag = 0;
          for (int64_t ci = 0; ci < g.inChannels; ++ci)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                int64_t ih = oh - g.padTop + kh, iw = ow - g.padLeft + kw;
                if (ih < 0 || ih >= g.inH || iw < 0 || iw >= g.inW)
                  continue;
                double p = double(x[size_t(((n * g.inChannels + ci) * g.inH + ih) * g.inW + iw)]) *
                           double(w[size_t(((co * g.inChannels + ci) * 3 + kh) * 3 + kw)]);
                sum += p;
                mag += std::abs(p);
              }
          size_t e = size_t(((n * g.outChannels + co) * g.outH + oh) * g.outW + ow);
          if (cc.bias)
            sum += pr.buffers[size_t(s.biasArg)][size_t(co)];
          if (cc.residual)
            sum += pr.buffers[size_t(residualArg)][e];
          if (cc.relu)
            sum = std::max(sum, 0.0);
          if (cc.channelScale) {
            mag *= std::abs(pr.buffers[size_t(scaleArg)][size_t(co)]);
            sum *= pr.buffers[size_t(scaleArg)][size_t(co)];
          }
          pr.expected[e] = sum;
          pr.magnitude[e] = mag;
        }
  k.gemm = std::move(s);
  return pr;
}

/// Compiles (as Winograd), runs with NaN-poisoned scratch and compares every output with the
/// direct convolution: F(4×4)'s transforms amplify rounding by up to ~100×, F(2×2)'s by ~4×, so
/// the bound scales with the sum of |products|; a wrong tap, tile or channel is off by a whole
/// product (~mag / 9). Returns a failure description, or an empty string.
std::string run(GemmHarness& jit, Problem pr, int threads, int64_t chunkBytes, int m) {
  GemmHarness::setThreads(threads);
  auto fn = jit.compile(pr.kernel, true, chunkBytes);
  if (!fn.ok())
    return "compile failed: " + fn.error().message();
  if (!pr.kernel.gemm->winograd)
    return "the kernel was not prepared as Winograd";
  GemmHarness::run(*fn, pr.kernel, pr.buffers);
  const std::vector<float>& y = pr.buffers[2];
  const double relative = m == 4 ? 2e-5 : 4e-6;
  for (size_t e = 0; e < y.size(); ++e) {
    double tol = 1e-5 + relative * 50 * pr.magnitude[e];
    if (!(std::abs(double(y[e]) - pr.expected[e]) <= tol))
      return "element " + std::to_string(e) + " of " + std::to_string(y.size()) + ": got " +
             std::to_string(y[e]) + ", expected " + std::to_string(pr.expected[e]) + " (tol " +
             std::to_string(tol) + ")";
  }
  return {};
}

} // namespace

class TestWinograd : public QObject {
  Q_OBJECT

  std::unique_ptr<GemmHarness> m_jit;

private Q_SLOTS:
  void initTestCase() {
    auto jit = GemmHarness::create();
    QVERIFY2(jit.ok(), jit.ok() ? "" : jit.error().message().c_str());
    m_jit = std::move(*jit);
  }

  /// Y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A equals the 3×3 correlation of a 6×6 (4×4) patch.
  void matricesDefineTheConvolution() {
    for (int m : {2, 4}) {
      const WinogradMatrices& t = winogradMatrices(m);
      QCOMPARE(t.m, m);
      const int a = t.alpha;
      std::vector<double> d(size_t(a * a)), g(9);
      for (int i = 0; i < a * a; ++i)
        d[size_t(i)] = std::sin(1.3 * i + 0.2);
      for (int i = 0; i < 9; ++i)
        g[size_t(i)] = std::cos(0.7 * i - 0.4);
      auto product = [](const std::vector<double>& l, int rows, int inner,
                        const std::vector<double>& r, int cols) {
        std::vector<double> out(size_t(rows * cols));
        for (int i = 0; i < rows; ++i)
          for (int j = 0; j < cols; ++j)
            for (int k = 0; k < inner; ++k)
              out[size_t(i * cols + j)] += l[size_t(i * inner + k)] * r[size_t(k * cols + j)];
        return out;
      };
      auto transpose = [](const std::vector<double>& x, int rows, int cols) {
        std::vector<double> out(x.size());
        for (int i = 0; i < rows; ++i)
          for (int j = 0; j < cols; ++j)
            out[size_t(j * rows + i)] = x[size_t(i * cols + j)];
        return out;
      };
      auto u = product(product(t.g, a, 3, g, 3), a, 3, transpose(t.g, a, 3), a);
      auto v = product(product(t.bt, a, a, d, a), a, a, transpose(t.bt, a, a), a);
      for (size_t i = 0; i < u.size(); ++i)
        u[i] *= v[i];
      auto y = product(product(t.at, m, a, u, a), m, a, transpose(t.at, m, a), m);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) {
          double ref = 0;
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw)
              ref += d[size_t((i + kh) * a + j + kw)] * g[size_t(kh * 3 + kw)];
          QVERIFY2(std::abs(y[size_t(i * m + j)] - ref) < 1e-12, qPrintable(QString::number(m)));
        }
    }
  }

  void convolutions_data() {
    QTest::addColumn<int>("index");
    const char* names[] = {"8x8 whole tiles",
                           "9x11 edges, Cout 7, Cin 5",
                           "batch 2, no padding",
                           "Cin 300: two K blocks",
                           "many chunks",
                           "bias + residual + relu, times a per-channel scale",
                           "Cout 50: N remainder 2",
                           "1x1 image",
                           "wide image: patch rows by loads"};
    for (int i = 0; i < 9; ++i)
      QTest::newRow(names[i]) << i;
  }
  void convolutions() {
    QFETCH(int, index);
    ConvCase cases[9];
    cases[0] = {1, 16, 8, 8, 16, 1};
    cases[1] = {1, 5, 9, 11, 7, 1};
    cases[2] = {2, 12, 13, 6, 20, 0};
    cases[3] = {1, 300, 6, 7, 10, 1};
    cases[4] = {2, 9, 21, 19, 13, 1};
    cases[4].chunkBytes = 1; // the smallest chunk: 8 tiles
    cases[5] = {1, 24, 10, 12, 40, 1};
    cases[5].bias = cases[5].residual = cases[5].relu = cases[5].channelScale = true;
    cases[6] = {1, 8, 12, 12, 50, 1};
    cases[7] = {1, 3, 1, 1, 9, 1};
    // Rows of 35 (F(2x2)) or 18 (F(4x4)) tiles: groups of 8 tiles straddle tile rows and
    // images, their patches gathered with masks at the left and right edges and past the bottom.
    // (Loading side-by-side tiles' patch rows as runs was measured on Zen 5 and dropped: 10%
    // faster on a 32x32 map, 18% slower on 56x56, where gathers are cheap.)
    cases[8] = {2, 6, 7, 70, 9, 1};
    for (int m : {4, 2})
      for (int registers : {0, 16}) {
        ConvCase c = cases[index];
        c.m = m;
        c.registers = registers;
        for (int threads : {1, 2}) {
          std::string failure = run(*m_jit, makeProblem(c), threads, c.chunkBytes, m);
          QVERIFY2(failure.empty(), qPrintable(QString("F(%1x%1), %2 registers, %3 thread(s): %4")
                                                   .arg(m)
                                                   .arg(registers)
                                                   .arg(threads)
                                                   .arg(QString::fromStdString(failure))));
        }
      }
  }

  /// Auto: Winograd where F(2×2) beats im2col — large images, and a 7×7 map with 512
  /// channels — and F(4×4) where the cost rule expects it faster still (56×56, 28×28, 14×14
  /// maps with 64+ input channels; on 7×7 its 8×8 cover wastes too much); a 4×4 map with 512
  /// channels stays im2col (the transformed weights, 16/9 of the direct ones, streamed for one
  /// chunk of four tiles); what Winograd cannot compute is never chosen.
  void choice() {
    auto chosen = [](int64_t cin, int64_t hw, int64_t cout, int stride) {
      ConvCase c{1, cin, hw, hw, cout, 1};
      Problem pr = makeProblem(c);
      GemmSpec& s = *pr.kernel.gemm;
      s.algorithm = ConvAlgorithm::Auto;
      if (stride != 1) {
        s.conv->strideH = s.conv->strideW = stride;
        s.conv->outH = s.conv->outW = (hw - 1) / stride + 1;
      }
      auto r = prepareWinograd(pr.kernel);
      return r.ok() && *r ? s.winograd->m : 0;
    };
    QCOMPARE(chosen(64, 56, 64, 1), 4);
    QCOMPARE(chosen(128, 28, 128, 1), 4);
    QCOMPARE(chosen(256, 14, 256, 1), 4);
    QCOMPARE(chosen(512, 7, 512, 1), 2);
    QCOMPARE(chosen(32, 45, 64, 1), 2); // fewer than 64 input channels keep F(2×2)
    QCOMPARE(chosen(512, 4, 512, 1), 0);
    QCOMPARE(chosen(64, 56, 64, 2), 0);
    // Im2col asked for is kept; Winograd asked for where it cannot apply is an error.
    Problem pr = makeProblem(ConvCase{1, 64, 56, 56, 64, 1});
    pr.kernel.gemm->algorithm = ConvAlgorithm::Im2col;
    QVERIFY(!prepareWinograd(pr.kernel).value());
    pr.kernel.gemm->algorithm = ConvAlgorithm::Winograd;
    pr.kernel.gemm->conv->dilationH = 2;
    QVERIFY(!prepareWinograd(pr.kernel).ok());
  }
};

QTEST_APPLESS_MAIN(TestWinograd)
#include "TestWinograd.moc"
