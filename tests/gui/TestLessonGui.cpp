// Headless tests of the Lessons dock: Help > Lessons opens the shipped course; Next and Previous
// walk a lesson (the snapshot, the view and the selected node change with the step, the
// narrative is shown); a student who leaves the step is offered the way back to it; faults are
// turned on for a step and restored when the lesson ends; every step renders to a numbered PNG;
// a bad lesson is a message naming its file and line, not a crash.
#include "app/gui/CodeDocks.h"
#include "app/gui/Coordinator.h"
#include "app/gui/DebugDocks.h"
#include "app/gui/DiffView.h"
#include "app/gui/FindBugController.h"
#include "app/gui/LessonController.h"
#include "app/gui/LessonPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/graph/GraphView.h"
#include "core/Faults.h"

#include <QAction>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest/QtTest>

using namespace fb;
using namespace fb::gui;

namespace {

QString lessonFile(const char* name) {
  return QStringLiteral(FUSEBOX_SAMPLES_DIR "/lessons/") + name;
}

/// Writes `text` to `dir`/name and returns the path.
QString writeLesson(const QTemporaryDir& dir, const char* name, const QString& text) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (f.open(QIODevice::WriteOnly))
    f.write(text.toUtf8());
  return path;
}

/// A lesson on a copy-free model path: the samples folder, named absolutely.
QString smallLesson() {
  return QStringLiteral(
      "# A small lesson\n\nmodel: " FUSEBOX_SAMPLES_DIR "/small_cnn.onnx\n"
      "pipeline: fold-batchnorm,fuse\n\nAn introduction.\n\n"
      "## Imported\nview: graph\nfocus: /conv2/Conv\n\nFirst **words**.\n\n"
      "## Folded\nsnapshot: fold-batchnorm\nview: diff\nfocus: /conv1/Conv\n\n"
      "Second words.\n\n"
      "## Fused\nsnapshot: fuse\nview: code\nfocus: /relu2/Relu\n\nThird words.\n");
}

QTabWidget* centralTabs(MainWindow& w) {
  return w.findChild<QTabWidget*>("centralTabs");
}

} // namespace

