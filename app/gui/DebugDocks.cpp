// Wiring of the find-the-bug dock and the Debug menu.
#include "app/gui/DebugDocks.h"

#include "app/gui/Coordinator.h"
#include "app/gui/DebugView.h"
#include "app/gui/DockManager.h"
#include "app/gui/FindBugController.h"
#include "app/gui/graph/GraphView.h"
#include "core/Faults.h"

#include <QAction>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QStandardPaths>

namespace fb::gui {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

/// True when `snapshots` are still the session's first snapshots (same graphs).
bool stillCurrent(const std::vector<Snapshot>& snapshots, const workbench::Session& s) {
  if (!s.hasModel() || s.snapshotCount() < snapshots.size())
    return false;
  for (size_t i = 0; i < snapshots.size(); ++i)
    if (s.graph(i) != snapshots[i].graph)
      return false;
  return true;
}

} // namespace

DebugDocks::DebugDocks(QMainWindow* window, DockManager& docks, Coordinator* coordinator,
                       GraphView* graph, QDockWidget* tabWith)
    : QObject(window), m_window(window), m_coordinator(coordinator), m_graph(graph) {
  m_view = new DebugView;
  m_view->setObjectName("debugView");
  m_dock = docks.addDock("debug", tr("Find the bug"), m_view, Qt::BottomDockWidgetArea);
  if (tabWith) {
    window->tabifyDockWidget(tabWith, m_dock);
    tabWith->raise();
  }
  m_controller = new FindBugController(this);
  m_reproducerDir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) +
                    QStringLiteral("/reproducers");
  connect(m_view, &DebugView::findRequested, this, &DebugDocks::findBug);
  connect(m_view, &DebugView::cancelRequested, m_controller, &FindBugController::cancel);
  connect(m_view, &DebugView::showSnapshotRequested, this, &DebugDocks::showGuilty);
  connect(m_view, &DebugView::showNodeRequested, this, &DebugDocks::showGuilty);
  connect(m_view, &DebugView::openReproducerRequested, this, [this] {
    const auto& o = m_controller->lastOutcome();
    if (o.report && o.report->reduce)
      Q_EMIT openReproducerRequested(qs(o.report->reproducerPath));
  });
  connect(m_controller, &FindBugController::started, this, [this](const QString& what) {
    m_view->setRunning(true);
    m_view->showMessage(what);
  });
  connect(m_controller, &FindBugController::progress, m_view, &DebugView::setProgress);
  connect(m_controller, &FindBugController::finished, this, &DebugDocks::onFinished);
  updateFaultsText();
}

void DebugDocks::populateMenu(QMenu* menu) {
  QAction* find = menu->addAction(tr("&Find the Bug"));
  find->setObjectName("action.findBug");
  find->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_B));
  connect(find, &QAction::triggered, this, [this] {
    m_dock->show();
    m_dock->raise();
    findBug();
  });
  QMenu* faults = menu->addMenu(tr("&Inject Fault"));
  faults->setObjectName("menu.faults");
  faults->setToolTipsVisible(true);
  std::vector<QAction*> actions;
  for (const FaultInfo& f : allFaults()) {
    QAction* a = faults->addAction(QStringLiteral("%1  (%2)").arg(f.name, f.where));
    a->setObjectName(QStringLiteral("fault.%1").arg(f.name));
    a->setCheckable(true);
    a->setChecked(faultEnabled(f.fault));
    a->setToolTip(QString::fromUtf8(f.description));
    const Fault fault = f.fault;
    connect(a, &QAction::toggled, this, [this, fault, name = QString::fromLatin1(f.name)](bool on) {
      setFaultEnabled(fault, on);
      updateFaultsText();
      Q_EMIT m_coordinator->message(
          on ? tr("Fault %1 is on: run the pipeline again (Reset, then Run to End) for the "
                  "passes and kernels to use it.")
                   .arg(name)
             : tr("Fault %1 is off.").arg(name),
          false);
    });
    actions.push_back(a);
  }
  faults->addSeparator();
  QAction* off = faults->addAction(tr("Turn All Faults Off"));
  connect(off, &QAction::triggered, this, [actions] {
    for (QAction* a : actions)
      a->setChecked(false);
  });
  // The menu follows faults turned on elsewhere (a test, a reproducer).
  connect(faults, &QMenu::aboutToShow, this, [actions] {
    const auto& all = allFaults();
    for (size_t i = 0; i < actions.size() && i < all.size(); ++i) {
      QSignalBlocker block(actions[i]);
      actions[i]->setChecked(faultEnabled(all[i].fault));
    }
  });
}

void DebugDocks::updateFaultsText() {
  QStringList on;
  for (Fault f : enabledFaults())
    on << QString::fromLatin1(faultInfo(f).name);
  m_view->setFaultsText(on.isEmpty() ? tr("Built-in faults on: none.")
                                     : tr("Built-in faults on: <b>%1</b>.").arg(on.join(", ")));
}

void DebugDocks::findBug() {
  const workbench::Session& s = m_coordinator->session();
  updateFaultsText();
  if (!s.hasModel()) {
    m_view->showMessage(tr("Open a model and run its pipeline first."));
    return;
  }
  if (s.snapshotCount() < 2) {
    m_view->showMessage(tr("Run the pipeline first: the search compares the snapshots the "
                           "passes made with the imported model."));
    return;
  }
  workbench::FindBugSettings settings;
  settings.bisect.run.backend = m_view->backend();
  settings.modelName = s.displayName();
  if (m_view->reduce()) {
    QDir().mkpath(m_reproducerDir);
    const QString stem = QFileInfo(qs(s.displayName())).completeBaseName();
    settings.reproducerPath =
        QDir(m_reproducerDir)
            .filePath(QStringLiteral("%1-%2.fbir")
                          .arg(stem.isEmpty() ? QStringLiteral("model") : stem,
                               QDateTime::currentDateTime().toString("yyyyMMdd-hhmmss")))
            .toStdString();
  }
  m_controller->start(s.snapshots(), settings);
}

void DebugDocks::onFinished() {
  m_view->setRunning(false);
  const FindBugOutcome& o = m_controller->lastOutcome();
  if (!o.report) {
    m_view->showMessage(o.cancelled ? tr("The search was cancelled.")
                                    : tr("The search failed: %1").arg(o.error.toHtmlEscaped()));
    return;
  }
  const bool stale = !stillCurrent(o.snapshots, m_coordinator->session());
  m_view->showReport(*o.report, o.backend, stale);
  if (o.report->bisect.mismatch && !stale)
    showGuilty();
  Q_EMIT m_coordinator->message(qs(o.report->summary), false);
}

void DebugDocks::showGuilty() {
  const FindBugOutcome& o = m_controller->lastOutcome();
  if (!o.report || !o.report->bisect.mismatch ||
      !stillCurrent(o.snapshots, m_coordinator->session()))
    return;
  const workbench::FindBugReport& r = *o.report;
  const workbench::BisectReport& b = r.bisect;
  m_coordinator->selectSnapshot(int(b.index));
  m_graph->setHeat(r.heat, b.kernel ? tr("the guilty kernel %1").arg(qs(b.kernel->name))
                                    : tr("error vs. the imported model: low \u2192 high "
                                         "(find the bug, snapshot %1)")
                                          .arg(b.index));
  NodeId focus = 0;
  if (r.diff && r.diff->firstDivergent)
    focus = *r.diff->firstDivergent;
  else if (b.kernel && !b.kernel->nodes.empty())
    focus = b.kernel->nodes.front();
  if (focus)
    m_coordinator->selectNode(focus);
}

} // namespace fb::gui
