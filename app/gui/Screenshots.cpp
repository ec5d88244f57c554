// The --screenshot mode: renders the main window and each view of the current state to PNG.
#include "app/gui/MainWindow.h"

#include "app/gui/CodeDocks.h"
#include "app/gui/CompressionDocks.h"
#include "app/gui/Coordinator.h"
#include "app/gui/DiffView.h"
#include "app/gui/InspectorView.h"
#include "app/gui/IrTextView.h"
#include "app/gui/PipelinePanel.h"
#include "app/gui/RunProfileDocks.h"
#include "app/gui/ScreenshotSupport.h"
#include "app/gui/TimelineView.h"
#include "app/gui/graph/GraphView.h"

#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QPainter>
#include <QPixmap>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>

#include <set>

namespace fb::gui {

namespace {

/// Waits for the numeric diff to finish (or a timeout).
void waitForNumericDiff(Coordinator* c, int timeoutMs) {
  QEventLoop loop;
  QObject::connect(c, &Coordinator::numericDiffFinished, &loop, &QEventLoop::quit);
  QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
  loop.exec();
}

/// The node worth showing: the first one the current step added (else changed), else the first fused
/// group, else the first node.
NodeId interestingNode(const Coordinator& c) {
  for (const auto& [id, mark] : c.currentMarks())
    if (mark == NodeMark::Added)
      return id;
  if (!c.currentMarks().empty())
    return c.currentMarks().begin()->first;
  const Graph& g = *c.session().current().graph;
  for (const auto& n : g.nodes())
    if (n->body())
      return n->id();
  return g.nodes().empty() ? 0 : g.nodes().front()->id();
}

/// The whole inspector document at `width` pixels, not just the part the dock shows.
QImage renderDocument(QTextDocument* doc, int width) {
  const qreal oldWidth = doc->textWidth();
  doc->setTextWidth(width);
  QImage img(QSize(width, int(doc->size().height()) + 1), QImage::Format_ARGB32_Premultiplied);
  img.fill(Qt::white);
  {
    QPainter p(&img);
    doc->drawContents(&p);
  }
  doc->setTextWidth(oldWidth);
  return img;
}

} // namespace

QStringList MainWindow::saveScreenshots(const QString& dir, QString* error) {
  QStringList written;
  if (!QDir().mkpath(dir)) {
    *error = tr("cannot create %1").arg(dir);
    return {};
  }
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
  show();
  showGraphTab();
  waitForLayouts();
  const NodeId focus = interestingNode(*m_coordinator);
  if (focus)
    m_coordinator->selectNode(focus);
  waitForLayouts();
  readableFit(m_graph, focus);
  if (!save(this, "window.png") || !save(m_graph, "graph.png") ||
      !save(m_pipeline, "pipeline.png") || !save(m_timeline, "timeline.png") || !save(m_ir, "ir.png"))
    return {};
  const QString inspectorPath = QDir(dir).filePath("inspector.png");
  if (!renderDocument(m_inspector->browser()->document(), 520).save(inspectorPath, "PNG")) {
    *error = tr("cannot write %1").arg(inspectorPath);
    return {};
  }
  written << inspectorPath;

  // The diff of the imported model with the current snapshot, with the numeric diff run.
  const int cur = int(m_coordinator->session().currentIndex());
  showDiff(0, cur);
  m_coordinator->runNumericDiff(0, cur);
  waitForNumericDiff(m_coordinator, 60000);
  waitForLayouts();
  // Show the first change in both views: its counterpart follows through the synced selection.
  NodeId change = 0;
  if (const auto& d = m_diff->diff()) {
    // The earliest removed node in execution order that became something: the top of the change.
    const std::set<NodeId> removed(d->removed.begin(), d->removed.end());
    for (const auto& n : m_coordinator->session().graph(0)->nodes())
      if (removed.count(n->id()) && d->removedInto.count(n->id()) && !d->removedInto.at(n->id()).empty()) {
        change = n->id();
        break;
      }
    if (!change && !d->changed.empty())
      change = d->changed.front().id;
  }
  readableFit(m_diff->viewA(), change);
  readableFit(m_diff->viewB(), change ? m_diff->viewB()->selectedNode() : 0);
  if (change) {
    m_diff->selectNode(change);
    m_diff->viewA()->centerOnNode(change);
    if (NodeId other = m_diff->viewB()->selectedNode())
      m_diff->viewB()->centerOnNode(other);
  }
  if (!save(m_diff, "diff.png") || !save(this, "window-diff.png"))
    return {};
  // The same pair overlaid: B with ghosts of the removed nodes.
  m_diff->setOverlay(true);
  waitForLayouts();
  readableFit(m_diff->overlayView(), m_diff->overlayView()->selectedNode());
  const bool overlaySaved = save(m_diff, "diff-overlay.png");
  m_diff->setOverlay(false);
  if (!overlaySaved)
    return {};
  showGraphTab();
  // The back half: memory plan, run, profile and roofline (each job run and waited for).
  const QStringList more = m_runProfile->saveScreenshots(dir, error);
  if (more.isEmpty())
    return {};
  written << more;
  // The kernel code and the schedule editor (they select a fused convolution group).
  const QStringList code = m_codeDocks->saveScreenshots(dir, error);
  if (code.isEmpty())
    return {};
  written << code;
  // The report of the latest quantize or prune step (or what the dock offers without one).
  const QStringList compression = m_compression->saveScreenshots(dir, error);
  if (compression.isEmpty())
    return {};
  written << compression;
  return written;
}

} // namespace fb::gui
