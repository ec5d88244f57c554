// The direct convolution generator (codegen/gemm/DirectConv.h) against a double-precision
// reference convolution: every tile shape and edge (partial rows and columns, rows stacked for
// narrow maps), one to four channel vectors and a partial channel block, strides, dilation,
// asymmetric padding and filters, groups, batches, inputs read in place or through the padded
// plane, bias and epilogues (residual, per-channel scale, SiLU), one and two threads; the tile
// plan, the per-layer rule, and the targets it refuses.
#include "codegen/gemm/DirectConv.h"
#include "codegen/gemm/GemmPlan.h"
#include "tests/codegen/GemmCases.h"
#include "tests/support/GemmHarness.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <memory>

using namespace fb;
using namespace fb::cg;

namespace {

struct ConvCase {
  const char* name = "";
  int64_t batch = 1, cin = 8, h = 8, w = 8, cout = 16;
  int64_t kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t padTop = 1, padLeft = 1, padBottom = 1, padRight = 1;
  int64_t groups = 1;
  /// The target's vector registers: 32 (AVX-512, 16-channel zmm tiles) or 16 (AVX2, 8-channel
  /// ymm tiles). The IR is the same either way; the JIT compiles it for this host.
  int registers = 32;
  bool bias = true, residual = false, relu = false, channelScale = false, silu = false;
};

struct Problem {
  Kernel kernel;
  std::vector<std::vector<float>> buffers;
  std::vector<double> expected, magnitude;
};

using gemmcases::bufferArg;
using gemmcases::randomData;

Problem makeProblem(const ConvCase& cc) {
  Problem pr;
  ConvGeometry g;
  g.batch = cc.batch;
  g.inChannels = cc.cin;
  g.inH = cc.h;
  g.inW = cc.w;
  g.outChannels = cc.cout;
  g.kernelH = cc.kh;
  g.kernelW = cc.kw;
  g.strideH = cc.sh;
  g.strideW = cc.sw;
  g.dilationH = cc.dh;
  g.dilationW = cc.dw;
  g.padTop = cc.padTop;
  g.padLeft = cc.padLeft;
  g.groups = cc.groups;
  g.outH = (cc.h + cc.padTop + cc.padBottom - (cc.kh - 1) * cc.dh - 1) / cc.sh + 1;
  g.outW = (cc.w + cc.padLeft + cc.padRight - (cc.kw - 1) * cc.dw - 1) / cc.sw + 1;
  const int64_t cinG = cc.cin / cc.groups, m = cc.cout / cc.groups;
  const int64_t xs = g.batch * g.inChannels * g.inH * g.inW,
                ws = g.outChannels * cinG * cc.kh * cc.kw,
                ys = g.batch * g.outChannels * g.outH * g.outW;
  Kernel& k = pr.kernel;
  k.name = "k_direct";
  k.opSummary = "Conv";
  k.args = {bufferArg("x", KernelArg::Role::Input, xs), bufferArg("w", KernelArg::Role::Weight, ws),
            bufferArg("y", KernelArg::Role::Output, ys)};
  pr.buffers = {randomData(xs, 21), randomData(ws, 22),
                std::vector<float>(size_t(ys), std::numeric_limits<float>::quiet_NaN())};
  GemmSpec s;
  s.conv = g;
  s.bArg = 0;
  s.aArg = 1;
  s.cArg = 2;
  s.M = m;
  s.N = g.outH * g.outW;
  s.K = cinG * cc.kh * cc.kw;
  s.constantA = Tensor::fromVector<float>({g.outChannels, cinG, cc.kh, cc.kw}, pr.buffers[1]);
  s.algorithm = ConvAlgorithm::Direct;
  s.vectorRegisters = cc.registers;
  if (cc.bias) {
    s.bias = GemmSpec::Bias::PerRow;
    s.biasArg = int(k.args.size());
    k.args.push_back(bufferArg("bias", KernelArg::Role::Input, g.outChannels));
    pr.buffers.push_back(randomData(g.outChannels, 23));
  }
  int residualArg = -1, scaleArg = -1;
  if (cc.residual) {
    EpilogueOp add;
    add.kind = EpilogueOp::Kind::AddTensor;
    add.arg = residualArg = int(k.args.size());
    k.args.push_back(bufferArg("residual", KernelArg::Role::Input, ys));
    pr.buffers.push_back(randomData(ys, 24));
    s.epilogue.push_back(add);
  }
  if (cc.relu)
    s.epilogue.push_back({EpilogueOp::Kind::Relu});
  if (cc.channelScale) {
    EpilogueOp mul;
    mul.kind = EpilogueOp::Kind::MulTensor;
    mul.perRow = true;
    mul.arg = scaleArg = int(k.args.size());
    k.args.push_back(bufferArg("scale", KernelArg::Role::Input, g.outChannels));
    pr.buffers.push_back(randomData(g.outChannels, 25));
    s.epilogue.push_back(mul);
  }
  if (cc.silu)
    s.epilogue.push_back({EpilogueOp::Kind::Silu});
  const auto &x = pr.buffers[0], &w = pr.buffers[1];
  pr.expected.resize(size_t(ys));
  pr.magnitude.resize(size_t(ys));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.outChannels; ++co)
      for (int64_t oh = 0; oh < g.outH; ++oh)
        for (int64_t ow = 0; ow < g.outW; ++ow) {
          const int64_t grp = co / m;
          double sum = 0, mag = 0;
          for (int64_t ci = 0; ci < cinG; ++ci)
            for (int64_t kh = 0; kh < cc.kh; ++kh)
              for (int64_t kw = 0; kw < cc.kw; ++kw) {
                int64_t ih = oh * cc.sh - cc.padTop + kh * cc.dh;
                int64_t iw = ow * cc.sw - cc.padLeft + kw * cc.dw;
                if (ih < 0 || ih >= g.inH || iw < 0 || iw >= g.inW)
                  continue;
                double p = double(x[size_t(
                               ((n * g.inChannels + grp * cinG + ci) * g.inH + ih) * g.inW + iw)]) *
                           double(w[size_t(((co * cinG + ci) * cc.kh + kh) * cc.kw + kw)]);
                sum += p;
                mag += std::abs(p);
              }
          size_t e = size_t(((n * g.outChannels + co) * g.outH + oh) * g.outW + ow);
          if (cc.bias) {
            sum += pr.buffers[size_t(s.biasArg)][size_t(co)];
            mag += 1;
          }
          if (cc.residual)
            sum += pr.buffers[size_t(residualArg)][e];
          if (cc.relu)
            sum = std::max(sum, 0.0);
          if (cc.channelScale) {
            mag *= std::abs(pr.buffers[size_t(scaleArg)][size_t(co)]);
            sum *= pr.buffers[size_t(scaleArg)][size_t(co)];
          }
          if (cc.silu)
            sum = sum / (1.0 + std::exp(-sum));
          pr.expected[e] = sum;
          pr.magnitude[e] = mag;
        }
  k.gemm = std::move(s);
  return pr;
}

