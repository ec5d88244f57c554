// Tests of differential fuzzing (app/workbench/DifferentialFuzz.h): a clean run finds nothing,
// the checker can fail (a built-in fault on, it finds mismatches and writes reproducers that
// load and still fail), and the report counts what it ran.
#include "app/workbench/DifferentialFuzz.h"
#include "core/Faults.h"
#include "core/ModelIO.h"
#include "core/Npy.h"

#include <QtTest/QtTest>

#include <filesystem>

using namespace fb;
using namespace fb::workbench;

class TestDifferentialFuzz : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Passes on the interpreter: every level of 40 graphs agrees with the unoptimized graph.
  void cleanRunOnInterpreterFindsNothing() {
    FuzzSettings s;
    s.graphs = 40;
    s.seed = 1000;
    s.backends = {Backend::Interpreter};
    std::vector<std::string> seen;
    auto r = fuzzDifferential(s, [&](const FuzzFinding& f) { seen.push_back(f.str()); });
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    for (const auto& line : seen)
      qWarning("%s", line.c_str());
    QCOMPARE(r->graphs, int64_t(40));
    QCOMPARE(r->discards, int64_t(0));
    QVERIFY(r->findings.empty());
    QCOMPARE(r->configs["O2/interp"].runs + r->configs["O2/interp"].refused, int64_t(40));
    QVERIFY(r->opCounts.size() >= 20);
  }

  /// The checker can fail: with a pass fault on (cse merges nodes whose attributes differ) and
  /// a codegen fault on (split loops drop their last iteration), fuzzing finds mismatches at the
  /// levels and backends that carry them, and each reproducer loads and verifies.
  void findsInjectedFaults() {
    QTemporaryDir dir;
    FuzzSettings s;
    s.graphs = 12;
    s.seed = 1;
    s.backends = {Backend::Interpreter, Backend::Cpu};
    s.outputDir = dir.path().toStdString();
    {
      ScopedFaults fault({Fault::LoopTailOffByOne});
      auto r = fuzzDifferential(s);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
      QVERIFY2(r->count(FindingKind::Mismatch) > 0, "loop-tail-off-by-one went unnoticed");
      for (const FuzzFinding& f : r->findings) {
        QCOMPARE(f.backend, std::string("cpu")); // a codegen fault: the interpreter agrees
        QVERIFY(f.files.size() >= 2);
        auto g = loadModel(f.files[0]);
        QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
        QVERIFY(readNpy(f.files[1]).ok());
      }
    }
    // The same run with the fault off finds nothing on these seeds.
    s.outputDir.clear();
    auto clean = fuzzDifferential(s);
    QVERIFY(clean.ok());
    for (const auto& f : clean->findings)
      qWarning("%s", f.str().c_str());
    QVERIFY(clean->findings.empty());
  }

  /// Pass faults show on the interpreter alone (the optimized graph interpreted), never at O0,
  /// which runs no pass.
  void findsPassFaultsOnInterpreter() {
    for (Fault fault : {Fault::CanonicalizeDropsTranspose, Fault::CseIgnoresAttributes,
                        Fault::FoldBatchNormEpsilon}) {
      ScopedFaults on({fault});
      FuzzSettings s;
      s.graphs = 300;
      s.seed = 1;
      s.backends = {Backend::Interpreter};
      auto r = fuzzDifferential(s);
      QVERIFY(r.ok());
      QVERIFY2(r->count(FindingKind::Mismatch) > 0, faultInfo(fault).name);
      for (const FuzzFinding& f : r->findings)
        QVERIFY(f.level != "O0");
    }
  }

  /// Bad settings are errors, not crashes.
  void badSettings() {
    FuzzSettings s;
    s.graphs = 1;
    s.levels = {"O7"};
    QVERIFY(!fuzzDifferential(s).ok());
    s.levels = {"O1"};
    s.graphs = -1;
    QVERIFY(!fuzzDifferential(s).ok());
  }
};

QTEST_GUILESS_MAIN(TestDifferentialFuzz)
#include "TestDifferentialFuzz.moc"
