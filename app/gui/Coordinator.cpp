// The coordinator: session changes on the GUI thread, pass steps and numeric diffs in workers.
#include "app/gui/Coordinator.h"
#include "app/gui/WorkerGuard.h"

#include "app/gui/DiffView.h"
#include "app/gui/InspectorView.h"
#include "app/gui/IrTextView.h"
#include "app/gui/PipelinePanel.h"
#include "app/gui/TimelineView.h"
#include "app/workbench/IrText.h"
#include "app/workbench/NodeInspection.h"
#include "core/ModelIO.h"
#include "passes/PassRegistry.h"

#include <QtConcurrent/QtConcurrent>

namespace fb::gui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }

/// Bound on cached IR texts and mark sets (a long session must not keep every printout).
constexpr size_t kCacheLimit = 32;

std::map<NodeId, NodeMark> marksOf(const GraphDiff& d) {
  std::map<NodeId, NodeMark> marks;
  for (NodeId id : d.added)
    marks[id] = NodeMark::Added;
  for (const NodeChange& c : d.changed)
    marks[c.id] = NodeMark::Changed;
  return marks;
}
} // namespace

Coordinator::Coordinator(const Views& views, QObject* parent) : QObject(parent), m_views(views) {
  connect(&m_stepWatcher, &QFutureWatcher<StepOutcome>::finished, this, &Coordinator::onStepDone);
  connect(&m_numericWatcher, &QFutureWatcher<NumericOutcome>::finished, this,
          &Coordinator::onNumericDone);
  connect(&m_loadWatcher, &QFutureWatcher<LoadOutcome>::finished, this, &Coordinator::onLoadDone);
  connectViews();
}

Coordinator::~Coordinator() {
  // A worker only touches its job's values; wait so it does not outlive the watcher.
  m_stepWatcher.waitForFinished();
  m_numericWatcher.waitForFinished();
  m_loadWatcher.waitForFinished();
}

void Coordinator::connectViews() {
  if (GraphView* g = m_views.graph) {
    connect(g, &GraphView::nodeSelected, this, &Coordinator::selectNode);
    // Marks survive a fresh layout: apply them again when the scene is rebuilt.
    connect(g, &GraphView::layoutFinished, this, [this](bool ok, const QString&) {
      if (ok) {
        m_views.graph->setMarks(m_marks);
        if (m_selected)
          m_views.graph->selectNode(m_selected);
      }
    });
  }
  if (IrTextView* ir = m_views.ir)
    connect(ir, &IrTextView::nodeSelected, this, &Coordinator::selectNode);
  if (InspectorView* in = m_views.inspector) {
    connect(in, &InspectorView::nodeLinkActivated, this, &Coordinator::selectNode);
    connect(in, &InspectorView::provenanceActivated, this, &Coordinator::showNodeInSnapshot);
  }
  if (TimelineView* t = m_views.timeline)
    connect(t, &TimelineView::snapshotSelected, this, &Coordinator::selectSnapshot);
  if (DiffView* d = m_views.diff) {
    connect(d, &DiffView::compareRequested, this, &Coordinator::compare);
    connect(d, &DiffView::numericDiffRequested, this, &Coordinator::runNumericDiff);
    connect(d, &DiffView::nodeSelected, this, [this](NodeId id, int snapshot) {
      if (snapshot < 0 || size_t(snapshot) >= m_session.snapshotCount() || !m_views.inspector)
        return;
      if (auto ins = workbench::inspectNode(m_session, size_t(snapshot), id))
        m_views.inspector->showNode(*ins, snapshot);
    });
  }
  if (PipelinePanel* p = m_views.pipeline) {
    connect(p, &PipelinePanel::stepRequested, this, &Coordinator::step);
    connect(p, &PipelinePanel::runToEndRequested, this, &Coordinator::runToEnd);
    connect(p, &PipelinePanel::backRequested, this, &Coordinator::back);
    connect(p, &PipelinePanel::forwardRequested, this, &Coordinator::forward);
    connect(p, &PipelinePanel::resetRequested, this, &Coordinator::reset);
    connect(p, &PipelinePanel::addStepRequested, this, [this](const QString& pass, int index) {
      m_session.insertStep(size_t(std::max(0, index)), PipelineStep{pass.toStdString(), {}});
      refresh();
    });
    connect(p, &PipelinePanel::removeStepRequested, this, [this](int index) {
      m_session.removeStep(size_t(index));
      refresh();
    });
    connect(p, &PipelinePanel::moveStepRequested, this, [this](int from, int to) {
      m_session.moveStep(size_t(from), size_t(to));
      refresh();
    });
    connect(p, &PipelinePanel::stepOptionsRequested, this, [this](int index, const QString& options) {
      Status st = m_session.setStepOptions(size_t(index), options.toStdString());
      if (!st.ok())
        Q_EMIT message(qs(st.error().message()), /*error=*/true);
      refresh();
    });
    connect(p, &PipelinePanel::pipelineTextRequested, this, &Coordinator::setPipeline);
  }
}

