// GPU block programs without a GPU: block-level reductions and shared-memory tiles simulated
// on the CPU (the threads of a block in lock step from barrier to barrier, every shared-memory
// race an error) against the reference interpreter; a missing barrier, a barrier under an If
// and a barrier in a loop whose trip count differs between threads are caught; PTX has shared
// arrays and barriers.
#include "GpuSimulation.h"
#include "codegen/exec/CompiledModel.h"
#include "codegen/loops/LoopEvaluator.h"
#include "codegen/loops/LoopPrinter.h"
#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/text/IrParser.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

#include <optional>
#include <string>

using namespace fb;
using namespace fb::cg;
using namespace fb::cg::gpu_test;

namespace {

/// The GPU launches of every kernel of a graph (unoptimized) and their printed loops.
struct Launches {
  std::vector<Kernel> kernels;
  std::vector<GpuLaunch> launches;
  std::string loops;
};

Expected<Launches> launchesOf(const Graph& graph) {
  Launches out;
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Graph> bound, bindStaticShapes(graph, {}, {}));
  LowerOptions lo;
  lo.defaultSchedules = false;
  lo.gemmSpecs = false;
  FB_ASSIGN_OR_RETURN(out.kernels, lowerGraph(*bound, lo));
  for (size_t k = 0; k < out.kernels.size(); ++k) {
    FB_ASSIGN_OR_RETURN(std::vector<GpuLaunch> mine, gpuLaunchesOf(out.kernels[k], k));
    for (GpuLaunch& l : mine)
      out.launches.push_back(std::move(l));
  }
  out.loops = gpuLoopsText(out.kernels, out.launches);
  return out;
}

/// `s` without its n-th barrier (pre-order); *found tells whether there was one.
StmtPtr withoutBarrier(const StmtPtr& s, int& n, bool* found) {
  if (!s)
    return s;
  if (s->kind == Stmt::Kind::Barrier) {
    if (n-- == 0) {
      *found = true;
      return block({});
    }
    return s;
  }
  auto c = std::make_shared<Stmt>(*s);
  c->body = withoutBarrier(s->body, n, found);
  c->thenBody = withoutBarrier(s->thenBody, n, found);
  c->elseBody = withoutBarrier(s->elseBody, n, found);
  for (StmtPtr& x : c->stmts)
    x = withoutBarrier(x, n, found);
  return c;
}

/// The launches with the n-th barrier of launch `li` removed, or nullopt when it has fewer.
std::optional<std::vector<GpuLaunch>> withBarrierRemoved(const std::vector<GpuLaunch>& launches,
                                                         size_t li, int n) {
  std::vector<GpuLaunch> broken = launches;
  bool found = false;
  broken[li].code.body = withoutBarrier(broken[li].code.body, n, &found);
  if (!found)
    return std::nullopt;
  return broken;
}

/// True when `s` allocates the shared tile of a matrix product.
bool stagesSharedTiles(const StmtPtr& s) {
  bool found = false;
  forEachStmt(s, [&](const Stmt& x) {
    found |= x.kind == Stmt::Kind::Alloc && x.buffer->kind == Buffer::Kind::Shared &&
             x.buffer->name == "A_tile";
  });
  return found;
}

int countBarriers(const StmtPtr& s) {
  int n = 0;
  forEachStmt(s, [&](const Stmt& x) { n += x.kind == Stmt::Kind::Barrier; });
  return n;
}

} // namespace

