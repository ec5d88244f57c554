// Tests of the GEMM generator's column tile (vectors along M, GemmPlan::mVectors): which
// layers the plan gives it, and generated kernels on every path of it against the naive
// double-precision reference of GemmCases.h.
#include "GemmCases.h"

#include <QtTest/QtTest>

#include <memory>

using namespace fb;
using namespace fb::cg;
using namespace fb::gemmcases;

class TestGemmColumnTile : public QObject {
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

  /// The column tile (vectors along M) is what a deep layer on a small image gets: 320 output
  /// channels over 6×6 pixels fill 32-row vectors where the row tile fills 36 of 48 lanes. A
  /// wide image keeps the row tile, and so does AVX2, whose 8-row column tile is no better.
  void plan() {
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
  void matchesReference() {
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
};

QTEST_GUILESS_MAIN(TestGemmColumnTile)
#include "TestGemmColumnTile.moc"
