// The coordinator: owns the Session, wires the views' "what the user wants" signals to it, runs
// long work (pass steps, numeric diffs) off the GUI thread and drops stale results.
#pragma once

#include "app/gui/graph/GraphView.h"
#include "app/workbench/IrText.h"
#include "app/workbench/Session.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <map>
#include <optional>

namespace fb::gui {

class DiffView;
class InspectorView;
class IrTextView;
class PipelinePanel;
class TimelineView;

/// The views the coordinator wires (owned by the main window).
struct Views {
  GraphView* graph = nullptr;
  PipelinePanel* pipeline = nullptr;
  InspectorView* inspector = nullptr;
  TimelineView* timeline = nullptr;
  IrTextView* ir = nullptr;
  DiffView* diff = nullptr;
};

/// The result of a pass step computed in a worker thread.
struct StepOutcome {
  std::optional<Snapshot> snapshot;
  QString error;
  /// Computed in the worker too, so the GUI thread only shows them: the new graph's IR text and
  /// its structural diff from the graph the step started from.
  std::optional<workbench::IrText> ir;
  std::optional<GraphDiff> diff;
};

/// The result of a numeric diff computed in a worker thread.
/// The result of loading a model in a worker thread.
struct LoadOutcome {
  std::shared_ptr<const Graph> graph;
  std::optional<workbench::IrText> ir; ///< printed in the worker too
  QString error;
};

struct NumericOutcome {
  std::optional<NumericDiff> diff;
  QString error;
};

class Coordinator : public QObject {
  Q_OBJECT
public:
  Coordinator(const Views& views, QObject* parent = nullptr);
  ~Coordinator() override;

  workbench::Session& session() { return m_session; }
  const workbench::Session& session() const { return m_session; }

  /// Loads a model. On failure the previous model stays and loadFailed carries the message.
  bool openModel(const QString& path);
  /// Loads a model in a worker thread; modelLoaded or loadFailed follow. A newer open (of either
  /// kind) makes a load in flight stale, and its result is dropped.
  void openModelAsync(const QString& path);
  /// True from the start of a background load until its result was handled.
  bool isLoading() const { return m_loading; }
  /// Shows an in-memory graph as the model (generated graphs, tests).
  void openGraph(std::unique_ptr<Graph> graph, const QString& displayName);
  /// Sets the pipeline from a string ("canonicalize,fuse" or "O2"); false and a message on error.
  bool setPipeline(const QString& text);
  /// Inserts `stepText` ("quantize{samples=8}") into the pipeline right after the current
  /// snapshot (dropping the snapshots computed after it) and runs it; false and a message when
  /// the step does not parse, no model is loaded or a pass is running.
  bool applyStep(const QString& stepText);
  /// True from the start of a pass step until its result was handled (committed or dropped).
  bool isBusy() const { return m_job.has_value(); }
  NodeId selectedNode() const { return m_selected; }
  /// The marks shown on the main graph: what the current snapshot's pass added or changed.
  const std::map<NodeId, NodeMark>& currentMarks() const { return m_marks; }
  const GraphViewOptions& graphOptions() const { return m_graphOptions; }
  void setGraphOptions(const GraphViewOptions& options);

public Q_SLOTS:
  void step();
  void runToEnd();
  void back();
  void forward();
  void reset();
  /// Stops a run to the end and drops the step in flight.
  void cancel();
  void selectSnapshot(int index);
  /// Selects a node of the current snapshot in every view.
  void selectNode(fb::NodeId id);
  /// Shows snapshot `snapshot` and selects node `id` in it (provenance links).
  void showNodeInSnapshot(fb::NodeId id, int snapshot);
  void compare(int a, int b);
  void runNumericDiff(int a, int b);

Q_SIGNALS:
  void modelLoaded(const QString& displayName);
  void loadFailed(const QString& message);
  /// A line for the status bar; `error` for failures the user must see.
  void message(const QString& text, bool error);
  void busyChanged(bool busy, const QString& what);
  /// A model started loading in the background.
  void loadStarted(const QString& path);
  void snapshotChanged(int index);
  /// A node was selected in some view (0: none); every view follows.
  void selectionChanged(fb::NodeId id);
  /// A pass step finished (ok false: it failed or its result was stale and dropped).
  void stepFinished(bool ok);
  void numericDiffFinished(bool ok);

private:
  void startStep();
  void onStepDone();
  void onNumericDone();
  void onLoadDone();
  /// Shows the session's freshly loaded model in every view.
  void showLoadedModel();
  void refresh();
  void refreshPipeline();
  void refreshInspector();
  void connectViews();
  /// The IR text of a graph, from the cache or printed now.
  const workbench::IrText& irTextFor(const std::shared_ptr<const Graph>& graph);
  /// What snapshot `index`'s step added or changed, from the cache or diffed now.
  const std::map<NodeId, NodeMark>& marksFor(size_t index);
  void clearCaches();

  Views m_views;
  workbench::Session m_session;
  GraphViewOptions m_graphOptions;
  std::shared_ptr<const Graph> m_shownGraph;
  std::map<NodeId, NodeMark> m_marks;
  NodeId m_selected = 0;
  bool m_runToEnd = false;
  std::optional<workbench::StepJob> m_job;
  QFutureWatcher<StepOutcome> m_stepWatcher;
  QFutureWatcher<NumericOutcome> m_numericWatcher;
  QFutureWatcher<LoadOutcome> m_loadWatcher;
  uint64_t m_loadRequest = 0;   ///< bumped by every open; a load result for an older one is stale
  uint64_t m_loadRunning = 0;
  bool m_loading = false;
  QString m_loadPath;
  QString m_pendingLoad;        ///< asked for while another load ran
  uint64_t m_numericRequest = 0;
  uint64_t m_numericRunning = 0;
  /// Caches keyed by graph identity; each entry holds its graphs so an address is never reused
  /// while it is a key.
  struct IrEntry {
    std::shared_ptr<const Graph> graph;
    workbench::IrText ir;
  };
  struct MarksEntry {
    std::shared_ptr<const Graph> before, after;
    std::map<NodeId, NodeMark> marks;
  };
  std::map<const Graph*, IrEntry> m_irCache;
  std::map<std::pair<const Graph*, const Graph*>, MarksEntry> m_marksCache;
};

} // namespace fb::gui
