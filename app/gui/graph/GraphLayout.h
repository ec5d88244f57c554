// Positions for a display graph: Graphviz `dot` (cgraph/gvc), run off the GUI thread, and the
// reuse of the previous snapshot's positions so that stepping through passes does not jump.
#pragma once

#include "app/gui/graph/DisplayGraph.h"

#include <QPointF>
#include <QRectF>

#include <atomic>
#include <vector>

namespace fb::gui {

/// The route of one edge: a cubic Bézier (start, then three points per segment) and an arrow.
struct EdgeRoute {
  std::vector<QPointF> spline;
  QPointF arrowTip;  ///< where the arrowhead points
  QPointF labelPos;  ///< top-left of the edge label
};

/// Scene coordinates (y down) of everything a display graph draws.
struct LayoutResult {
  bool ok = false;
  QString error;                  ///< set when !ok ("cancelled", a Graphviz failure)
  std::vector<QPointF> centers;   ///< per unit
  std::vector<EdgeRoute> edges;   ///< per display edge
  std::vector<QRectF> clusters;   ///< per cluster
  QRectF bounds;
  bool reused = false;            ///< positions came from the previous snapshot
  double milliseconds = 0;        ///< Graphviz time
};

/// Lays out `graph` with `dot`. Thread-safe: Graphviz is not re-entrant, so calls are serialized
/// by a global lock. `cancel` is checked before and after the Graphviz run (which cannot be
/// interrupted); a cancelled layout returns !ok with error "cancelled".
LayoutResult layoutDisplayGraph(const DisplayGraph& graph, const std::atomic<bool>* cancel);

/// Keeps the previous positions of units whose key was laid out before, places new units where
/// their provenance lived (or next to their nearest kept neighbour), pushes them clear of
/// overlaps and re-routes edges. Does nothing and returns false when fewer than half of the
/// units are known (a different model: the fresh layout is better).
/// What a scene leaves behind for the next snapshot's layout.
struct PreviousPositions {
  QHash<QString, QPointF> centers; ///< unit key -> centre
  QHash<QString, OpKind> ops;      ///< op of each Op unit: a key only counts when its op matches,
                                   ///< so another model that happens to use the same ids is not
                                   ///< mistaken for a later snapshot
  bool isEmpty() const { return centers.isEmpty(); }
};

bool reusePositions(const DisplayGraph& graph, const PreviousPositions& previous,
                    LayoutResult& layout);

/// Puts each edge label beside its spline where it covers no box, cluster title or earlier label
/// (the middle when nothing is free).
void placeEdgeLabels(const DisplayGraph& graph, LayoutResult& layout);

/// Routes an edge between two boxes as a vertical S-curve (used when positions were reused).
EdgeRoute straightRoute(const QRectF& from, const QRectF& to);

} // namespace fb::gui