/// Compiles as a direct convolution, runs with NaN-poisoned output and scratch, and compares
/// every output with the reference: float sums of K products round by about sqrt(K) ulps of
/// their magnitude, a wrong tap, pixel or channel is off by a whole product. Returns a failure
/// description, or an empty string.
std::string run(GemmHarness& jit, Problem pr, int threads) {
  GemmHarness::setThreads(threads);
  auto fn = jit.compile(pr.kernel, true);
  if (!fn.ok())
    return "compile failed: " + fn.error().message();
  if (!pr.kernel.gemm->direct)
    return "the kernel was not prepared as a direct convolution";
  GemmHarness::run(*fn, pr.kernel, pr.buffers);
  const std::vector<float>& y = pr.buffers[2];
  for (size_t e = 0; e < y.size(); ++e) {
    double tol = 1e-5 + 2e-5 * pr.magnitude[e];
    if (!(std::abs(double(y[e]) - pr.expected[e]) <= tol))
      return "element " + std::to_string(e) + " of " + std::to_string(y.size()) + ": got " +
             std::to_string(y[e]) + ", expected " + std::to_string(pr.expected[e]) + " (tol " +
             std::to_string(tol) + ")";
  }
  return {};
}

std::vector<ConvCase> cases() {
  std::vector<ConvCase> v;
  auto add = [&](const char* name, auto&& set) {
    ConvCase c;
    c.name = name;
    set(c);
    v.push_back(c);
  };
  add("densenet growth 128->32 16x16, relu",
      [](ConvCase& c) { c.cin = 128, c.cout = 32, c.h = c.w = 16, c.relu = true; });
  add("squeezenet expand 48->192 7x7, relu: 6 blocks of 2 vectors",
      [](ConvCase& c) { c.cin = 48, c.cout = 192, c.h = c.w = 7, c.relu = true; });
  add("5x5 on 12x12: rows stacked", [](ConvCase& c) {
    c.cin = 16, c.cout = 32, c.h = c.w = 12, c.kh = c.kw = 5;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 2;
  });
  add("20 channels (partial block) on 7x7",
      [](ConvCase& c) { c.cin = 24, c.cout = 20, c.h = c.w = 7; });
  add("64 channels on 30x30: segments and a short last one",
      [](ConvCase& c) { c.cin = 16, c.cout = 64, c.h = c.w = 30; });
  add("48 channels (3 vectors) on 6x6",
      [](ConvCase& c) { c.cin = 40, c.cout = 48, c.h = c.w = 6; });
  add("80 channels (two blocks) on 9x11",
      [](ConvCase& c) { c.cin = 12, c.cout = 80, c.h = 9, c.w = 11; });
  add("stride 2 on 17x17",
      [](ConvCase& c) { c.cin = 32, c.cout = 32, c.h = c.w = 17, c.sh = c.sw = 2; });
  add("7x7 stride 2 stem", [](ConvCase& c) {
    c.cin = 3, c.cout = 16, c.h = c.w = 32, c.kh = c.kw = 7, c.sh = c.sw = 2;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 3;
  });
  add("stride 2, rows stacked on a 4x4 output",
      [](ConvCase& c) { c.cin = 8, c.cout = 16, c.h = c.w = 8, c.sh = c.sw = 2; });
  add("dilation 2", [](ConvCase& c) {
    c.cin = 8, c.cout = 32, c.h = c.w = 20, c.dh = c.dw = 2;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 2;
  });
  add("1x7 filter", [](ConvCase& c) {
    c.cin = 16, c.cout = 32, c.h = c.w = 17, c.kh = 1, c.kw = 7;
    c.padTop = c.padBottom = 0, c.padLeft = c.padRight = 3;
  });
  add("7x1 filter", [](ConvCase& c) {
    c.cin = 16, c.cout = 32, c.h = c.w = 17, c.kh = 7, c.kw = 1;
    c.padTop = c.padBottom = 3, c.padLeft = c.padRight = 0;
  });
  add("asymmetric padding", [](ConvCase& c) {
    c.cin = 8, c.cout = 16, c.h = 8, c.w = 9;
    c.padTop = 0, c.padBottom = 2, c.padLeft = 2, c.padRight = 0;
  });
  add("two groups", [](ConvCase& c) { c.cin = 8, c.cout = 32, c.groups = 2, c.h = c.w = 10; });
  add("batch 2, residual, relu, channel scale", [](ConvCase& c) {
    c.batch = 2, c.cin = 16, c.cout = 32, c.h = c.w = 8;
    c.residual = c.relu = c.channelScale = true;
  });
  // The transposed stores go in runs of up to 4 pixels of a row: runs of 3 and 2 (masked)
  // and of 1 (single-lane stores), with a residual read the same way.
  add("residual on 7x7: runs of 4 and 3", [](ConvCase& c) {
    c.cin = 24, c.cout = 32, c.h = c.w = 7;
    c.residual = c.relu = true;
  });
  add("residual on 6x5: runs of 4, 2 and 1", [](ConvCase& c) {
    c.cin = 16, c.cout = 64, c.h = 6, c.w = 5;
    c.residual = c.channelScale = true;
  });
  add("residual on 2x2: a run of 2 per row", [](ConvCase& c) {
    c.cin = 256, c.cout = 64, c.h = c.w = 2;
    c.residual = c.relu = true;
  });
  add("silu, no bias",
      [](ConvCase& c) { c.cin = 8, c.cout = 16, c.h = c.w = 8, c.bias = false, c.silu = true; });
  add("1x1, read in place", [](ConvCase& c) {
    c.cin = 20, c.cout = 32, c.h = c.w = 9, c.kh = c.kw = 1;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
  });
  add("3x3 valid, read in place", [](ConvCase& c) {
    c.cin = 8, c.cout = 32, c.h = c.w = 10;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
  });
  add("one output pixel", [](ConvCase& c) {
    c.cin = 8, c.cout = 16, c.h = c.w = 3;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
  });
  add("wide map 1x60", [](ConvCase& c) { c.cin = 4, c.cout = 16, c.h = 1, c.w = 60; });
  add("1x1 bottleneck 256->128 on 4x4 (weight-bound split)", [](ConvCase& c) {
    c.cin = 256, c.cout = 128, c.h = c.w = 4, c.kh = c.kw = 1, c.relu = true;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
  });
  add("8 groups of 16 on 4x4 (ResNeXt's grouped 3x3)",
      [](ConvCase& c) { c.cin = 128, c.cout = 128, c.groups = 8, c.h = c.w = 4, c.relu = true; });
  add("4 groups of 32, stride 2 on 8x8",
      [](ConvCase& c) { c.cin = 128, c.cout = 128, c.groups = 4, c.h = c.w = 8, c.sh = c.sw = 2; });
  add("1x1 192->256 on 8x8 with a residual", [](ConvCase& c) {
    c.cin = 192, c.cout = 256, c.h = c.w = 8, c.kh = c.kw = 1, c.residual = c.relu = true;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
  });
  add("320->64 on 7x7 (K 2880): one vector per block, its weights within L2",
      [](ConvCase& c) { c.cin = 320, c.cout = 64, c.h = c.w = 7, c.residual = c.relu = true; });
  add("1x1 stride 2 128->64 on 14x14 (a downsample)", [](ConvCase& c) {
    c.cin = 128, c.cout = 64, c.h = c.w = 14, c.kh = c.kw = 1, c.sh = c.sw = 2;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
  });
  add("11x11 stride 4 on 3 channels (AlexNet's stem)", [](ConvCase& c) {
    c.cin = 3, c.cout = 32, c.h = c.w = 39, c.kh = c.kw = 11, c.sh = c.sw = 4, c.relu = true;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 2;
  });
  add("7x7 stride 2 stem, 96 channels unpadded, residual: runs of 4, 2 and 1", [](ConvCase& c) {
    c.cin = 3, c.cout = 96, c.h = c.w = 39, c.kh = c.kw = 7, c.sh = c.sw = 2;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
    c.residual = c.relu = true;
  });
  // Passes over the input channels (DirectConvLayout::passChannels): partial sums kept per
  // tile between passes, a shorter last pass, dead channels (the scatter path), a residual.
  add("1x1 2048->512 on 7x7 in passes of 256 (ResNet-50's layer4)", [](ConvCase& c) {
    c.cin = 2048, c.cout = 512, c.h = c.w = 7, c.kh = c.kw = 1, c.relu = true;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
  });
  add("1x1 1100->80 on 9x9 in passes, the last shorter, dead channels, residual", [](ConvCase& c) {
    c.cin = 1100, c.cout = 80, c.h = c.w = 9, c.kh = c.kw = 1, c.residual = c.relu = true;
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0;
  });
  add("3x3 stride 2 256->96 on 14x14 in passes, padded rows copied per item", [](ConvCase& c) {
    c.cin = 256, c.cout = 96, c.h = c.w = 14, c.sh = c.sw = 2, c.relu = true;
  });
  add("512 channels on 4x100: the padded plane is a Scratch phase",
      [](ConvCase& c) { c.cin = 512, c.cout = 16, c.h = 4, c.w = 100, c.residual = true; });
  return v;
}

