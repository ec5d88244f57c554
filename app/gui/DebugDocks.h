// The find-the-bug dock and the Debug menu (built-in faults on and off, Find the bug), wired to
// the coordinator: the search runs off the GUI thread; its result selects the guilty snapshot,
// colours the graph by each node's error and selects where the values first diverge.
#pragma once

#include <QObject>
#include <QString>

class QDockWidget;
class QMainWindow;
class QMenu;

namespace fb::gui {

class Coordinator;
class DebugView;
class DockManager;
class FindBugController;
class GraphView;

class DebugDocks : public QObject {
  Q_OBJECT
public:
  DebugDocks(QMainWindow* window, DockManager& docks, Coordinator* coordinator, GraphView* graph,
             QDockWidget* tabWith);

  DebugView* view() const { return m_view; }
  QDockWidget* dock() const { return m_dock; }
  FindBugController* controller() const { return m_controller; }
  /// Adds Find the bug, Inject fault (one checkable entry per built-in fault) and Turn all
  /// faults off to `menu`.
  void populateMenu(QMenu* menu);
  /// Where reproducers are written (default: the user's cache folder, "reproducers").
  void setReproducerDir(const QString& dir) { m_reproducerDir = dir; }

  /// Starts a search on the session's snapshots with the view's backend.
  void findBug();
  /// Shows the last search's guilty snapshot, coloured, with its divergent node selected.
  void showGuilty();

Q_SIGNALS:
  /// The user asks to open a reproducer as a new session (the main window opens a window).
  void openReproducerRequested(const QString& path);

private:
  void onFinished();
  void updateFaultsText();

  QMainWindow* m_window;
  Coordinator* m_coordinator;
  GraphView* m_graph;
  DebugView* m_view = nullptr;
  QDockWidget* m_dock = nullptr;
  FindBugController* m_controller = nullptr;
  QString m_reproducerDir;
};

} // namespace fb::gui
