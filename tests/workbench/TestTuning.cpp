// Tests of auto-tuning: kernel signatures, the tuning log's file format and its use by later
// compilations, and a budgeted tuning run whose results still equal the interpreter's.
#include "app/workbench/Compare.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/KernelSchedule.h"
#include "app/workbench/KernelSignature.h"
#include "app/workbench/Session.h"
#include "app/workbench/Tuning.h"
#include "app/workbench/TuningLog.h"
#include "core/Interpreter.h"
#include "core/text/IrParser.h"

#include <QtTest/QtTest>

#include <chrono>
#include <fstream>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string sample(const char* name) {
  return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name;
}

std::shared_ptr<const Graph> optimized(const char* name, const std::string& pipeline) {
  Session s;
  if (!s.load(sample(name)).ok() || !s.setPipeline(pipeline).ok() || !s.runPipeline().ok())
    return nullptr;
  return s.graph(s.snapshotCount() - 1);
}

const char* msg(const Error& e) {
  return e.message().c_str();
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// The signature of the node that produces `value` in the graph `text`.
std::string signatureOf(const std::string& text, const std::string& value) {
  auto g = parseGraph(text);
  if (!g.ok())
    return "parse error: " + g.error().message();
  for (const auto& node : (*g)->nodes())
    for (const Value* out : node->outputs())
      if (out->name() == value)
        return kernelSignature(*node);
  return "no value " + value;
}

CompileSettings hostSettings(const std::string& log) {
  CompileSettings s;
  s.tuningLog = log;
  return s;
}

TuningEntry hostEntry(const std::string& signature, const std::string& directives) {
  cg::TargetInfo host = cg::TargetInfo::host();
  return {signature,   host.cpu,       targetIsa(host),
          "Conv+Relu", "k2_conv_relu", "small_cnn.onnx",
          directives,  30.0,           20.0};
}

} // namespace

