// Playing a lesson in the main window.
#include "app/gui/LessonController.h"

#include "app/gui/CodeController.h"
#include "app/gui/CodeDocks.h"
#include "app/gui/Coordinator.h"
#include "app/gui/DebugDocks.h"
#include "app/gui/DiffView.h"
#include "app/gui/DockManager.h"
#include "app/gui/FindBugController.h"
#include "app/gui/LessonPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/MemoryPlanner.h"
#include "app/gui/ProfileController.h"
#include "app/gui/RunProfileDocks.h"
#include "app/gui/ScheduleController.h"
#include "app/gui/ScreenshotSupport.h"
#include "app/workbench/LessonCheck.h"
#include "app/workbench/Reproducer.h"
#include "codegen/loops/ScheduleOverride.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QShortcut>
#include <QTimer>

#include <algorithm>

namespace fb::gui {

namespace {
QString qs(const std::string& s) {
  return QString::fromStdString(s);
}
/// The height of the bottom docks while a step shows none of them.
constexpr int kBottomDockHeight = 230;
} // namespace

LessonController::LessonController(MainWindow* window, DockManager& docks)
    : QObject(window), m_window(window), m_coordinator(window->coordinator()) {
  m_panel = new LessonPanel;
  m_panel->setObjectName("lessonPanel");
  m_dock = docks.addDock("lessons", tr("Lessons"), m_panel, Qt::LeftDockWidgetArea);
  // Tabbed with the pipeline: the narrative gets the whole column's height, and the Snapshots
  // timeline still shows where the pipeline is.
  if (QDockWidget* pipeline = docks.dock("pipeline"))
    window->tabifyDockWidget(pipeline, m_dock);
  m_dock->hide(); // the window opens as before; Help > Lessons shows it

  connect(m_panel, &LessonPanel::openRequested, this, [this](const QString& path) {
    if (const QString error = openLesson(path); !error.isEmpty())
      m_window->reportFailure(error);
  });
  connect(m_panel, &LessonPanel::openFileRequested, this, [this] {
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Open Lesson"), courseFolder(),
                                                      tr("Lessons (*.md);;All files (*)"));
    if (path.isEmpty())
      return;
    if (const QString error = openLesson(path); !error.isEmpty())
      m_window->reportFailure(error);
  });
  connect(m_panel, &LessonPanel::nextRequested, this, &LessonController::next);
  connect(m_panel, &LessonPanel::previousRequested, this, &LessonController::previous);
  connect(m_panel, &LessonPanel::returnRequested, this, &LessonController::returnToStep);
  connect(m_panel, &LessonPanel::presentationToggled, m_window, &MainWindow::setPresentationMode);
  // A presenter's clicker sends Page Down / Page Up.
  auto* nextKey = new QShortcut(QKeySequence(Qt::Key_PageDown), m_window);
  connect(nextKey, &QShortcut::activated, this, [this] {
    if (m_lesson && m_dock->isVisible())
      next();
  });
  auto* previousKey = new QShortcut(QKeySequence(Qt::Key_PageUp), m_window);
  connect(previousKey, &QShortcut::activated, this, [this] {
    if (m_lesson && m_dock->isVisible())
      previous();
  });
  connect(m_coordinator, &Coordinator::stepFinished, this, [this](bool ok) {
    if (!m_busy)
      return;
    if (!ok)
      fail(tr("A pass of the lesson's pipeline failed; the status bar says which."));
    else
      continueStep();
  });
  connect(m_coordinator, &Coordinator::numericDiffFinished, this,
          [this] { m_numericPending = false; });
  connect(m_coordinator, &Coordinator::snapshotChanged, this, &LessonController::onExplored);
  connect(m_coordinator, &Coordinator::selectionChanged, this, &LessonController::onExplored);
  // A model the user opens ends the lesson (its steps are about another model).
  connect(m_coordinator, &Coordinator::loadStarted, this, [this] {
    if (!m_opening && m_lesson)
      closeLesson();
  });
  connect(m_coordinator, &Coordinator::modelLoaded, this, [this] {
    if (!m_opening && m_lesson) // a session file, a reproducer, a generated graph
      closeLesson();
  });
  QStringList course;
  for (const std::string& f : workbench::courseLessons(courseFolder().toStdString()))
    course << qs(f);
  m_panel->setCourse(course, -1);
}

LessonController::~LessonController() {
  if (m_userFaults)
    workbench::setLessonFaults(*m_userFaults);
}

QString LessonController::courseFolder() {
  return QStringLiteral(FUSEBOX_SAMPLES_DIR "/lessons");
}

