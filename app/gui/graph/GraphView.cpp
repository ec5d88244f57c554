// The graph view: runs display-graph building and Graphviz layout in a worker thread, builds the
// scene from the result (dropping stale results), and handles marks, search, keyboard navigation
// along edges, expansion of collapsed groups, zoom, the minimap and export.
#include "app/gui/graph/GraphView.h"

#include "app/gui/graph/DisplayGraph.h"
#include "app/gui/graph/GraphExport.h"
#include "app/gui/graph/GraphItems.h"
#include "app/gui/graph/GraphLayout.h"
#include "app/gui/graph/Legend.h"
#include "app/gui/graph/OpColors.h"
#include "app/gui/graph/Minimap.h"

#include <QElapsedTimer>
#include <QFile>
#include <QApplication>
#include <QGraphicsScene>
#include <QKeyEvent>
#include <QPointer>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrent>

#include <atomic>
#include <cmath>

namespace fb::gui {

namespace {

/// What a worker hands back to the GUI thread: a value, never shared with the running view.
struct LayoutJob {
  uint64_t generation = 0;
  std::shared_ptr<const DisplayGraph> display;
  LayoutResult layout;
};

} // namespace

struct GraphView::Impl {
  GraphView* q;
  QGraphicsScene scene;
  Minimap* minimap = nullptr;
  Legend* legend = nullptr;
  bool legendWanted = true;

  std::shared_ptr<const Graph> graph;
  GraphViewOptions options;
  ExpansionState expansion;

  // What the scene shows now.
  std::shared_ptr<const Graph> shownGraph;
  std::shared_ptr<const DisplayGraph> display;
  std::vector<NodeItem*> nodeItems;
  std::vector<EdgeItem*> edgeItems;
  std::vector<ClusterItem*> clusterItems;
  PreviousPositions positions; // for reuse by the next snapshot

  // The running job.
  uint64_t generation = 0;
  std::shared_ptr<std::atomic<bool>> cancel;
  bool running = false;
  QElapsedTimer clock;
  double lastMs = 0;

  std::map<NodeId, NodeMark> marks;
  std::map<NodeId, double> heat;
  NodeId selected = 0;
  int selectedUnit = -1;
  std::vector<NodeId> matches;
  int matchIndex = -1;
  bool programmatic = false;
  /// Units reachable by the last Up/Down key, cycled by Left/Right.
  std::vector<int> navChoices;
  int navIndex = 0;
  /// After the pending layout: centre on this node (0: keep the view where it is).
  NodeId centerAfterLayout = 0;
  /// The pending layout shows a graph given by setGraph (not an expansion of the current one).
  bool newGraph = false;
  /// The view shows the automatic fit and the user has not zoomed or panned since: a resize
  /// fits again (the view is often laid out before its window has its final size).
  bool autoFitted = false;

  explicit Impl(GraphView* view) : q(view) {}

