// The GPU backend without and with a GPU: the GPU schedule of every sample run on the CPU (grid
// simulation) against the reference interpreter, schedules that a simulation must reject, PTX
// for every sample, and — where a CUDA device is present — every sample run on it and profiled.
#include "GpuSimulation.h"
#include "codegen/exec/CompiledModel.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/gpu/CudaDriver.h"
#include "codegen/gpu/GpuSchedule.h"
#include "codegen/gpu/GridSimulation.h"
#include "codegen/loops/LoopEvaluator.h"
#include "codegen/loops/LoopPrinter.h"
#include "codegen/loops/Lower.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "core/TensorCompare.h"
#include "core/text/IrParser.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

#include <cstdlib>
#include <string>

using namespace fb;
using namespace fb::cg;
using namespace fb::cg::gpu_test;

namespace {

const char* const kSamples[] = {
    "mlp",           "small_cnn",   "resnet_block", "mobilenet_v2_block", "transformer_block",
    "dynamic_batch", "control_flow"};

/// The samples of this checkout, or of $FUSEBOX_SAMPLES_DIR (the test copied to a GPU machine).
std::string samplePath(const std::string& name) {
  const char* dir = std::getenv("FUSEBOX_SAMPLES_DIR");
  return std::string(dir && *dir ? dir : FUSEBOX_SAMPLES_DIR) + "/" + name + ".fbir";
}

/// A sample after a named pipeline, its random inputs and the interpreter's outputs on the
/// imported graph.
struct Case {
  std::unique_ptr<Graph> imported, optimized;
  std::vector<Tensor> inputs, reference;
};

Expected<Case> loadCase(const std::string& sample, const std::string& pipeline) {
  Case c;
  FB_ASSIGN_OR_RETURN(c.imported, loadModel(samplePath(sample)));
  FB_ASSIGN_OR_RETURN(std::vector<PipelineStep> steps, namedPipeline(pipeline));
  PipelineResult pr = PassManager().run(c.imported->clone(), steps);
  if (pr.error)
    return *pr.error;
  c.optimized = pr.finalGraph().clone();
  FB_ASSIGN_OR_RETURN(c.inputs, makeRandomInputs(*c.imported, 7));
  FB_ASSIGN_OR_RETURN(InterpretResult ref, interpret(*c.imported, c.inputs));
  c.reference = ref.outputs;
  return c;
}

} // namespace

