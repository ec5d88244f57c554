// Graphviz `dot` layout of a display graph (boxes of fixed size, nested clusters, no labels:
// edge labels are placed by us, which keeps dot fast), and position reuse across snapshots.
#include "app/gui/graph/GraphLayout.h"

#include <gvc.h>

#include <QElapsedTimer>

#include <QFontMetricsF>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

namespace fb::gui {

namespace {

/// Graphviz keeps global state (the cgraph heap, the dot layout's statics): one run at a time.
std::mutex& graphvizMutex() {
  static std::mutex m;
  return m;
}

/// cgraph takes `char*` for names and values it only reads; this hands it writable copies.
class CStr {
public:
  explicit CStr(const std::string& s) : m_buf(s.begin(), s.end()) { m_buf.push_back('\0'); }
  operator char*() { return m_buf.data(); }

private:
  std::vector<char> m_buf;
};

void setAttr(void* obj, const char* name, const std::string& value) {
  CStr n{std::string(name)}, v{value}, empty{std::string()};
  agsafeset(obj, n, v, empty);
}

std::string inches(double points) { return std::to_string(points / 72.0); }

QPointF bezierPoint(const QPointF& p0, const QPointF& p1, const QPointF& p2, const QPointF& p3,
                    double t) {
  const double u = 1 - t;
  return u * u * u * p0 + 3 * u * u * t * p1 + 3 * u * t * t * p2 + t * t * t * p3;
}

/// The label of an edge sits right of the middle of its spline.
QPointF labelPosition(const std::vector<QPointF>& spline) {
  if (spline.size() < 4)
    return spline.empty() ? QPointF() : spline.front();
  const size_t segments = (spline.size() - 1) / 3;
  const size_t mid = segments / 2;
  const double t = segments % 2 ? 0.5 : 0.0;
  const QPointF p = bezierPoint(spline[3 * mid], spline[3 * mid + 1], spline[3 * mid + 2],
                                spline[3 * mid + 3], t);
  return p + QPointF(5, -7);
}

/// The point at parameter t in [0, 1] along a multi-segment cubic spline.
QPointF splinePoint(const std::vector<QPointF>& spline, double t) {
  const size_t segments = (spline.size() - 1) / 3;
  const double x = std::clamp(t, 0.0, 1.0) * double(segments);
  const size_t seg = std::min(segments - 1, size_t(x));
  return bezierPoint(spline[3 * seg], spline[3 * seg + 1], spline[3 * seg + 2], spline[3 * seg + 3],
                     x - double(seg));
}

} // namespace

void placeEdgeLabels(const DisplayGraph& graph, LayoutResult& layout) {
  // What a label must not cover: boxes and cluster titles.
  std::vector<QRectF> obstacles;
  for (size_t u = 0; u < graph.units.size(); ++u) {
    const DisplayUnit& unit = graph.units[u];
    obstacles.emplace_back(layout.centers[u].x() - unit.width / 2,
                           layout.centers[u].y() - unit.height / 2, unit.width, unit.height);
  }
  for (const QRectF& c : layout.clusters)
    if (!c.isNull())
      obstacles.emplace_back(c.left(), c.top(), c.width(), 24);
  const QFontMetricsF fm(detailFont());
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    EdgeRoute& route = layout.edges[e];
    if (route.spline.size() < 4 || graph.edges[e].label.isEmpty())
      continue;
    const QSizeF size(fm.horizontalAdvance(graph.edges[e].label) + 4, fm.height());
    bool placed = false;
    for (double t : {0.5, 0.35, 0.65, 0.2, 0.8}) {
      for (bool right : {true, false}) {
        const QPointF at = splinePoint(route.spline, t);
        const QPointF p(right ? at.x() + 5 : at.x() - 5 - size.width(), at.y() - size.height() / 2);
        const QRectF r(p, size);
        const bool clear = std::none_of(obstacles.begin(), obstacles.end(),
                                        [&](const QRectF& o) { return o.intersects(r); });
        if ((t == 0.5 && right) || clear)
          route.labelPos = p;
        if (clear) {
          placed = true;
          break;
        }
      }
      if (placed)
        break;
    }
    obstacles.emplace_back(route.labelPos, size);
  }
}