  void start(bool reuse);
  void finish(LayoutJob job);
  void buildScene(const LayoutJob& job);
  void applyDecorations();
  void updateLegend();
  int unitOf(NodeId id) const;
  void selectUnit(int unit, bool centre, bool notify);
  void moveAlongEdges(bool down);
  bool reveal(NodeId id);
  void toggle(const QString& key);
  void autoFit();
};

void GraphView::Impl::start(bool reuse) {
  if (cancel)
    cancel->store(true);
  cancel = std::make_shared<std::atomic<bool>>(false);
  const uint64_t gen = ++generation;
  running = true;
  clock.start();
  Q_EMIT q->layoutStarted();
  Q_EMIT q->layoutProgress(0);
  if (!graph) {
    finish(LayoutJob{gen, std::make_shared<DisplayGraph>(), LayoutResult{}});
    return;
  }
  QPointer<GraphView> view(q);
  auto previous = reuse ? positions : PreviousPositions();
  auto work = [view, gen, g = graph, options = options, expansion = expansion,
               previous = std::move(previous), flag = cancel]() {
    LayoutJob job;
    job.generation = gen;
    // An exception here would be lost in the discarded future and leave the view waiting: it
    // becomes a failed layout that the view reports in words.
    try {
      auto display = std::make_shared<DisplayGraph>(buildDisplayGraph(*g, options, expansion));
      if (!flag->load())
        QMetaObject::invokeMethod(
            qApp,
            [view, gen] {
              if (view && view->m_impl->generation == gen)
                Q_EMIT view->layoutProgress(20);
            },
            Qt::QueuedConnection);
      job.layout = layoutDisplayGraph(*display, flag.get());
      if (job.layout.ok && !previous.isEmpty())
        reusePositions(*display, previous, job.layout);
      job.display = std::move(display);
    } catch (const std::bad_alloc&) {
      job.layout = {};
      job.layout.error = QStringLiteral("the graph layout ran out of memory");
    } catch (const std::exception& e) {
      job.layout = {};
      job.layout.error =
          QStringLiteral("the graph layout failed: %1").arg(QString::fromLocal8Bit(e.what()));
    }
    // Posted to the application object, which outlives every view; the QPointer drops the result
    // when this view was destroyed meanwhile.
    QMetaObject::invokeMethod(qApp, [view, job = std::move(job)]() mutable {
      if (view)
        view->m_impl->finish(std::move(job));
    }, Qt::QueuedConnection);
  };
  (void)QtConcurrent::run(std::move(work));
}

void GraphView::Impl::finish(LayoutJob job) {
  if (job.generation != generation)
    return; // stale: a newer setGraph or expansion superseded it
  running = false;
  if (!job.layout.ok && graph) {
    lastMs = double(clock.nsecsElapsed()) / 1e6;
    Q_EMIT q->layoutFinished(false, job.layout.error.isEmpty() ? QStringLiteral("layout failed")
                                                               : job.layout.error);
    return;
  }
  Q_EMIT q->layoutProgress(90);
  buildScene(job);
  lastMs = double(clock.nsecsElapsed()) / 1e6;
  Q_EMIT q->layoutProgress(100);
  QString message;
  if (display && graph) {
    message = display->collapsed
                  ? tr("%1 nodes shown as %2 boxes (double-click a block to expand); laid out in "
                       "%3 ms")
                        .arg(display->graphNodes)
                        .arg(display->units.size())
                        .arg(qRound(lastMs))
                  : tr("%1 nodes laid out in %2 ms").arg(display->graphNodes).arg(qRound(lastMs));
  }
  Q_EMIT q->layoutFinished(true, message);
}

void GraphView::Impl::buildScene(const LayoutJob& job) {
  const QPointF oldCentre = q->mapToScene(q->viewport()->rect().center());
  const bool hadScene = display != nullptr && !display->units.empty();
  programmatic = true;
  scene.clear();
  nodeItems.clear();
  edgeItems.clear();
  clusterItems.clear();
  display = job.display;
  shownGraph = graph;
  positions = PreviousPositions();
  const DisplayGraph& d = *display;
  const LayoutResult& l = job.layout;
  for (size_t c = 0; c < d.clusters.size(); ++c) {
    auto* item = new ClusterItem(d.clusters[c], l.clusters[c], int(c));
    int depth = 0;
    for (int p = d.clusters[c].parent; p >= 0; p = d.clusters[size_t(p)].parent)
      ++depth;
    item->setZValue(-10 + depth);
    scene.addItem(item);
    clusterItems.push_back(item);
    scene.addItem(new ClusterTitleItem(d.clusters[c], l.clusters[c]));
  }
  for (size_t e = 0; e < d.edges.size(); ++e) {
    auto* item = new EdgeItem(d.edges[e], l.edges[e], int(e));
    scene.addItem(item);
    edgeItems.push_back(item);
  }
  for (size_t u = 0; u < d.units.size(); ++u) {
    auto* item = new NodeItem(d.units[u], int(u));
    item->setPos(l.centers[u]);
    scene.addItem(item);
    nodeItems.push_back(item);
    positions.centers.insert(d.units[u].key, l.centers[u]);
    if (d.units[u].kind == UnitKind::Op)
      positions.ops.insert(d.units[u].key, d.units[u].op);
  }
  scene.setSceneRect(l.bounds.adjusted(-30, -30, 30, 30));
  programmatic = false;
  selectedUnit = -1;
  navChoices.clear();
  applyDecorations();
  if (!hadScene || (newGraph && !l.reused))
    autoFit();
  else if (centerAfterLayout == 0)
    q->centerOn(oldCentre);
  newGraph = false;
  if (selected) {
    const int unit = unitOf(selected);
    selectUnit(unit, /*centre=*/centerAfterLayout == selected, /*notify=*/false);
  }
  if (centerAfterLayout)
    q->centerOnNode(centerAfterLayout);
  centerAfterLayout = 0;
  minimap->invalidate();
  minimap->updateVisibility();
}

void GraphView::Impl::autoFit() {
  autoFitted = true;
  q->resetTransform();
  const QRectF r = scene.sceneRect();
  if (r.isEmpty())
    return;
  // The whole model in the window: a large one as an overview (boxes drawn as their colours,
  // see NodeItem::paint) that the user zooms into; a small one no larger than 1.5x.
  q->fitInView(r, Qt::KeepAspectRatio);
  if (q->transform().m11() > 1.5)
    q->setTransform(QTransform::fromScale(1.5, 1.5));
  q->centerOn(r.center());
}

int GraphView::Impl::unitOf(NodeId id) const {
  if (!display || id == 0)
    return -1;
  return display->unitOfNode.value(id, -1);
}

void GraphView::Impl::applyDecorations() {
  if (!display)
    return;
  const QSet<NodeId> hits(matches.begin(), matches.end());
  for (size_t u = 0; u < nodeItems.size(); ++u) {
    const DisplayUnit& unit = display->units[u];
    NodeMark mark = NodeMark::None;
    std::optional<double> h;
    bool hit = false;
    for (NodeId id : unit.members) {
      if (auto it = marks.find(id); it != marks.end() && it->second != NodeMark::None) {
        // A box standing for several nodes says "changed" unless all agree.
        mark = mark == NodeMark::None || mark == it->second ? it->second : NodeMark::Changed;
      }
      if (auto it = heat.find(id); it != heat.end())
        h = std::max(h.value_or(0.0), it->second);
      hit = hit || hits.contains(id);
    }
    nodeItems[u]->setMark(mark);
    nodeItems[u]->setHeat(h);
    nodeItems[u]->setSearchHit(hit);
  }
  updateLegend();
  minimap->invalidate();
}

void GraphView::Impl::updateLegend() {
  std::vector<LegendEntry> fills, outlines;
  if (display && legendWanted) {
    // Only the colours on screen, in the palette's order.
    QSet<QRgb> present;
    for (const DisplayUnit& u : display->units)
      present.insert(u.fill.rgb());
    for (const LegendEntry& e : categoryLegend())
      if (present.contains(e.color.rgb()))
        fills.push_back(e);
    QSet<int> marked;
    for (const auto& [id, mark] : marks)
      if (mark != NodeMark::None && display->unitOfNode.contains(id))
        marked.insert(int(mark));
    for (NodeMark m : {NodeMark::Added, NodeMark::Removed, NodeMark::Changed})
      if (marked.contains(int(m)))
        outlines.push_back({markColor(m), markName(m)});
  }
  legend->setEntries(std::move(fills), std::move(outlines), legendWanted && !heat.empty());
  legend->move(8, 8);
  // In a small view the legend would hide the graph it explains.
  if (q->viewport()->width() < 500 || q->viewport()->height() < 300)
    legend->hide();
}

void GraphView::Impl::selectUnit(int unit, bool centre, bool notify) {
  programmatic = true;
  scene.clearSelection();
  selectedUnit = unit;
  if (unit >= 0 && unit < int(nodeItems.size())) {
    nodeItems[size_t(unit)]->setSelected(true);
    if (centre) {
      q->centerOn(nodeItems[size_t(unit)]);
      autoFitted = false;
    }
  }
  for (size_t e = 0; e < edgeItems.size(); ++e) {
    const DisplayEdge& edge = display->edges[e];
    edgeItems[e]->setEmphasized(unit >= 0 && (edge.from == unit || edge.to == unit));
  }
  programmatic = false;
  if (notify && unit >= 0) {
    const DisplayUnit& u = display->units[size_t(unit)];
    if (u.kind == UnitKind::Op || u.kind == UnitKind::Block) {
      selected = u.node;
      Q_EMIT q->nodeSelected(u.node);
    } else {
      selected = 0;
    }
  }
}

void GraphView::Impl::moveAlongEdges(bool down) {
  if (!display || display->units.empty())
    return;
  if (selectedUnit < 0) {
    selectUnit(0, /*centre=*/true, /*notify=*/true);
    return;
  }
  std::vector<int> next;
  for (const DisplayEdge& e : display->edges) {
    if (down && e.from == selectedUnit)
      next.push_back(e.to);
    else if (!down && e.to == selectedUnit)
      next.push_back(e.from);
  }
  if (next.empty())
    return;
  // Left to right, as drawn, so Left/Right move the way the eye expects.
  std::sort(next.begin(), next.end(),
            [&](int a, int b) { return nodeItems[size_t(a)]->x() < nodeItems[size_t(b)]->x(); });
  navChoices = next;
  navIndex = 0;
  selectUnit(next.front(), /*centre=*/true, /*notify=*/true);
}

void GraphView::Impl::toggle(const QString& key) {
  if (expansion.toggled.contains(key))
    expansion.toggled.remove(key);
  else
    expansion.toggled.insert(key);
}

/// Expands every collapsed block around `id` so it gets its own box; true when a new layout runs.
bool GraphView::Impl::reveal(NodeId id) {
  if (!display || !display->enclosing.contains(id))
    return false;
  bool changed = false;
  for (const QString& key : display->enclosing.value(id)) {
    if (key.startsWith(QLatin1Char('f')))
      continue; // a node inside a collapsed fused group is shown by the group's box
    if (!expansion.isExpanded(key, /*byDefault=*/false)) {
      toggle(key);
      changed = true;
    }
  }
  if (changed) {
    centerAfterLayout = id;
    start(/*reuse=*/false);
  }
  return changed;
}

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent), m_impl(std::make_unique<Impl>(this)) {
  setScene(&m_impl->scene);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
  setBackgroundBrush(QColor(0xFC, 0xFC, 0xFC));
  setFocusPolicy(Qt::StrongFocus);
  m_impl->scene.setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  m_impl->minimap = new Minimap(this);
  m_impl->legend = new Legend(this);
  connect(&m_impl->scene, &QGraphicsScene::selectionChanged, this, [this] {
    Impl& d = *m_impl;
    if (d.programmatic)
      return;
    const QList<QGraphicsItem*> items = d.scene.selectedItems();
    int unit = -1;
    for (QGraphicsItem* item : items)
      if (item->type() == NodeItemType)
        unit = static_cast<NodeItem*>(item)->index();
    if (unit >= 0 && unit != d.selectedUnit) {
      d.navChoices.clear();
      d.selectUnit(unit, /*centre=*/false, /*notify=*/true);
    }
  });
}