/// The case's kernel prepared as a direct convolution and emitted into a module of `ctx`;
/// null where either step fails.
std::unique_ptr<llvm::Module> emitCase(const ConvCase& cc, llvm::LLVMContext& ctx) {
  Problem pr = makeProblem(cc);
  if (!prepareDirectConv(pr.kernel).ok())
    return nullptr;
  auto module = std::make_unique<llvm::Module>("direct", ctx);
  if (!emitDirectConvKernel(*module, pr.kernel).ok())
    return nullptr;
  return module;
}

} // namespace

class TestDirectConv : public QObject {
  Q_OBJECT

  std::unique_ptr<GemmHarness> m_jit;

private Q_SLOTS:
  void initTestCase() {
    auto jit = GemmHarness::create();
    QVERIFY2(jit.ok(), jit.ok() ? "" : jit.error().message().c_str());
    m_jit = std::move(*jit);
  }

  void matchesReference_data() {
    QTest::addColumn<int>("index");
    QTest::addColumn<int>("threads");
    QTest::addColumn<int>("registers");
    const std::vector<ConvCase> all = cases();
    // Every case as AVX2 compiles it (8-channel ymm tiles; this host runs that code too), and
    // as AVX-512 does where the host has it.
    std::vector<int> targets = {16};
    if (hostVectorRegisters() >= 32)
      targets.push_back(32);
    for (int registers : targets)
      for (size_t i = 0; i < all.size(); ++i)
        for (int threads : {1, 2})
          QTest::newRow((std::string(all[i].name) + (registers == 16 ? ", ymm" : ", zmm") +
                         (threads == 1 ? " (1 thread)" : " (2 threads)"))
                            .c_str())
              << int(i) << threads << registers;
  }
  void matchesReference() {
    QFETCH(int, index);
    QFETCH(int, threads);
    QFETCH(int, registers);
    ConvCase c = cases()[size_t(index)];
    c.registers = registers;
    std::string failure = run(*m_jit, makeProblem(c), threads);
    QVERIFY2(failure.empty(), failure.c_str());
  }

