// Headless tests of sessions in the window: File > Save Session writes what Open puts back
// (model, pipeline, current snapshot, schedule overrides, faults, compared snapshots), the steps
// run in the background, and a bad session file leaves the loaded model as it was.
#include "app/gui/Coordinator.h"
#include "app/gui/DiffView.h"
#include "app/gui/MainWindow.h"
#include "app/gui/SessionFiles.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/Faults.h"
#include "core/text/IrPrinter.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace fb;
using namespace fb::gui;

namespace {

QString sample(const char* name) {
  return QStringLiteral(FUSEBOX_SAMPLES_DIR "/") + name;
}

} // namespace

class TestSessionGui : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void cleanup() { disableAllFaults(); }

  void saveThenOpenPutsEverythingBack() {
    QTemporaryDir dir;
    const QString path = dir.filePath("bug.fbsession");
    std::string schedule, ir2;
    {
      MainWindow a(/*persistent=*/false);
      QVERIFY(a.openFile(sample("small_cnn.onnx")));
      QVERIFY(a.coordinator()->setPipeline("canonicalize,fold-batchnorm,fuse,dce"));
      QVERIFY(a.runPipelineBlocking());
      a.coordinator()->selectSnapshot(2);
      auto overrides = cg::parseScheduleOverrides("k0:tile=8x8");
      QVERIFY(overrides.ok());
      a.coordinator()->session().setScheduleOverrides(2, *overrides);
      schedule = a.coordinator()->session().scheduleText(2);
      a.showDiff(1, 3);
      setFaultEnabled(Fault::LoopTailOffByOne, true);
      QCOMPARE(a.saveSession(path), QString());
      ir2 = printGraph(*a.coordinator()->session().graph(2));
    }
    disableAllFaults();
    QVERIFY(QFile::exists(path));

    MainWindow b(/*persistent=*/false);
    QSignalSpy restored(b.sessionFiles(), &SessionFiles::restored);
    QVERIFY(b.openFile(path));
    if (restored.isEmpty())
      QVERIFY(restored.wait(60000));
    QVERIFY(restored.first().first().toBool());
    const auto& s = b.coordinator()->session();
    QCOMPARE(s.displayName(), std::string("small_cnn.onnx"));
    QCOMPARE(s.pipelineString(), std::string("canonicalize,fold-batchnorm,fuse,dce"));
    QCOMPARE(s.currentIndex(), size_t(2));
    QCOMPARE(printGraph(*s.graph(2)), ir2);
    QCOMPARE(s.scheduleText(2), schedule);
    QVERIFY(faultEnabled(Fault::LoopTailOffByOne));
    QCOMPARE(b.diffView()->snapshotA(), 1);
    QCOMPARE(b.diffView()->snapshotB(), 3);
  }

  void aBadSessionKeepsTheModel() {
    QTemporaryDir dir;
    const QString path = dir.filePath("bad.fbsession");
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("// fusebox session, version 1\n// pipeline: no-such-pass\n");
    }
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("mlp.onnx")));
    QVERIFY(!w.openFile(path));
    QVERIFY(w.bannerText().contains("no-such-pass"));
    QCOMPARE(w.coordinator()->session().displayName(), std::string("mlp.onnx"));
    QVERIFY(!w.sessionFiles()->isRestoring());
    // Saving without a model says so.
    MainWindow empty(/*persistent=*/false);
    QVERIFY(!empty.saveSession(dir.filePath("none.fbsession")).isEmpty());
  }
};

QTEST_MAIN(TestSessionGui)
#include "TestSessionGui.moc"
