// Export of the graph view: the scene as PNG or SVG, the displayed graph as Graphviz DOT.
#pragma once

#include "app/gui/graph/DisplayGraph.h"

#include <QString>

class QGraphicsScene;

namespace fb::gui {

/// Renders the whole scene to `path` as PNG (2x scale, capped at 16k pixels a side) or SVG, by
/// extension. Returns an error message or an empty string.
QString exportScene(QGraphicsScene& scene, const QString& path);

/// The displayed graph as DOT text: boxes with their labels and fill colours, clusters for
/// expanded groups, edges with their type labels. `dot -Tsvg` renders it.
QString displayGraphToDot(const DisplayGraph& graph, const QString& name);

} // namespace fb::gui
