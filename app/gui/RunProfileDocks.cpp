// Wiring of the memory plan, run and profile docks to the session, selection and graph.
#include "app/gui/RunProfileDocks.h"

#include "app/gui/Coordinator.h"
#include "app/gui/DockManager.h"
#include "app/gui/MemoryPlanner.h"
#include "app/gui/MemoryView.h"
#include "app/gui/ProfileController.h"
#include "app/gui/ProfileView.h"
#include "app/gui/RunController.h"
#include "app/gui/RunPanel.h"
#include "app/gui/graph/GraphView.h"

#include <QDockWidget>
#include <QMainWindow>
#include <QTimer>

#include <algorithm>
#include <cmath>

namespace fb::gui {

RunProfileDocks::RunProfileDocks(QMainWindow* window, DockManager& docks, Coordinator* coordinator,
                                 GraphView* graph, QDockWidget* tabWith)
    : QObject(window), m_window(window), m_coordinator(coordinator), m_graph(graph) {
  m_memory = new MemoryView;
  m_memory->setObjectName("memoryView");
  m_runPanel = new RunPanel;
  m_runPanel->setObjectName("runPanel");
  m_profile = new ProfileView;
  m_profile->setObjectName("profileView");
  m_memoryDock = docks.addDock("memory", tr("Memory plan"), m_memory, Qt::BottomDockWidgetArea);
  m_runDock = docks.addDock("run", tr("Run"), m_runPanel, Qt::BottomDockWidgetArea);
  m_profileDock = docks.addDock("profile", tr("Profile"), m_profile, Qt::BottomDockWidgetArea);
  if (tabWith) {
    window->tabifyDockWidget(tabWith, m_memoryDock);
    window->tabifyDockWidget(m_memoryDock, m_runDock);
    window->tabifyDockWidget(m_runDock, m_profileDock);
    tabWith->raise();
  }
  m_planner = new MemoryPlanner(this);
  m_runs = new RunController(this);
  m_profiles = new ProfileController(this);

  connect(coordinator, &Coordinator::modelLoaded, this, [this] { onModelOrSnapshotChanged(); });
  connect(coordinator, &Coordinator::snapshotChanged, this, [this] { onModelOrSnapshotChanged(); });
  connect(coordinator, &Coordinator::selectionChanged, this, &RunProfileDocks::onSelectionChanged);

  // Memory: planned lazily, when the dock shows a stale plan.
  connect(m_memoryDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    // Showing the window reports every tabbed dock visible for a moment; plan only for the one
    // that stays on screen.
    if (visible)
      QTimer::singleShot(0, this, [this] {
        if (m_memoryStale && m_memory->isVisible())
          refreshMemory();
      });
  });
  connect(m_memory, &MemoryView::compareRequested, this, [this] { refreshMemory(); });
  connect(m_memory, &MemoryView::nodeClicked, this, [this](NodeId id, int snapshot) {
    const auto& s = m_coordinator->session();
    if (!s.hasModel() || snapshot < 0 || size_t(snapshot) >= s.snapshotCount())
      return;
    const size_t cur = s.currentIndex();
    // A buffer of the compared snapshot selects what its producer became in the current one.
    std::vector<NodeId> ids = size_t(snapshot) == cur
                                  ? std::vector<NodeId>{id}
                                  : workbench::correspondingNodes(*s.graph(size_t(snapshot)), id,
                                                                  *s.graph(cur));
    if (!ids.empty())
      m_coordinator->selectNode(ids.front());
  });
  connect(m_planner, &MemoryPlanner::planned, this, &RunProfileDocks::onPlanned);

  // Run.
  connect(m_runPanel, &RunPanel::runRequested, this, &RunProfileDocks::run);
  connect(m_runPanel, &RunPanel::cancelRequested, m_runs, &RunController::cancel);
  connect(m_runs, &RunController::started, m_runPanel, [this] { m_runPanel->setRunning(true); });
  connect(m_runs, &RunController::progress, m_runPanel, &RunPanel::setProgress);
  connect(m_runs, &RunController::finished, m_runPanel, [this](bool ok, const QString& summary) {
    m_runPanel->showOutcome(m_runs->lastOutcome(), summary, ok);
  });

  // Profile.
  connect(m_profile, &ProfileView::profileRequested, this, &RunProfileDocks::profile);
  connect(m_profile, &ProfileView::cancelRequested, m_profiles, &ProfileController::cancel);
  connect(m_profile, &ProfileView::colourGraphToggled, this, [this] { updateHeat(); });
  connect(m_profile, &ProfileView::remeasureRequested, this, [this] {
    ProfileRequest request;
    request.threads = m_profile->threads();
    if (m_runPanel->settings().backend == workbench::Backend::Gpu)
      request.backend = workbench::Backend::Gpu;
    m_profiles->remeasurePeaks(request);
  });
  connect(m_profile, &ProfileView::kernelActivated, this, [this](int kernel) {
    const ProfileOutcome& o = m_profile->outcome();
    const auto& s = m_coordinator->session();
    if (!o.main || !s.hasModel() || kernel < 0 || size_t(kernel) >= o.main->summary.kernels.size())
      return;
    const std::vector<NodeId>& nodes = o.main->summary.kernels[size_t(kernel)].nodes;
    if (nodes.empty())
      return;
    // Kernels name the ops they compute (a fused group's body); select the box showing them in
    // the current snapshot, whichever snapshot was profiled.
    std::vector<NodeId> ids =
        workbench::correspondingNodes(*o.main->graph, nodes.front(), *s.graph(s.currentIndex()));
    if (!ids.empty())
      m_coordinator->selectNode(ids.front());
  });
  connect(m_profiles, &ProfileController::started, m_profile, [this] { m_profile->setRunning(true); });
  connect(m_profiles, &ProfileController::progress, m_profile, &ProfileView::setProgress);
  connect(m_profiles, &ProfileController::finished, this, &RunProfileDocks::onProfiled);
}