  /// The comparison can fail: a filter flipped left to right (a wrong tap order) is caught.
  void wrongWeightsFail() {
    ConvCase c = cases()[0];
    Problem pr = makeProblem(c);
    std::vector<float> flipped = pr.buffers[1];
    for (size_t i = 0; i + 2 < flipped.size(); i += 3)
      std::swap(flipped[i], flipped[i + 2]);
    pr.kernel.gemm->constantA = Tensor::fromVector<float>({c.cout, c.cin, c.kh, c.kw}, flipped);
    QVERIFY(!run(*m_jit, pr, 2).empty());
  }

  /// The tile follows the channels and the map: 32 channels in 2 vectors, stacked rows on a
  /// narrow map, segments of at most the register budget, and a work split for the threads.
  void plan() {
    Problem pr = makeProblem(cases()[0]); // 32 channels, 16x16, 3x3
    DirectConvLayout d = planDirectConv(*pr.kernel.gemm, 2);
    QCOMPARE(d.ocVectors * 16 * d.channelBlocks >= 32, true);
    QVERIFY(d.ocVectors * d.tileRows * d.tileCols + d.ocVectors + d.tileCols + 2 <= 31);
    QCOMPARE(d.paddedH, int64_t(18));
    QCOMPARE(d.paddedW, int64_t(18));
    QVERIFY(d.channelBlocks * d.rowItems >= 4); // enough items for 2 threads
    Problem narrow = makeProblem(cases()[1]);   // 5x5 on 12x12, stride 1
    DirectConvLayout n = planDirectConv(*narrow.kernel.gemm, 2);
    QVERIFY(n.tileCols <= 12);
    QVERIFY(n.tileRows * n.tileCols >= 4);
    // A 4×4 map is bound by streaming the weights: one channel block per thread, not rows.
    ConvCase small = cases()[0];
    small.h = small.w = 4;
    Problem s = makeProblem(small);
    DirectConvLayout w = planDirectConv(*s.kernel.gemm, 2);
    QCOMPARE(w.ocVectors, 1);
    QCOMPARE(w.channelBlocks, int64_t(2));
    QCOMPARE(w.rowItems, int64_t(1));
    // A schedule's mr fixes the vectors.
    s.kernel.gemm->mr = 32;
    QCOMPARE(planDirectConv(*s.kernel.gemm, 2).ocVectors, 2);
    // 192 channels on 7×7 would be 3 blocks of 4 vectors for 2 threads: 6 blocks of 2 instead.
    // 128 channels divide as 2 blocks of 4 and keep them.
    ConvCase expand = small;
    expand.cin = 48;
    expand.cout = 192;
    expand.h = expand.w = 7;
    Problem e = makeProblem(expand);
    DirectConvLayout ed = planDirectConv(*e.kernel.gemm, 2);
    QCOMPARE(ed.ocVectors, 2);
    QCOMPARE(ed.channelBlocks, int64_t(6));
    expand.cout = 128;
    Problem e2 = makeProblem(expand);
    DirectConvLayout ed2 = planDirectConv(*e2.kernel.gemm, 2);
    QCOMPARE(ed2.ocVectors, 4);
    QCOMPARE(ed2.channelBlocks, int64_t(2));
    // A strided tile counts the broadcasts its taps share (pixel j's tap kw is pixel j+1's tap
    // kw - 2): ResNet's 7x7/2 stem takes 4 zmm x 4 pixels, SqueezeNet's 96-channel one a tile
    // that leaves those broadcasts their registers (3 x 7 spilled), in items that divide
    // among the threads (3 channel blocks x 4 row blocks, not x 3).
    ConvCase stem;
    stem.cin = 3, stem.cout = 64, stem.h = stem.w = 224, stem.kh = stem.kw = 7;
    stem.sh = stem.sw = 2, stem.padTop = stem.padLeft = stem.padBottom = stem.padRight = 3;
    DirectConvLayout sd = planDirectConv(*makeProblem(stem).kernel.gemm, 2);
    QCOMPARE(sd.ocVectors, 4);
    QCOMPARE(sd.tileCols, int64_t(4));
    stem.cout = 96, stem.padTop = stem.padLeft = stem.padBottom = stem.padRight = 0;
    DirectConvLayout sq = planDirectConv(*makeProblem(stem).kernel.gemm, 2);
    QVERIFY(sq.ocVectors * sq.tileCols + sq.ocVectors + sq.tileCols + 3 <= 31);
    QCOMPARE((sq.channelBlocks * sq.rowItems) % 2, int64_t(0));
  }