namespace {

/// Recomputes cluster frames from their members (children come after parents).
void frameClusters(const DisplayGraph& g, LayoutResult& r) {
  r.clusters.assign(g.clusters.size(), QRectF());
  for (size_t u = 0; u < g.units.size(); ++u) {
    const DisplayUnit& unit = g.units[u];
    if (unit.cluster < 0)
      continue;
    const QRectF box(r.centers[u].x() - unit.width / 2, r.centers[u].y() - unit.height / 2,
                     unit.width, unit.height);
    QRectF& c = r.clusters[size_t(unit.cluster)];
    c = c.isNull() ? box : c.united(box);
  }
  for (size_t i = g.clusters.size(); i-- > 0;) {
    QRectF& c = r.clusters[i];
    if (c.isNull())
      continue;
    c.adjust(-12, -26, 12, 12);
    if (int p = g.clusters[i].parent; p >= 0) {
      QRectF& pc = r.clusters[size_t(p)];
      pc = pc.isNull() ? c : pc.united(c);
    }
  }
}

} // namespace

EdgeRoute straightRoute(const QRectF& from, const QRectF& to) {
  EdgeRoute r;
  const QPointF a(from.center().x(), from.bottom());
  const QPointF b(to.center().x(), to.top() - 1);
  // Downward edges bend gently; an edge that must climb swings out further.
  const double dy = b.y() > a.y() ? std::max(8.0, (b.y() - a.y()) / 2) : 40.0;
  r.spline = {a, a + QPointF(0, dy), b - QPointF(0, dy), b};
  r.arrowTip = b;
  r.labelPos = labelPosition(r.spline);
  return r;
}

