// What the graph view draws: a graph reduced to visible units (nodes, collapsed blocks, fused
// groups, inputs, outputs, constants), edges between them and clusters for expanded groups.
#pragma once

#include "app/gui/graph/GraphView.h"

#include <QColor>
#include <QFont>
#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>

#include <vector>

namespace fb::gui {

/// What one visible box stands for.
enum class UnitKind : uint8_t {
  Op,       ///< one node (a fused node drawn collapsed included)
  Block,    ///< a collapsed block of nodes: a name scope or a chunk of a large graph
  Input,    ///< a graph input
  Output,   ///< a graph output
  Constant, ///< a weight or initializer (only with GraphViewOptions::showConstants)
};

/// One visible box.
struct DisplayUnit {
  UnitKind kind = UnitKind::Op;
  QString key;            ///< stable across snapshots: "n12", "b:/layers.3", "i:x", "o:y", "c:w"
  NodeId node = 0;        ///< Op: the node; Block: its first member (the id that expands it)
  OpKind op = OpKind::Identity; ///< Op only
  QString title;          ///< first line, bold ("Conv", "fused Conv+Relu", "layers.3")
  QStringList details;    ///< further lines (key attributes, name)
  QString tooltip;
  QColor fill;
  int cluster = -1;       ///< the expanded group this unit is drawn in, -1 at top level
  std::vector<NodeId> members; ///< every node id this box shows (itself, body nodes, block)
  std::vector<NodeId> provenance; ///< Op: the node's provenance (where a new node came from)
  bool expandable = false;     ///< a block or a fused node: double-click expands it
  double width = 0, height = 0; ///< points
};

/// One arrow between two units; values between the same pair are merged into one edge.
struct DisplayEdge {
  int from = -1, to = -1;
  QString label;   ///< "f32 [1, 64, 56, 56]" (+ "(+2)" when values were merged)
  int values = 1;  ///< how many values it carries
  QString tooltip; ///< the values it carries, "%name : f32 [..]" one a line
};

/// An expanded fused group or block, drawn as a frame around its members.
struct DisplayCluster {
  QString key;      ///< "f12" (fused node 12) or the block key
  QString label;
  NodeId node = 0;  ///< the fused node, or the block's first member
  int parent = -1;  ///< enclosing cluster, -1 at top level
  bool fused = false;
};

/// The whole picture, independent of positions.
struct DisplayGraph {
  std::vector<DisplayUnit> units;
  std::vector<DisplayEdge> edges;
  std::vector<DisplayCluster> clusters;
  /// Every node id (top level and in bodies) to the unit that shows it.
  QHash<NodeId, int> unitOfNode;
  /// Every node id in topological order (bodies right after their fused node), for search.
  std::vector<NodeId> topoOrder;
  /// For every node id: the keys of the clusters (blocks, fused groups) that contain it,
  /// outermost first, whether they are expanded now or not. Revealing a node expands them all.
  QHash<NodeId, QStringList> enclosing;
  /// Top-level nodes of the graph and whether large-graph (collapsed blocks) mode was used.
  int graphNodes = 0;
  bool collapsed = false;
};

/// Which groups the user toggled away from their default state (fused groups follow
/// GraphViewOptions::expandFusedGroups, blocks start collapsed).
struct ExpansionState {
  QSet<QString> toggled; ///< cluster keys ("f12", "b:/layers.3")
  bool isExpanded(const QString& key, bool byDefault) const {
    return toggled.contains(key) != byDefault;
  }
};

/// The fonts the units are measured and drawn with.
QFont titleFont();
QFont detailFont();

/// Builds the picture of `graph`. Safe to call off the GUI thread (reads only `graph`).
DisplayGraph buildDisplayGraph(const Graph& graph, const GraphViewOptions& options,
                               const ExpansionState& expansion);

/// An estimate of dot's work: units plus one virtual node per rank each edge spans.
double layoutCost(const DisplayGraph& graph);
/// Above this cost a graph is shown as collapsed blocks even under the node threshold.
inline constexpr double kMaxLayoutCost = 4000;
/// Above this cost dot runs with limited iterations and straight edges (a user expanded a
/// costly block): a rougher layout in seconds instead of a fine one in minutes.
inline constexpr double kFastLayoutCost = 1500;

/// "f32 [1, 64, 56, 56]".
QString typeLabel(const TensorType& type);

} // namespace fb::gui