bool Coordinator::openModel(const QString& path) {
  cancel();
  ++m_loadRequest; // a background load in flight is stale now
  m_pendingLoad.clear();
  Status st = m_session.load(path.toStdString());
  if (!st.ok()) {
    const QString msg = tr("Could not open %1: %2").arg(path, qs(st.error().message()));
    Q_EMIT loadFailed(msg);
    Q_EMIT message(msg, /*error=*/true);
    return false;
  }
  clearCaches();
  showLoadedModel();
  return true;
}

void Coordinator::showLoadedModel() {
  m_selected = 0;
  m_shownGraph.reset();
  ++m_numericRequest;
  refresh();
  Q_EMIT modelLoaded(qs(m_session.displayName()));
  Q_EMIT message(tr("Opened %1: %2 nodes").arg(qs(m_session.displayName())).arg(m_session.summary(0).stats.nodes),
                 false);
}

void Coordinator::openModelAsync(const QString& path) {
  if (m_loading) {
    // One load at a time; the latest request wins once the current one ends.
    ++m_loadRequest;
    m_pendingLoad = path;
    return;
  }
  m_loadRunning = ++m_loadRequest;
  m_loading = true;
  m_loadPath = path;
  Q_EMIT loadStarted(path);
  Q_EMIT busyChanged(true, tr("Loading %1…").arg(path));
  const std::string p = path.toStdString();
  m_loadWatcher.setFuture(QtConcurrent::run([p] {
    return guardedWork<LoadOutcome>(QStringLiteral("Loading the model"), [&p] {
      LoadOutcome out;
      auto g = loadModel(p);
      if (g.ok()) {
        out.graph = std::shared_ptr<const Graph>(std::move(g).value());
        out.ir = workbench::irTextOf(*out.graph);
      } else
        out.error = QString::fromStdString(g.error().message());
      return out;
    });
  }));
}

void Coordinator::onLoadDone() {
  LoadOutcome out = m_loadWatcher.result();
  m_loading = false;
  Q_EMIT busyChanged(false, {});
  const bool stale = m_loadRunning != m_loadRequest;
  if (!m_pendingLoad.isEmpty()) {
    const QString next = m_pendingLoad;
    m_pendingLoad.clear();
    openModelAsync(next);
    return;
  }
  if (stale)
    return; // a synchronous open replaced it
  if (!out.graph) {
    const QString msg = tr("Could not open %1: %2").arg(m_loadPath, out.error);
    Q_EMIT loadFailed(msg);
    Q_EMIT message(msg, /*error=*/true);
    return;
  }
  cancel();
  std::shared_ptr<const Graph> graph = out.graph;
  m_session.adoptLoadedModel(std::move(out.graph), m_loadPath.toStdString());
  clearCaches();
  if (out.ir)
    m_irCache[graph.get()] = IrEntry{graph, std::move(*out.ir)};
  showLoadedModel();
}

void Coordinator::openGraph(std::unique_ptr<Graph> graph, const QString& displayName) {
  cancel();
  m_session.loadGraph(std::move(graph), displayName.toStdString());
  m_selected = 0;
  m_shownGraph.reset();
  clearCaches();
  ++m_numericRequest;
  refresh();
  Q_EMIT modelLoaded(displayName);
}

bool Coordinator::setPipeline(const QString& text) {
  Status st = m_session.setPipeline(text.trimmed().toStdString());
  if (!st.ok()) {
    Q_EMIT message(qs(st.error().message()), /*error=*/true);
    refreshPipeline();
    return false;
  }
  refresh();
  return true;
}