LayoutResult layoutDisplayGraph(const DisplayGraph& graph, const std::atomic<bool>* cancel) {
  LayoutResult result;
  auto cancelled = [&] { return cancel && cancel->load(); };
  if (cancelled()) {
    result.error = QStringLiteral("cancelled");
    return result;
  }
  const size_t n = graph.units.size();
  result.centers.resize(n);
  result.edges.resize(graph.edges.size());
  if (n == 0) {
    result.ok = true;
    return result;
  }

  std::lock_guard<std::mutex> lock(graphvizMutex());
  if (cancelled()) { // superseded while waiting for the previous layout
    result.error = QStringLiteral("cancelled");
    return result;
  }
  QElapsedTimer timer;
  timer.start();
  static GVC_t* gvc = gvContext(); // plugins load once; guarded by the mutex above
  CStr gname{std::string("g")};
  Agraph_t* g = agopen(gname, Agdirected, nullptr);
  auto defaults = [&](int kind, const char* name, const std::string& value) {
    CStr nm{std::string(name)}, v{value};
    agattr(g, kind, nm, v);
  };
  defaults(AGRAPH, "rankdir", "TB");
  defaults(AGRAPH, "nodesep", "0.3");
  defaults(AGRAPH, "ranksep", "0.45");
  defaults(AGRAPH, "fontname", "DejaVu Sans");
  defaults(AGRAPH, "fontsize", "12");
  defaults(AGRAPH, "label", "");
  const bool fast = layoutCost(graph) > kFastLayoutCost;
  if (fast) {
    // Fewer network-simplex and crossing-minimization iterations, and no spline routing (we
    // route edges ourselves below).
    defaults(AGRAPH, "nslimit", "0.2");
    defaults(AGRAPH, "nslimit1", "0.2");
    defaults(AGRAPH, "mclimit", "0.1");
    defaults(AGRAPH, "splines", "false");
  }
  defaults(AGNODE, "shape", "box");
  defaults(AGNODE, "fixedsize", "true");
  defaults(AGNODE, "label", "");
  defaults(AGNODE, "width", "1");
  defaults(AGNODE, "height", "0.5");

  std::vector<Agraph_t*> subgraphs(graph.clusters.size(), nullptr);
  for (size_t i = 0; i < graph.clusters.size(); ++i) {
    const DisplayCluster& c = graph.clusters[i];
    Agraph_t* parent = c.parent >= 0 ? subgraphs[size_t(c.parent)] : g;
    CStr name{"cluster_" + std::to_string(i)};
    subgraphs[i] = agsubg(parent, name, 1);
    // A larger font than we draw with, so dot reserves room for our label at the top.
    setAttr(subgraphs[i], "label", c.label.toStdString());
    setAttr(subgraphs[i], "fontsize", "16");
    setAttr(subgraphs[i], "labeljust", "l");
    setAttr(subgraphs[i], "margin", "14");
  }
  std::vector<Agnode_t*> nodes(n);
  for (size_t i = 0; i < n; ++i) {
    const DisplayUnit& u = graph.units[i];
    Agraph_t* owner = u.cluster >= 0 ? subgraphs[size_t(u.cluster)] : g;
    CStr name{"u" + std::to_string(i)};
    nodes[i] = agnode(owner, name, 1);
    setAttr(nodes[i], "width", inches(u.width));
    setAttr(nodes[i], "height", inches(u.height));
  }
  std::vector<Agedge_t*> edges(graph.edges.size());
  for (size_t i = 0; i < graph.edges.size(); ++i)
    edges[i] = agedge(g, nodes[size_t(graph.edges[i].from)], nodes[size_t(graph.edges[i].to)],
                      nullptr, 1);

  CStr engine{std::string("dot")};
  if (gvLayout(gvc, g, engine) != 0) {
    agclose(g);
    result.error = QStringLiteral("Graphviz dot failed to lay out the graph");
    return result;
  }
  const double top = GD_bb(g).UR.y;
  auto toScene = [top](pointf p) { return QPointF(p.x, top - p.y); };
  for (size_t i = 0; i < n; ++i)
    result.centers[i] = toScene(ND_coord(nodes[i]));
  for (size_t i = 0; i < edges.size(); ++i) {
    EdgeRoute& route = result.edges[i];
    const splines* spl = fast ? nullptr : ED_spl(edges[i]);
    if (!spl || spl->size == 0 || spl->list[0].size < 4) {
      const DisplayUnit& a = graph.units[size_t(graph.edges[i].from)];
      const DisplayUnit& b = graph.units[size_t(graph.edges[i].to)];
      const QPointF ca = result.centers[size_t(graph.edges[i].from)];
      const QPointF cb = result.centers[size_t(graph.edges[i].to)];
      route = straightRoute(QRectF(ca.x() - a.width / 2, ca.y() - a.height / 2, a.width, a.height),
                            QRectF(cb.x() - b.width / 2, cb.y() - b.height / 2, b.width, b.height));
      continue;
    }
    const bezier& bz = spl->list[0];
    for (size_t k = 0; k < size_t(bz.size); ++k)
      route.spline.push_back(toScene(bz.list[k]));
    route.arrowTip = bz.eflag ? toScene(bz.ep) : route.spline.back();
    route.labelPos = labelPosition(route.spline);
  }
  result.clusters.resize(graph.clusters.size());
  for (size_t i = 0; i < subgraphs.size(); ++i) {
    const boxf bb = GD_bb(subgraphs[i]);
    result.clusters[i] = QRectF(toScene(pointf{bb.LL.x, bb.UR.y}), toScene(pointf{bb.UR.x, bb.LL.y}));
  }
  const boxf bb = GD_bb(g);
  result.bounds = QRectF(0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y).translated(bb.LL.x, 0);
  gvFreeLayout(gvc, g);
  agclose(g);
  placeEdgeLabels(graph, result);
  result.milliseconds = double(timer.nsecsElapsed()) / 1e6;
  if (cancelled()) {
    result.error = QStringLiteral("cancelled");
    return result;
  }
  result.ok = true;
  return result;
}

