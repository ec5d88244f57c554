// Tests of the workbench's code-view and schedule-editor operations: kernel sections in the
// whole-model code, kernel schedules as compiled, schedule trials, and the session's overrides.
#include "app/workbench/Inputs.h"
#include "app/workbench/KernelSchedule.h"
#include "app/workbench/ModelCode.h"
#include "app/workbench/ScheduleTrial.h"
#include "app/workbench/Session.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string sample(const char* name) { return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name; }

std::shared_ptr<const Graph> optimized(const char* name, const std::string& pipeline) {
  Session s;
  if (!s.load(sample(name)).ok() || !s.setPipeline(pipeline).ok() || !s.runPipeline().ok())
    return nullptr;
  return s.graph(s.snapshotCount() - 1);
}

const char* msg(const Error& e) { return e.message().c_str(); }

/// Lines [first, first + count) of `text`, each with its newline.
std::string linesOf(const std::string& text, size_t first, size_t count) {
  std::string out;
  size_t line = 0, start = 0;
  while (start < text.size() && line < first + count) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    if (line >= first)
      out += text.substr(start, end - start);
    start = end;
    ++line;
  }
  return out;
}

} // namespace

class TestKernelCode : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Every kernel with code has its own section in each kind's whole-model text: sections are
  /// ordered and disjoint, hold the kernel's function and no other kernel's, and map lines and
  /// nodes back to the kernel. The loops section is exactly the compiled kernel's loop text.
  void sectionsLocateEachKernel() {
    auto g = optimized("resnet_block.onnx", "O3");
    QVERIFY(g);
    auto inputs = gatherInputs(*g, {}, 1, {});
    QVERIFY(inputs.ok());
    auto model = compileGraph(*g, CompileSettings{}, *inputs);
    QVERIFY2(model.ok(), model.ok() ? "" : msg(model.error()));
    for (CodeKind kind : {CodeKind::Loops, CodeKind::LlvmRaw, CodeKind::Llvm, CodeKind::Assembly}) {
      EmitRequest r;
      r.kind = kind;
      auto code = emitModelCode(*g, r);
      QVERIFY2(code.ok(), code.ok() ? "" : msg(code.error()));
      const auto& kernels = code->code.kernelList;
      QCOMPARE(kernels.size(), g->nodes().size());
      QCOMPARE(code->sections.size(), kernels.size());
      size_t previousEnd = 0;
      for (size_t k = 0; k < kernels.size(); ++k) {
        QCOMPARE(kernels[k].node, g->nodes()[k]->id());
        QCOMPARE(kernels[k].name, (*model)->kernels()[k].name);
        const CodeSection& s = code->sections[k];
        QVERIFY2(s.lineCount > 0, kernels[k].name.c_str());
        QVERIFY2(s.firstLine >= previousEnd, codeKindName(kind));
        previousEnd = s.firstLine + s.lineCount;
        QCOMPARE(code->kernelAtLine(s.firstLine), int(k));
        QCOMPARE(code->kernelAtLine(s.firstLine + s.lineCount - 1), int(k));
        QCOMPARE(code->kernelOfNode(kernels[k].node), int(k));
        for (NodeId inner : kernels[k].nodes)
          QCOMPARE(code->kernelOfNode(inner), int(k));
        const std::string text = code->sectionText(k);
        QCOMPARE(text, linesOf(code->code.text, s.firstLine, s.lineCount));
        const std::string& name = kernels[k].name;
        switch (kind) {
        case CodeKind::Loops:
          QCOMPARE(text, (*model)->kernelCode(k)->loops);
          break;
        case CodeKind::LlvmRaw:
        case CodeKind::Llvm:
          QVERIFY(text.find("define void @" + name + "(") != std::string::npos);
          break;
        case CodeKind::Assembly:
          QVERIFY(text.find("\n" + name + ":") != std::string::npos);
          QVERIFY(text.find(".size\t" + name + ",") != std::string::npos);
          break;
        default: break;
        }
        for (size_t other = 0; other < kernels.size(); ++other)
          if (other != k)
            QVERIFY2(text.find(kernels[other].name + (kind == CodeKind::Loops ? "(" : ":")) ==
                             std::string::npos ||
                         kind == CodeKind::LlvmRaw || kind == CodeKind::Llvm,
                     (name + " holds " + kernels[other].name).c_str());
      }
      QCOMPARE(code->kernelOfNode(0), -1);
      QCOMPARE(code->kernelOfNode(NodeId(0xFFFFFFF0u)), -1);
    }
    // PTX (no GPU needed): each kernel's section holds its entry points, and only its own.
    EmitRequest ptx;
    ptx.kind = CodeKind::Ptx;
    ptx.settings.gpu = "sm_90";
    auto code = emitModelCode(*g, ptx);
    QVERIFY2(code.ok(), code.ok() ? "" : code.error().message().c_str());
    QVERIFY(code->code.text.find(".target sm_90") != std::string::npos);
    for (size_t k = 0; k < code->code.kernelList.size(); ++k) {
      if (code->code.kernelList[k].interpreted)
        continue;
      const std::string text = code->sectionText(k);
      const std::string& name = code->code.kernelList[k].name;
      QVERIFY2(text.find(".entry " + name) != std::string::npos, (name + ": " + text.substr(0, 200)).c_str());
      for (size_t other = 0; other < code->code.kernelList.size(); ++other)
        if (other != k)
          QVERIFY2(text.find(".entry " + code->code.kernelList[other].name + "(") == std::string::npos,
                   (name + " holds " + code->code.kernelList[other].name).c_str());
    }
  }

  /// Hand-written texts pin the rules: comment lines above a define belong to it, declarations
  /// between functions to none, constant pools to the function after them, headers to none.
  void sectionRulesOnSmallTexts() {
    std::vector<EmittedKernel> kernels = {{"k0_relu", "Relu", 5, {5}, false},
                                          {"k1_conv", "Conv", 6, {6}, false}};
    const std::string llvm = "; ModuleID = 'model'\n"           // 0
                             "\n"                                // 1
                             "; Function Attrs: nounwind\n"     // 2
                             "define void @k0_relu(ptr %a) {\n" // 3
                             "  ret void\n"                      // 4
                             "}\n"                               // 5
                             "\n"                                // 6
                             "declare void @fb_parallel_for(ptr, ptr, i64)\n" // 7
                             "define internal void @k1_conv.worker(ptr %c) {\n" // 8
                             "  ret void\n"                      // 9
                             "}\n"                               // 10
                             "define void @k1_conv(ptr %a) {\n" // 11
                             "  ret void\n"                      // 12
                             "}\n"                               // 13
                             "!0 = !{}\n";                       // 14
    auto s = locateKernelSections(CodeKind::Llvm, llvm, kernels);
    QCOMPARE(s[0].firstLine, size_t(2));
    QCOMPARE(s[0].lineCount, size_t(4));
    QCOMPARE(s[1].firstLine, size_t(8));
    QCOMPARE(s[1].lineCount, size_t(6));
    const std::string asmText = "# 2 kernels\n"                 // 0
                                "\t.text\n"                      // 1
                                "\t.file\t\"model\"\n"           // 2
                                "\t.globl\tk0_relu\n"            // 3
                                "\t.type\tk0_relu,@function\n"   // 4
                                "k0_relu:\n"                     // 5
                                "\tretq\n"                       // 6
                                ".Lfunc_end0:\n"                 // 7
                                "\t.size\tk0_relu, .Lfunc_end0-k0_relu\n" // 8
                                "\t.section\t.rodata.cst4,\"aM\",@progbits,4\n" // 9
                                ".LCPI1_0:\n"                    // 10
                                "\t.long\t0x3f800000\n"          // 11
                                "\t.text\n"                      // 12
                                "\t.type\tk1_conv,@function\n"   // 13
                                "k1_conv:\n"                     // 14
                                "\tretq\n"                       // 15
                                "\t.size\tk1_conv, .Lfunc_end1-k1_conv\n" // 16
                                "\t.section\t\".note.GNU-stack\"\n"; // 17
    s = locateKernelSections(CodeKind::Assembly, asmText, kernels);
    QCOMPARE(s[0].firstLine, size_t(3));
    QCOMPARE(s[0].lineCount, size_t(6));
    QCOMPARE(s[1].firstLine, size_t(9));
    QCOMPARE(s[1].lineCount, size_t(8));
    const std::string loops = "kernel k0_relu(in x: f32[4]):\n  # Relu\n\n"
                              "kernel k1_conv(in x: f32[4]):\n  # Conv\n  y = x\n";
    s = locateKernelSections(CodeKind::Loops, loops, kernels);
    QCOMPARE(s[0].firstLine, size_t(0));
    QCOMPARE(s[0].lineCount, size_t(2));
    QCOMPARE(s[1].firstLine, size_t(3));
    QCOMPARE(s[1].lineCount, size_t(3));
    // A kernel with no function in the text has an empty section.
    s = locateKernelSections(CodeKind::Llvm, "define void @k0_relu() {\n}\n", kernels);
    QCOMPARE(s[1].lineCount, size_t(0));
  }

  /// The schedule each kernel is compiled with: its loop nest, GEMM blocking for GEMM-class
  /// kernels, and an override's directives and blocking when one is applied.
  void describesSchedules() {
    auto g = optimized("resnet_block.onnx", "O3");
    QVERIFY(g);
    auto kernels = describeSchedules(*g, CompileSettings{});
    QVERIFY2(kernels.ok(), kernels.ok() ? "" : msg(kernels.error()));
    QCOMPARE(kernels->size(), g->nodes().size());
    EmitRequest loops;
    auto code = emitModelCode(*g, loops);
    QVERIFY(code.ok());
    const KernelSchedule* gemm = nullptr;
    for (const KernelSchedule& k : *kernels) {
      QCOMPARE(k.node, g->nodes()[k.index]->id());
      QCOMPARE(k.loopsText, code->sectionText(k.index));
      QVERIFY(k.override.empty());
      QVERIFY2(!k.loops.empty(), k.kernel.c_str());
      QCOMPARE(k.loops.front().depth, 0);
      if (k.gemm && !gemm)
        gemm = &k;
    }
    QVERIFY(gemm);
    QVERIFY(gemm->mr > 0 && gemm->nr > 0 && gemm->mc > 0 && gemm->kc > 0 && gemm->nc > 0);
    QVERIFY2(gemm->blocking.find("mr=" + std::to_string(gemm->mr)) == 0, gemm->blocking.c_str());
    QVERIFY(gemm->loopsText.find("parallel(") != std::string::npos);
    bool sawParallel = false;
    for (const LoopDescription& l : gemm->loops)
      sawParallel |= l.kind == "parallel";
    QVERIFY(sawParallel);

    CompileSettings tuned;
    tuned.schedule = *cg::parseScheduleOverrides(gemm->kernel + ":mr=4,nr=8,kc=64");
    auto changed = describeSchedules(*g, tuned);
    QVERIFY2(changed.ok(), changed.ok() ? "" : msg(changed.error()));
    const KernelSchedule& t = (*changed)[gemm->index];
    QCOMPARE(t.override, std::string("mr=4,nr=8,kc=64"));
    QCOMPARE(t.mr, int64_t(4));
    QCOMPARE(t.nr, int64_t(8));
    QCOMPARE(t.kc, int64_t(64));
    QVERIFY(t.loopsText != gemm->loopsText); // the blocking comment says so
  }

  /// withOverride replaces, appends and removes one kernel's entry and keeps the others.
  void overrideListEdits() {
    auto list = *cg::parseScheduleOverrides("k1_a:none;k2_b:tile=4x4");
    auto replaced = withOverride(list, {"k1_a", {{"vectorize", "8"}}});
    QCOMPARE(cg::printScheduleOverrides(replaced), std::string("k1_a:vectorize=8;k2_b:tile=4x4"));
    auto appended = withOverride(list, {"k3_c", {{"unroll", "2"}}});
    QCOMPARE(cg::printScheduleOverrides(appended), std::string("k1_a:none;k2_b:tile=4x4;k3_c:unroll=2"));
    auto removed = withOverride(list, {"k1_a", {}});
    QCOMPARE(cg::printScheduleOverrides(removed), std::string("k2_b:tile=4x4"));
    QCOMPARE(cg::printScheduleOverrides(withOverride({}, {"k9_z", {}})), std::string());
  }

  /// A trial compiles both schedules, shows the kernel's code from each, and times the kernel
  /// in both, run by run; a tile on a loop kernel changes its loops and code; a register tile
  /// on a GEMM kernel changes its blocking and code; a bad directive fails and says which.
  void triesSchedules() {
    auto g = optimized("resnet_block.onnx", "O3");
    QVERIFY(g);
    auto kernels = describeSchedules(*g, CompileSettings{});
    QVERIFY(kernels.ok());
    const KernelSchedule* gemm = nullptr;
    for (const KernelSchedule& k : *kernels)
      if (k.gemm)
        gemm = &k;
    QVERIFY(gemm);
    ScheduleTrialRequest req;
    req.change = {gemm->kernel, {{"mr", "4"}, {"nr", "8"}}};
    req.runs = 5;
    req.warmupRuns = 1;
    auto trial = trySchedule(*g, req);
    QVERIFY2(trial.ok(), trial.ok() ? "" : msg(trial.error()));
    QCOMPARE(trial->kernel, gemm->index);
    QCOMPARE(trial->before.code.name, gemm->kernel);
    QVERIFY(trial->before.code.schedule.empty());
    QCOMPARE(trial->after.code.schedule, std::string("mr=4,nr=8"));
    QVERIFY2(trial->after.code.blocking.find("mr=4 nr=8") == 0, trial->after.code.blocking.c_str());
    QVERIFY(trial->before.code.assembly != trial->after.code.assembly);
    QCOMPARE(trial->before.schedule, std::string());
    QCOMPARE(trial->after.schedule, gemm->kernel + ":mr=4,nr=8");
    QCOMPARE(cg::printScheduleOverrides(trial->afterOverrides), trial->after.schedule);
    for (const ScheduleVariant* v : {&trial->before, &trial->after}) {
      QCOMPARE(v->timing.us.size(), size_t(5));
      QVERIFY(v->timing.medianUs > 0);
      QVERIFY(v->timing.minUs <= v->timing.medianUs && v->timing.medianUs <= v->timing.maxUs);
    }

    // A loop kernel (the generators off, so the MaxPool compiles from its nest): a tile on the
    // textbook nest changes the loops and code.
    auto small = optimized("small_cnn.onnx", "O3");
    QVERIFY(small);
    CompileSettings loopsOnly;
    loopsOnly.useGemm = false;
    auto smallKernels = describeSchedules(*small, loopsOnly);
    QVERIFY(smallKernels.ok());
    const KernelSchedule* pool = nullptr;
    for (const KernelSchedule& k : *smallKernels)
      if (!pool && k.opSummary == "MaxPool") // the first max pooling
        pool = &k;
    QVERIFY(pool);
    req.settings = loopsOnly;
    req.change = {pool->kernel, {{"none", ""}, {"tile", "4x4"}}};
    auto tiled = trySchedule(*small, req);
    QVERIFY2(tiled.ok(), tiled.ok() ? "" : msg(tiled.error()));
    QVERIFY(tiled->before.code.loops != tiled->after.code.loops);
    QVERIFY2(tiled->after.code.loops.find("_o") != std::string::npos, tiled->after.code.loops.c_str());
    QVERIFY(tiled->before.code.llvmOptimized != tiled->after.code.llvmOptimized);
    QVERIFY(tiled->after.timing.medianUs > 0);

    req.change = {pool->kernel, {{"vectorize", "no_such_loop/8"}}};
    auto bad = trySchedule(*small, req);
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().message().find("vectorize=no_such_loop/8") != std::string::npos, msg(bad.error()));
    req.change = {"k99_nothing", {{"none", ""}}};
    QVERIFY(!trySchedule(*small, req).ok());

    JobControl cancelled;
    cancelled.cancel();
    req.change = {pool->kernel, {{"none", ""}}};
    auto stopped = trySchedule(*small, req, &cancelled);
    QVERIFY(!stopped.ok());
    QVERIFY(stopped.error().message().find("cancelled") != std::string::npos);
  }

  /// kernelTiming's median of an even count is the mean of the middle two.
  void timingStatistics() {
    TrialTiming t = trialTiming({5, 1, 4, 2});
    QCOMPARE(t.medianUs, 3.0);
    QCOMPARE(t.minUs, 1.0);
    QCOMPARE(t.maxUs, 5.0);
    QCOMPARE(t.us.size(), size_t(4));
    QCOMPARE(trialTiming({7}).medianUs, 7.0);
    QCOMPARE(trialTiming({}).medianUs, 0.0);
  }

  /// The session keeps overrides per snapshot, prints them as --schedule text that parses back,
  /// and drops them with their snapshot.
  void sessionKeepsOverridesPerSnapshot() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    QVERIFY(s.setPipeline("O3").ok());
    QVERIFY(s.runPipeline().ok());
    const size_t last = s.snapshotCount() - 1;
    auto list = *cg::parseScheduleOverrides("k1_maxpool:none,tile=4x4;k0_conv_relu:mr=4");
    s.setScheduleOverrides(last, list);
    QCOMPARE(s.scheduleText(last), std::string("k1_maxpool:none,tile=4x4;k0_conv_relu:mr=4"));
    QCOMPARE(*cg::parseScheduleOverrides(s.scheduleText(last)), list);
    QVERIFY(s.scheduleOverrides(0).empty());
    QVERIFY(s.scheduleOverrides(last + 5).empty());
    s.setScheduleOverrides(last, {});
    QVERIFY(s.scheduleText(last).empty());
    s.setScheduleOverrides(last, list);
    // Loading another model drops the snapshot, and its overrides with it.
    QVERIFY(s.load(sample("mlp.onnx")).ok());
    QVERIFY(s.scheduleOverrides(0).empty());
    QVERIFY(s.runPipeline().ok());
    QVERIFY(s.scheduleOverrides(s.snapshotCount() - 1).empty());
  }
};

QTEST_GUILESS_MAIN(TestKernelCode)
#include "TestKernelCode.moc"