bool Coordinator::applyStep(const QString& stepText) {
  if (!m_session.hasModel()) {
    Q_EMIT message(tr("Open a model first."), /*error=*/true);
    return false;
  }
  if (isBusy()) {
    Q_EMIT message(tr("A pass is running; apply %1 when it has finished.").arg(stepText),
                   /*error=*/true);
    return false;
  }
  Expected<std::vector<PipelineStep>> steps = parsePipeline(stepText.trimmed().toStdString());
  if (!steps.ok() || steps.value().size() != 1) {
    Q_EMIT message(steps.ok() ? tr("'%1' is not one pipeline step").arg(stepText)
                              : qs(steps.error().message()),
                   /*error=*/true);
    return false;
  }
  m_session.insertStep(m_session.currentIndex(), steps.value().front());
  refresh();
  step();
  return true;
}

void Coordinator::setGraphOptions(const GraphViewOptions& options) {
  m_graphOptions = options;
  m_shownGraph.reset();
  refresh();
}

void Coordinator::step() {
  if (isBusy() || !m_session.hasModel())
    return;
  if (m_session.canForward()) {
    m_session.forward();
    refresh();
    Q_EMIT stepFinished(true);
    if (m_runToEnd && m_session.canStep())
      QMetaObject::invokeMethod(this, &Coordinator::step, Qt::QueuedConnection);
    else
      m_runToEnd = false;
    return;
  }
  startStep();
}

void Coordinator::startStep() {
  m_job = m_session.prepareStep();
  if (!m_job) {
    m_runToEnd = false;
    Q_EMIT message(tr("The pipeline has no step left; add passes to go on."), false);
    Q_EMIT stepFinished(false);
    return;
  }
  const QString what = tr("Running %1\u2026").arg(qs(m_job->step.str()));
  if (m_views.pipeline)
    m_views.pipeline->setBusy(true);
  Q_EMIT busyChanged(true, what);
  workbench::StepJob job = *m_job;
  m_stepWatcher.setFuture(QtConcurrent::run([job] {
    return guardedWork<StepOutcome>(QStringLiteral("The step"), [&job] {
      StepOutcome out;
      auto snap = workbench::runStepJob(job);
      if (snap.ok()) {
        out.snapshot = std::move(snap).value();
        out.ir = workbench::irTextOf(*out.snapshot->graph);
        out.diff = diffGraphs(*job.graph, *out.snapshot->graph);
      } else
        out.error = QString::fromStdString(snap.error().message());
      return out;
    });
  }));
}

void Coordinator::onStepDone() {
  StepOutcome out = m_stepWatcher.result();
  std::optional<workbench::StepJob> job = std::move(m_job);
  m_job.reset();
  if (m_views.pipeline)
    m_views.pipeline->setBusy(false);
  Q_EMIT busyChanged(false, {});
  if (!job) {
    Q_EMIT stepFinished(false);
    return;
  }
  if (!out.snapshot) {
    m_runToEnd = false;
    Q_EMIT message(tr("Step %1 failed; the graph is unchanged. %2").arg(qs(job->step.str()), out.error),
                   /*error=*/true);
    refresh();
    Q_EMIT stepFinished(false);
    return;
  }
  std::shared_ptr<const Graph> before = job->graph, after = out.snapshot->graph;
  if (!m_session.commitStep(*job, std::move(*out.snapshot))) {
    // The user changed the pipeline or the model while the pass ran.
    m_runToEnd = false;
    Q_EMIT message(tr("Dropped a stale result of %1.").arg(qs(job->step.str())), false);
    refresh();
    Q_EMIT stepFinished(false);
    return;
  }
  if (m_irCache.size() >= kCacheLimit)
    m_irCache.clear();
  if (m_marksCache.size() >= kCacheLimit)
    m_marksCache.clear();
  if (out.ir)
    m_irCache[after.get()] = IrEntry{after, std::move(*out.ir)};
  if (out.diff)
    m_marksCache[{before.get(), after.get()}] = MarksEntry{before, after, marksOf(*out.diff)};
  refresh();
  Q_EMIT message(qs(m_session.summary(m_session.currentIndex()).summary), false);
  Q_EMIT stepFinished(true);
  if (m_runToEnd && m_session.canStep())
    QMetaObject::invokeMethod(this, &Coordinator::step, Qt::QueuedConnection);
  else
    m_runToEnd = false;
}