class TestTuning : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void signatureMatchesTheSameLayerInAnotherGraph() {
    const std::string a = R"(graph @a opset 17 {
  input %x : f32[2, 4]
  const %w : f32[4, 3] = dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]>
  %y : f32[2, 3] = MatMul(%x, %w)  #1
  output %y
})";
    // Another model: other names, ids and weights, a different producer of the operand.
    const std::string b = R"(graph @b opset 17 {
  input %in : f32[2, 4]
  const %weight : f32[4, 3] = dense<[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]>
  %s : f32[2, 4] = Sigmoid(%in)  #7
  %mm : f32[2, 3] = MatMul(%s, %weight)  #9
  output %mm
})";
    const std::string wider = R"(graph @c opset 17 {
  input %x : f32[2, 4]
  const %w : f32[4, 2] = dense<[1, 2, 3, 4, 5, 6, 7, 8]>
  %y : f32[2, 2] = MatMul(%x, %w)  #1
  output %y
})";
    const std::string sa = signatureOf(a, "y"), sb = signatureOf(b, "mm");
    QCOMPARE(QString::fromStdString(sa), QString::fromStdString(sb));
    QVERIFY2(sa.find("MatMul") == 0 && sa.find("const f32[4, 3]") != std::string::npos, sa.c_str());
    QVERIFY(signatureOf(wider, "y") != sa);
    // An attribute is part of what a kernel computes.
    const std::string softmax0 = R"(graph @d opset 17 {
  input %x : f32[2, 4]
  %y : f32[2, 4] = Softmax(%x) {axis = 0}  #1
  output %y
})";
    std::string softmax1 = softmax0;
    softmax1.replace(softmax1.find("axis = 0"), 8, "axis = 1");
    QVERIFY(signatureOf(softmax0, "y") != signatureOf(softmax1, "y"));
  }

  void logRoundTripsThroughItsFile() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("sub/log.json").toStdString();
    TuningLog log;
    log.record(hostEntry("Conv<a>(f32[1])->f32[1]", "mr=4,nr=16"));
    log.record(hostEntry("Relu(f32[\"q\"])->f32[1]", ""));
    log.record(hostEntry("Conv<a>(f32[1])->f32[1]", "mr=6,nr=16,kc=128")); // replaces the first
    QCOMPARE(log.entries.size(), size_t(2));
    auto written = writeTuningLog(path, log);
    QVERIFY2(written.ok(), written.ok() ? "" : msg(written.error()));
    auto read = readTuningLog(path);
    QVERIFY2(read.ok(), read.ok() ? "" : msg(read.error()));
    QCOMPARE(read->entries.size(), size_t(2));
    const TuningEntry& e = read->entries[0];
    QCOMPARE(QString::fromStdString(e.directives), QString("mr=6,nr=16,kc=128"));
    QCOMPARE(e.defaultUs, 30.0);
    QCOMPARE(e.tunedUs, 20.0);
    QCOMPARE(QString::fromStdString(read->entries[1].signature),
             QString("Relu(f32[\"q\"])->f32[1]"));
    QVERIFY(read->find(e.signature, e.cpu, e.isa) != nullptr);
    QVERIFY(read->find(e.signature, "another-cpu", e.isa) == nullptr);
    // A missing file is an empty log, not an error.
    auto missing = readTuningLog(dir.filePath("none.json").toStdString());
    QVERIFY(missing.ok() && missing->entries.empty());
  }

  void malformedLogIsAnErrorNamingFileAndProblemAndCompilesIgnoreIt() {
    QVERIFY(!parseTuningLog("{").ok());
    QVERIFY(!parseTuningLog("[]").ok());
    auto wrongFormat = parseTuningLog(R"({"format": "other", "version": 1, "entries": []})");
    QVERIFY(!wrongFormat.ok() && wrongFormat.error().message().find("format") != std::string::npos);
    auto noCpu = parseTuningLog(
        R"({"format": "fusebox-tuning-log", "version": 1, "entries": [{"signature": "s", "isa": "a", "directives": ""}]})");
    QVERIFY(!noCpu.ok());
    QVERIFY2(noCpu.error().message().find("entry 0 has no \"cpu\"") != std::string::npos,
             msg(noCpu.error()));
    auto badDirective = parseTuningLog(
        R"({"format": "fusebox-tuning-log", "version": 1, "entries": [{"signature": "s", "cpu": "c", "isa": "a", "directives": "bogus=1"}]})");
    QVERIFY(!badDirective.ok());

    QTemporaryDir dir;
    const std::string path = dir.filePath("bad.json").toStdString();
    writeFile(path, "{\"format\": \"fusebox-tuning-log\", \"version\": 1, \"entries\": [1,]}");
    auto read = readTuningLog(path);
    QVERIFY(!read.ok());
    QVERIFY2(read.error().message().find(path) != std::string::npos &&
                 read.error().message().find("malformed tuning log") != std::string::npos,
             msg(read.error()));
    auto g = optimized("small_cnn.onnx", "O3");
    QVERIFY(g);
    std::string warning;
    CompileSettings settings = hostSettings(path);
    QVERIFY(scheduleWithTuningLog(*g, settings, {}, &warning).empty());
    QVERIFY2(warning.find(path) != std::string::npos, warning.c_str());
    auto inputs = gatherInputs(*g, {}, 1, {});
    QVERIFY(inputs.ok());
    auto model = compileGraph(*g, settings, *inputs);
    QVERIFY2(model.ok(), model.ok() ? "" : msg(model.error()));
  }

  void logEntryChangesTheMatchingKernelAndNoOther() {
    auto g = optimized("small_cnn.onnx", "O3");
    QVERIFY(g);
    auto defaults = describeSchedules(*g, hostSettings("off"));
    QVERIFY2(defaults.ok(), defaults.ok() ? "" : msg(defaults.error()));
    QVERIFY(defaults->size() > 2 && (*defaults)[0].gemm && (*defaults)[2].gemm);
    QVERIFY((*defaults)[2].mr != 4 || (*defaults)[2].nr != 8);
    auto signatures = kernelSignatures(*g, hostSettings("off"), {});
    QVERIFY(signatures.ok());

    QTemporaryDir dir;
    const std::string path = dir.filePath("log.json").toStdString();
    TuningLog log;
    log.record(hostEntry((*signatures)[2], "mr=4,nr=8"));
    QVERIFY(writeTuningLog(path, log).ok());
    auto tuned = describeSchedules(*g, hostSettings(path));
    QVERIFY2(tuned.ok(), tuned.ok() ? "" : msg(tuned.error()));
    QCOMPARE((*tuned)[2].mr, int64_t(4));
    QCOMPARE((*tuned)[2].nr, int64_t(8));
    QCOMPARE(QString::fromStdString((*tuned)[2].override), QString("mr=4,nr=8"));
    for (size_t k = 0; k < tuned->size(); ++k) {
      if (k == 2)
        continue;
      QCOMPARE((*tuned)[k].mr, (*defaults)[k].mr);
      QCOMPARE((*tuned)[k].nr, (*defaults)[k].nr);
      QVERIFY((*tuned)[k].override.empty());
    }
    // An explicit override of the kernel wins over the log.
    CompileSettings explicitSchedule = hostSettings(path);
    explicitSchedule.schedule = *cg::parseScheduleOverrides((*defaults)[2].kernel + ":mr=2,nr=8");
    auto overridden = describeSchedules(*g, explicitSchedule);
    QVERIFY(overridden.ok());
    QCOMPARE((*overridden)[2].mr, int64_t(2));
    // An entry for another CPU applies to nothing.
    TuningLog other;
    TuningEntry e = hostEntry((*signatures)[2], "mr=4,nr=8");
    e.cpu = "not-this-cpu";
    other.record(e);
    QVERIFY(writeTuningLog(path, other).ok());
    auto elsewhere = describeSchedules(*g, hostSettings(path));
    QVERIFY(elsewhere.ok());
    QCOMPARE((*elsewhere)[2].mr, (*defaults)[2].mr);
  }

  void budgetedTuningKeepsResultsAndWritesTheLog() {
    auto g = optimized("small_cnn.onnx", "O3");
    QVERIFY(g);
    QTemporaryDir dir;
    const std::string path = dir.filePath("tuned.json").toStdString();
    TuneRequest request;
    request.settings = hostSettings(path);
    request.budgetSeconds = 1.5;
    request.runs = 3;
    request.modelName = "small_cnn.onnx";
    const auto start = std::chrono::steady_clock::now();
    auto report = tuneGraph(*g, request);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(report.ok(), report.ok() ? "" : msg(report.error()));
    // The budget bounds the search (one trial in flight may finish after it); the default
    // compile and timing before it are one model's work.
    QVERIFY2(report->seconds < request.budgetSeconds + 2, std::to_string(report->seconds).c_str());
    QVERIFY2(seconds < request.budgetSeconds + 20, std::to_string(seconds).c_str());
    QCOMPARE(report->kernels.size(), size_t(7));
    QVERIFY(report->defaultUs > 0);
    int searched = 0;
    for (const KernelTuning& k : report->kernels) {
      searched += k.tuned;
      QVERIFY(k.tunedUs <= k.defaultUs || k.directives.empty());
    }
    QVERIFY(searched >= 1);
    QCOMPARE(QString::fromStdString(report->logPath), QString::fromStdString(path));
    auto log = readTuningLog(path);
    QVERIFY2(log.ok(), log.ok() ? "" : msg(log.error()));
    QCOMPARE(log->entries.size(), size_t(searched));

    // The model compiled with the log computes what the interpreter computes.
    auto inputs = gatherInputs(*g, {}, 3, {});
    QVERIFY(inputs.ok());
    auto model = compileGraph(*g, hostSettings(path), *inputs);
    QVERIFY2(model.ok(), model.ok() ? "" : msg(model.error()));
    auto got = (*model)->run(*inputs);
    QVERIFY(got.ok());
    auto reference = interpret(*g, *inputs);
    QVERIFY(reference.ok());
    auto cmp = compareOutputs(*g, reference->outputs, *got, std::nullopt);
    QVERIFY(cmp.ok() && cmp->ok);
  }
};

QTEST_GUILESS_MAIN(TestTuning)
#include "TestTuning.moc"