QString LessonController::openLesson(const QString& path) {
  auto lesson = workbench::readLesson(path.toStdString());
  if (!lesson.ok()) {
    m_panel->showMessage(
        tr("This lesson cannot be opened:\n\n%1").arg(qs(lesson.error().message())));
    return qs(lesson.error().message());
  }
  closeLesson();
  m_opening = true;
  const bool opened = m_coordinator->openModel(qs(lesson->modelPath));
  m_opening = false;
  if (!opened)
    return tr("%1: its model %2 does not open").arg(path, qs(lesson->modelPath));
  m_coordinator->setPipeline(qs(workbench::pipelineText(lesson->pipeline)));
  m_userFaults = enabledFaults();
  m_faultsInForce = *m_userFaults;
  m_lesson = std::move(lesson).value();
  arrangeDocks();
  QStringList course;
  for (const std::string& f : workbench::courseLessons(courseFolder().toStdString()))
    course << qs(f);
  m_panel->setCourse(course, int(course.indexOf(QFileInfo(path).absoluteFilePath())));
  m_step = -1;
  goToStep(0);
  return {};
}

void LessonController::arrangeDocks() {
  m_dock->show();
  m_dock->raise();
  // The lesson's column runs the window's full height, beside the bottom docks: the narrative
  // is what the class reads.
  if (m_window->corner(Qt::BottomLeftCorner) != Qt::LeftDockWidgetArea) {
    m_window->setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    m_cornerTaken = true;
  }
  // Wide enough for the narrative in large type; sizes apply to a window that is shown.
  if (!m_window->isVisible())
    return;
  m_window->resizeDocks({m_dock}, {600}, Qt::Horizontal);
  shrinkBottomDocks();
}

void LessonController::enlargeBottomDock(QDockWidget* dock) {
  if (!dock)
    return;
  // Its page gets the height its layout needs back, so its form is not squeezed.
  if (QWidget* page = dock->widget(); m_shrunk.removeAll(page) > 0)
    page->setMinimumHeight(0);
  if (m_window->isVisible())
    m_window->resizeDocks({dock}, {std::max(640, dock->widget()->minimumSizeHint().height())},
                          Qt::Vertical);
}

void LessonController::openCourse() {
  m_dock->show();
  m_dock->raise();
  if (m_lesson)
    return;
  const std::vector<std::string> lessons = workbench::courseLessons(courseFolder().toStdString());
  if (lessons.empty()) {
    m_panel->showMessage(tr("No lessons found in %1.").arg(courseFolder()));
    return;
  }
  if (const QString error = openLesson(qs(lessons.front())); !error.isEmpty())
    m_window->reportFailure(error);
}

void LessonController::goToStep(int index) {
  if (!m_lesson || index < 0 || index >= int(m_lesson->steps.size()))
    return;
  const workbench::LessonStep& step = m_lesson->steps[size_t(index)];
  m_step = index;
  m_busy = true;
  m_failed = false;
  // The lesson's introduction opens its first step.
  const std::string narrative = index == 0 && !m_lesson->introduction.empty()
                                    ? m_lesson->introduction + "\n\n" + step.narrative
                                    : step.narrative;
  m_panel->showStep(qs(m_lesson->title), index, int(m_lesson->steps.size()), qs(step.title),
                    qs(narrative));
  m_panel->setBusy(true);
  setAway(false);
  // Snapshots computed under other faults are not this step's: recompute them.
  const bool faultsChanged = workbench::setLessonFaults(step.faults);
  if (faultsChanged || step.faults != m_faultsInForce) {
    m_faultsInForce = step.faults;
    m_coordinator->reset();
  }
  continueStep();
}

void LessonController::continueStep() {
  if (!m_lesson || m_step < 0 || m_coordinator->isBusy())
    return;
  const workbench::LessonStep& step = m_lesson->steps[size_t(m_step)];
  const workbench::Session& s = m_coordinator->session();
  const size_t last = std::max({step.snapshot, step.compare.first, step.compare.second});
  if (!s.hasModel()) {
    fail(tr("The lesson's model is not loaded."));
    return;
  }
  if (s.snapshotCount() <= last) {
    if (!s.canStep()) {
      fail(tr("The pipeline ends before snapshot %1.").arg(last));
      return;
    }
    m_coordinator->step(); // stepFinished continues
    return;
  }
  finishStep();
}

void LessonController::finishStep() {
  const workbench::LessonStep& step = m_lesson->steps[size_t(m_step)];
  m_coordinator->selectSnapshot(int(step.snapshot));
  applySchedule(step);
  m_focus = 0;
  if (!step.focus.empty()) {
    auto id =
        workbench::resolveLessonFocus(*m_coordinator->session().graph(step.snapshot), step.focus);
    if (!id.ok()) {
      fail(tr("%1:%2: focus: %3")
               .arg(qs(m_lesson->path))
               .arg(step.focusLine)
               .arg(qs(id.error().message())));
      return;
    }
    m_focus = *id;
  }
  showView(step);
  if (m_focus)
    m_coordinator->selectNode(m_focus);
  m_busy = false;
  m_panel->setBusy(false);
  setAway(false);
  Q_EMIT stepShown(m_step);
}

