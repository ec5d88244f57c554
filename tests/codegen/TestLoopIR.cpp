// Tests of the kernel loop IR: printer golden text, evaluator, schedule primitives preserving
// semantics (checked with the loop-IR evaluator), and the schedule override grammar.
#include "codegen/loops/LoopEvaluator.h"
#include "codegen/loops/LoopIR.h"
#include "codegen/loops/LoopPrinter.h"
#include "codegen/loops/Schedule.h"
#include "core/RandomInputs.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::cg;

namespace {

/// Y[i, j] = B[j]; for k: Y[i, j] += X[i, k] * W[k, j]; Y[i, j] = max(Y[i, j], 0): the textbook
/// MatMul+Add+Relu nest over args X (0), W (1), B (2), Y (3).
StmtPtr matmulNest(int64_t M, int64_t N, int64_t K) {
  BufferPtr X = makeArgBuffer("X", 0, DType::F32, {M, K});
  BufferPtr W = makeArgBuffer("W", 1, DType::F32, {K, N});
  BufferPtr B = makeArgBuffer("B", 2, DType::F32, {N});
  BufferPtr Y = makeArgBuffer("Y", 3, DType::F32, {M, N});
  ExprPtr i = var("i"), j = var("j"), k = var("k");
  StmtPtr body = block({store(Y, {i, j}, load(B, {j})),
                        forRange("k", K,
                                 store(Y, {i, j},
                                       add(load(Y, {i, j}), mul(load(X, {i, k}), load(W, {k, j}))))),
                        store(Y, {i, j}, max(load(Y, {i, j}), floatImm(0)))});
  return forRange("i", M, forRange("j", N, body));
}

/// Y[i, j] = X[i, j] * 2 + Z[j] over args X (0), Z (1), Y (2).
StmtPtr elementwiseNest(int64_t M, int64_t N) {
  BufferPtr X = makeArgBuffer("X", 0, DType::F32, {M, N});
  BufferPtr Z = makeArgBuffer("Z", 1, DType::F32, {N});
  BufferPtr Y = makeArgBuffer("Y", 2, DType::F32, {M, N});
  ExprPtr i = var("i"), j = var("j");
  return forRange("i", M,
                  forRange("j", N,
                           store(Y, {i, j}, add(mul(load(X, {i, j}), floatImm(2)), load(Z, {j})))));
}

std::vector<Tensor> randomArgs(const std::vector<std::vector<int64_t>>& sizes, uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<Tensor> args;
  for (const auto& s : sizes)
    args.push_back(randomTensor(DType::F32, s, rng));
  return args;
}

/// Runs `s` on copies of `args` and returns the last argument (the output).
Tensor run(const StmtPtr& s, std::vector<Tensor> args) {
  Tensor out(DType::F32, args.back().sizes());
  args.back() = out;
  Status st = evaluateBody(s, args);
  if (!st.ok())
    qWarning("%s", st.error().message().c_str());
  return st.ok() ? args.back() : Tensor();
}

} // namespace