class TestLessonGui : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("FuseboxTest");
    QCoreApplication::setApplicationName("TestLessonGui");
  }
  void cleanup() { disableAllFaults(); }

  void helpLessonsOpensTheCourse() {
    MainWindow w(/*persistent=*/false);
    w.show();
    LessonController* lessons = w.lessons();
    QVERIFY(!lessons->dock()->isVisible());
    QAction* help = w.findChild<QAction*>("action.lessons");
    QVERIFY(help);
    help->trigger();
    QVERIFY(lessons->dock()->isVisible());
    QVERIFY(lessons->waitForStep());
    QVERIFY(lessons->lesson());
    QVERIFY(QString::fromStdString(lessons->lesson()->path).endsWith("01-reading-a-graph.md"));
    QCOMPARE(lessons->currentStep(), 0);
    QVERIFY(w.coordinator()->session().hasModel());
    QVERIFY(lessons->panel()->stepLabel()->text().startsWith("Step 1 of"));
    QVERIFY(!lessons->panel()->narrative()->toPlainText().isEmpty());
    QVERIFY(!lessons->panel()->previousButton()->isEnabled());
    QVERIFY(lessons->panel()->nextButton()->isEnabled());
  }

  void nextAndPreviousWalkTheLesson() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    w.show();
    LessonController* lessons = w.lessons();
    QCOMPARE(lessons->openLesson(writeLesson(dir, "small.md", smallLesson())), QString());
    QVERIFY(lessons->waitForStep());
    const auto& s = w.coordinator()->session();

    // Step 1: the imported model in the graph tab, /conv2/Conv selected.
    QCOMPARE(s.currentIndex(), size_t(0));
    QCOMPARE(centralTabs(w)->currentWidget(), static_cast<QWidget*>(w.graphView()));
    const NodeId conv2 = lessons->focusNode();
    QVERIFY(conv2 != 0);
    QCOMPARE(s.graph(0)->findNode(conv2)->name(), std::string("/conv2/Conv"));
    QCOMPARE(w.coordinator()->selectedNode(), conv2);
    QTRY_COMPARE(w.graphView()->selectedNode(), conv2);
    QVERIFY(lessons->panel()->narrative()->toPlainText().contains("First words"));
    QVERIFY(lessons->panel()->narrative()->toPlainText().contains("An introduction"));

    // Next: snapshot 1 in the diff tab, /conv1/Conv selected there.
    QTest::mouseClick(lessons->panel()->nextButton(), Qt::LeftButton);
    QVERIFY(lessons->waitForStep());
    QCOMPARE(lessons->currentStep(), 1);
    QCOMPARE(s.currentIndex(), size_t(1));
    QCOMPARE(centralTabs(w)->currentWidget(), static_cast<QWidget*>(w.diffView()));
    QCOMPARE(w.diffView()->snapshotA(), 0);
    QCOMPARE(w.diffView()->snapshotB(), 1);
    QCOMPARE(s.graph(1)->findNode(lessons->focusNode())->name(), std::string("/conv1/Conv"));
    QCOMPARE(w.coordinator()->selectedNode(), lessons->focusNode());
    QVERIFY(lessons->panel()->narrative()->toPlainText().contains("Second words"));
    QVERIFY(!lessons->panel()->narrative()->toPlainText().contains("An introduction"));

    // Next: snapshot 2, the code dock raised, the fused group holding /relu2/Relu selected.
    lessons->next();
    QVERIFY(lessons->waitForStep());
    QCOMPARE(s.currentIndex(), size_t(2));
    QVERIFY(w.codeDocks()->codeDock()->isVisible());
    const Node* group = s.graph(2)->findNode(lessons->focusNode());
    QVERIFY(group && group->body());
    QVERIFY(!lessons->panel()->nextButton()->isEnabled()); // the last step

    // Previous goes back, with the step's snapshot and view.
    QTest::mouseClick(lessons->panel()->previousButton(), Qt::LeftButton);
    QVERIFY(lessons->waitForStep());
    QCOMPARE(lessons->currentStep(), 1);
    QCOMPARE(s.currentIndex(), size_t(1));
    QCOMPARE(centralTabs(w)->currentWidget(), static_cast<QWidget*>(w.diffView()));
  }

  void leavingAndComingBack() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    w.show();
    LessonController* lessons = w.lessons();
    QCOMPARE(lessons->openLesson(writeLesson(dir, "small.md", smallLesson())), QString());
    QVERIFY(lessons->waitForStep());
    lessons->next();
    QVERIFY(lessons->waitForStep());
    QVERIFY(!lessons->isAway());
    QVERIFY(lessons->panel()->returnButton()->isHidden());

    // The student explores: another snapshot, another node.
    w.coordinator()->selectSnapshot(0);
    QVERIFY(lessons->isAway());
    QVERIFY(!lessons->panel()->returnButton()->isHidden());
    QVERIFY(lessons->panel()->returnButton()->text().contains("step 2"));
    w.coordinator()->selectNode(w.coordinator()->session().graph(0)->nodes().back()->id());
    QCOMPARE(lessons->currentStep(), 1); // the lesson remembers where it was

    QTest::mouseClick(lessons->panel()->returnButton(), Qt::LeftButton);
    QVERIFY(lessons->waitForStep());
    QVERIFY(!lessons->isAway());
    QVERIFY(lessons->panel()->returnButton()->isHidden());
    QCOMPARE(lessons->currentStep(), 1);
    QCOMPARE(w.coordinator()->session().currentIndex(), size_t(1));
    QCOMPARE(w.coordinator()->selectedNode(), lessons->focusNode());
    QCOMPARE(centralTabs(w)->currentWidget(), static_cast<QWidget*>(w.diffView()));

    // Next from an explored state continues the lesson.
    w.coordinator()->selectSnapshot(0);
    lessons->next();
    QVERIFY(lessons->waitForStep());
    QCOMPARE(lessons->currentStep(), 2);
    QCOMPARE(w.coordinator()->session().currentIndex(), size_t(2));
  }

  void stepFaultsAreOnForTheStepAndRestoredAfter() {
    MainWindow w(/*persistent=*/false);
    w.show();
    LessonController* lessons = w.lessons();
    QCOMPARE(lessons->openLesson(lessonFile("08-finding-a-miscompile.md")), QString());
    QVERIFY(lessons->waitForStep());
    QVERIFY(enabledFaults().empty());
    lessons->next();
    QVERIFY(lessons->waitForStep());
    QCOMPARE(enabledFaults(), std::vector<Fault>{Fault::LayoutConstantChannels});
    lessons->previous();
    QVERIFY(lessons->waitForStep());
    QVERIFY(enabledFaults().empty());
    lessons->next();
    QVERIFY(lessons->waitForStep());
    lessons->closeLesson();
    QVERIFY(enabledFaults().empty());
  }

  /// Lesson 8's last step runs Find the Bug: the search finds the guilty layout pass, writes a
  /// two-node reproducer, selects the guilty snapshot, and the lesson is still on its step.
  void findBugStepRunsTheSearch() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    w.show();
    w.debugDocks()->setReproducerDir(dir.path());
    LessonController* lessons = w.lessons();
    QCOMPARE(lessons->openLesson(lessonFile("08-finding-a-miscompile.md")), QString());
    QVERIFY(lessons->waitForStep());
    while (lessons->currentStep() + 1 < int(lessons->lesson()->steps.size())) {
      lessons->next();
      QVERIFY(lessons->waitForStep());
    }
    FindBugController* fb = w.debugDocks()->controller();
    if (fb->isRunning()) {
      QSignalSpy done(fb, &FindBugController::finished);
      QVERIFY(done.wait(60000));
    }
    QApplication::processEvents();
    const auto& report = fb->lastOutcome().report;
    QVERIFY(report && report->bisect.mismatch);
    QCOMPARE(report->bisect.index, size_t(2));
    QVERIFY(report->reduce);
    QCOMPARE(report->reduce->nodesAfter, size_t(2));
    QVERIFY(QFile::exists(QString::fromStdString(report->reproducerPath)));
    QVERIFY(w.debugDocks()->dock()->isVisible());
    QCOMPARE(w.coordinator()->session().currentIndex(), size_t(2));
    QVERIFY(!lessons->isAway());
  }

  void openingAnotherModelEndsTheLesson() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    LessonController* lessons = w.lessons();
    QCOMPARE(lessons->openLesson(lessonFile("08-finding-a-miscompile.md")), QString());
    QVERIFY(lessons->waitForStep());
    lessons->next();
    QVERIFY(lessons->waitForStep());
    QVERIFY(!enabledFaults().empty());
    QVERIFY(w.openFile(QStringLiteral(FUSEBOX_SAMPLES_DIR "/mlp.onnx")));
    QVERIFY(!lessons->lesson());
    QCOMPARE(lessons->currentStep(), -1);
    QVERIFY(enabledFaults().empty()); // the lesson's fault went with it
  }

  void everyStepRendersToANumberedPng() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    LessonController* lessons = w.lessons();
    QCOMPARE(lessons->openLesson(writeLesson(dir, "small.md", smallLesson())), QString());
    QString error;
    const QStringList files = lessons->saveStepScreenshots(dir.filePath("slides"), &error);
    QVERIFY2(files.size() == 3, qPrintable(error));
    for (int i = 0; i < 3; ++i) {
      QVERIFY(files[i].endsWith(QStringLiteral("step-0%1.png").arg(i + 1)));
      QImage img(files[i]);
      QVERIFY(!img.isNull());
      QVERIFY(img.width() >= 1600);
    }
  }

  void badLessonsAreMessagesNotCrashes() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    LessonController* lessons = w.lessons();
    const QString badView =
        writeLesson(dir, "bad-view.md",
                    QStringLiteral("# Bad\nmodel: " FUSEBOX_SAMPLES_DIR "/small_cnn.onnx\n"
                                   "pipeline: fuse\n\n## S\nview: slideshow\n"));
    QString error = lessons->openLesson(badView);
    QVERIFY2(error.contains("bad-view.md:6: view: unknown view 'slideshow'"), qPrintable(error));
    QVERIFY(!lessons->lesson());
    QVERIFY(lessons->panel()->narrative()->toPlainText().contains("bad-view.md:6"));

    const QString noModel =
        writeLesson(dir, "no-model.md", "# Bad\nmodel: gone.onnx\npipeline: fuse\n\n## S\n");
    error = lessons->openLesson(noModel);
    QVERIFY2(error.contains("no-model.md:2: model: no such file"), qPrintable(error));

    // A focus node that does not exist is found when the step is shown.
    const QString badFocus =
        writeLesson(dir, "bad-focus.md",
                    QStringLiteral("# Bad\nmodel: " FUSEBOX_SAMPLES_DIR "/small_cnn.onnx\n"
                                   "pipeline: fuse\n\n## S\nfocus: /conv9/Conv\n"));
    QCOMPARE(lessons->openLesson(badFocus), QString());
    QVERIFY(!lessons->waitForStep());
    QVERIFY(lessons->panel()->narrative()->toPlainText().contains("bad-focus.md:6: focus"));
    QVERIFY(w.bannerText().contains("/conv9/Conv"));
  }
};

QTEST_MAIN(TestLessonGui)
#include "TestLessonGui.moc"
