// The main window: the graph in the centre (with the diff as a second tab), docks for the
// pipeline, inspector, IR text and snapshot timeline, menus, status-bar progress, drag and drop,
// recent files, and the offscreen screenshot mode.
#pragma once

#include "app/gui/MainActions.h"

#include <QMainWindow>
#include <QMessageBox>
#include <QPointer>
#include <QStringList>

#include <memory>

class QLabel;
class QLineEdit;
class QProgressBar;
class QTabWidget;
class QToolButton;

namespace fb::gui {

class CodeDocks;
class CompressionDocks;
class DebugDocks;
class SessionFiles;
class Coordinator;
class DiffView;
class DockManager;
class GraphView;
class InspectorView;
class IrTextView;
class LessonController;
class PipelinePanel;
class RunController;
class RunProfileDocks;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  /// `persistent`: restore and save the dock layout and recent files with QSettings (off for
  /// tests and screenshots, so they are reproducible).
  explicit MainWindow(bool persistent = true, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens a model (or a .fbsession file); a failure shows a message in the window and keeps
  /// the previous model.
  bool openFile(const QString& path);
  /// Writes the session (model, pipeline, limits, schedules, faults, current and compared
  /// snapshots) to a .fbsession file; an error message, or empty.
  QString saveSession(const QString& path) const;
  /// Opens a .fbsession file: the model and pipeline at once, the steps up to the saved snapshot
  /// in the background (sessionFiles()->restored follows). False and a message on a bad file.
  bool openSession(const QString& path);
  SessionFiles* sessionFiles() const { return m_sessions; }
  /// Opens a model loaded in a worker thread (the window stays responsive); what the user's
  /// File > Open, recent files and drag and drop use.
  void openFileAsync(const QString& path);
  /// The message banner above the graph ("" when hidden).
  QString bannerText() const;
  /// Shows a failure in words: the banner, the status bar and, when the window is on screen, a
  /// dialog (one at a time; a newer failure replaces its text). The loaded model stays.
  void reportFailure(const QString& text);
  /// Exports the main graph view (.png, .svg, .dot); returns an error message or "".
  QString exportGraph(const QString& path);
  /// Shows the diff tab, comparing snapshots a and b.
  void showDiff(int a, int b);
  void showGraphTab();
  /// Larger text in every view, for a projector.
  void setPresentationMode(bool on);
  bool isPresentationMode() const { return m_presentation; }

  /// Runs the pipeline to its end, processing events; false on a failed step or timeout.
  bool runPipelineBlocking(int timeoutMs = 60000);
  /// Processes events until no graph view is laying out; false on timeout.
  bool waitForLayouts(int timeoutMs = 30000);
  /// Renders the window and each view to PNG files in `dir`; returns the files written, or an
  /// empty list and sets `error`.
  QStringList saveScreenshots(const QString& dir, QString* error);

  Coordinator* coordinator() const { return m_coordinator; }
  RunController* runController() const { return m_runs; }
  /// The memory plan, run and profile docks.
  RunProfileDocks* runProfile() const { return m_runProfile; }
  GraphView* graphView() const { return m_graph; }
  PipelinePanel* pipelinePanel() const { return m_pipeline; }
  InspectorView* inspector() const { return m_inspector; }
  TimelineView* timeline() const { return m_timeline; }
  IrTextView* irView() const { return m_ir; }
  DiffView* diffView() const { return m_diff; }
  const MainActions& actions() const { return m_actions; }
  DockManager* docks() const { return m_docks.get(); }
  /// The code view and the schedule editor with their controllers.
  CodeDocks* codeDocks() const { return m_codeDocks; }
  /// The quantize & prune dock.
  CompressionDocks* compression() const { return m_compression; }
  /// The find-the-bug dock and the Debug menu.
  DebugDocks* debugDocks() const { return m_debug; }
  /// The Lessons dock and Help > Lessons.
  LessonController* lessons() const { return m_lessons; }
  /// Opens a reproducer (fusebox-opt --reduce, Find the bug) as a new session in a new window,
  /// with its pipeline set, ready to step; null and a message when it cannot be read.
  MainWindow* openReproducer(const QString& path);
  QLineEdit* searchField() const { return m_search; }
  /// Runs a search as the search bar does; returns the number of matches.
  int search(const QString& text);

protected:
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

private:
  void buildMenus();
  void wireActions();
  void showBanner(const QString& text, bool error);
  QPointer<QMessageBox> m_failureDialog;
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void openDialog();
  void exportDialog();
  void updateTitle();
  void updateActions();
  /// Runs the current snapshot on the CPU through the workbench and reports the comparison.
  void runCurrentOnCpu();

  bool m_persistent;
  MainActions m_actions;
  std::unique_ptr<DockManager> m_docks;
  Coordinator* m_coordinator = nullptr;
  RunController* m_runs = nullptr;
  RunProfileDocks* m_runProfile = nullptr;
  CodeDocks* m_codeDocks = nullptr;
  CompressionDocks* m_compression = nullptr;
  DebugDocks* m_debug = nullptr;
  LessonController* m_lessons = nullptr;
  SessionFiles* m_sessions = nullptr;
  GraphView* m_graph = nullptr;
  PipelinePanel* m_pipeline = nullptr;
  InspectorView* m_inspector = nullptr;
  TimelineView* m_timeline = nullptr;
  IrTextView* m_ir = nullptr;
  DiffView* m_diff = nullptr;
  QTabWidget* m_tabs = nullptr;
  QLabel* m_banner = nullptr;
  QWidget* m_searchBar = nullptr;
  QLineEdit* m_search = nullptr;
  QLabel* m_searchStatus = nullptr;
  QLabel* m_statusText = nullptr;
  QProgressBar* m_progress = nullptr;
  QToolButton* m_cancelButton = nullptr;
  QStringList m_recent;
  QString m_modelName;
  bool m_layoutRestored = false;
  bool m_shownOnce = false;
  bool m_presentation = false;
  int m_normalPointSize = 10;
};

} // namespace fb::gui
