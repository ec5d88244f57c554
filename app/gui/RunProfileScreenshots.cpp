// The --screenshot mode's pictures of the memory plan, run and profile docks: each job is run
// and waited for, and each dock is floated at a readable size for its picture; then the graph
// coloured by time share, alone and in the window.
#include "app/gui/RunProfileDocks.h"

#include "app/gui/Coordinator.h"
#include "app/gui/MemoryPlanner.h"
#include "app/gui/MemoryView.h"
#include "app/gui/ProfileController.h"
#include "app/gui/ProfileView.h"
#include "app/gui/RooflineChart.h"
#include "app/gui/RunController.h"
#include "app/gui/RunPanel.h"
#include "app/gui/ScreenshotSupport.h"
#include "app/gui/graph/GraphView.h"

#include <QApplication>

#include <algorithm>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QEventLoop>
#include <QMainWindow>
#include <QTabWidget>
#include <QTimer>
#include <QTransform>

namespace fb::gui {

QStringList RunProfileDocks::saveScreenshots(const QString& dir, QString* error) {
  QStringList written;
  auto save = [&](QWidget* w, const QString& name) {
    QApplication::processEvents();
    const QString path = QDir(dir).filePath(name);
    if (!w->grab().save(path, "PNG")) {
      *error = tr("cannot write %1").arg(path);
      return false;
    }
    written << path;
    return true;
  };
  const auto& s = m_coordinator->session();
  if (!s.hasModel()) {
    *error = tr("no model to plan, run or profile");
    return {};
  }
  const int cur = int(s.currentIndex());
  // Compare with the imported model: what the whole pipeline did to memory and time.
  const int before = cur > 0 ? 0 : -1;

  {
    FloatedDock floated(m_memoryDock, QSize(1500, 820));
    m_memory->setCompareIndex(before);
    refreshMemory();
    if (!waitFor(m_planner, &MemoryPlanner::planned, 120000)) {
      *error = tr("memory planning did not finish");
      return {};
    }
    if (!save(m_memory, "memory.png"))
      return {};
  }
  {
    FloatedDock floated(m_runDock, QSize(1400, 640));
    m_runPanel->setBackend(QStringLiteral("cpu"));
    run();
    if (!waitFor(m_runs, &RunController::finished, 600000)) {
      *error = tr("the run did not finish");
      return {};
    }
    if (!save(m_runPanel, "run.png"))
      return {};
  }
  {
    FloatedDock floated(m_profileDock, QSize(1500, 900));
    m_profile->setCompareIndex(before);
    profile();
    if (!waitFor(m_profiles, &ProfileController::finished, 600000)) {
      *error = tr("profiling did not finish");
      return {};
    }
    m_profile->tabs()->setCurrentWidget(m_profile->kernelsPage());
    if (!save(m_profile, "profile.png"))
      return {};
    m_profile->tabs()->setCurrentIndex(1);
    if (!save(m_profile->roofline(), "roofline.png"))
      return {};
    m_profile->tabs()->setCurrentIndex(2);
    if (before >= 0 && !save(m_profile, "profile-savings.png"))
      return {};
    m_profile->tabs()->setCurrentIndex(0);
  }
  // The whole graph coloured by each node's share of the kernel time, and the window with the
  // profile beside it: where the time goes, in one picture.
  m_profile->setColourGraph(true);
  const QTransform view = m_graph->transform();
  m_graph->fitToView();
  if (m_graph->transform().m11() < 0.5 && !m_graph->heat().empty()) {
    // A long model fits only as specks: show the hottest node at a readable size instead.
    auto hottest = std::max_element(m_graph->heat().begin(), m_graph->heat().end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
    m_graph->setTransform(QTransform::fromScale(0.8, 0.8));
    m_graph->centerOnNode(hottest->first);
  }
  bool saved = save(m_graph, "graph-time.png");
  m_profileDock->raise();
  saved = saved && save(m_window, "window-profile.png");
  m_graph->setTransform(view);
  m_profile->setColourGraph(false);
  if (!saved)
    return {};
  return written;
}

} // namespace fb::gui
