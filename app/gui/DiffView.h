// The diff view: two snapshots side by side (synchronized selection and pan) or overlaid, with
// added/removed/changed nodes coloured, a legend, the list of changes, the text-IR diff and the
// numeric diff as a heat colouring with the first divergent node one click away.
#pragma once

#include "app/gui/graph/GraphView.h"
#include "core/GraphDiff.h"
#include "core/NumericDiff.h"

#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QStackedWidget;
class QTableWidget;
class QTabWidget;

namespace fb::gui {

/// Emits what the user wants (which snapshots to compare, a numeric diff); shows what the
/// coordinator computed.
class DiffView : public QWidget {
  Q_OBJECT
public:
  explicit DiffView(QWidget* parent = nullptr);
  /// Cuts the scroll-bar links first: the child views are destroyed after this object's own
  /// members, and a scroll bar moved by a dying scene must not call back into it.
  ~DiffView() override;

  /// The snapshots one can pick ("0 imported", "1 canonicalize", ...). Keeps the current pair
  /// when it is still valid.
  void setSnapshotLabels(const QStringList& labels);
  /// Selects the pair in the combo boxes without emitting.
  void setPair(int a, int b);
  int snapshotA() const;
  int snapshotB() const;

  /// Shows a structural diff of graphs a and b with their text diff.
  void showDiff(int a, int b, std::shared_ptr<const Graph> graphA, std::shared_ptr<const Graph> graphB,
                const GraphDiff& diff, const QString& textDiff);
  /// Shows a numeric diff (heat on b's nodes, per-value table, first divergent node).
  void showNumericDiff(const NumericDiff& diff);
  void showNumericError(const QString& message);
  void setNumericBusy(bool busy);
  void setOverlay(bool overlay);
  /// Size of the monospaced IR text diff (presentation mode makes it larger).
  void setTextPointSize(int points);
  bool isOverlay() const;

  GraphView* viewA() const { return m_viewA; }
  GraphView* viewB() const { return m_viewB; }
  GraphView* overlayView() const { return m_overlay; }
  QListWidget* changeList() const { return m_changes; }
  QPlainTextEdit* textDiffView() const { return m_text; }
  const std::optional<GraphDiff>& diff() const { return m_diff; }
  std::optional<NodeId> firstDivergent() const { return m_firstDivergent; }
  /// Marks shown on a and on b.
  const std::map<NodeId, NodeMark>& marksA() const { return m_marksA; }
  const std::map<NodeId, NodeMark>& marksB() const { return m_marksB; }
  /// The graph the overlay shows and which of its nodes are ghosts of removed nodes.
  std::shared_ptr<const Graph> overlayGraph() const { return m_overlayGraph; }
  const std::map<NodeId, NodeId>& overlayGhosts() const { return m_ghostToRemoved; }

  /// Selects `id` of b (or of a when only a has it) in every view, with its counterpart.
  void selectNode(NodeId id);

Q_SIGNALS:
  void compareRequested(int a, int b);
  void numericDiffRequested(int a, int b);
  /// A node of snapshot b was picked in the diff (for the inspector).
  void nodeSelected(fb::NodeId id, int snapshot);

private:
  void syncFromA(NodeId id);
  void syncFromB(NodeId id);
  void linkScrollBars();
  QWidget* makeLegend();

  QComboBox* m_comboA;
  QComboBox* m_comboB;
  QPushButton* m_sideBySide;
  QPushButton* m_overlayButton;
  QPushButton* m_numeric;
  QPushButton* m_firstDivergentButton;
  QLabel* m_summary;
  QStackedWidget* m_stack;
  GraphView* m_viewA;
  GraphView* m_viewB;
  GraphView* m_overlay;
  QLabel* m_titleA;
  QLabel* m_titleB;
  QLabel* m_overlayNote;
  QTabWidget* m_tabs;
  QListWidget* m_changes;
  QPlainTextEdit* m_text;
  QTableWidget* m_numericTable;
  QLabel* m_numericStatus;
  std::optional<GraphDiff> m_diff;
  std::shared_ptr<const Graph> m_graphA, m_graphB;
  std::map<NodeId, NodeMark> m_marksA, m_marksB;
  /// The overlay: B plus ghosts of A's removed nodes (app/workbench/OverlayGraph.h), and the
  /// ghost id -> removed id map (with its inverse) for selection sync.
  std::shared_ptr<const Graph> m_overlayGraph;
  std::map<NodeId, NodeId> m_ghostToRemoved, m_removedToGhost;
  std::optional<NodeId> m_firstDivergent;
  int m_shownA = -1, m_shownB = -1;
  bool m_syncing = false;
  std::vector<QMetaObject::Connection> m_scrollLinks; ///< linkScrollBars' connections
};

} // namespace fb::gui
