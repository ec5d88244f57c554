// Tests of the workbench's operations on a snapshot: compile (with every kernel's code and
// provenance), emit, run, benchmark, profile, compare, progress and cancellation.
#include "app/workbench/Compare.h"
#include "app/workbench/Emit.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/Run.h"
#include "app/workbench/Session.h"
#include "core/Interpreter.h"

#include <QtTest/QtTest>

#include <set>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string sample(const char* name) { return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name; }

/// The sample after `pipeline`, as the GUI and the CLI would hold it.
std::shared_ptr<const Graph> optimized(const char* name, const std::string& pipeline) {
  Session s;
  if (!s.load(sample(name)).ok() || !s.setPipeline(pipeline).ok() || !s.runPipeline().ok())
    return nullptr;
  return s.graph(s.snapshotCount() - 1);
}

/// The original node ids (provenance) that node `n` computes: its ops' provenance, or their
/// own ids when they were never rewritten; a fused group contributes its body's ops.
std::set<NodeId> originalIds(const Node& n) {
  std::vector<const Node*> members;
  if (n.body())
    for (const auto& inner : n.body()->nodes())
      members.push_back(inner.get());
  else
    members.push_back(&n);
  std::set<NodeId> ids;
  for (const Node* m : members) {
    if (m->provenance().empty())
      ids.insert(m->id());
    else
      ids.insert(m->provenance().begin(), m->provenance().end());
  }
  return ids;
}

RunSettings cpuSettings() {
  RunSettings r;
  r.backend = Backend::Cpu;
  return r;
}

} // namespace

