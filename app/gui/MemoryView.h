// The memory plan view: buffers as rectangles over execution steps and arena offsets, the plan's
// totals, and a second snapshot's plan beside it for comparison (before and after fusion).
#pragma once

#include "app/gui/MemoryPlanner.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineSeries;
class QSplitter;

namespace fb::gui {

class RectChart;

/// Shows planned snapshots (MemoryPlanner's outcomes); emits what the user asks for. The
/// numbers it prints are the report's (the plan's own totals), never recomputed here.
class MemoryView : public QWidget {
  Q_OBJECT
public:
  explicit MemoryView(QWidget* parent = nullptr);

  /// The snapshots the compare box offers ("0 · imported", "7 · fuse", ...) and which
  /// is current.
  void setSnapshots(const QStringList& labels, int current);
  /// The snapshot to compare with, or -1 for none.
  int compareIndex() const;
  void setCompareIndex(int index);
  /// Shows a planning outcome (the current snapshot, and the compared one beside it).
  void showOutcome(const PlanOutcome& outcome);
  /// Clears the charts and says why (no model, planning, an error).
  void showMessage(const QString& text);
  /// Outlines the buffers node `id` of the current snapshot produces or reads.
  void setSelectedNode(NodeId id);

  /// The chart of the current snapshot and that of the compared one (hidden when none).
  RectChart* chart() const { return m_main.chart; }
  RectChart* compareChart() const { return m_other.chart; }
  /// The totals line ("arena 3.06 MiB · naive ... · efficiency 96.4 %").
  QString totalsText() const;
  const PlanOutcome& outcome() const { return m_outcome; }

Q_SIGNALS:
  /// A buffer was clicked: its producer, node `id` of snapshot `snapshot`.
  void nodeClicked(fb::NodeId id, int snapshot);
  /// The user picked another snapshot to compare with (-1: none).
  void compareRequested(int snapshot);

private:
  struct Pane {
    RectChart* chart = nullptr;
    QLineSeries* live = nullptr;
    QLineSeries* lowerBound = nullptr;
    QLineSeries* arena = nullptr;
    PlannedSnapshot shown;
  };
  void makePane(Pane& pane);
  void fillPane(Pane& pane, const PlannedSnapshot& s, double unit, const QString& unitName,
                double yMax);
  void highlight(Pane& pane, const std::vector<NodeId>& nodes);

  QComboBox* m_compare = nullptr;
  QLabel* m_totals = nullptr;
  QLabel* m_message = nullptr;
  QSplitter* m_split = nullptr;
  Pane m_main, m_other;
  PlanOutcome m_outcome;
  QStringList m_labels;
  NodeId m_selected = 0;
  bool m_updatingCombo = false;
};

} // namespace fb::gui
