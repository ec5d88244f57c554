// The snapshot timeline: every snapshot with nodes, FLOPs, bytes, parameters, peak memory, time.
#pragma once

#include "app/workbench/Session.h"

#include <QWidget>

#include <vector>

class QTableView;

namespace fb::gui {

class TimelineModel;

/// A table of snapshots; clicking a row asks to view that snapshot.
class TimelineView : public QWidget {
  Q_OBJECT
public:
  explicit TimelineView(QWidget* parent = nullptr);
  void setSnapshots(std::vector<workbench::SnapshotSummary> rows, int current);
  TimelineModel* model() const { return m_model; }
  QTableView* table() const { return m_table; }

Q_SIGNALS:
  void snapshotSelected(int index);

private:
  TimelineModel* m_model;
  QTableView* m_table;
  bool m_updating = false;
};

} // namespace fb::gui