class TestOperations : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Every kernel carries its loops, LLVM IR before and after optimization, assembly and the
  /// graph nodes it computes; together the kernels cover every op of the graph once.
  void compiledKernelsCarryTheirCodeAndProvenance() {
    for (const char* name : {"small_cnn.onnx", "mobilenet_v2_block.onnx", "transformer_block.onnx"}) {
      auto g = optimized(name, "O3");
      QVERIFY(g);
      auto inputs = gatherInputs(*g, {}, 1, {});
      QVERIFY(inputs.ok());
      auto model = compileGraph(*g, CompileSettings{}, *inputs);
      QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
      // One kernel per top-level node, in the graph's order.
      QCOMPARE((*model)->kernels().size(), g->nodes().size());
      bool sawGemm = false;
      for (size_t k = 0; k < (*model)->kernels().size(); ++k) {
        auto code = (*model)->kernelCode(k);
        QVERIFY2(code.ok(), code.ok() ? "" : code.error().message().c_str());
        QCOMPARE(code->name, (*model)->kernels()[k].name);
        QVERIFY2(code->loops.find("kernel " + code->name + "(") == 0, code->loops.c_str());
        QVERIFY(code->llvmRaw.find("define void @" + code->name) != std::string::npos);
        QVERIFY(code->llvmOptimized.find("define void @" + code->name) != std::string::npos);
        QVERIFY(code->llvmOptimized != code->llvmRaw);
        QVERIFY2(code->assembly.find(code->name + ":") != std::string::npos, code->name.c_str());
        // Provenance: the original ops of the imported model this kernel computes.
        const std::set<NodeId> expected = originalIds(*g->nodes()[k]);
        QCOMPARE(std::set<NodeId>(code->nodes.begin(), code->nodes.end()), expected);
        if (code->generator == "gemm") {
          sawGemm = true;
          QVERIFY2(code->blocking.find("mr=") == 0, code->blocking.c_str());
          QVERIFY(code->loops.find("blocking: " + code->blocking) != std::string::npos);
        }
        QVERIFY(code->schedule.empty()); // default schedules
      }
      QVERIFY2(sawGemm, name);
    }
  }

  /// A schedule override travels as a typed value and shows in the kernel's code.
  void scheduleOverridesAreTypedAndShown() {
    auto g = optimized("small_cnn.onnx", "O3");
    QVERIFY(g);
    CompileSettings s;
    s.useGemm = false; // the MaxPool compiles from its loop nest, which the override tiles
    auto parsed = cg::parseScheduleOverrides("k1:none,tile=4x4");
    QVERIFY(parsed.ok());
    s.schedule = *parsed;
    QCOMPARE(cg::printScheduleOverrides(s.schedule), std::string("k1:none,tile=4x4"));
    auto model = compileGraph(*g, s, {});
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
    auto code = (*model)->kernelCode(1);
    QVERIFY(code.ok());
    QCOMPARE(code->schedule, std::string("none,tile=4x4"));
    QCOMPARE(code->generator, std::string("loops"));
    QVERIFY2(code->loops.find("for c_o, oh_o, c_i, oh_i in grid(4, 4, 4, 4):") != std::string::npos,
             code->loops.c_str());
    QVERIFY((*model)->kernelCode(0)->schedule.empty());
    auto bad = cg::parseScheduleOverrides("k0:explode=3");
    QVERIFY(!bad.ok());
    QVERIFY(bad.error().message().find("unknown directive 'explode'") != std::string::npos);
    // An override naming no kernel fails the compilation and says so.
    s.schedule = *cg::parseScheduleOverrides("k99:none");
    auto refused = compileGraph(*g, s, {});
    QVERIFY(!refused.ok());
    QVERIFY(refused.error().message().find("no kernel is named k99") != std::string::npos);
  }

  /// Compiled outputs agree with the interpreter; a benchmark counts its runs; a profile
  /// has one row per kernel; the interpreter and the CPU see the same inputs.
  void runsBenchmarksAndProfiles() {
    auto g = optimized("resnet_block.onnx", "O3");
    QVERIFY(g);
    auto inputs = gatherInputs(*g, {}, 7, {});
    QVERIFY(inputs.ok());
    RunSettings interp;
    auto ref = runGraph(*g, *inputs, interp);
    QVERIFY(ref.ok());
    QVERIFY(!ref->compiled);
    RunSettings cpu = cpuSettings();
    cpu.benchRuns = 5;
    cpu.profile = true;
    auto got = runGraph(*g, *inputs, cpu);
    QVERIFY2(got.ok(), got.ok() ? "" : got.error().message().c_str());
    auto cmp = compareOutputs(*g, ref->outputs, got->outputs, std::nullopt);
    QVERIFY(cmp.ok());
    QVERIFY(cmp->ok);
    QVERIFY(got->bench && got->bench->runs == 5);
    QVERIFY(got->bench->minMs <= got->bench->medianMs && got->bench->medianMs <= got->bench->maxMs);
    QVERIFY(got->compileStats && got->compileStats->kernels > 0);
    QVERIFY(got->profile);
    QCOMPARE(got->profile->kernels.size(), got->compiled->kernels().size());
    QCOMPARE(got->profile->runs.size(), size_t(5));
    // A wrong output is caught: perturb one element.
    std::vector<Tensor> wrong = got->outputs;
    wrong[0].mutableData<float>()[0] += 1.0f;
    auto bad = compareOutputs(*g, ref->outputs, wrong, std::nullopt);
    QVERIFY(bad.ok());
    QVERIFY(!bad->ok);
    // The interpreter profiles nothing; without a CUDA device the GPU says so.
    interp.profile = true;
    QVERIFY(!runGraph(*g, *inputs, interp).ok());
    RunSettings gpu;
    gpu.backend = Backend::Gpu;
    gpu.profile = true;
    auto onGpu = runGraph(*g, *inputs, gpu);
    if (!backendAvailable(Backend::Gpu).ok()) {
      QVERIFY(!onGpu.ok());
      QVERIFY2(onGpu.error().message().find("no CUDA device") != std::string::npos,
               onGpu.error().message().c_str());
    } else {
      QVERIFY2(onGpu.ok(), onGpu.ok() ? "" : onGpu.error().message().c_str());
      QVERIFY(onGpu->profile.has_value());
    }
  }

  /// Progress arrives in order and ends at 1; a cancelled job stops with an error that says so.
  void reportsProgressAndCancels() {
    auto g = optimized("small_cnn.onnx", "O2");
    QVERIFY(g);
    auto inputs = gatherInputs(*g, {}, 1, {});
    QVERIFY(inputs.ok());
    std::vector<double> fractions;
    std::vector<std::string> stages;
    JobControl job([&](double f, const std::string& what) {
      fractions.push_back(f);
      stages.push_back(what);
    });
    CompileSettings fresh;
    fresh.useCache = false;
    auto model = compileGraph(*g, fresh, *inputs, &job);
    QVERIFY(model.ok());
    QVERIFY(fractions.size() >= 4);
    QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
    QCOMPARE(fractions.back(), 1.0);
    QVERIFY(std::find(stages.begin(), stages.end(), "compile: jit") != stages.end());

    JobControl cancelled;
    cancelled.cancel();
    auto none = compileGraph(*g, fresh, *inputs, &cancelled);
    QVERIFY(!none.ok());
    QVERIFY(none.error().message().find("cancelled") != std::string::npos);

    // Cancel in the middle of a benchmark, from the progress callback.
    JobControl* self = nullptr;
    JobControl midway([&](double, const std::string& what) {
      if (what.rfind("run 2 of", 0) == 0)
        self->cancel();
    });
    self = &midway;
    RunSettings bench = cpuSettings();
    bench.benchRuns = 1000;
    auto stopped = runGraph(*g, *inputs, bench, &midway);
    QVERIFY(!stopped.ok());
    QVERIFY2(stopped.error().message().find("benchmark cancelled") != std::string::npos,
             stopped.error().message().c_str());
  }

  /// Code for another CPU: the baseline x86-64 runs everywhere; a CPU whose features the host
  /// lacks compiles for reading (kernel code) but refuses to run.
  void compilesForAnotherCpu() {
    auto g = optimized("mlp.onnx", "O3");
    QVERIFY(g);
    auto inputs = gatherInputs(*g, {}, 1, {});
    QVERIFY(inputs.ok());
    CompileSettings baseline;
    baseline.cpu = "x86-64";
    auto target = targetFor(baseline);
    QVERIFY(target.ok());
    QVERIFY(target->runsOnHost());
    QVERIFY(cg::TargetInfo::host().runsOnHost());
    // Another CPU's AVX2 code path runs on any host with AVX2 and FMA (the benchmark's --cpu
    // column), even where a virtual machine hides system instructions such as mwaitx.
    if (cg::TargetInfo::host().hasAvx2Fma()) {
      CompileSettings haswell;
      haswell.cpu = "haswell";
      auto t = targetFor(haswell);
      QVERIFY(t.ok());
      QVERIFY(t->runsOnHost());
    }
    CompileSettings unknown;
    unknown.cpu = "no-such-cpu";
    QVERIFY(!targetFor(unknown).ok());
    for (const char* cpu : {"graniterapids", "x86-64-v4"}) {
      CompileSettings s;
      s.cpu = cpu;
      auto t = targetFor(s);
      QVERIFY(t.ok());
      auto model = compileGraph(*g, s, *inputs);
      QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
      QCOMPARE((*model)->runnable(), t->runsOnHost());
      QCOMPARE((*model)->target().cpu, std::string(cpu));
      auto code = (*model)->kernelCode(0);
      QVERIFY(code.ok());
      QVERIFY(code->llvmOptimized.find(std::string("\"target-cpu\"=\"") + cpu + "\"") !=
              std::string::npos);
      auto ran = (*model)->run(*inputs);
      QCOMPARE(ran.ok(), t->runsOnHost());
      if (!ran.ok())
        QVERIFY(ran.error().message().find("can be read, not run") != std::string::npos);
    }
  }

  /// emitCode gives each view of the whole model; PTX is refused until the GPU backend exists.
  void emitsEveryKind() {
    auto g = optimized("small_cnn.onnx", "O3");
    QVERIFY(g);
    for (CodeKind kind : {CodeKind::Loops, CodeKind::Llvm, CodeKind::LlvmRaw, CodeKind::Assembly}) {
      EmitRequest r;
      r.kind = kind;
      auto code = emitCode(*g, r);
      QVERIFY2(code.ok(), code.ok() ? "" : code.error().message().c_str());
      QVERIFY(code->kernels > 0);
      QVERIFY2(!code->text.empty(), codeKindName(kind));
      QCOMPARE(codeKindFromName(codeKindName(kind)), std::optional<CodeKind>(kind));
    }
    EmitRequest obj;
    obj.kind = CodeKind::Object;
    obj.headerGuard = "SMALL_CNN_H";
    auto o = emitCode(*g, obj);
    QVERIFY(o.ok());
    QCOMPARE(o->object.substr(0, 4), std::string("\x7f" "ELF"));
    QVERIFY(o->header.find("SMALL_CNN_H") != std::string::npos);
    QVERIFY(!o->weights.empty());
    EmitRequest ptx;
    ptx.kind = CodeKind::Ptx;
    ptx.settings.gpu = "sm_80";
    auto p = emitCode(*g, ptx);
    QVERIFY2(p.ok(), p.ok() ? "" : p.error().message().c_str());
    QVERIFY(p->text.find(".target sm_80") != std::string::npos);
    QVERIFY(p->text.find(".visible .entry") != std::string::npos);
    ptx.settings.gpu = "sm_1";
    QVERIFY(!emitCode(*g, ptx).ok());
  }

  /// The session runs a whole pipeline as fusebox-opt does; symbolic dims are bound first, or
  /// the failure says it is about symbolic shapes and where the reproducer went.
  void sessionRunsPipelinesAndBindsDims() {
    QTemporaryDir dir;
    Session s;
    QVERIFY(s.load(sample("dynamic_batch.onnx")).ok());
    QVERIFY(s.setPipeline("canonicalize,plan-memory").ok());
    s.passManagerOptions().reproducerDir = dir.path().toStdString();
    Status failed = s.runPipeline();
    QVERIFY(!failed.ok());
    QCOMPARE(failed.error().kind(), ErrorKind::SymbolicShape);
    QCOMPARE(s.snapshotCount(), size_t(2)); // canonicalize's snapshot stays
    QVERIFY(!s.reproducerPath().empty());
    QVERIFY(QFile::exists(QString::fromStdString(s.reproducerPath())));

    QVERIFY(s.bindDims({{"N", 2}}).ok());
    QCOMPARE(s.snapshotCount(), size_t(1));
    QVERIFY(s.runPipeline().ok());
    QCOMPARE(s.snapshotCount(), size_t(3));
    QVERIFY(s.summary(2).stats.peakActivationBytes > 0);
  }

  /// The numeric diff operation is the one the session's numeric diff uses.
  void numericDiffMatchesTheSession() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    QVERIFY(s.setPipeline("canonicalize,fold-batchnorm,fuse").ok());
    QVERIFY(s.runPipeline().ok());
    auto viaSession = s.numericDiff(0, 3, 1);
    QVERIFY(viaSession.ok());
    auto inputs = gatherInputs(*s.graph(0), {}, 1, {});
    QVERIFY(inputs.ok());
    auto direct = numericDiffGraphs(*s.graph(0), *s.graph(3), *inputs, std::nullopt);
    QVERIFY(direct.ok());
    QCOMPARE(direct->values.size(), viaSession->values.size());
    QCOMPARE(direct->ok(), viaSession->ok());
  }
};

QTEST_GUILESS_MAIN(TestOperations)
#include "TestOperations.moc"
