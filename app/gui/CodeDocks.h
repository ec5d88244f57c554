// The compiler's back half in the main window, code part: the code view and the schedule
// editor as docks, the controllers that feed them from the workbench, and their screenshots.
// One object so the main window gains them with a few lines.
#pragma once

#include <QObject>
#include <QStringList>

class QDockWidget;
class QMainWindow;

namespace fb::gui {

class CodeController;
class CodeView;
class Coordinator;
class DockManager;
class ScheduleController;
class ScheduleView;

class CodeDocks : public QObject {
  Q_OBJECT
public:
  /// Adds the "code" dock tabbed with `codeNeighbour` and the "schedule" dock tabbed with
  /// `scheduleNeighbour` (either may be null: the dock then opens on its own), both behind
  /// their neighbours so the window opens as before.
  CodeDocks(QMainWindow* window, DockManager* docks, Coordinator* coordinator,
            QDockWidget* codeNeighbour, QDockWidget* scheduleNeighbour);

  CodeView* codeView() const { return m_codeView; }
  ScheduleView* scheduleView() const { return m_scheduleView; }
  CodeController* codeController() const { return m_code; }
  ScheduleController* scheduleController() const { return m_schedule; }
  QDockWidget* codeDock() const { return m_codeDock; }
  QDockWidget* scheduleDock() const { return m_scheduleDock; }

  /// Selects the most interesting fused convolution group, then writes code-loops.png,
  /// code-llvm.png and code-asm.png (its kernel marked in the whole model's code) and
  /// schedule.png (a changed register tile or tile applied and timed) to `dir`. Returns the
  /// files written, or an empty list and sets `error`.
  QStringList saveScreenshots(const QString& dir, QString* error);
  void setTextPointSize(int points);

private:
  QMainWindow* m_window;
  Coordinator* m_coordinator;
  CodeView* m_codeView;
  ScheduleView* m_scheduleView;
  CodeController* m_code;
  ScheduleController* m_schedule;
  QDockWidget* m_codeDock;
  QDockWidget* m_scheduleDock;
};

} // namespace fb::gui