bool reusePositions(const DisplayGraph& graph, const PreviousPositions& before,
                    LayoutResult& layout) {
  const QHash<QString, QPointF>& previous = before.centers;
  const size_t n = graph.units.size();
  if (n == 0 || previous.isEmpty())
    return false;
  std::vector<char> kept(n, 0);
  size_t numKnown = 0; // kept, or made from nodes that were laid out (a fused group)
  for (size_t i = 0; i < n; ++i) {
    const DisplayUnit& unit = graph.units[i];
    const bool sameOp = unit.kind != UnitKind::Op || before.ops.value(unit.key, OpKind::Fused) == unit.op;
    if (previous.contains(unit.key) && sameOp) {
      kept[i] = 1;
      ++numKnown;
      continue;
    }
    for (NodeId p : graph.units[i].provenance)
      if (previous.contains(QStringLiteral("n%1").arg(p))) {
        ++numKnown;
        break;
      }
  }
  if (numKnown * 2 < n)
    return false;

  const std::vector<QPointF> fresh = layout.centers;
  auto box = [&](size_t i, const QPointF& c) {
    const DisplayUnit& u = graph.units[i];
    return QRectF(c.x() - u.width / 2, c.y() - u.height / 2, u.width, u.height);
  };
  std::vector<QRectF> placed;
  for (size_t i = 0; i < n; ++i)
    if (kept[i]) {
      layout.centers[i] = previous.value(graph.units[i].key);
      placed.push_back(box(i, layout.centers[i]).adjusted(-10, -10, 10, 10));
    }
  for (size_t i = 0; i < n; ++i) {
    if (kept[i])
      continue;
    // Where it came from: the centroid of its provenance's old places...
    QPointF sum;
    int count = 0;
    for (NodeId p : graph.units[i].provenance)
      if (auto it = previous.find(QStringLiteral("n%1").arg(p)); it != previous.end()) {
        sum += it.value();
        ++count;
      }
    QPointF c;
    if (count) {
      c = sum / count;
    } else {
      // ...else the fresh position, moved as its nearest kept neighbour moved.
      size_t best = n;
      double bestDist = 0;
      for (size_t k = 0; k < n; ++k)
        if (kept[k]) {
          const QPointF d = fresh[k] - fresh[i];
          const double dist = d.x() * d.x() + d.y() * d.y();
          if (best == n || dist < bestDist) {
            best = k;
            bestDist = dist;
          }
        }
      c = best < n ? fresh[i] + (layout.centers[best] - fresh[best]) : fresh[i];
    }
    // Push right until clear of everything placed so far.
    for (int attempt = 0; attempt < 200; ++attempt) {
      const QRectF r = box(i, c);
      auto hit = std::find_if(placed.begin(), placed.end(),
                              [&](const QRectF& p) { return p.intersects(r); });
      if (hit == placed.end())
        break;
      c.setX(hit->right() + graph.units[i].width / 2 + 1);
    }
    layout.centers[i] = c;
    placed.push_back(box(i, c).adjusted(-10, -10, 10, 10));
  }
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    const size_t a = size_t(graph.edges[e].from), b = size_t(graph.edges[e].to);
    layout.edges[e] = straightRoute(box(a, layout.centers[a]), box(b, layout.centers[b]));
  }
  frameClusters(graph, layout);
  placeEdgeLabels(graph, layout);
  QRectF bounds;
  for (size_t i = 0; i < n; ++i)
    bounds = bounds.united(box(i, layout.centers[i]));
  for (const QRectF& c : layout.clusters)
    if (!c.isNull())
      bounds = bounds.united(c);
  layout.bounds = bounds.adjusted(-10, -10, 10, 10);
  layout.reused = true;
  return true;
}

} // namespace fb::gui
