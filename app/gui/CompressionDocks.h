// The quantize & prune dock wired to the coordinator: the buttons open the passes' option
// dialogs and apply the chosen step; the report of the current snapshot's quantize or prune
// step is computed off the GUI thread, shown, and coloured onto the graph.
#pragma once

#include "app/workbench/CompressionReport.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

class QDockWidget;
class QMainWindow;

namespace fb::gui {

class CompressionView;
class Coordinator;
class DockManager;
class GraphView;
class PassOptionsDialog;
class ProfileView;

/// A report computed in a worker thread, for the snapshot whose graph it names.
struct CompressionOutcome {
  std::shared_ptr<const Graph> graph; ///< the snapshot's graph (identity decides staleness)
  int snapshot = -1;
  std::optional<workbench::CompressionReport> report;
  QString error;
};

class CompressionDocks : public QObject {
  Q_OBJECT
public:
  /// Makes the dock (id "compression", tabbed with `tabWith`). `profile` is the profile view,
  /// whose time-share colouring of the graph and this dock's colouring exclude each other.
  CompressionDocks(QMainWindow* window, DockManager& docks, Coordinator* coordinator,
                   GraphView* graph, ProfileView* profile, QDockWidget* tabWith);
  ~CompressionDocks() override;

  CompressionView* view() const { return m_view; }
  QDockWidget* dock() const { return m_dock; }
  /// The options dialog of `pass` ("quantize", "prune"), filled from the latest step of that
  /// pass in the pipeline; the caller execs it. Null when no such pass is registered.
  std::unique_ptr<PassOptionsDialog> makeDialog(const QString& pass) const;
  /// Opens the options dialog of `pass` and applies the chosen step after the current snapshot.
  void configureAndApply(const QString& pass);
  /// True while a report is being computed.
  bool isComputing() const { return m_running; }

  /// Screenshot mode: waits for the report of the current snapshot and writes compression.png
  /// (the dock floated at a readable size), graph-compression.png (the graph coloured by it)
  /// and quantize-dialog.png. Returns the files written, or empty and `error`.
  QStringList saveScreenshots(const QString& dir, QString* error);

Q_SIGNALS:
  /// A report was shown (or a message instead of one).
  void reportShown();

private:
  void update();
  void onComputed();
  void updateHeat();

  QMainWindow* m_window;
  Coordinator* m_coordinator;
  GraphView* m_graph;
  ProfileView* m_profile;
  CompressionView* m_view = nullptr;
  QDockWidget* m_dock = nullptr;
  QFutureWatcher<CompressionOutcome> m_watcher;
  bool m_running = false;
  std::shared_ptr<const Graph> m_pending; ///< the graph whose report is wanted next
  std::optional<CompressionOutcome> m_shown;
  bool m_heatShown = false;
};

} // namespace fb::gui
