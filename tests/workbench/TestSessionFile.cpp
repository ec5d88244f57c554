// Tests of session files (app/workbench/SessionFile.h): a session saved and opened again has
// the same model (every constant), pipeline, pass manager limits, current snapshot, schedule
// overrides, faults and compared snapshots, and its restored snapshots print the same IR;
// bad files are refused with the file, line and key.
#include "app/workbench/Reproducer.h"
#include "app/workbench/Session.h"
#include "app/workbench/SessionFile.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/Faults.h"
#include "core/text/IrPrinter.h"

#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string sample(const char* name) {
  return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name;
}

std::string printed(const Graph& g) {
  PrintOptions o;
  o.withResourceData = true;
  return printGraph(g, o);
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

} // namespace

class TestSessionFile : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void cleanup() { disableAllFaults(); }

  void roundTripsEverything() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    QVERIFY(s.setPipeline("canonicalize,fold-batchnorm,fuse,dce").ok());
    s.passManagerOptions().disabled = {"cse"};
    QVERIFY(s.runPipeline().ok());
    s.select(3);
    auto overrides = cg::parseScheduleOverrides("k0:tile=8x8");
    QVERIFY(overrides.ok());
    s.setScheduleOverrides(3, *overrides);
    setFaultEnabled(Fault::CseIgnoresAttributes, true);

    QTemporaryDir dir;
    const std::string path = dir.filePath("bug.fbsession").toStdString();
    QVERIFY(writeSessionFile(path, captureSession(s, s.passManagerOptions(),
                                                  std::make_pair(size_t(0), size_t(3))))
                .ok());
    disableAllFaults();

    auto state = readSessionFile(path);
    QVERIFY2(state.ok(), state.ok() ? "" : state.error().message().c_str());
    QCOMPARE(state->modelName, std::string("small_cnn.onnx"));
    QCOMPARE(printed(*state->model), printed(*s.graph(0))); // every constant, every id
    QCOMPARE(pipelineText(state->pipeline), s.pipelineString());
    QCOMPARE(state->current, size_t(3));
    QCOMPARE(state->disabled, (std::set<std::string>{"cse"}));
    QCOMPARE(state->schedules.at(3), s.scheduleText(3));
    QCOMPARE(state->faults, std::vector<Fault>{Fault::CseIgnoresAttributes});
    QVERIFY(state->compare && state->compare->first == 0 && state->compare->second == 3);

    Session t;
    QVERIFY(restoreSession(t, *state).ok());
    QVERIFY(faultEnabled(Fault::CseIgnoresAttributes));
    QCOMPARE(t.currentIndex(), size_t(3));
    QVERIFY(t.snapshotCount() >= 4);
    for (size_t i = 0; i <= 3; ++i)
      QCOMPARE(printed(*t.graph(i)), printed(*s.graph(i)));
    QCOMPARE(t.scheduleText(3), s.scheduleText(3));
    QCOMPARE(t.passManagerOptions().disabled, s.passManagerOptions().disabled);
  }

  void refusesBadFiles() {
    QTemporaryDir dir;
    const std::string notSession = dir.filePath("x.fbsession").toStdString();
    writeText(notSession, "graph @g opset 17 {\n}\n");
    auto r = readSessionFile(notSession);
    QVERIFY(!r.ok());
    QVERIFY(r.error().message().find("not a Fusebox session file") != std::string::npos);

    const std::string badLine = dir.filePath("bad.fbsession").toStdString();
    writeText(badLine, "// fusebox session, version 1\n// model: m\n// current: minus one\n"
                       "graph @g opset 17 {\n  input %x : f32[2]\n  %y : f32[2] = Relu(%x)  #1\n"
                       "  output %y\n}\n");
    r = readSessionFile(badLine);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message().find("bad.fbsession:3: current") != std::string::npos,
             r.error().message().c_str());

    const std::string badPass = dir.filePath("pass.fbsession").toStdString();
    writeText(badPass, "// fusebox session, version 1\n// pipeline: no-such-pass\n"
                       "graph @g opset 17 {\n  input %x : f32[2]\n  %y : f32[2] = Relu(%x)  #1\n"
                       "  output %y\n}\n");
    r = readSessionFile(badPass);
    QVERIFY(!r.ok());
    QVERIFY(r.error().message().find("no-such-pass") != std::string::npos);

    r = readSessionFile(dir.filePath("missing.fbsession").toStdString());
    QVERIFY(!r.ok());
    QVERIFY(r.error().message().find("missing.fbsession") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestSessionFile)
#include "TestSessionFile.moc"