void Coordinator::runToEnd() {
  if (isBusy())
    return;
  m_runToEnd = true;
  step();
}

void Coordinator::back() {
  if (isBusy() || !m_session.back())
    return;
  refresh();
}

void Coordinator::forward() {
  if (isBusy() || !m_session.forward())
    return;
  refresh();
}

void Coordinator::reset() {
  cancel();
  m_session.reset();
  refresh();
}

void Coordinator::cancel() {
  m_runToEnd = false;
  if (m_job)
    m_job->generation = 0; // its result will not commit
}

void Coordinator::selectSnapshot(int index) {
  if (index < 0 || size_t(index) >= m_session.snapshotCount() || size_t(index) == m_session.currentIndex())
    return;
  m_session.select(size_t(index));
  refresh();
}

void Coordinator::selectNode(NodeId id) {
  if (!m_session.hasModel())
    return;
  m_selected = id;
  if (m_views.graph && m_views.graph->selectedNode() != id)
    m_views.graph->selectNode(id);
  if (m_views.ir)
    m_views.ir->selectNode(id);
  refreshInspector();
  Q_EMIT selectionChanged(id);
}

void Coordinator::showNodeInSnapshot(NodeId id, int snapshot) {
  if (snapshot < 0 || size_t(snapshot) >= m_session.snapshotCount())
    return;
  m_session.select(size_t(snapshot));
  m_selected = id;
  refresh();
}

void Coordinator::compare(int a, int b) {
  const int n = int(m_session.snapshotCount());
  if (!m_views.diff || a < 0 || b < 0 || a >= n || b >= n)
    return;
  ++m_numericRequest; // a numeric diff of another pair is stale now
  GraphDiff d = m_session.structuralDiff(size_t(a), size_t(b));
  m_views.diff->showDiff(a, b, m_session.graph(size_t(a)), m_session.graph(size_t(b)), d,
                         qs(m_session.textDiff(size_t(a), size_t(b))));
}

void Coordinator::runNumericDiff(int a, int b) {
  const int n = int(m_session.snapshotCount());
  if (a < 0 || b < 0 || a >= n || b >= n)
    return;
  if (m_numericWatcher.isRunning()) {
    Q_EMIT message(tr("A numeric diff is still running."), false);
    return;
  }
  workbench::NumericDiffJob job;
  job.a = size_t(a);
  job.b = size_t(b);
  job.graphA = m_session.graph(job.a);
  job.graphB = m_session.graph(job.b);
  job.seed = 1;
  m_numericRunning = ++m_numericRequest;
  if (m_views.diff)
    m_views.diff->setNumericBusy(true);
  Q_EMIT busyChanged(true, tr("Running snapshots %1 and %2 on the same inputs\u2026").arg(a).arg(b));
  m_numericWatcher.setFuture(QtConcurrent::run([job] {
    return guardedWork<NumericOutcome>(QStringLiteral("The numeric diff"), [&job] {
      NumericOutcome out;
      auto d = workbench::runNumericDiffJob(job);
      if (d.ok())
        out.diff = std::move(d).value();
      else
        out.error = QString::fromStdString(d.error().message());
      return out;
    });
  }));
}

void Coordinator::onNumericDone() {
  NumericOutcome out = m_numericWatcher.result();
  Q_EMIT busyChanged(false, {});
  if (m_numericRunning != m_numericRequest) {
    if (m_views.diff)
      m_views.diff->setNumericBusy(false);
    Q_EMIT numericDiffFinished(false); // stale: the diff view shows another pair now
    return;
  }
  if (!m_views.diff) {
    Q_EMIT numericDiffFinished(out.diff.has_value());
    return;
  }
  if (out.diff) {
    m_views.diff->showNumericDiff(*out.diff);
    Q_EMIT message(out.diff->ok() ? tr("Numeric diff: every matched value agrees.")
                                  : tr("Numeric diff: the snapshots disagree."),
                   false);
  } else {
    m_views.diff->showNumericError(out.error);
    Q_EMIT message(out.error, /*error=*/true);
  }
  Q_EMIT numericDiffFinished(out.diff.has_value());
}