GraphView::~GraphView() {
  if (m_impl->cancel)
    m_impl->cancel->store(true);
}

void GraphView::setGraph(std::shared_ptr<const Graph> graph, const GraphViewOptions& options) {
  Impl& d = *m_impl;
  const bool sameOptions = d.options.showConstants == options.showConstants &&
                           d.options.expandFusedGroups == options.expandFusedGroups &&
                           d.options.collapseThreshold == options.collapseThreshold;
  // The same graph again asks for a fresh, compact layout.
  const bool fresh = !d.graph || !graph || !sameOptions || graph == d.graph;
  if (!sameOptions)
    d.expansion = ExpansionState();
  d.graph = std::move(graph);
  d.options = options;
  d.matches.clear();
  d.matchIndex = -1;
  d.newGraph = true;
  d.start(/*reuse=*/!fresh);
}

std::shared_ptr<const Graph> GraphView::graph() const { return m_impl->graph; }

void GraphView::cancelLayout() {
  Impl& d = *m_impl;
  if (!d.running)
    return;
  d.cancel->store(true);
  ++d.generation; // drop the result whenever it arrives
  d.running = false;
  Q_EMIT layoutFinished(false, tr("Layout cancelled"));
}

bool GraphView::isLayoutRunning() const { return m_impl->running; }