void LessonController::applySchedule(const workbench::LessonStep& step) {
  workbench::Session& s = m_coordinator->session();
  auto overrides = cg::parseScheduleOverrides(step.schedule); // checked when the lesson was read
  if (!overrides.ok() || s.scheduleOverrides(step.snapshot) == *overrides)
    return;
  s.setScheduleOverrides(step.snapshot, std::move(overrides).value());
  m_window->codeDocks()->scheduleController()->refresh();
  m_window->codeDocks()->codeController()->refresh();
}

void LessonController::showView(const workbench::LessonStep& step) {
  using workbench::LessonView;
  auto raise = [](QDockWidget* dock) {
    if (!dock)
      return;
    dock->show();
    dock->raise();
  };
  switch (step.view) {
  case LessonView::Diff:
  case LessonView::Overlay:
    shrinkBottomDocks();
    m_window->showDiff(int(step.compare.first), int(step.compare.second));
    m_window->diffView()->setOverlay(step.view == LessonView::Overlay);
    if (m_focus)
      m_window->diffView()->selectNode(m_focus);
    // A step that claims something about the numbers shows them: the numeric diff runs.
    if (std::any_of(step.claims.begin(), step.claims.end(), [](const workbench::LessonClaim& c) {
          return c.metric.rfind("numeric.", 0) == 0;
        })) {
      m_numericPending = true;
      m_coordinator->runNumericDiff(int(step.compare.first), int(step.compare.second));
    }
    return;
  case LessonView::Graph:
    m_window->showGraphTab();
    shrinkBottomDocks();
    return;
  case LessonView::Code:
    shrinkBottomDocks();
    m_window->showGraphTab();
    raise(m_window->codeDocks()->codeDock());
    // The code is the slide: most of the column's height for it.
    if (QDockWidget* inspector = m_window->docks()->dock("inspector"))
      m_window->resizeDocks({inspector, m_window->codeDocks()->codeDock()}, {150, 900},
                            Qt::Vertical);
    return;
  case LessonView::Schedule:
    m_window->showGraphTab();
    raise(m_window->codeDocks()->scheduleDock());
    enlargeBottomDock(m_window->codeDocks()->scheduleDock());
    return;
  case LessonView::Memory:
    m_window->showGraphTab();
    raise(m_window->docks()->dock("memory"));
    enlargeBottomDock(m_window->docks()->dock("memory"));
    m_window->runProfile()->refreshMemory();
    return;
  case LessonView::Profile:
    m_window->showGraphTab();
    raise(m_window->docks()->dock("profile"));
    enlargeBottomDock(m_window->docks()->dock("profile"));
    m_window->runProfile()->profile();
    return;
  case LessonView::FindBug:
    // Debug > Find the Bug on the snapshots: bisection, the numeric diff's colours on the
    // guilty snapshot, the reduced reproducer.
    m_window->showGraphTab();
    raise(m_window->debugDocks()->dock());
    enlargeBottomDock(m_window->debugDocks()->dock());
    m_window->debugDocks()->findBug();
    return;
  }
  assert(false && "unknown lesson view");
}

void LessonController::fail(const QString& message) {
  m_busy = false;
  m_failed = true;
  m_panel->setBusy(false);
  m_panel->showMessage(message);
  m_window->reportFailure(message);
  Q_EMIT stepFailed(message);
}

void LessonController::next() {
  if (m_lesson && !m_busy)
    goToStep(m_step + 1);
}

void LessonController::previous() {
  if (m_lesson && !m_busy)
    goToStep(m_step - 1);
}

void LessonController::returnToStep() {
  if (m_lesson && !m_busy)
    goToStep(m_step);
}

void LessonController::shrinkBottomDocks() {
  // The bottom docks share one tab group whose height is the tallest page's minimum (the
  // schedule form's, over 600 pixels), which would leave the graph a strip on a 1080-pixel
  // projector. While a lesson runs they may shrink; a step that shows one of them enlarges it.
  for (const char* id :
       {"timeline", "memory", "run", "profile", "schedule", "compression", "debug"})
    if (QDockWidget* d = m_window->docks()->dock(QString::fromLatin1(id)))
      if (QWidget* w = d->widget();
          w && w->minimumSizeHint().height() > kBottomDockHeight && !m_shrunk.contains(w)) {
        w->setMinimumHeight(kBottomDockHeight);
        m_shrunk << w;
      }
  if (QDockWidget* timeline = m_window->docks()->dock("timeline");
      timeline && m_window->isVisible())
    m_window->resizeDocks({timeline}, {kBottomDockHeight}, Qt::Vertical);
}