  /// A channel block whose weights outgrow L1 runs its tiles in passes over the input
  /// channels when the item has several tiles to read them; one tile, or a small block, not.
  void passesOverInputChannels() {
    ConvCase layer4;
    layer4.cin = 2048, layer4.cout = 512, layer4.h = layer4.w = 7, layer4.kh = layer4.kw = 1;
    layer4.padTop = layer4.padLeft = layer4.padBottom = layer4.padRight = 0;
    DirectConvLayout d = planDirectConv(*makeProblem(layer4).kernel.gemm, 2);
    QCOMPARE(d.ocVectors, 2);
    QCOMPARE(d.passChannels, int64_t(256)); // 32 KiB of weights: 256 channels × 32 floats
    ConvCase few = layer4;
    few.cin = 64; // 8 KiB per block: one pass
    QCOMPARE(planDirectConv(*makeProblem(few).kernel.gemm, 2).passChannels, int64_t(0));
    ConvCase onePixel = layer4;
    onePixel.h = onePixel.w = 1; // one tile per item reads each weight once anyway
    QCOMPARE(planDirectConv(*makeProblem(onePixel).kernel.gemm, 2).passChannels, int64_t(0));
    // The cases named for passes run in passes, in zmm and in ymm.
    for (const ConvCase& named : cases())
      if (std::string(named.name).find("in passes") != std::string::npos)
        for (int registers : {16, 32}) {
          ConvCase c = named;
          c.registers = registers;
          QVERIFY2(planDirectConv(*makeProblem(c).kernel.gemm, 2).passChannels > 0, named.name);
        }
    Problem pr = makeProblem(layer4);
    QVERIFY(prepareDirectConv(pr.kernel).ok());
    auto text = describeDirectConv(pr.kernel);
    QVERIFY(text.ok());
    QVERIFY2(text->find("passes of 256") != std::string::npos, text->c_str());
  }

