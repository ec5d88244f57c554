// Headless tests of the GUI's Find the bug: with a built-in fault on, one action bisects, shows
// the guilty pass and rewrite, selects the guilty snapshot, colours the graph by the report's
// heat, selects the first divergent node and writes a reproducer, which opens as a new session
// with its pipeline, ready to step; the Debug menu turns faults on and off; without a fault it
// finds nothing and changes nothing.
#include "app/gui/Coordinator.h"
#include "app/gui/DebugDocks.h"
#include "app/gui/DebugView.h"
#include "app/gui/FindBugController.h"
#include "app/gui/MainWindow.h"
#include "app/gui/RunPanel.h"
#include "app/gui/RunProfileDocks.h"
#include "app/gui/graph/GraphView.h"
#include "app/workbench/Reproducer.h"
#include "core/Faults.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace fb;
using namespace fb::gui;

namespace {

QString debugModel(const char* name) {
  return QStringLiteral(FUSEBOX_DEBUG_MODELS_DIR "/") + name;
}

QAction* actionNamed(MainWindow& w, const QString& name) {
  for (QAction* a : w.findChildren<QAction*>())
    if (a->objectName() == name)
      return a;
  return nullptr;
}

bool findAndWait(MainWindow& w) {
  QSignalSpy done(w.debugDocks()->controller(), &FindBugController::finished);
  QAction* find = actionNamed(w, "action.findBug");
  if (!find)
    return false;
  find->trigger();
  return done.wait(120000);
}

} // namespace

class TestFindBugGui : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void cleanup() { disableAllFaults(); }

  void faultMenuTurnsFaultsOnAndOff() {
    MainWindow w(/*persistent=*/false);
    QAction* cse = actionNamed(w, "fault.cse-ignores-attributes");
    QVERIFY(cse && cse->isCheckable());
    QVERIFY(!cse->toolTip().isEmpty());
    cse->setChecked(true);
    QVERIFY(faultEnabled(Fault::CseIgnoresAttributes));
    QVERIFY(w.debugDocks()
                ->view()
                ->findChild<QLabel*>("faultsLabel")
                ->text()
                .contains("cse-ignores-attributes"));
    cse->setChecked(false);
    QVERIFY(!faultEnabled(Fault::CseIgnoresAttributes));
    // The Debug menu lists every built-in fault.
    QCOMPARE(w.findChild<QMenu*>("menu.faults")->actions().size(), int(allFaults().size()) + 2);
  }

  void oneActionFindsThePassColoursAndReduces() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    w.debugDocks()->setReproducerDir(dir.path());
    actionNamed(w, "fault.canonicalize-drops-transpose")->setChecked(true);
    QVERIFY(w.openFile(debugModel("square_transpose.fbir")));
    QVERIFY(w.coordinator()->setPipeline("O1"));
    QVERIFY(w.runPipelineBlocking());
    QVERIFY(findAndWait(w));
    const FindBugOutcome& o = w.debugDocks()->controller()->lastOutcome();
    QVERIFY2(o.report, qPrintable(o.error));
    const workbench::FindBugReport& r = *o.report;
    QVERIFY(r.bisect.mismatch);
    QCOMPARE(r.bisect.pass, std::string("canonicalize"));
    // The view names the pass and the rewrite; the window shows the guilty snapshot, coloured,
    // with the first divergent node selected.
    const QString text = w.debugDocks()->view()->reportText();
    QVERIFY2(text.contains("canonicalize") && text.contains("rewrite"), qPrintable(text));
    QCOMPARE(w.coordinator()->session().currentIndex(), r.bisect.index);
    QCOMPARE(w.graphView()->heat(), r.heat);
    QVERIFY(r.diff && r.diff->firstDivergent);
    QCOMPARE(w.coordinator()->selectedNode(), *r.diff->firstDivergent);
    // FUSEBOX_TEST_PNG_DIR=DIR keeps pictures of the dock and the window (for the README).
    if (const QString png = qEnvironmentVariable("FUSEBOX_TEST_PNG_DIR"); !png.isEmpty()) {
      w.resize(1500, 950);
      w.show();
      w.debugDocks()->dock()->show();
      w.debugDocks()->dock()->raise();
      QVERIFY(w.waitForLayouts());
      QApplication::processEvents();
      QVERIFY(w.debugDocks()->view()->grab().save(png + "/find-bug.png"));
      QVERIFY(w.grab().save(png + "/window-find-bug.png"));
    }
    // The reproducer is on disk, small, and opens as a new session with its pipeline.
    QVERIFY(r.reduce);
    QVERIFY(QFile::exists(QString::fromStdString(r.reproducerPath)));
    QVERIFY(QString::fromStdString(r.reproducerPath).startsWith(dir.path()));
    MainWindow* repro = w.openReproducer(QString::fromStdString(r.reproducerPath));
    QVERIFY(repro);
    const auto& rs = repro->coordinator()->session();
    QCOMPARE(rs.graph(0)->nodes().size(), r.reduce->nodesAfter);
    auto file = workbench::readReproducer(r.reproducerPath);
    QVERIFY(file.ok());
    QCOMPARE(rs.pipelineString(), workbench::pipelineText(file->check.pipeline));
    QVERIFY(rs.canStep());
    // Its Run panel reads the recorded inputs, on the reproducer's backend.
    auto runInputs = repro->runProfile()->runPanel()->inputs();
    QVERIFY(runInputs.ok());
    QCOMPARE(runInputs->files.size(), file->inputFiles.size());
    for (size_t i = 0; i < file->inputFiles.size(); ++i)
      QVERIFY2(QString::fromStdString(runInputs->files[i])
                   .endsWith(QString::fromStdString(file->inputFiles[i])),
               runInputs->files[i].c_str());
    QCOMPARE(repro->runProfile()->runPanel()->settings().backend, file->check.run.backend);
    repro->close();
  }

  void withoutAFaultNothingIsBlamed() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    w.debugDocks()->setReproducerDir(dir.path());
    QVERIFY(w.openFile(debugModel("square_transpose.fbir")));
    QVERIFY(w.coordinator()->setPipeline("O1"));
    QVERIFY(w.runPipelineBlocking());
    const size_t current = w.coordinator()->session().currentIndex();
    QVERIFY(findAndWait(w));
    const FindBugOutcome& o = w.debugDocks()->controller()->lastOutcome();
    QVERIFY(o.report && !o.report->bisect.mismatch);
    QVERIFY(w.debugDocks()->view()->reportText().contains("No bug"));
    QCOMPARE(w.coordinator()->session().currentIndex(), current);
    QVERIFY(w.graphView()->heat().empty());
    QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
  }

  void needsASteppedPipeline() {
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(debugModel("square_transpose.fbir")));
    w.debugDocks()->findBug();
    QVERIFY(!w.debugDocks()->controller()->isRunning());
    QVERIFY(w.debugDocks()->view()->reportText().contains("Run the pipeline first"));
  }
};

QTEST_MAIN(TestFindBugGui)
#include "TestFindBugGui.moc"