RunProfileDocks::~RunProfileDocks() { cancel(); }

QStringList RunProfileDocks::snapshotLabels() const {
  QStringList labels;
  const auto& s = m_coordinator->session();
  for (size_t i = 0; i < s.snapshotCount(); ++i) {
    const std::string label = i == 0 ? std::string("imported") : s.snapshot(i).record->step;
    labels << QStringLiteral("%1 \u00b7 %2").arg(i).arg(QString::fromStdString(label));
  }
  return labels;
}

void RunProfileDocks::onModelOrSnapshotChanged() {
  const auto& s = m_coordinator->session();
  if (!s.hasModel()) {
    m_runPanel->clearModel();
    return;
  }
  const int cur = int(s.currentIndex());
  const QStringList labels = snapshotLabels();
  m_memory->setSnapshots(labels, cur);
  m_profile->setSnapshots(labels, cur);
  m_runPanel->setModel(*s.graph(size_t(cur)), labels.value(cur));
  m_memoryStale = true;
  if (m_memory->isVisible())
    refreshMemory();
  updateHeat();
  onSelectionChanged(m_coordinator->selectedNode());
}

void RunProfileDocks::refreshMemory() {
  const auto& s = m_coordinator->session();
  if (!s.hasModel())
    return;
  const int cur = int(s.currentIndex());
  const int other = m_memory->compareIndex();
  std::optional<Snapshot> compared;
  if (other >= 0 && size_t(other) < s.snapshotCount() && other != cur)
    compared = s.snapshot(size_t(other));
  m_memoryStale = false;
  m_memory->showMessage(tr("Planning snapshot %1\u2026").arg(cur));
  m_planner->request(s.snapshot(size_t(cur)), cur, compared, compared ? other : -1);
}

void RunProfileDocks::onPlanned(const PlanOutcome& outcome) {
  const auto& s = m_coordinator->session();
  // A plan of a snapshot that is no longer current waits for the next request.
  if (!s.hasModel() || size_t(outcome.main.index) >= s.snapshotCount() ||
      s.graph(size_t(outcome.main.index)) != outcome.main.graph)
    return;
  m_memory->showOutcome(outcome);
  m_memory->setSelectedNode(m_coordinator->selectedNode());
}

void RunProfileDocks::run() {
  const auto& s = m_coordinator->session();
  if (!s.hasModel())
    return;
  Expected<RunInputs> inputs = m_runPanel->inputs();
  if (!inputs.ok()) {
    RunOutcome failed;
    failed.error = QString::fromStdString(inputs.error().message());
    m_runPanel->showOutcome(failed, failed.error, /*ok=*/false);
    return;
  }
  const size_t cur = s.currentIndex();
  m_runs->run(s.graph(cur), s.graph(0), int(cur), m_runPanel->settings(), *inputs);
}

void RunProfileDocks::profile() {
  const auto& s = m_coordinator->session();
  if (!s.hasModel())
    return;
  const int cur = int(s.currentIndex());
  const int other = m_profile->compareIndex();
  ProfileRequest request;
  request.runs = m_profile->runs();
  request.threads = m_profile->threads();
  // The run panel's backend choice: the GPU profiles on the device against its roofs.
  if (m_runPanel->settings().backend == workbench::Backend::Gpu)
    request.backend = workbench::Backend::Gpu;
  const bool compare = other >= 0 && size_t(other) < s.snapshotCount() && other != cur;
  m_profiles->profile(s.graph(size_t(cur)), cur, compare ? s.graph(size_t(other)) : nullptr,
                      compare ? other : -1, request);
}

void RunProfileDocks::onProfiled(const ProfileOutcome& outcome) {
  m_profile->showOutcome(outcome);
  updateHeat();
  onSelectionChanged(m_coordinator->selectedNode());
}

void RunProfileDocks::onSelectionChanged(NodeId id) {
  m_memory->setSelectedNode(id);
  const ProfileOutcome& o = m_profile->outcome();
  const auto& s = m_coordinator->session();
  if (o.main && s.hasModel() && id)
    m_profile->setSelectedKernels(
        workbench::kernelsOfNode(o.main->summary, *o.main->graph, *s.graph(s.currentIndex()), id));
  else
    m_profile->setSelectedKernels({});
}

void RunProfileDocks::updateHeat() {
  const ProfileOutcome& o = m_profile->outcome();
  const auto& s = m_coordinator->session();
  if (!m_profile->colourGraph() || !o.main || !s.hasModel()) {
    if (m_heatShown)
      m_graph->setHeat({});
    m_heatShown = false;
    return;
  }
  // Shares on the snapshot shown, through provenance; the hottest node is the top of the scale.
  // On a square-root scale: most kernels of a real model take a few percent each, and on a
  // linear scale they would all look alike next to the few that dominate.
  std::map<NodeId, double> share =
      workbench::timeShareByNode(o.main->summary, *o.main->graph, *s.graph(s.currentIndex()));
  double top = 0;
  for (const auto& [id, v] : share)
    top = std::max(top, v);
  for (auto& [id, v] : share)
    v = top > 0 ? std::sqrt(v / top) : 0;
  m_graph->setHeat(share, tr("share of kernel time: 0 \u2192 %1 % (\u221a scale; profile of "
                             "snapshot %2)")
                              .arg(top * 100, 0, 'f', 0)
                              .arg(o.main->index));
  m_heatShown = true;
}

void RunProfileDocks::cancel() {
  m_planner->cancel();
  m_runs->cancel();
  m_profiles->cancel();
}

} // namespace fb::gui