void GraphView::setMarks(const std::map<NodeId, NodeMark>& marks) {
  m_impl->marks = marks;
  m_impl->applyDecorations();
}

void GraphView::setHeat(const std::map<NodeId, double>& heat, const QString& legendText) {
  m_impl->heat = heat;
  m_impl->legend->setHeatText(legendText);
  m_impl->applyDecorations();
}

void GraphView::selectNode(NodeId id) {
  Impl& d = *m_impl;
  // Already selected and shown (a coordinator re-applies its selection after every layout):
  // nothing to do, and above all no reveal, which would undo the user's collapsing a block.
  if (id != 0 && id == d.selected && !d.running && d.selectedUnit >= 0 &&
      d.unitOf(id) == d.selectedUnit)
    return;
  d.selected = id;
  d.navChoices.clear();
  if (id == 0) {
    d.selectUnit(-1, /*centre=*/false, /*notify=*/false);
    return;
  }
  if (d.running) {
    d.centerAfterLayout = id;
    return;
  }
  if (d.reveal(id))
    return;
  d.selectUnit(d.unitOf(id), /*centre=*/true, /*notify=*/false);
}

NodeId GraphView::selectedNode() const { return m_impl->selected; }

void GraphView::centerOnNode(NodeId id) {
  Impl& d = *m_impl;
  if (const int unit = d.unitOf(id); unit >= 0) {
    centerOn(d.nodeItems[size_t(unit)]);
    return;
  }
  if (d.display)
    for (size_t c = 0; c < d.display->clusters.size(); ++c)
      if (d.display->clusters[c].node == id && d.display->clusters[c].fused)
        centerOn(d.clusterItems[c]);
}

