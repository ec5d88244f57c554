// Tests of the find-the-bug flow (app/workbench/FindBug.h): with a pass fault on, it names the
// fault's pass and a rewrite, colours the diverging nodes (the first divergent one among them)
// and writes a reproducer that fails on replay with the fault and passes without; with a
// codegen fault on, it names the kernel and colours its nodes; without a fault it finds
// nothing; progress rises to the end and a cancel stops it.
#include "app/workbench/FindBug.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/Reproducer.h"
#include "app/workbench/Session.h"
#include "core/Faults.h"

#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string debugModel(const char* name) {
  return std::string(FUSEBOX_DEBUG_MODELS_DIR) + "/" + name;
}
std::string sample(const char* name) {
  return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name;
}

/// A session on `path` after `pipeline` ("O1" or a list).
std::unique_ptr<Session> sessionAfter(const std::string& path, const std::string& pipeline) {
  auto s = std::make_unique<Session>();
  if (!s->load(path).ok() || !s->setPipeline(pipeline).ok() || !s->runPipeline().ok())
    return nullptr;
  return s;
}

FindBugSettings settingsOn(Backend backend, const QString& reproducer) {
  FindBugSettings f;
  f.bisect.run.backend = backend;
  f.reproducerPath = reproducer.toStdString();
  f.modelName = "test";
  return f;
}

} // namespace

class TestFindBug : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void cleanup() { disableAllFaults(); }

  void passFaultIsFoundColouredAndReduced() {
    setFaultEnabled(Fault::CanonicalizeDropsTranspose, true);
    auto s = sessionAfter(debugModel("square_transpose.fbir"), "O1");
    QVERIFY(s);
    auto inputs = gatherInputs(*s->graph(0), {}, 1, {});
    QVERIFY(inputs.ok());
    QTemporaryDir dir;
    std::vector<double> progress;
    JobControl job([&](double f, const std::string&) { progress.push_back(f); });
    auto r = findBug(s->snapshots(), *inputs,
                     settingsOn(Backend::Interpreter, dir.filePath("repro.fbir")), &job);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QVERIFY(r->bisect.mismatch);
    QCOMPARE(r->bisect.pass, std::string("canonicalize"));
    QVERIFY(r->bisect.rewrite.has_value());
    QVERIFY(r->summary.find("canonicalize") != std::string::npos);
    QVERIFY(r->summary.find("rewrite") != std::string::npos);
    // The graph is wrong: the diff of the guilty snapshot colours diverging nodes, the first
    // divergent node among them.
    QVERIFY(r->diff.has_value());
    QVERIFY(!r->diff->ok());
    QVERIFY(r->diff->firstDivergent.has_value());
    QVERIFY(r->heat.count(*r->diff->firstDivergent));
    QVERIFY(r->heat.at(*r->diff->firstDivergent) > 0);
    for (const auto& [id, h] : r->heat)
      QVERIFY(h >= 0 && h <= 1);
    // The reproducer: small, failing with the fault, passing without it.
    QVERIFY(r->reduce.has_value());
    QVERIFY(r->reduce->nodesAfter < r->reduce->nodesBefore || r->reduce->nodesBefore <= 2);
    QCOMPARE(r->reproducerPath, dir.filePath("repro.fbir").toStdString());
    auto repro = readReproducer(r->reproducerPath);
    QVERIFY(repro.ok());
    auto with = replayReproducer(*repro, /*withFaults=*/true);
    QVERIFY(with.ok() && with->outcome.mismatch);
    auto without = replayReproducer(*repro, /*withFaults=*/false);
    QVERIFY(without.ok() && !without->outcome.mismatch);
    // Progress only rises, and ends at 1.
    QVERIFY(!progress.empty());
    QVERIFY(std::is_sorted(progress.begin(), progress.end()));
    QCOMPARE(progress.back(), 1.0);
  }

  void codegenFaultNamesTheKernel() {
    if (!backendAvailable(Backend::Cpu).ok())
      QSKIP("no CPU backend here");
    setFaultEnabled(Fault::GemmEpilogueDropsBias, true);
    auto s = sessionAfter(sample("mlp.onnx"), "O2");
    QVERIFY(s);
    auto inputs = gatherInputs(*s->graph(0), {}, 1, {});
    QVERIFY(inputs.ok());
    auto r = findBug(s->snapshots(), *inputs, settingsOn(Backend::Cpu, {}));
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QVERIFY(r->bisect.mismatch);
    QVERIFY(r->bisect.interpreterAgrees);
    QVERIFY(r->bisect.kernel.has_value());
    QVERIFY(!r->diff.has_value()); // the graph is right: nothing to diff
    QCOMPARE(r->heat.size(), r->bisect.kernel->nodes.size());
    for (NodeId id : r->bisect.kernel->nodes)
      QCOMPARE(r->heat.at(id), 1.0);
    QVERIFY(r->summary.find(r->bisect.kernel->name) != std::string::npos);
    QVERIFY(!r->reduce.has_value()); // no reproducer path: no reduction
  }

  void withoutAFaultThereIsNothingToFind() {
    auto s = sessionAfter(sample("small_cnn.onnx"), "O2");
    QVERIFY(s);
    auto inputs = gatherInputs(*s->graph(0), {}, 1, {});
    QVERIFY(inputs.ok());
    QTemporaryDir dir;
    auto r = findBug(s->snapshots(), *inputs,
                     settingsOn(Backend::Interpreter, dir.filePath("repro.fbir")));
    QVERIFY(r.ok());
    QVERIFY(!r->bisect.mismatch);
    QVERIFY(r->heat.empty() && !r->reduce);
    QVERIFY(r->summary.find("No bug") != std::string::npos);
    QVERIFY(!QFile::exists(dir.filePath("repro.fbir")));
  }

  void cancelStopsIt() {
    setFaultEnabled(Fault::CanonicalizeDropsTranspose, true);
    auto s = sessionAfter(debugModel("square_transpose.fbir"), "O1");
    QVERIFY(s);
    auto inputs = gatherInputs(*s->graph(0), {}, 1, {});
    QVERIFY(inputs.ok());
    JobControl job;
    job.cancel();
    QTemporaryDir dir;
    auto r = findBug(s->snapshots(), *inputs,
                     settingsOn(Backend::Interpreter, dir.filePath("repro.fbir")), &job);
    QVERIFY(!r.ok());
    QVERIFY(r.error().message().find("cancel") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestFindBug)
#include "TestFindBug.moc"
