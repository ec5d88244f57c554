// Tests of the GEMM micro-kernel generator: generated MatMul/Gemm/Conv kernels against a naive
// double-precision reference, for odd sizes, strides, constant operands, bias kinds, every
// epilogue, convolution geometries, blocking overrides and 1 or 2 threads.
#include "GemmCases.h"

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
#include <utility>

using namespace fb;
using namespace fb::cg;
using namespace fb::gemmcases;

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

  /// The whole-tile micro-kernel of a GEMM whose store reads a residual prefetches that tile
  /// before its K loop (one prefetch per cache line of each row), and only then: the results
  /// are the same either way (convGeometries), this checks the prefetches are there.
  void residualTileIsPrefetched() {
    auto prefetches = [](bool residual) {
      ConvCase c = conv(1, 64, 28, 28, 256, 1, 1, 1, 0, 1, 1);
      c.bias = GemmSpec::Bias::PerRow;
      if (residual)
        c.epilogue = {op(EpilogueOp::Kind::AddTensor), op(EpilogueOp::Kind::Relu)};
      Problem pr = makeConv(c);
      if (!packConstantOperands(pr.kernel).ok())
        return -1;
      llvm::LLVMContext ctx;
      llvm::Module module("gemm", ctx);
      if (!emitGemmKernel(module, pr.kernel).ok())
        return -1;
      // Calls of the prefetch intrinsic (moc cannot parse llvm/IR/Instructions.h: users).
      int count = 0;
      if (llvm::Function* prefetch = module.getFunction("llvm.prefetch.p0"))
        for (llvm::User* user : prefetch->users())
          if (auto* call = llvm::dyn_cast<llvm::Instruction>(user))
            count += call->getFunction()->getName().ends_with(".ukernel");
      return count;
    };
    const int with = prefetches(true), without = prefetches(false);
    QVERIFY2(with > 0, qPrintable(QString::number(with)));
    QCOMPARE(without, 0);
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

  /// A batched MatMul's epilogue operand that repeats over some batch dims (a Swin block's
  /// [1, heads, 49, 49] position bias over [windows, heads]): the row and column tiles, one
  /// and several K blocks, the operand's step from the inner, the outer or no batch dim.
  void batchRepeatingEpilogue() {
    // {div, mod} over a [4, 3] batch: [1, 3, M, N], [4, 1, M, N], [M, N].
    for (auto [div, mod] : {std::pair<int64_t, int64_t>{1, 3}, {3, 4}, {12, 1}})
      for (auto vectors : {GemmSpec::TileVectors::AlongN, GemmSpec::TileVectors::AlongM})
        for (int64_t kc : {0, 16}) {
          EpilogueOp add = op(EpilogueOp::Kind::AddTensor);
          add.batchDiv = div;
          add.batchMod = mod;
          EpilogueOp mul = op(EpilogueOp::Kind::MulTensor);
          mul.batchDiv = 1;
          mul.batchMod = 12; // C's own layout, written the long way
          MatMulCase c;
          c.batch = 12;
          c.M = 13;
          c.N = 27;
          c.K = 40;
          c.kc = kc;
          c.vectors = vectors;
          c.epilogue = {add, op(EpilogueOp::Kind::Relu), mul};
          std::string what = "repeating operand b / " + std::to_string(div) + " % " +
                             std::to_string(mod) + (kc ? ", K blocks" : "") +
                             (vectors == GemmSpec::TileVectors::AlongM ? ", column tile" : "");
          for (int threads : {1, 2})
            check(makeMatMul(c), threads, what.c_str());
        }
    // Not for a single matrix: nothing to repeat over, and the plan says so.
    MatMulCase single;
    single.M = single.N = single.K = 8;
    EpilogueOp add = op(EpilogueOp::Kind::AddTensor);
    add.batchMod = 1;
    single.epilogue = {add};
    Problem pr = makeMatMul(single);
    auto fn = m_jit->compile(pr.kernel);
    QVERIFY(!fn.ok());
    QVERIFY2(fn.error().message().find("repeating over the batch") != std::string::npos,
             fn.error().message().c_str());
  }

  /// Constant weights times a run-time A: the split reads the larger operand once. A Swin MLP
  /// over one 7×7 window (M 49, N 3072, K 768) splits N and takes 7-row tiles (no ragged
  /// 1-row edge); the same layer over 56×56 tokens (M 3136) splits M; ViT's 197 tokens (two
  /// M parts read the weights twice, cheaper than packing A eight times) split M; a few tokens
  /// stream the weights through one row tile over the whole K.
  void weightsAreStreamedOnce() {
    auto plan = [](int64_t M, int64_t N, int64_t K) {
      MatMulCase c;
      c.M = M;
      c.N = N;
      c.K = K;
      c.constB = true;
      c.registers = 32;
      Problem pr = makeMatMul(c);
      pr.kernel.gemm->packedBArg = 1; // a placeholder for the packed panels
      return planGemm(pr.kernel, 2);
    };
    auto window = plan(49, 3072, 768);
    QVERIFY2(window.ok(), window.ok() ? "" : window.error().message().c_str());
    QCOMPARE(window->mParts, int64_t(1));
    QVERIFY(window->nParts >= 2);
    QCOMPARE(window->mr, int64_t(7));
    auto image = plan(3136, 384, 96);
    QVERIFY(image.ok() && image->nParts == 1 && image->mParts >= 2 && image->mr == 8);
    auto vit = plan(197, 3072, 768);
    QVERIFY(vit.ok() && vit->nParts == 1 && vit->mParts == 2);
    // ConvNeXt's last stage, 4 tokens: one 4×48 row tile streams each panel once, whole K.
    auto tokens = plan(4, 3072, 768);
    QVERIFY(tokens.ok() && tokens->mr == 4 && tokens->nr == 48 && tokens->kc == 768);
    QVERIFY(tokens->mParts == 1 && tokens->nParts >= 2);
    // Each skinny row count, a K past the streaming block, and the edge columns.
    for (int64_t m = 2; m < 8; ++m) {
      MatMulCase c;
      c.M = m;
      c.N = 100;
      c.K = 4100 + m;
      c.constB = true;
      c.bias = GemmSpec::Bias::PerColumn;
      check(makeMatMul(c), 2, ("skinny M " + std::to_string(m) + ", long K").c_str());
    }
    // And they compute the right thing, with 7-row tiles.
    MatMulCase c;
    c.M = 49;
    c.N = 200;
    c.K = 300;
    c.constB = true;
    c.bias = GemmSpec::Bias::PerColumn;
    c.epilogue = {op(EpilogueOp::Kind::Gelu)};
    check(makeMatMul(c), 2, "49 rows, constant B");
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