  /// A tile whose channel body the generator unrolled into many FMAs (a 7×7 stem: taps ×
  /// pixels × vectors ≥ 256) keeps its channel loop rolled (llvm.loop.unroll.disable: LLVM's
  /// unrollers only cost compile time there); a 3×3 tile's loop is left to LLVM.
  void bigChannelBodiesStayRolled() {
    auto rolledLoops = [](const ConvCase& cc) {
      llvm::LLVMContext ctx;
      std::unique_ptr<llvm::Module> module = emitCase(cc, ctx);
      if (!module)
        return -1;
      int rolled = 0;
      for (const llvm::Function& f : *module)
        for (const llvm::BasicBlock& bb : f)
          if (const llvm::MDNode* loop =
                  bb.getTerminator()->getMetadata(llvm::LLVMContext::MD_loop))
            for (const llvm::MDOperand& op : loop->operands())
              if (auto* node = llvm::dyn_cast_or_null<llvm::MDNode>(op.get()))
                if (auto* name = llvm::dyn_cast<llvm::MDString>(node->getOperand(0)))
                  rolled += name->getString() == "llvm.loop.unroll.disable";
      return rolled;
    };
    for (const ConvCase& named : cases()) {
      const std::string name = named.name;
      if (name.find("stem") != std::string::npos)
        QVERIFY2(rolledLoops(named) > 0, named.name);
      if (name.find("3x3 stride 2 256->96") != std::string::npos ||
          name.find("1x1 2048->512") != std::string::npos)
        QVERIFY2(rolledLoops(named) == 0, named.name);
    }
  }

  /// A tile whose store reads a residual prefetches the residual's rows before its channel
  /// loop (ResNet-50's 1x1 expand layers waited for them): more prefetches than the same layer
  /// without the residual, whose only prefetches are the passes' weights.
  void residualTilesArePrefetched() {
    auto prefetches = [](bool residual) {
      ConvCase cc;
      for (const ConvCase& named : cases())
        if (std::string(named.name).find("1x1 2048->512") != std::string::npos)
          cc = named;
      cc.residual = residual;
      llvm::LLVMContext ctx;
      std::unique_ptr<llvm::Module> module = emitCase(cc, ctx);
      if (!module)
        return -1;
      // Calls of the prefetch intrinsic (moc cannot parse llvm/IR/Instructions.h: users).
      llvm::Function* prefetch = module->getFunction("llvm.prefetch.p0");
      const int count = prefetch ? int(prefetch->getNumUses()) : 0;
      return count;
    };
    const int with = prefetches(true), without = prefetches(false);
    QVERIFY(with >= 0 && without >= 0);
    QVERIFY2(with > without, qPrintable(QString("%1 vs %2").arg(with).arg(without)));
  }

  /// A padded input too large to copy per work item goes through the Scratch plane phase.
  void largeInputUsesThePaddedPlane() {
    Problem pr = makeProblem(cases().back());
    auto prepared = prepareDirectConv(pr.kernel);
    QVERIFY(prepared.ok() && *prepared);
    QCOMPARE(pr.kernel.gemm->direct->localRows, int64_t(0));
    QVERIFY(pr.kernel.gemm->direct->paddedArg >= 0);
  }