std::vector<NodeId> GraphView::find(const QString& text) {
  Impl& d = *m_impl;
  d.matches.clear();
  d.matchIndex = -1;
  const QString needle = text.trimmed();
  if (!needle.isEmpty() && d.graph && d.display) {
    auto has = [&](const std::string& s) {
      return QString::fromStdString(s).contains(needle, Qt::CaseInsensitive);
    };
    // "#12" finds node 12.
    bool isId = false;
    const NodeId wanted = needle.startsWith(QLatin1Char('#')) ? needle.mid(1).toUInt(&isId) : 0;
    for (NodeId id : d.display->topoOrder) {
      const Node* n = d.graph->findNode(id);
      if (!n)
        continue;
      bool hit = isId ? id == wanted : has(n->name()) || has(opName(n->op()));
      for (const Value* v : n->outputs())
        hit = hit || (!isId && has(v->name()));
      if (hit)
        d.matches.push_back(id);
    }
  }
  d.applyDecorations();
  if (!d.matches.empty())
    findNext();
  return d.matches;
}

void GraphView::findNext() {
  Impl& d = *m_impl;
  if (d.matches.empty())
    return;
  d.matchIndex = (d.matchIndex + 1) % int(d.matches.size());
  const NodeId id = d.matches[size_t(d.matchIndex)];
  selectNode(id);
  Q_EMIT nodeSelected(id);
}

void GraphView::findPrevious() {
  Impl& d = *m_impl;
  if (d.matches.empty())
    return;
  d.matchIndex = (d.matchIndex - 1 + int(d.matches.size())) % int(d.matches.size());
  const NodeId id = d.matches[size_t(d.matchIndex)];
  selectNode(id);
  Q_EMIT nodeSelected(id);
}

void GraphView::setExpanded(NodeId group, bool expanded) {
  Impl& d = *m_impl;
  if (!d.graph || !d.display)
    return;
  const Node* n = d.graph->findNode(group);
  if (!n)
    return;
  bool changed = false;
  if (expanded) {
    // A fused node is revealed (every collapsed group around it opens) and expanded; any other
    // node opens the one collapsed block that shows it now, the outermost.
    for (const QString& key : d.display->enclosing.value(group)) {
      const bool byDefault = key.startsWith(QLatin1Char('f')) && d.options.expandFusedGroups;
      if (!d.expansion.isExpanded(key, byDefault)) {
        d.toggle(key);
        changed = true;
        if (!n->hasBodies())
          break;
      }
    }
    if (n->hasBodies()) { // a fused group, or an If/Loop/Scan showing its bodies
      const QString key = QStringLiteral("f%1").arg(group);
      if (!d.expansion.isExpanded(key, d.options.expandFusedGroups)) {
        d.toggle(key);
        changed = true;
      }
    }
  } else {
    QString key;
    if (n->hasBodies() && d.expansion.isExpanded(QStringLiteral("f%1").arg(group),
                                            d.options.expandFusedGroups)) {
      key = QStringLiteral("f%1").arg(group);
    } else {
      // The innermost expanded group that contains the node.
      const QStringList path = d.display->enclosing.value(group);
      for (auto it = path.rbegin(); it != path.rend() && key.isEmpty(); ++it) {
        const bool byDefault = it->startsWith(QLatin1Char('f')) && d.options.expandFusedGroups;
        if (d.expansion.isExpanded(*it, byDefault))
          key = *it;
      }
    }
    if (!key.isEmpty()) {
      d.toggle(key);
      changed = true;
    }
  }
  if (changed) {
    d.centerAfterLayout = group;
    d.start(/*reuse=*/false);
  }
}

void GraphView::zoomIn() {
  m_impl->autoFitted = false;
  scale(1.25, 1.25);
  m_impl->minimap->updateVisibility();
}

void GraphView::zoomOut() {
  m_impl->autoFitted = false;
  scale(0.8, 0.8);
  m_impl->minimap->updateVisibility();
}

void GraphView::fitToView() {
  if (!m_impl->scene.sceneRect().isEmpty())
    fitInView(m_impl->scene.sceneRect(), Qt::KeepAspectRatio);
  m_impl->minimap->updateVisibility();
}