void Coordinator::refreshPipeline() {
  if (!m_views.pipeline)
    return;
  QStringList steps, summaries;
  for (const PipelineStep& s : m_session.pipeline())
    steps << qs(s.str());
  for (size_t i = 1; i < m_session.snapshotCount(); ++i)
    summaries << qs(m_session.summary(i).summary);
  const size_t cur = m_session.currentIndex();
  QString summary;
  if (!m_session.hasModel())
    summary = tr("Open a model to begin.");
  else if (cur == 0)
    summary = steps.isEmpty() ? tr("Imported model. Add passes to the pipeline, then Step.")
                              : tr("Imported model. Press Step to apply %1.").arg(steps.front());
  else
    summary = qs(m_session.summary(cur).summary);
  m_views.pipeline->setState(steps, int(m_session.appliedSteps()), int(cur), summaries, summary,
                             m_session.canStep(), m_session.canBack(), m_session.canForward());
}

void Coordinator::refreshInspector() {
  if (!m_views.inspector)
    return;
  if (!m_selected) {
    m_views.inspector->clear();
    return;
  }
  auto ins = workbench::inspectNode(m_session, m_session.currentIndex(), m_selected);
  if (ins)
    m_views.inspector->showNode(*ins, int(m_session.currentIndex()));
  else
    m_views.inspector->clear(tr("Node #%1 is not in this snapshot.").arg(m_selected));
}

void Coordinator::clearCaches() {
  m_irCache.clear();
  m_marksCache.clear();
}

const workbench::IrText& Coordinator::irTextFor(const std::shared_ptr<const Graph>& graph) {
  auto it = m_irCache.find(graph.get());
  if (it == m_irCache.end()) {
    if (m_irCache.size() >= kCacheLimit)
      m_irCache.clear();
    it = m_irCache.emplace(graph.get(), IrEntry{graph, workbench::irTextOf(*graph)}).first;
  }
  return it->second.ir;
}

const std::map<NodeId, NodeMark>& Coordinator::marksFor(size_t index) {
  static const std::map<NodeId, NodeMark> kNone;
  if (index == 0 || index >= m_session.snapshotCount())
    return kNone;
  std::shared_ptr<const Graph> before = m_session.graph(index - 1), after = m_session.graph(index);
  auto key = std::make_pair(before.get(), after.get());
  auto it = m_marksCache.find(key);
  if (it == m_marksCache.end()) {
    if (m_marksCache.size() >= kCacheLimit)
      m_marksCache.clear();
    it = m_marksCache.emplace(key, MarksEntry{before, after, marksOf(diffGraphs(*before, *after))}).first;
  }
  return it->second.marks;
}

void Coordinator::refresh() {
  refreshPipeline();
  if (!m_session.hasModel())
    return;
  const size_t idx = m_session.currentIndex();
  std::shared_ptr<const Graph> g = m_session.graph(idx);
  m_marks = marksFor(idx);
  const bool newGraph = g != m_shownGraph;
  if (newGraph) {
    m_shownGraph = g;
    if (m_views.graph)
      m_views.graph->setGraph(g, m_graphOptions);
    if (m_views.ir)
      m_views.ir->setIrText(irTextFor(g));
  }
  if (m_views.graph)
    m_views.graph->setMarks(m_marks);
  if (m_selected && !g->findNode(m_selected))
    m_selected = 0;
  if (m_selected) {
    if (m_views.graph)
      m_views.graph->selectNode(m_selected);
    if (m_views.ir)
      m_views.ir->selectNode(m_selected);
  }
  refreshInspector();
  if (m_views.timeline) {
    std::vector<workbench::SnapshotSummary> rows;
    for (size_t i = 0; i < m_session.snapshotCount(); ++i)
      rows.push_back(m_session.summary(i));
    m_views.timeline->setSnapshots(std::move(rows), int(idx));
  }
  if (m_views.diff) {
    QStringList labels;
    for (size_t i = 0; i < m_session.snapshotCount(); ++i)
      labels << QStringLiteral("%1 \u00B7 %2").arg(i).arg(qs(m_session.summary(i).label));
    m_views.diff->setSnapshotLabels(labels);
    const int b = int(idx), a = std::max(0, b - 1);
    if (m_views.diff->isVisible() || m_views.diff->diff().has_value())
      compare(a, b);
    else
      m_views.diff->setPair(a, b);
  }
  Q_EMIT snapshotChanged(int(idx));
}

} // namespace fb::gui