class TestLoopIR : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void printerGolden() {
    std::string text = printStmt(matmulNest(4, 16, 8));
    QCOMPARE(QString::fromStdString(text),
             QString("for i, j in grid(4, 16):\n"
                     "  Y[i, j] = B[j]\n"
                     "  for k in range(8):\n"
                     "    Y[i, j] += X[i, k] * W[k, j]\n"
                     "  Y[i, j] = max(Y[i, j], 0.0)\n"));
  }

  void printerExpressions() {
    ExprPtr a = var("a"), b = var("b");
    QCOMPARE(QString::fromStdString(printExpr(mul(add(a, b), sub(a, b)))), QString("(a + b) * (a - b)"));
    QCOMPARE(QString::fromStdString(printExpr(sub(a, sub(b, a)))), QString("a - (b - a)"));
    QCOMPARE(QString::fromStdString(printExpr(unary(UnaryOp::Neg, add(a, b)))), QString("-(a + b)"));
    QCOMPARE(QString::fromStdString(printExpr(select(binary(BinaryOp::Lt, a, intImm(0)), floatImm(1.5), floatImm(-2)))),
             QString("select(a < 0, 1.5, -2.0)"));
    QCOMPARE(QString::fromStdString(printExpr(cast(Type::f32(), a))), QString("f32(a)"));
    // Integer folding keeps index arithmetic readable.
    QCOMPARE(QString::fromStdString(printExpr(add(mul(a, intImm(1)), intImm(0)))), QString("a"));
    QCOMPARE(QString::fromStdString(printExpr(add(intImm(3), intImm(4)))), QString("7"));
  }

  void printerScheduledLoops() {
    auto v = vectorizeLoop(elementwiseNest(4, 20), "j", 8);
    QVERIFY(v.ok());
    auto p = parallelizeLoop(*v, "i");
    QVERIFY(p.ok());
    QCOMPARE(QString::fromStdString(printStmt(*p)),
             QString("for i in parallel(4):\n"
                     "  for j_o in range(2):\n"
                     "    for j_i in vectorized(8):\n"
                     "      Y[i, j_o * 8 + j_i] = X[i, j_o * 8 + j_i] * 2.0 + Z[j_o * 8 + j_i]\n"
                     "  for j_t in vectorized(4):  # tail\n"
                     "    Y[i, j_t + 16] = X[i, j_t + 16] * 2.0 + Z[j_t + 16]\n"));
  }

  void evaluatorComputesMatMul() {
    std::vector<Tensor> args = randomArgs({{3, 5}, {5, 4}, {4}, {3, 4}}, 1);
    Tensor y = run(matmulNest(3, 4, 5), args);
    QVERIFY(y.valid());
    auto X = args[0].data<float>(), W = args[1].data<float>(), B = args[2].data<float>();
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        float acc = B[size_t(j)];
        for (int k = 0; k < 5; ++k)
          acc += X[size_t(i * 5 + k)] * W[size_t(k * 4 + j)];
        QCOMPARE(y.data<float>()[size_t(i * 4 + j)], std::max(acc, 0.f));
      }
  }

  void evaluatorReportsOutOfBounds() {
    BufferPtr Y = makeArgBuffer("Y", 0, DType::F32, {4});
    StmtPtr s = forRange("i", 5, store(Y, {var("i")}, floatImm(1)));
    std::vector<Tensor> args = {Tensor(DType::F32, {4})};
    Status st = evaluateBody(s, args);
    QVERIFY(!st.ok());
    QVERIFY(st.error().message().find("out of bounds") != std::string::npos);
  }

  void schedulesPreserveSemantics_data() {
    QTest::addColumn<QString>("name");
    for (const char* n : {"split", "tile", "tileEven", "tileUneven", "reorder", "fuse", "vectorize", "unroll",
                          "parallel", "cache", "default", "override"})
      QTest::newRow(n) << QString(n);
  }

  void schedulesPreserveSemantics() {
    QFETCH(QString, name);
    const int64_t M = 7, N = 13, K = 5;
    for (int which = 0; which < 2; ++which) {
      StmtPtr base = which == 0 ? matmulNest(M, N, K) : elementwiseNest(M, N);
      std::vector<Tensor> args = which == 0 ? randomArgs({{M, K}, {K, N}, {N}, {M, N}}, 7)
                                            : randomArgs({{M, N}, {N}, {M, N}}, 8);
      Tensor ref = run(base, args);
      QVERIFY(ref.valid());
      Expected<StmtPtr> s = base;
      std::string n = name.toStdString();
      if (n == "split")
        s = splitLoop(base, "j", 4);
      else if (n == "tile")
        s = tileLoops(base, {7, 13}); // sizes >= extents: unchanged
      else if (n == "tileEven")
        s = tileLoops(base, {7, 13 * 0 + 1});
      else if (n == "tileUneven")
        s = tileLoops(base, {3, 8});
      else if (n == "reorder")
        s = reorderLoops(base, {"j", "i"});
      else if (n == "fuse")
        s = fuseLoops(base, "i", "j");
      else if (n == "vectorize")
        s = vectorizeLoop(base, which == 0 ? "i" : "j", 8);
      else if (n == "unroll")
        s = unrollLoop(base, which == 0 ? "k" : "j", 4);
      else if (n == "parallel")
        s = parallelizeLoop(base, "i");
      else if (n == "cache")
        s = which == 0 ? cacheLocal(base, "k", "Y") : Expected<StmtPtr>(base);
      else if (n == "default") {
        LowerOptions o;
        o.parallelThreshold = 1;
        s = applyDefaultSchedule(base, o);
      } else if (n == "override") {
        Kernel k;
        k.name = "k0";
        k.body = base;
        auto ov = parseScheduleOverrides("k0:tile=4x8,unroll=2,vectorize=8,parallel=1");
        QVERIFY(ov.ok());
        Status st = applyScheduleOverride(k, base, (*ov)[0], LowerOptions{});
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());
        s = k.body;
      }
      QVERIFY2(s.ok(), s.ok() ? "" : s.error().message().c_str());
      QVERIFY(!equal(*s, base) || n == "cache" || n == "tile");
      Tensor got = run(*s, args);
      QVERIFY2(got.valid(), printStmt(*s).c_str());
      // Same arithmetic in the same order per element: bitwise equal.
      QVERIFY2(got.identical(ref), printStmt(*s).c_str());
    }
  }

  void cacheLocalUsesAccumulator() {
    auto s = cacheLocal(matmulNest(2, 3, 4), "k", "Y");
    QVERIFY(s.ok());
    std::string text = printStmt(*s);
    QVERIFY2(text.find("local Y_acc: f32[1]") != std::string::npos, text.c_str());
    QVERIFY2(text.find("Y_acc[0] += X[i, k] * W[k, j]") != std::string::npos, text.c_str());
  }

  void defaultScheduleVectorizesAndParallelizes() {
    LowerOptions o;
    o.parallelThreshold = 1;
    StmtPtr s = applyDefaultSchedule(elementwiseNest(64, 64), o);
    std::string text = printStmt(s);
    QVERIFY2(text.find("parallel(") != std::string::npos, text.c_str());
    QVERIFY2(text.find("vectorized(8)") != std::string::npos, text.c_str());
    // The reduction loop of a matmul is never vectorized (its iterations update one element).
    StmtPtr m = applyDefaultSchedule(matmulNest(8, 8, 16), o);
    std::string mt = printStmt(m);
    QVERIFY2(mt.find("for k in vectorized") == std::string::npos, mt.c_str());
  }

  void scheduleErrors() {
    QVERIFY(!splitLoop(elementwiseNest(4, 4), "nope", 2).ok());
    QVERIFY(!reorderLoops(matmulNest(4, 4, 4), {"k", "i"}).ok()); // k is not perfectly nested
    QVERIFY(!fuseLoops(elementwiseNest(4, 4), "j", "i").ok());
    QVERIFY(!cacheLocal(elementwiseNest(4, 4), "j", "Y").ok()); // Y's element changes with j
    // A reduction loop writes one element from every iteration: neither parallel nor vector.
    QVERIFY(!parallelizeLoop(matmulNest(4, 4, 4), "k").ok());
    QVERIFY(!vectorizeLoop(matmulNest(4, 4, 4), "k", 8).ok());
    QVERIFY(parallelizeLoop(matmulNest(4, 4, 4), "j").ok());
  }

  void overrideGrammar() {
    auto ok = parseScheduleOverrides(" k3: tile=32x64, vectorize=8 ; k5:parallel=0,none");
    QVERIFY(ok.ok());
    QCOMPARE(ok->size(), size_t(2));
    QCOMPARE(QString::fromStdString((*ok)[0].kernel), QString("k3"));
    QCOMPARE((*ok)[0].directives.size(), size_t(2));
    QCOMPARE(QString::fromStdString((*ok)[0].directives[0].value), QString("32x64"));
    QCOMPARE(QString::fromStdString((*ok)[1].directives[1].name), QString("none"));
    QVERIFY(!parseScheduleOverrides("k3").ok());
    QVERIFY(!parseScheduleOverrides("k3:explode=4").ok());
    QVERIFY(!parseScheduleOverrides("k3:tile").ok());
    QVERIFY(!parseScheduleOverrides("k3:none=2").ok());
    QVERIFY(parseScheduleOverrides("").ok());

    Kernel k;
    k.name = "k0";
    k.body = elementwiseNest(4, 4);
    auto bad = parseScheduleOverrides("k0:split=zz/4");
    QVERIFY(bad.ok());
    Status st = applyScheduleOverride(k, k.body, (*bad)[0], LowerOptions{});
    QVERIFY(!st.ok());
    QVERIFY2(st.error().message().find("k0") != std::string::npos, st.error().message().c_str());
    auto gemmOnly = parseScheduleOverrides("k0:mc=64");
    QVERIFY(!applyScheduleOverride(k, k.body, (*gemmOnly)[0], LowerOptions{}).ok());
  }
};

QTEST_GUILESS_MAIN(TestLoopIR)
#include "TestLoopIR.moc"