QString GraphView::exportTo(const QString& path) const {
  const Impl& d = *m_impl;
  if (!d.display || d.display->units.empty())
    return tr("nothing to export: no graph is shown");
  if (path.toLower().endsWith(QLatin1String(".dot"))) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text))
      return tr("cannot write %1: %2").arg(path, f.errorString());
    const QString name = d.shownGraph ? QString::fromStdString(d.shownGraph->name()) : QString();
    f.write(displayGraphToDot(*d.display, name).toUtf8());
    return QString();
  }
  return exportScene(m_impl->scene, path);
}

double GraphView::lastLayoutMilliseconds() const { return m_impl->lastMs; }

void GraphView::setLegendVisible(bool visible) {
  m_impl->legendWanted = visible;
  m_impl->updateLegend();
}

const std::map<NodeId, NodeMark>& GraphView::marks() const { return m_impl->marks; }
const std::map<NodeId, double>& GraphView::heat() const { return m_impl->heat; }

QRectF GraphView::nodeSceneRect(NodeId id) const {
  const int unit = m_impl->unitOf(id);
  if (unit < 0)
    return QRectF();
  const NodeItem* item = m_impl->nodeItems[size_t(unit)];
  return item->box().translated(item->pos());
}

int GraphView::visibleBoxCount() const { return int(m_impl->nodeItems.size()); }

bool GraphView::isCollapsedView() const { return m_impl->display && m_impl->display->collapsed; }

void GraphView::keyPressEvent(QKeyEvent* event) {
  Impl& d = *m_impl;
  switch (event->key()) {
  case Qt::Key_Down:
  case Qt::Key_Up:
    d.moveAlongEdges(event->key() == Qt::Key_Down);
    return;
  case Qt::Key_Left:
  case Qt::Key_Right:
    if (d.navChoices.size() > 1) {
      const int n = int(d.navChoices.size());
      d.navIndex = (d.navIndex + (event->key() == Qt::Key_Right ? 1 : n - 1)) % n;
      d.selectUnit(d.navChoices[size_t(d.navIndex)], /*centre=*/true, /*notify=*/true);
    }
    return;
  case Qt::Key_Return:
  case Qt::Key_Enter:
    if (d.selectedUnit >= 0) {
      const DisplayUnit& u = d.display->units[size_t(d.selectedUnit)];
      if (u.expandable)
        setExpanded(u.node, true);
      if (u.node)
        Q_EMIT nodeActivated(u.node);
    }
    return;
  case Qt::Key_Escape:
    d.selected = 0;
    d.selectUnit(-1, /*centre=*/false, /*notify=*/false);
    return;
  default:
    QGraphicsView::keyPressEvent(event);
  }
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event) {
  Impl& d = *m_impl;
  QGraphicsItem* item = itemAt(event->position().toPoint());
  if (item && item->type() == NodeItemType) {
    const DisplayUnit& u = d.display->units[size_t(static_cast<NodeItem*>(item)->index())];
    if (u.expandable)
      setExpanded(u.node, true);
    if (u.node)
      Q_EMIT nodeActivated(u.node);
    return;
  }
  if (item && item->type() == ClusterItemType) {
    const DisplayCluster& c = d.display->clusters[size_t(static_cast<ClusterItem*>(item)->index())];
    d.toggle(c.key);
    d.centerAfterLayout = c.node;
    d.start(/*reuse=*/false);
    Q_EMIT nodeActivated(c.node);
    return;
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphView::wheelEvent(QWheelEvent* event) {
  if (event->modifiers() & Qt::ControlModifier) {
    m_impl->autoFitted = false;
    const double factor = std::pow(1.0015, event->angleDelta().y());
    scale(factor, factor);
    m_impl->minimap->updateVisibility();
    return;
  }
  QGraphicsView::wheelEvent(event);
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  const QRect vp = viewport()->geometry();
  Minimap* map = m_impl->minimap;
  map->setFixedSize(std::min(220, vp.width() / 4), std::min(160, vp.height() / 4));
  map->move(vp.right() - map->width() - 8, vp.bottom() - map->height() - 8);
  m_impl->updateLegend();
  if (m_impl->autoFitted)
    m_impl->autoFit();
  map->updateVisibility();
}

void GraphView::mousePressEvent(QMouseEvent* event) {
  m_impl->autoFitted = false; // a click starts a pan or a selection: keep what the user sees
  QGraphicsView::mousePressEvent(event);
}

void GraphView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  m_impl->minimap->update();
}

} // namespace fb::gui