class TestGpuBlockPrograms : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void blockReductionsMatchInterpreter_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("blockSize");
    QTest::newRow("softmax rows of 1000") << QString(R"(graph @g opset 17 {
  input %x : f32[8, 1000]
  %y : f32[8, 1000] = Softmax(%x) {axis = 1}  #1 "softmax"
  output %y
})") << 256;
    QTest::newRow("layernorm rows of 300") << QString(R"(graph @g opset 17 {
  input %x : f32[4, 300]
  input %w : f32[300]
  input %b : f32[300]
  %y : f32[4, 300] = LayerNormalization(%x, %w, %b) {axis = -1, epsilon = 1e-05}  #1 "ln"
  output %y
})") << 256;
    QTest::newRow("global average pool of 14x14") << QString(R"(graph @g opset 17 {
  input %x : f32[1, 64, 14, 14]
  %y : f32[1, 64, 1, 1] = GlobalAveragePool(%x)  #1 "gap"
  output %y
})") << 256;
    QTest::newRow("matrix-vector product") << QString(R"(graph @g opset 17 {
  input %x : f32[1, 512]
  input %w : f32[512, 100]
  %y : f32[1, 100] = MatMul(%x, %w)  #1 "fc"
  output %y
})") << 256;
    QTest::newRow("max of everything") << QString(R"(graph @g opset 17 {
  input %x : f32[3, 50, 7]
  %y : f32[] = ReduceMax(%x) {keepdims = 0}  #1 "max"
  output %y
})") << 256;
    QTest::newRow("sum of 100 integers") << QString(R"(graph @g opset 17 {
  input %x : i64[100]
  %y : i64[1] = ReduceSum(%x) {keepdims = 1}  #1 "sum"
  output %y
})") << 128;
  }

  /// Reductions over long rows run a block per row (its threads split the row, partial results
  /// combine in a shared-memory tree between barriers) and compute what the interpreter does.
  void blockReductionsMatchInterpreter() {
    QFETCH(QString, text);
    QFETCH(int, blockSize);
    auto g = parseGraph(text.toStdString());
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    auto inputs = makeRandomInputs(**g, 11);
    QVERIFY(inputs.ok());
    auto ref = interpret(**g, *inputs);
    QVERIFY2(ref.ok(), ref.ok() ? "" : ref.error().message().c_str());
    auto l = launchesOf(**g);
    QVERIFY2(l.ok(), l.ok() ? "" : l.error().message().c_str());
    QVERIFY2(l->loops.find("in gpu_blocks(") != std::string::npos, l->loops.c_str());
    QVERIFY2(l->loops.find("in gpu_lanes(" + std::to_string(blockSize) + ")") != std::string::npos,
             l->loops.c_str());
    QVERIFY2(l->loops.find("shared red") != std::string::npos, l->loops.c_str());
    QVERIFY2(l->loops.find("barrier") != std::string::npos, l->loops.c_str());
    bool blockLaunch = false;
    for (const GpuLaunch& launch : l->launches)
      blockLaunch |= launch.blockSize == unsigned(blockSize);
    QVERIFY(blockLaunch);
    auto got = simulate(**g, *inputs);
    QVERIFY2(got.ok(), got.ok() ? "" : got.error().message().c_str());
    std::string diff = compareOutputs(ref->outputs, *got);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  /// With fewer blocks than rows, each block goes on to further rows (a grid-stride loop over
  /// blocks): the row's program then ends with a barrier, so a fast thread starting the next
  /// row cannot overwrite shared scalars a slow one still reads.
  void blocksThatTakeSeveralRowsEndWithABarrier() {
    auto g = parseGraph(R"(graph @g opset 17 {
  input %x : f32[8, 300]
  %y : f32[8, 300] = Softmax(%x) {axis = 1}  #1 "softmax"
  output %y
})");
    QVERIFY(g.ok());
    LowerOptions lo;
    lo.defaultSchedules = false;
    lo.gemmSpecs = false;
    auto kernels = lowerGraph(**g, lo);
    QVERIFY(kernels.ok());
    for (int64_t maxBlocks : {2, 65535}) {
      GpuScheduleOptions options;
      options.maxBlocks = maxBlocks;
      auto launches = gpuLaunchesOf(kernels->front(), 0, options);
      QVERIFY(launches.ok());
      QCOMPARE(launches->front().blocks, unsigned(std::min<int64_t>(8, maxBlocks)));
      const Stmt* lanes = nullptr;
      forEachStmt(launches->front().code.body, [&](const Stmt& x) {
        if (x.kind == Stmt::Kind::For && x.forKind == ForKind::GpuLanes)
          lanes = &x;
      });
      QVERIFY(lanes && lanes->body->kind == Stmt::Kind::Block);
      const bool trailing = lanes->body->stmts.back()->kind == Stmt::Kind::Barrier;
      QCOMPARE(trailing, maxBlocks < 8);
    }
  }

  /// Every barrier of a softmax's block program is needed: without any one of them the
  /// simulation reports a race on shared memory (or a wrong result), never a silent pass.
  void missingBarrierIsCaught() {
    auto g = parseGraph(R"(graph @g opset 17 {
  input %x : f32[4, 500]
  %y : f32[4, 500] = Softmax(%x) {axis = 1}  #1 "softmax"
  output %y
})");
    QVERIFY(g.ok());
    auto inputs = makeRandomInputs(**g, 3);
    QVERIFY(inputs.ok());
    auto ref = interpret(**g, *inputs);
    QVERIFY(ref.ok());
    auto l = launchesOf(**g);
    QVERIFY2(l.ok(), l.ok() ? "" : l.error().message().c_str());
    int caught = 0, total = 0, races = 0;
    for (size_t li = 0; li < l->launches.size(); ++li) {
      const int barriers = countBarriers(l->launches[li].code.body);
      for (int b = 0; b < barriers; ++b) {
        auto broken = withBarrierRemoved(l->launches, li, b);
        QVERIFY(broken);
        ++total;
        std::unordered_map<std::string, Tensor> values{{"x", (*inputs)[0]}};
        Status st = simulateGpuLaunches(**g, l->kernels, *broken, values);
        if (!st.ok()) {
          ++caught;
          races += st.error().message().find("a barrier is missing") != std::string::npos;
        } else if (!compareOutputs(ref->outputs, {values.at("y")}).empty()) {
          ++caught;
        } else {
          qWarning("barrier %d of launch %zu is not needed", b, li);
        }
      }
    }
    QVERIFY(total >= 10);
    QCOMPARE(caught, total);
    QVERIFY(races > 0);
  }

  void sharedTilesMatchInterpreter_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("matmul, bias and relu, partial tiles") << QString(R"(graph @g opset 17 {
  input %a : f32[300, 40]
  input %b : f32[40, 260]
  input %bias : f32[260]
  %c : f32[300, 260] = MatMul(%a, %b)  #1 "mm"
  %d : f32[300, 260] = Add(%c, %bias)  #2 "add"
  %e : f32[300, 260] = Relu(%d)  #3 "relu"
  output %e
})");
    QTest::newRow("batched matmul") << QString(R"(graph @g opset 17 {
  input %a : f32[4, 130, 50]
  input %b : f32[4, 50, 140]
  %c : f32[4, 130, 140] = MatMul(%a, %b)  #1 "bmm"
  output %c
})");
    QTest::newRow("gemm with transposed B") << QString(R"(graph @g opset 17 {
  input %a : f32[256, 64]
  input %b : f32[320, 64]
  %c : f32[256, 320] = Gemm(%a, %b) {transB = 1}  #1 "gemm"
  output %c
})");
    // A convolution with a window is tiled from 128 tiles on (GpuSharedTiling.cpp): 64 x 128x64
    // outputs are 128 tiles; 2 x 96 x 64x64 strided outputs 256.
    QTest::newRow("padded 3x3 convolution") << QString(R"(graph @g opset 17 {
  input %x : f32[1, 2, 128, 64]
  input %w : f32[64, 2, 3, 3]
  %y : f32[1, 64, 128, 64] = Conv(%x, %w) {pads = [1, 1, 1, 1]}  #1 "conv"
  %r : f32[1, 64, 128, 64] = Relu(%y)  #2 "relu"
  output %r
})");
    QTest::newRow("strided convolution, batch 2") << QString(R"(graph @g opset 17 {
  input %x : f32[2, 2, 129, 129]
  input %w : f32[96, 2, 3, 3]
  %y : f32[2, 96, 64, 64] = Conv(%x, %w) {strides = [2, 2]}  #1 "conv"
  output %y
})");
  }

  /// Matrix products and convolutions with at least 64 outputs on each side and enough tiles run as
  /// 64x64 tiles per block through shared memory (partial tiles padded with zeros) and compute what
  /// the interpreter does; every barrier of the tile program is needed.
  void sharedTilesMatchInterpreter() {
    QFETCH(QString, text);
    auto g = parseGraph(text.toStdString());
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    auto steps = namedPipeline("O3");
    QVERIFY(steps.ok());
    PipelineResult pr = PassManager().run((*g)->clone(), *steps);
    QVERIFY(!pr.error);
    const Graph& opt = pr.finalGraph();
    auto inputs = makeRandomInputs(**g, 5);
    QVERIFY(inputs.ok());
    auto ref = interpret(**g, *inputs);
    QVERIFY2(ref.ok(), ref.ok() ? "" : ref.error().message().c_str());
    auto l = launchesOf(opt);
    QVERIFY2(l.ok(), l.ok() ? "" : l.error().message().c_str());
    QVERIFY2(l->loops.find("shared A_tile: f32[16, 64]") != std::string::npos, l->loops.c_str());
    QVERIFY2(l->loops.find("local acc: f32[4, 4]") != std::string::npos, l->loops.c_str());
    auto got = simulate(opt, *inputs);
    QVERIFY2(got.ok(), got.ok() ? "" : got.error().message().c_str());
    std::string diff = compareOutputs(ref->outputs, *got);
    QVERIFY2(diff.empty(), diff.c_str());
    // Without either barrier of the tile program, the simulation reports a race.
    auto bound = bindStaticShapes(opt, {}, {});
    QVERIFY(bound.ok());
    int tilePrograms = 0;
    for (size_t li = 0; li < l->launches.size(); ++li) {
      if (!stagesSharedTiles(l->launches[li].code.body))
        continue;
      ++tilePrograms;
      QCOMPARE(countBarriers(l->launches[li].code.body), 2);
      for (int b = 0; b < 2; ++b) {
        auto broken = withBarrierRemoved(l->launches, li, b);
        QVERIFY(broken);
        std::unordered_map<std::string, Tensor> values;
        for (size_t i = 0; i < inputs->size(); ++i)
          values[(*bound)->inputs()[i]->name()] = (*inputs)[i];
        Status st = simulateGpuLaunches(**bound, l->kernels, *broken, values);
        QVERIFY2(!st.ok() && st.error().message().find("a barrier is missing") != std::string::npos,
                 st.ok() ? "passed without a barrier" : st.error().message().c_str());
      }
    }
    QVERIFY(tilePrograms > 0);
  }

  /// A barrier that not every thread reaches is refused by the simulation: under an If, or in
  /// a loop whose trip count depends on the thread.
  void divergentBarriersAreRefused() {
    auto Y = makeArgBuffer("y", 0, DType::F32, {64});
    BufferPtr sh = makeSharedBuffer("sh", DType::F32, {64});
    const ExprPtr t = var("t");
    auto blockOf = [&](StmtPtr lanesBody) {
      return forLoop("b", intImm(0), intImm(1), ForKind::GpuBlocks,
                     alloc(sh, forLoop("t", intImm(0), intImm(64), ForKind::GpuLanes, lanesBody)));
    };
    StmtPtr write = store(sh, {t}, floatImm(1));
    StmtPtr read = store(Y, {t}, load(sh, {sub(intImm(63), t)}));
    // Right: write, barrier, read.
    std::vector<Tensor> args{*Tensor::create(DType::F32, {64})};
    Status ok = evaluateBody(blockOf(block({write, barrier(), read})), args);
    QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().message().c_str());
    QCOMPARE(args[0].data<float>()[0], 1.0f);
    // Missing: a race.
    Status race = evaluateBody(blockOf(block({write, read})), args);
    QVERIFY(!race.ok());
    QVERIFY2(race.error().message().find("a barrier is missing") != std::string::npos,
             race.error().message().c_str());
    // Under an If.
    Status underIf = evaluateBody(
        blockOf(block({write, ifThen(binary(BinaryOp::Lt, t, intImm(32)), barrier()), read})),
        args);
    QVERIFY(!underIf.ok());
    QVERIFY2(underIf.error().message().find("under an If") != std::string::npos,
             underIf.error().message().c_str());
    // In a loop run once by half the threads and twice by the others.
    Status loop = evaluateBody(
        blockOf(block({write,
                       forLoop("k", intImm(0), add(intImm(1), binary(BinaryOp::Div, t, intImm(32))),
                               ForKind::Serial, barrier()),
                       read})),
        args);
    QVERIFY(!loop.ok());
    QVERIFY2(loop.error().message().find("barrier") != std::string::npos,
             loop.error().message().c_str());
    // Shared memory no thread wrote reads as NaN, so it cannot pass unnoticed.
    std::vector<Tensor> fresh{*Tensor::create(DType::F32, {64})};
    QVERIFY(evaluateBody(blockOf(block({barrier(), read})), fresh).ok());
    QVERIFY(std::isnan(fresh[0].data<float>()[5]));
  }

  /// The PTX of a block program declares its shared arrays and synchronizes with bar.sync.
  void blockProgramPtx() {
    auto g = parseGraph(R"(graph @g opset 17 {
  input %x : f32[8, 1000]
  %y : f32[8, 1000] = Softmax(%x) {axis = 1}  #1 "softmax"
  output %y
})");
    QVERIFY(g.ok());
    CompileOptions co;
    auto target = TargetInfo::forGpu("sm_80");
    QVERIFY(target.ok());
    co.target = *target;
    auto model = CompiledModel::compile(**g, co);
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
    auto code = (*model)->kernelCode(0);
    QVERIFY2(code.ok(), code.ok() ? "" : code.error().message().c_str());
    const std::string& ptx = code->assembly;
    QVERIFY2(ptx.find(".shared .align 16 .b8") != std::string::npos, ptx.c_str());
    QVERIFY2(ptx.find("bar.sync") != std::string::npos, ptx.c_str());
    QVERIFY2(ptx.find("ld.shared") != std::string::npos, ptx.c_str());
    QVERIFY2(ptx.find("%ctaid.x") != std::string::npos, ptx.c_str());
    QVERIFY2(code->loops.find("gpu_lanes(256)") != std::string::npos, code->loops.c_str());
  }
};

QTEST_GUILESS_MAIN(TestGpuBlockPrograms)
#include "TestGpuBlockPrograms.moc"
