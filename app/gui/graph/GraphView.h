// The graph view: a zoomable, pannable QGraphicsView of one snapshot's dataflow graph, laid out
// by Graphviz in a worker thread, with highlighting, search, heat colouring and export.
#pragma once

#include "core/Graph.h"

#include <QGraphicsView>
#include <QHash>
#include <QString>

#include <map>
#include <memory>
#include <set>

namespace fb::gui {

/// How one node should be marked (structural diff / change highlight of the last pass step).
enum class NodeMark { None, Added, Removed, Changed };

/// What the view draws and how.
struct GraphViewOptions {
  bool showConstants = false;     ///< draw weights/initializers as their own small nodes
  bool edgeLabels = true;         ///< "f32 [1,64,56,56]" on every edge
  bool expandFusedGroups = false; ///< draw fused groups expanded (clusters) instead of one box
  /// Layout only the top level of groups larger than this many nodes per block; repeated blocks
  /// stay collapsed until expanded (large-graph mode).
  int collapseThreshold = 400;
};

/// Shows a graph. All layout work happens off the GUI thread; setGraph returns at once and
/// layoutFinished fires when the scene is ready (a newer setGraph drops a stale layout).
/// Keys (graphview): Up/Down follow an edge to a producer/consumer, Left/Right pick among
/// several, Enter expands a group, Escape clears the selection; Ctrl+wheel zooms.
class GraphView : public QGraphicsView {
  Q_OBJECT
public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  /// Shows `graph`. Nodes whose ids were laid out before keep their positions where the
  /// structure around them did not change, so stepping through passes does not jump.
  /// (graphview: a node keeps its place when its id and op are unchanged; a new node is put
  /// where the nodes it was made from were. Passing the graph already shown lays it out afresh.)
  void setGraph(std::shared_ptr<const Graph> graph, const GraphViewOptions& options = {});
  std::shared_ptr<const Graph> graph() const;
  /// Cancels a running layout (the previous scene stays).
  void cancelLayout();
  bool isLayoutRunning() const;

  /// Marks nodes (changed-set highlight or diff colouring); an empty map clears marks.
  void setMarks(const std::map<NodeId, NodeMark>& marks);
  /// Heat colouring in [0, 1] (numeric diff error per node); empty clears. `legendText` says
  /// what the heat means in the legend (empty: numeric error).
  void setHeat(const std::map<NodeId, double>& heat, const QString& legendText = {});

  void selectNode(NodeId id);     ///< selects and centres; emits nothing
  NodeId selectedNode() const;    ///< 0 when none
  void centerOnNode(NodeId id);

  /// Search by node name, op or value name (case-insensitive substring); returns matches in
  /// topological order and selects the first. ("#12" finds node 12: graphview addition.)
  std::vector<NodeId> find(const QString& text);
  void findNext();
  void findPrevious();

  /// Expands or collapses one fused group / collapsed block.
  /// (graphview: for a fused node id, that group (revealed if hidden); for any other id, the
  /// outermost collapsed block that shows it, or on collapse the innermost expanded one.)
  void setExpanded(NodeId group, bool expanded);

  void zoomIn();
  void zoomOut();
  void fitToView();
  /// Exports the whole scene; the format follows the extension (.png, .svg, .dot). Returns an
  /// error message or an empty string.
  QString exportTo(const QString& path) const;

  /// Milliseconds the last layout took (for the status bar and the README figures).
  double lastLayoutMilliseconds() const;

  // -- Added by the graphview helper (additive to the lead's contract) --
  /// The current marks (what setMarks last set).
  const std::map<NodeId, NodeMark>& marks() const;
  /// The current heat (what setHeat last set).
  const std::map<NodeId, double>& heat() const;
  /// The scene rectangle of the box that shows node `id` (its own box, the collapsed fused
  /// group or block that contains it); empty when the node is not in the current scene.
  QRectF nodeSceneRect(NodeId id) const;
  /// Number of boxes (nodes, blocks, inputs, outputs, constants) in the current scene.
  int visibleBoxCount() const;
  /// True when the current scene shows a large graph as collapsed blocks.
  bool isCollapsedView() const;
  /// Shows or hides the colour legend in the top-left corner (shown by default).
  void setLegendVisible(bool visible);

Q_SIGNALS:
  void nodeSelected(fb::NodeId id);        ///< the user clicked or navigated to a node
  void nodeActivated(fb::NodeId id);       ///< double-click (e.g. expand a group)
  void layoutStarted();
  void layoutProgress(int percent);
  void layoutFinished(bool ok, const QString& message);

protected:
  void keyPressEvent(QKeyEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

} // namespace fb::gui
