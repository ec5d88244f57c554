// Headless tests of the main window's chrome: standard shortcuts, presentation mode (text and
// charts), dock ids and layout restore, and the screenshot mode writing every view the README
// promises.
#include "app/gui/Coordinator.h"
#include "app/gui/DockManager.h"
#include "app/gui/InspectorView.h"
#include "app/gui/IrTextView.h"
#include "app/gui/MainActions.h"
#include "app/gui/MainWindow.h"

#include <QAbstractAxis>
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDockWidget>
#include <QKeySequence>
#include <QPlainTextEdit>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace fb;
using namespace fb::gui;

namespace {

QString sample(const char* name) {
  return QStringLiteral(FUSEBOX_SAMPLES_DIR "/") + name;
}

} // namespace

class TestWindowChrome : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("FuseboxTest");
    QCoreApplication::setApplicationName("TestWindowChrome");
  }

  void actionsUseStandardShortcuts() {
    MainWindow w(/*persistent=*/false);
    const MainActions& a = w.actions();
    QCOMPARE(a.open->shortcuts(), QKeySequence::keyBindings(QKeySequence::Open));
    QCOMPARE(a.find->shortcuts(), QKeySequence::keyBindings(QKeySequence::Find));
    QCOMPARE(a.findNext->shortcuts(), QKeySequence::keyBindings(QKeySequence::FindNext));
    QCOMPARE(a.zoomIn->shortcuts(), QKeySequence::keyBindings(QKeySequence::ZoomIn));
    QCOMPARE(a.zoomOut->shortcuts(), QKeySequence::keyBindings(QKeySequence::ZoomOut));
    QCOMPARE(a.back->shortcuts(), QKeySequence::keyBindings(QKeySequence::Undo));
    QCOMPARE(a.forward->shortcuts(), QKeySequence::keyBindings(QKeySequence::Redo));
    // Step and Run to end follow debuggers: F10 steps over, F5 runs.
    QCOMPARE(a.step->shortcut(), QKeySequence(Qt::Key_F10));
    QCOMPARE(a.runToEnd->shortcut(), QKeySequence(Qt::Key_F5));
    // Undo/redo move between snapshots.
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.coordinator()->setPipeline("canonicalize,fold-batchnorm"));
    QVERIFY(w.runPipelineBlocking());
    a.back->trigger();
    QCOMPARE(w.coordinator()->session().currentIndex(), size_t(1));
    a.forward->trigger();
    QCOMPARE(w.coordinator()->session().currentIndex(), size_t(2));
  }

  void presentationModeEnlargesText() {
    MainWindow w(/*persistent=*/false);
    w.show();
    const int before = QApplication::font().pointSize();
    const int irBefore = w.irView()->editor()->font().pointSize();
    w.actions().presentation->trigger();
    QVERIFY(w.isPresentationMode());
    QCOMPARE(QApplication::font().pointSize(), before + 4);
    QCOMPARE(w.irView()->editor()->font().pointSize(), before + 4);
    QVERIFY(w.irView()->editor()->font().pointSize() > irBefore);
    QTRY_COMPARE(w.inspector()->font().pointSize(), before + 4); // follows the application font
    // Charts (memory plan, timeline, roofline) keep their own fonts: presentation mode sets them.
    const QList<QChartView*> charts = w.findChildren<QChartView*>();
    QVERIFY(charts.size() >= 3);
    for (QChartView* chart : charts)
      for (QAbstractAxis* axis : chart->chart()->axes())
        QCOMPARE(axis->labelsFont().pointSize(), before + 3);
    w.setPresentationMode(false);
    for (QChartView* chart : charts)
      for (QAbstractAxis* axis : chart->chart()->axes())
        QCOMPARE(axis->labelsFont().pointSize(), before - 1);
    QVERIFY(!w.actions().presentation->isChecked());
    QCOMPARE(QApplication::font().pointSize(), before);
  }

  void docksHaveStableIdsAndRestore() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath("layout.ini"), QSettings::IniFormat);
    {
      MainWindow w(/*persistent=*/false);
      w.show();
      for (const char* id : {"pipeline", "inspector", "ir", "timeline"}) {
        QDockWidget* d = w.docks()->dock(id);
        QVERIFY2(d, id);
        QCOMPARE(d->objectName(), QStringLiteral("dock.") + id);
      }
      w.docks()->dock("timeline")->hide();
      w.docks()->saveLayout(settings);
    }
    MainWindow w2(/*persistent=*/false);
    w2.show();
    QVERIFY(w2.docks()->dock("timeline")->isVisible());
    QVERIFY(w2.docks()->restoreLayout(settings));
    QVERIFY(!w2.docks()->dock("timeline")->isVisible());
  }

  void screenshotModeWritesEveryView() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.coordinator()->setPipeline("canonicalize,fold-constants,fold-batchnorm,fuse"));
    QVERIFY(w.runPipelineBlocking());
    QString error;
    const QStringList files = w.saveScreenshots(dir.path(), &error);
    QVERIFY2(!files.isEmpty(), qPrintable(error));
    for (const char* name : {"window.png",         "graph.png",          "pipeline.png",
                             "inspector.png",      "timeline.png",       "ir.png",
                             "diff.png",           "memory.png",         "run.png",
                             "profile.png",        "roofline.png",       "profile-savings.png",
                             "graph-time.png",     "window-profile.png", "code-loops.png",
                             "code-llvm.png",      "code-asm.png",       "code-ptx.png",
                             "schedule.png",       "compression.png",    "graph-compression.png",
                             "quantize-dialog.png"}) {
      QImage img(dir.filePath(name));
      QVERIFY2(!img.isNull(), name);
      QVERIFY(img.width() > 100 && img.height() > 100);
    }
  }
};

QTEST_MAIN(TestWindowChrome)
#include "TestWindowChrome.moc"
