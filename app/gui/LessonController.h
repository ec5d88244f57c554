// Plays a lesson in the main window: the Lessons dock, Help > Lessons, and per step the
// faults, the pipeline steps (through the coordinator, off the GUI thread), the schedule
// overrides, the view, and the focused node selected and centred. Remembers the step, so a
// student who leaves the lesson to explore comes back to the same step.
#pragma once

#include "app/workbench/Lesson.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <QStringList>

#include <optional>
#include <vector>

class QDockWidget;

namespace fb::gui {

class Coordinator;
class DockManager;
class LessonPanel;
class MainWindow;

class LessonController : public QObject {
  Q_OBJECT
public:
  /// Adds the "lessons" dock (left, below the pipeline) to `window`, which must have made its
  /// coordinator, code, run/profile and debug docks already.
  LessonController(MainWindow* window, DockManager& docks);
  ~LessonController() override;

  /// The folder of the shipped course (samples/lessons).
  static QString courseFolder();

  LessonPanel* panel() const { return m_panel; }
  QDockWidget* dock() const { return m_dock; }
  /// The lesson being played, or null.
  const workbench::Lesson* lesson() const { return m_lesson ? &*m_lesson : nullptr; }
  /// The step shown (or being computed), 0-based; -1 without a lesson.
  int currentStep() const { return m_step; }
  /// True while a step's snapshots are being computed.
  bool isBusy() const { return m_busy; }
  /// True when the student moved away from the step (another snapshot or node).
  bool isAway() const { return m_away; }
  /// The node the step shown focuses (0: none).
  NodeId focusNode() const { return m_focus; }

  /// Reads a lesson, opens its model with its pipeline and shows its first step. Returns an
  /// error message (the file and line of a bad lesson), or "" on success.
  QString openLesson(const QString& path);
  /// Help > Lessons: shows the dock and, when no lesson is open, the course's first lesson.
  void openCourse();
  /// Shows step `index` (computes its snapshots in the background; stepShown follows).
  void goToStep(int index);
  void next();
  void previous();
  /// Puts the lesson's view of the current step back after the student explored.
  void returnToStep();
  /// Leaves the lesson: the faults it turned on go back to what they were.
  void closeLesson();
  /// Processes events until the step in flight is shown; false on failure or timeout.
  bool waitForStep(int timeoutMs = 120000);

  /// `fusebox --lesson FILE --screenshot DIR`: shows every step in turn and writes the window
  /// to DIR/step-01.png, step-02.png, ... Returns the files, or an empty list and sets `error`.
  QStringList saveStepScreenshots(const QString& dir, QString* error);

Q_SIGNALS:
  /// Step `index` is on screen.
  void stepShown(int index);
  /// Showing a step failed (a pass failed, a node is missing); the message says which.
  void stepFailed(const QString& message);

private:
  /// Shows the dock in front of its tab neighbour, at a width for large type.
  void arrangeDocks();
  /// A step that shows the memory plan, schedule or profile gives that dock room; the others
  /// give the room back to the graph.
  void enlargeBottomDock(QDockWidget* dock);
  void shrinkBottomDocks();
  void continueStep();
  void finishStep();
  void fail(const QString& message);
  void showView(const workbench::LessonStep& step);
  void applySchedule(const workbench::LessonStep& step);
  void setAway(bool away);
  void onExplored();

  MainWindow* m_window;
  Coordinator* m_coordinator;
  LessonPanel* m_panel;
  QDockWidget* m_dock;
  std::optional<workbench::Lesson> m_lesson;
  int m_step = -1;
  bool m_busy = false;
  bool m_away = false;
  bool m_failed = false;
  bool m_cornerTaken = false;    ///< the lesson's column took the bottom-left corner
  bool m_opening = false;        ///< the lesson is opening its own model (not the user another one)
  bool m_numericPending = false; ///< the step started a numeric diff that has not finished
  NodeId m_focus = 0;
  /// The faults the session's snapshots were computed under, and the user's own faults from
  /// before the lesson (restored when it closes).
  std::vector<Fault> m_faultsInForce;
  std::optional<std::vector<Fault>> m_userFaults;
  /// Bottom-dock pages whose minimum height the lesson lowered (restored when it ends).
  QList<QPointer<QWidget>> m_shrunk;
};

} // namespace fb::gui