void LessonController::closeLesson() {
  for (QWidget* w : std::as_const(m_shrunk))
    if (w)
      w->setMinimumHeight(0); // back to the minimum its layout asks for
  m_shrunk.clear();
  if (m_cornerTaken)
    m_window->setCorner(Qt::BottomLeftCorner, Qt::BottomDockWidgetArea);
  m_cornerTaken = false;
  if (m_userFaults)
    workbench::setLessonFaults(*m_userFaults);
  m_userFaults.reset();
  m_lesson.reset();
  m_step = -1;
  m_busy = false;
  m_focus = 0;
  setAway(false);
  m_panel->showMessage(tr("Choose a lesson above, or open one with Help \u2192 Lessons."));
}

void LessonController::setAway(bool away) {
  m_away = away;
  m_panel->setAway(away, m_step);
}

void LessonController::onExplored() {
  if (!m_lesson || m_busy || m_step < 0 || m_failed)
    return;
  const workbench::LessonStep& step = m_lesson->steps[size_t(m_step)];
  if (step.view == workbench::LessonView::FindBug) {
    // Find the bug selects the guilty snapshot and where it diverges: part of the step.
    const FindBugController* fb = m_window->debugDocks()->controller();
    const auto& report = fb->lastOutcome().report;
    if (fb->isRunning() || (report && report->bisect.mismatch &&
                            m_coordinator->session().currentIndex() == report->bisect.index))
      return;
  }
  const bool sameSnapshot = m_coordinator->session().currentIndex() == step.snapshot;
  const bool sameNode = !m_focus || m_coordinator->selectedNode() == m_focus;
  if (!sameSnapshot || !sameNode)
    setAway(true);
}

bool LessonController::waitForStep(int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while (m_busy && timer.elapsed() < timeoutMs) {
    QEventLoop loop;
    QTimer::singleShot(20, &loop, &QEventLoop::quit);
    loop.exec();
  }
  return !m_busy && !m_failed && m_lesson;
}

QStringList LessonController::saveStepScreenshots(const QString& dir, QString* error) {
  if (!m_lesson) {
    *error = tr("no lesson is open");
    return {};
  }
  if (!QDir().mkpath(dir)) {
    *error = tr("cannot create %1").arg(dir);
    return {};
  }
  m_window->resize(1920, 1200); // a WUXGA projector (16:10)
  m_window->show();
  QApplication::processEvents();
  arrangeDocks();
  QStringList written;
  for (int i = 0; i < int(m_lesson->steps.size()); ++i) {
    goToStep(i);
    if (!waitForStep()) {
      *error = tr("%1: step %2 could not be shown").arg(qs(m_lesson->path)).arg(i + 1);
      return {};
    }
    // The numeric diff and the back-half views compute in the background: wait for what the
    // slide shows.
    if (m_numericPending)
      waitFor(m_coordinator, &Coordinator::numericDiffFinished, 120000);
    RunProfileDocks* rp = m_window->runProfile();
    if (rp->planner()->isRunning())
      waitFor(rp->planner(), &MemoryPlanner::planned, 60000);
    if (rp->profiles()->isRunning())
      waitFor(rp->profiles(), &ProfileController::finished, 180000);
    if (FindBugController* fb = m_window->debugDocks()->controller(); fb->isRunning())
      waitFor(fb, &FindBugController::finished, 180000);
    m_window->waitForLayouts();
    if (i == 0) {
      // Again, now that the docks may be lower than the window grew for when it was shown.
      m_window->resize(1920, 1200);
      QApplication::processEvents();
      arrangeDocks();
      showView(m_lesson->steps[0]);
    }
    QApplication::processEvents();
    // Readable on a projector: a tall graph at a fixed scale around the focused node.
    readableFit(m_window->graphView(), m_focus);
    DiffView* diff = m_window->diffView();
    if (m_focus)
      diff->selectNode(m_focus);
    readableFit(diff->viewA(), diff->viewA()->selectedNode());
    readableFit(diff->viewB(), diff->viewB()->selectedNode());
    readableFit(diff->overlayView(), diff->overlayView()->selectedNode());
    QApplication::processEvents();
    const QString path =
        QDir(dir).filePath(QStringLiteral("step-%1.png").arg(i + 1, 2, 10, QChar('0')));
    if (!m_window->grab().save(path, "PNG")) {
      *error = tr("cannot write %1").arg(path);
      return {};
    }
    written << path;
  }
  return written;
}

} // namespace fb::gui