  /// Auto takes the direct convolution for a layer of few output channels (DenseNet's growth
  /// layers) or one bound by streaming its weights (a small map), not for a wide one, and never
  /// on an AVX2 target; asking for it there is an error.
  void perLayerRule() {
    Problem growth = makeProblem(cases()[0]);
    growth.kernel.gemm->algorithm = ConvAlgorithm::Auto;
    auto chosen = prepareDirectConv(growth.kernel);
    QVERIFY(chosen.ok() && *chosen);
    // Its 16x16 map is padded by the work items themselves (no Scratch plane).
    QVERIFY(growth.kernel.gemm->direct->localRows > 0);
    QVERIFY(growth.kernel.gemm->direct->paddedArg < 0);
    // A schedule's mr of 16-64 keeps it direct with that tile; nr asks for the GEMM.
    Problem tiled = makeProblem(cases()[0]);
    tiled.kernel.gemm->algorithm = ConvAlgorithm::Auto;
    tiled.kernel.gemm->mr = 16;
    auto tiledChosen = prepareDirectConv(tiled.kernel);
    QVERIFY(tiledChosen.ok() && *tiledChosen);
    QCOMPARE(tiled.kernel.gemm->direct->ocVectors, 1);
    Problem gemm = makeProblem(cases()[0]);
    gemm.kernel.gemm->algorithm = ConvAlgorithm::Auto;
    gemm.kernel.gemm->nr = 16;
    auto gemmChosen = prepareDirectConv(gemm.kernel);
    QVERIFY(gemmChosen.ok() && !*gemmChosen);
    ConvCase wide;
    wide.cin = 64, wide.cout = 64, wide.h = wide.w = 28;
    Problem w = makeProblem(wide);
    w.kernel.gemm->algorithm = ConvAlgorithm::Auto;
    auto notChosen = prepareDirectConv(w.kernel);
    QVERIFY(notChosen.ok() && !*notChosen);
    // A 1x1 bottleneck on a 4x4 map streams its weights: direct; on 16x16 it stays a GEMM.
    ConvCase bottleneck;
    bottleneck.cin = 256, bottleneck.cout = 128, bottleneck.h = bottleneck.w = 4;
    bottleneck.kh = bottleneck.kw = 1;
    bottleneck.padTop = bottleneck.padLeft = bottleneck.padBottom = bottleneck.padRight = 0;
    Problem small = makeProblem(bottleneck);
    small.kernel.gemm->algorithm = ConvAlgorithm::Auto;
    auto smallChosen = prepareDirectConv(small.kernel);
    QVERIFY(smallChosen.ok() && *smallChosen);
    bottleneck.h = bottleneck.w = 16;
    Problem large = makeProblem(bottleneck);
    large.kernel.gemm->algorithm = ConvAlgorithm::Auto;
    auto largeChosen = prepareDirectConv(large.kernel);
    QVERIFY(largeChosen.ok() && !*largeChosen);
    auto autoChooses = [](int64_t cin, int64_t cout, int64_t hw) {
      ConvCase c;
      c.cin = cin, c.cout = cout, c.h = c.w = hw;
      Problem p = makeProblem(c);
      p.kernel.gemm->algorithm = ConvAlgorithm::Auto;
      auto r = prepareDirectConv(p.kernel);
      return r.ok() && *r;
    };
    // Maps under 8x8: ResNet's 256 -> 256 3x3 on 4x4 is direct, and 208 -> 208 on 6x6 (K =
    // 1872) too since a block's weights stay within L2 (a chain of twelve such layers, 2
    // threads: 3.03 ms direct, 3.32 as Winograd).
    QVERIFY(autoChooses(256, 256, 4));
    QVERIFY(autoChooses(512, 512, 2));
    QVERIFY(autoChooses(208, 208, 6));
    QVERIFY(autoChooses(192, 192, 6));
    // Up to 64 channels on 16x16 and smaller maps when the reduction is short: SqueezeNet's
    // 16 -> 64 3x3 on 14x14 (K = 144) is direct, but not on 28x28.
    QVERIFY(autoChooses(16, 64, 14));
    QVERIFY(!autoChooses(16, 64, 28));
    // Any width for a 3x3 filter on 16x16 and smaller maps when K <= 1536: ResNet-18's 64 -> 64
    // on 16x16 (K = 576) and 128 -> 128 on 8x8 (K = 1152) are direct; AlexNet's 384 -> 256 on
    // 13x13 (K = 3456), VGG's 512 -> 512 on 14x14 and anything on 28x28 are not.
    QVERIFY(autoChooses(64, 64, 16));
    QVERIFY(autoChooses(128, 128, 8));
    // Under 8x8 any K: ResNet's 512 -> 512 on 7x7 (K = 4608), in blocks of one vector, whose
    // 295 KB of weights stay in L2 while the block's tiles run (four vectors were 1.2 MB).
    QVERIFY(autoChooses(512, 512, 7));
    {
      ConvCase c;
      c.cin = c.cout = 512, c.h = c.w = 7;
      Problem p = makeProblem(c);
      p.kernel.gemm->algorithm = ConvAlgorithm::Auto;
      auto r = prepareDirectConv(p.kernel);
      QVERIFY(r.ok() && *r);
      QCOMPARE(p.kernel.gemm->direct->ocVectors, 1);
      // A short K keeps the widest tile.
      ConvCase s;
      s.cin = 64, s.cout = 64, s.h = s.w = 16;
      Problem q = makeProblem(s);
      auto rs = prepareDirectConv(q.kernel);
      QVERIFY(rs.ok() && *rs);
      QCOMPARE(q.kernel.gemm->direct->ocVectors, 4);
    }
    // 32 to 48 input channels under a 3x3 filter on any map: SqueezeNet's expand layers
    // (32 -> 128 on 54x54, 48 -> 192 on 27x27); not with 16 or 64 inputs (ResNet's 64 -> 64 on
    // 56x56).
    QVERIFY(autoChooses(32, 128, 54));
    QVERIFY(autoChooses(48, 192, 27));
    QVERIFY(!autoChooses(16, 64, 54));
    QVERIFY(!autoChooses(64, 64, 56));
    // Longer reductions on maps that F(4x4) tiles raggedly (13x13 as 16x16): AlexNet's
    // 384 -> 256 on 13x13 (K = 3456) is direct; VGG's 512 -> 512 on 14x14 stays Winograd.
    QVERIFY(autoChooses(384, 256, 13));
    QVERIFY(!autoChooses(512, 512, 14));
    QVERIFY(!autoChooses(256, 256, 14));
    QVERIFY(!autoChooses(64, 64, 28));
    // Grouped 3x3 layers of at least 16 channels per group: ResNeXt's 512 channels in 32
    // groups on 4x4 are direct, its 128 in 32 groups of 4 on 16x16 stay im2col.
    auto autoChoosesLayer = [](int64_t cin, int64_t cout, int64_t hw, int64_t k, int64_t groups,
                               int registers = 32, int64_t stride = 1) {
      ConvCase c;
      c.cin = cin, c.cout = cout, c.h = c.w = hw, c.kh = c.kw = k, c.groups = groups;
      c.registers = registers, c.sh = c.sw = stride;
      c.padTop = c.padLeft = c.padBottom = c.padRight = k / 2;
      Problem p = makeProblem(c);
      p.kernel.gemm->algorithm = ConvAlgorithm::Auto;
      auto r = prepareDirectConv(p.kernel);
      return r.ok() && *r;
    };
    QVERIFY(autoChoosesLayer(512, 512, 4, 3, 32));
    QVERIFY(autoChoosesLayer(1024, 1024, 2, 3, 32));
    QVERIFY(!autoChoosesLayer(128, 128, 16, 3, 32));
    QVERIFY(!autoChoosesLayer(256, 256, 8, 3, 32));
    // Groups of 8 (RegNet's) on maps over 16x16; on AVX2, whose ymm tiles hold 8 channels,
    // on any map; groups of 4 never. Other layers stay GEMMs on AVX2.
    QVERIFY(autoChoosesLayer(224, 224, 28, 3, 28));
    QVERIFY(!autoChoosesLayer(224, 224, 14, 3, 28));
    QVERIFY(autoChoosesLayer(256, 256, 8, 3, 32, 16));
    QVERIFY(autoChoosesLayer(1024, 1024, 2, 3, 32, 16));
    QVERIFY(!autoChoosesLayer(128, 128, 16, 3, 32, 16));
    QVERIFY(!autoChoosesLayer(256, 128, 8, 1, 1, 16));
    // Pointwise layers (K >= 128): 128+ channels on 8x8, 256+ on 16x16; not with K = 64.
    QVERIFY(autoChoosesLayer(256, 128, 8, 1, 1));
    QVERIFY(autoChoosesLayer(128, 256, 16, 1, 1));
    QVERIFY(!autoChoosesLayer(256, 128, 16, 1, 1));
    QVERIFY(!autoChoosesLayer(64, 256, 8, 1, 1));
    QVERIFY(!autoChoosesLayer(256, 512, 28, 1, 1));
    // Strided layers: 3x3/2 of 16+ input channels and 1x1/2 with K <= 256 on maps up to 16x16
    // are direct, and stems with K >= 128 (ResNet's 7x7/2 on 3 channels, K = 147; AlexNet's
    // 11x11/4, K = 363); not a 3x3/2 stem (K = 27) nor ResNet-50's 1x1/2 256 -> 512 on 28x28.
    QVERIFY(autoChoosesLayer(64, 128, 56, 3, 1, 32, 2));
    QVERIFY(autoChoosesLayer(256, 512, 14, 3, 1, 32, 2));
    QVERIFY(autoChoosesLayer(128, 256, 28, 1, 1, 32, 2));
    QVERIFY(!autoChoosesLayer(256, 512, 56, 1, 1, 32, 2));
    QVERIFY(autoChoosesLayer(3, 64, 224, 7, 1, 32, 2));
    // 5x5 filters on 32+ input channels at stride 1, any map: AlexNet's 64 -> 192 on 27x27;
    // not with 16 inputs (16 -> 64 on 28x28: im2col's copies are few), nor as AVX2 code.
    QVERIFY(autoChoosesLayer(64, 192, 27, 5, 1));
    QVERIFY(!autoChoosesLayer(16, 64, 28, 5, 1));
    QVERIFY(!autoChoosesLayer(64, 192, 27, 5, 1, 16));
    QVERIFY(!autoChoosesLayer(3, 32, 224, 3, 1, 32, 2));
    QVERIFY(autoChoosesLayer(3, 64, 224, 11, 1, 32, 4));
    // An AVX2 target computes it when asked, in 8-channel ymm tiles; Auto does not take it.
    Problem avx2 = makeProblem(cases()[0]);
    avx2.kernel.gemm->vectorRegisters = 16;
    QVERIFY(directConvApplies(*avx2.kernel.gemm, 16));
    auto asked = prepareDirectConv(avx2.kernel);
    QVERIFY(asked.ok() && *asked);
    QCOMPARE(avx2.kernel.gemm->direct->lanes, 8);
    QVERIFY(avx2.kernel.gemm->direct->ocVectors * avx2.kernel.gemm->direct->tileRows *
                    avx2.kernel.gemm->direct->tileCols +
                avx2.kernel.gemm->direct->ocVectors <=
            15);
    avx2 = makeProblem(cases()[0]);
    avx2.kernel.gemm->vectorRegisters = 16;
    avx2.kernel.gemm->algorithm = ConvAlgorithm::Auto;
    auto autoAvx2 = prepareDirectConv(avx2.kernel);
    QVERIFY(autoAvx2.ok() && !*autoAvx2);
  }
};

QTEST_GUILESS_MAIN(TestDirectConv)
#include "TestDirectConv.moc"