class TestGpuBackend : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void gridSimulationMatchesInterpreter_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<QString>("pipeline");
    for (const char* s : kSamples)
      for (const char* p : {"O0", "O3"})
        QTest::newRow((std::string(s) + " " + p).c_str()) << QString(s) << QString(p);
  }

  /// Every sample's GPU schedule, run launch by launch with each launch's threads in reverse
  /// order, computes what the interpreter computes, unfused and fused.
  void gridSimulationMatchesInterpreter() {
    QFETCH(QString, sample);
    QFETCH(QString, pipeline);
    auto c = loadCase(sample.toStdString(), pipeline.toStdString());
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message().c_str());
    size_t launches = 0;
    auto got = simulate(*c->optimized, c->inputs, &launches);
    QVERIFY2(got.ok(), got.ok() ? "" : got.error().message().c_str());
    std::string diff = compareOutputs(c->reference, *got);
    QVERIFY2(diff.empty(), diff.c_str());
    QVERIFY(launches > 0);
  }

  /// A matrix product's output loops become one loop over GPU threads; the reduction stays in
  /// each thread, accumulating in a local.
  void matmulMapsOutputsToThreads() {
    auto A = argBuffer("A", 0, {4, 3}), B = argBuffer("B", 1, {3, 5}),
         Y = argBuffer("Y", 2, {4, 5});
    StmtPtr init = store(Y, {var("m"), var("n")}, floatImm(0));
    StmtPtr acc =
        forRange("k", 3,
                 store(Y, {var("m"), var("n")},
                       add(load(Y, {var("m"), var("n")}),
                           mul(load(A, {var("m"), var("k")}), load(B, {var("k"), var("n")})))));
    StmtPtr nest = forRange("m", 4, forRange("n", 5, block({init, acc})));
    StmtPtr s = scheduleNestForGpu(nest);
    QCOMPARE(int(s->forKind), int(ForKind::GpuThreads));
    int64_t extent = 0;
    QVERIFY(s->extent->isIntConst(&extent));
    QCOMPARE(extent, int64_t(20));
    bool local = false;
    forEachStmt(s, [&](const Stmt& x) { local |= x.kind == Stmt::Kind::Alloc; });
    QVERIFY2(local, "the accumulator should live in a local");
  }

  /// Large enough products get a 4x4 register tile per thread (unroll-and-jam: one k loop
  /// for 16 accumulators), and a convolution a tile along a dimension its weights do not
  /// depend on; simulated, both still compute what the interpreter computes.
  void registerTilesMatchInterpreter() {
    const char* text = R"(graph @tiles opset 17 {
  input %a : f32[2048, 8]
  input %b : f32[8, 1024]
  input %x : f32[1, 4, 258, 258]
  input %w : f32[8, 4, 3, 3]
  %c : f32[2048, 1024] = MatMul(%a, %b)  #1 "mm"
  %y : f32[1, 8, 256, 256] = Conv(%x, %w)  #3 "conv"
  %r : f32[1, 8, 256, 256] = Relu(%y)  #4 "relu"
  output %c
  output %r
})";
    auto g = parseGraph(text);
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    auto inputs = makeRandomInputs(**g, 3);
    QVERIFY(inputs.ok());
    auto ref = interpret(**g, *inputs);
    QVERIFY(ref.ok());
    auto steps = namedPipeline("O3");
    QVERIFY(steps.ok());
    PipelineResult pr = PassManager().run((*g)->clone(), *steps);
    QVERIFY(!pr.error);
    auto got = simulate(pr.finalGraph(), *inputs);
    QVERIFY2(got.ok(), got.ok() ? "" : got.error().message().c_str());
    std::string diff = compareOutputs(ref->outputs, *got);
    QVERIFY2(diff.empty(), diff.c_str());
    // The schedule that was simulated: a 4x4 tile on the product, a tile on the convolution.
    LowerOptions lo;
    lo.defaultSchedules = false;
    lo.gemmSpecs = false;
    auto bound = bindStaticShapes(pr.finalGraph(), {}, {});
    QVERIFY(bound.ok());
    auto kernels = lowerGraph(**bound, lo);
    QVERIFY(kernels.ok());
    std::string loops;
    for (size_t k = 0; k < kernels->size(); ++k) {
      auto launches = gpuLaunchesOf((*kernels)[k], k);
      QVERIFY(launches.ok());
      loops += gpuLoopsText({(*kernels)[k]}, *launches);
    }
    QVERIFY2(loops.find("local c_acc: f32[4, 4, 1]") != std::string::npos, loops.c_str());
    // Tiles stop where fewer than 2^17 threads would remain: 2M products in 4x4 tiles, 512K
    // convolution outputs in tiles of 4.
    QVERIFY2(loops.find("in gpu_threads(131072)") != std::string::npos, loops.c_str());
  }

  /// A kernel's override sets its block size and register tile (regtile=1: one output per
  /// thread; regtile=2 also below the thread minimum), and the result still simulates right.
  void overridesSetBlockAndTile() {
    const char* text = R"(graph @mm opset 17 {
  input %a : f32[64, 16]
  input %b : f32[16, 32]
  %c : f32[64, 32] = MatMul(%a, %b)  #1 "mm"
  output %c
})";
    auto g = parseGraph(text);
    QVERIFY(g.ok());
    auto inputs = makeRandomInputs(**g, 5);
    QVERIFY(inputs.ok());
    auto ref = interpret(**g, *inputs);
    QVERIFY(ref.ok());
    for (const char* spec : {"k0:block=64,regtile=1", "k0:regtile=2", "k0:block=32"}) {
      LowerOptions lo;
      lo.defaultSchedules = false;
      lo.gemmSpecs = false;
      auto overrides = parseScheduleOverrides(spec);
      QVERIFY(overrides.ok());
      lo.scheduleOverrides = *overrides;
      auto kernels = lowerGraph(**g, lo);
      QVERIFY2(kernels.ok(), kernels.ok() ? "" : kernels.error().message().c_str());
      auto launches = gpuLaunchesOf((*kernels)[0], 0);
      QVERIFY2(launches.ok(), launches.ok() ? "" : launches.error().message().c_str());
      const GpuLaunch& l = launches->front();
      const std::string loops = printStmt(l.code.body);
      if (std::string(spec).find("block=64") != std::string::npos) {
        QCOMPARE(l.blockSize, 64u);
        QCOMPARE(l.threads, int64_t(64 * 32));
        QVERIFY2(loops.find("unrolled") == std::string::npos, loops.c_str());
      } else if (std::string(spec).find("regtile=2") != std::string::npos) {
        QCOMPARE(l.threads, int64_t(32 * 16)); // a 2x2 tile per thread
        QVERIFY2(loops.find("unrolled(2)") != std::string::npos, loops.c_str());
      } else {
        QCOMPARE(l.blockSize, 32u);
      }
      std::unordered_map<std::string, Tensor> values{{"a", (*inputs)[0]}, {"b", (*inputs)[1]}};
      QVERIFY(simulateGpuLaunches(**g, *kernels, *launches, values).ok());
      QVERIFY(compareOutputs(ref->outputs, {values.at("c")}).empty());
    }
    // A bad value is refused when the kernel is lowered.
    LowerOptions bad;
    bad.defaultSchedules = false;
    bad.scheduleOverrides = *parseScheduleOverrides("k0:block=48");
    auto refused = lowerGraph(**g, bad);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().message().find("multiple of 32") != std::string::npos,
             refused.error().message().c_str());
  }

  /// A short reduction of everything to one element has no loop to spread: one thread runs
  /// it; a long one runs in one block whose threads split it (TestGpuBlockPrograms).
  void fullReductionRunsInOneThread() {
    auto X = argBuffer("X", 0, {16}), Y = argBuffer("Y", 1, {1});
    StmtPtr nest = block(
        {store(Y, {intImm(0)}, floatImm(0)),
         forRange("i", 16, store(Y, {intImm(0)}, add(load(Y, {intImm(0)}), load(X, {var("i")}))))});
    StmtPtr s = scheduleNestForGpu(nest);
    QCOMPARE(int(s->forKind), int(ForKind::GpuThreads));
    QCOMPARE(s->extent->intValue, int64_t(1));
  }

  /// The simulation can fail: a scan spread over threads, and two nests that need a barrier
  /// between them put in one launch, give wrong results, while the launches the schedule makes
  /// of the same nests give right ones.
  void simulationCatchesMissingBarrier() {
    const int64_t n = 64;
    Kernel k;
    k.name = "k0_test";
    k.args = {arg(KernelArg::Role::Input, "x", {n}), arg(KernelArg::Role::Scratch, "s", {n}),
              arg(KernelArg::Role::Output, "y", {n})};
    auto X = argBuffer("x", 0, {n}), S = argBuffer("s", 1, {n}), Y = argBuffer("y", 2, {n});
    StmtPtr first = forRange("i", n, store(S, {var("i")}, mul(load(X, {var("i")}), floatImm(2))));
    StmtPtr second =
        forRange("j", n, store(Y, {var("j")}, load(S, {sub(intImm(n - 1), var("j"))})));
    Tensor x = *Tensor::create(DType::F32, {n});
    for (int64_t i = 0; i < n; ++i)
      x.mutableData<float>()[i] = float(i + 1);
    auto expectRight = [&](const std::vector<Tensor>& args, bool right) {
      std::span<const float> y = args[2].data<float>();
      bool ok = true;
      for (int64_t j = 0; j < n; ++j)
        ok &= y[j] == float(2 * (n - j));
      QCOMPARE(ok, right);
    };
    // Right: the schedule makes two launches.
    k.body = block({first, second});
    auto launches = gpuLaunchesOf(k, 0);
    QVERIFY(launches.ok());
    QCOMPARE(launches->size(), size_t(2));
    std::unordered_map<std::string, Tensor> values{{"x", x}};
    QVERIFY(simulateGpuLaunches(Graph(), {k}, *launches, values).ok());
    std::vector<Tensor> args = {x, Tensor(), values.at("y")};
    expectRight(args, true);
    // Wrong: one launch whose threads each write s[i] and read s[n-1-i] (no barrier).
    StmtPtr fused = forLoop("i", intImm(0), intImm(n), ForKind::GpuThreads,
                            block({store(S, {var("i")}, mul(load(X, {var("i")}), floatImm(2))),
                                   store(Y, {var("i")}, load(S, {sub(intImm(n - 1), var("i"))}))}));
    std::vector<Tensor> wrong = {x, *Tensor::create(DType::F32, {n}),
                                 *Tensor::create(DType::F32, {n})};
    QVERIFY(evaluateBody(fused, wrong).ok());
    expectRight(wrong, false);
    // Wrong: a scan y[i] = y[i-1] + x[i] spread over threads.
    StmtPtr scan = forLoop(
        "i", intImm(1), intImm(n - 1), ForKind::GpuThreads,
        store(Y, {var("i")}, add(load(Y, {sub(var("i"), intImm(1))}), load(X, {var("i")}))));
    std::vector<Tensor> scanArgs = {x, *Tensor::create(DType::F32, {n}),
                                    *Tensor::create(DType::F32, {n})};
    scanArgs[2].mutableData<float>()[0] = 1;
    QVERIFY(evaluateBody(scan, scanArgs).ok());
    QVERIFY(scanArgs[2].data<float>()[n - 1] != float(n * (n + 1) / 2));
    // ... which the schedule keeps in one thread.
    StmtPtr scanNest =
        forRange("i", n - 1,
                 store(Y, {add(var("i"), intImm(1))},
                       add(load(Y, {var("i")}), load(X, {add(var("i"), intImm(1))}))));
    StmtPtr scheduled = scheduleNestForGpu(scanNest);
    QCOMPARE(scheduled->extent->intValue, int64_t(1));
  }

  /// PTX for every sample (no GPU needed): kernels are entry points with the thread mapping,
  /// global loads, and no calls left unresolved.
  void ptxForEverySample_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<QString>("arch");
    for (const char* s : kSamples)
      for (const char* a : {"sm_80", "sm_90"})
        QTest::newRow((std::string(s) + " " + a).c_str()) << QString(s) << QString(a);
  }
  void ptxForEverySample() {
    QFETCH(QString, sample);
    QFETCH(QString, arch);
    auto c = loadCase(sample.toStdString(), "O3");
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message().c_str());
    CompileOptions co;
    auto target = TargetInfo::forGpu(arch.toStdString());
    QVERIFY2(target.ok(), target.ok() ? "" : target.error().message().c_str());
    co.target = *target;
    co.specializeInputs = c->inputs;
    auto model = CompiledModel::compile(*c->optimized, co);
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
    size_t first = 0; // the first kernel with code (control flow runs on the host)
    while (first + 1 < (*model)->kernels().size() && (*model)->kernels()[first].interpreted)
      ++first;
    auto code = (*model)->kernelCode(first);
    QVERIFY2(code.ok(), code.ok() ? "" : code.error().message().c_str());
    QVERIFY(code->assembly.find(".target " + arch.toStdString()) != std::string::npos);
    QVERIFY(code->assembly.find(".entry") != std::string::npos);
    QVERIFY(code->assembly.find("%tid.x") != std::string::npos);
    QVERIFY(code->assembly.find(".extern") == std::string::npos);
    QVERIFY(code->loops.find("gpu_threads(") != std::string::npos ||
            code->loops.find("gpu_blocks(") != std::string::npos);
    if (!gpu::cudaAvailable().ok()) {
      QVERIFY(!(*model)->runnable());
      auto run = (*model)->run(c->inputs);
      QVERIFY(!run.ok());
      QVERIFY2(run.error().message().find("no CUDA device") != std::string::npos,
               run.error().message().c_str());
    }
  }

  /// With a CUDA device: every sample runs on it, matches the interpreter, runs again the same,
  /// and profiles one event per kernel per run.
  void runsOnDevice_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<QString>("pipeline");
    for (const char* s : kSamples)
      for (const char* p : {"O0", "O3"})
        QTest::newRow((std::string(s) + " " + p).c_str()) << QString(s) << QString(p);
  }
  void runsOnDevice() {
    Status available = gpu::cudaAvailable();
    if (!available.ok())
      QSKIP(("skipped: " + available.error().message()).c_str());
    QFETCH(QString, sample);
    QFETCH(QString, pipeline);
    auto c = loadCase(sample.toStdString(), pipeline.toStdString());
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message().c_str());
    auto driver = gpu::cudaDriver();
    QVERIFY(driver.ok());
    auto info = (*driver)->deviceInfo(0);
    QVERIFY(info.ok());
    CompileOptions co;
    auto target = TargetInfo::forGpu(info->smName());
    co.target = target.ok() ? *target : *TargetInfo::forGpu("sm_90");
    co.specializeInputs = c->inputs;
    auto model = CompiledModel::compile(*c->optimized, co);
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
    QVERIFY((*model)->runnable());
    Profile profile = (*model)->newProfile();
    auto got = (*model)->run(c->inputs, &profile);
    QVERIFY2(got.ok(), got.ok() ? "" : got.error().message().c_str());
    std::string diff = compareOutputs(c->reference, *got);
    QVERIFY2(diff.empty(), diff.c_str());
    auto again = (*model)->run(c->inputs);
    QVERIFY(again.ok());
    QVERIFY(compareOutputs(*got, *again).empty());
    QCOMPARE(profile.events.size(), (*model)->kernels().size());
    for (const KernelEvent& e : profile.events)
      QVERIFY(e.durationUs >= 0);
  }
};

QTEST_GUILESS_MAIN(TestGpuBackend)
#include "TestGpuBackend.moc"
