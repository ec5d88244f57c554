// The item model of the snapshot timeline: one row per snapshot with its statistics.
#pragma once

#include "app/workbench/Session.h"

#include <QAbstractTableModel>

#include <vector>

namespace fb::gui {

/// Snapshots as rows: step, nodes, FLOPs, bytes moved, parameters, peak memory, pass time and
/// the pass's one-line summary. The current snapshot is bold.
class TimelineModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Index, Step, Nodes, Flops, Bytes, Params, PeakMemory, Time, Summary, ColumnCount };
  explicit TimelineModel(QObject* parent = nullptr);
  void setSnapshots(std::vector<workbench::SnapshotSummary> rows, int current);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  const workbench::SnapshotSummary& row(int r) const { return m_rows.at(size_t(r)); }

private:
  std::vector<workbench::SnapshotSummary> m_rows;
  int m_current = 0;
};

} // namespace fb::gui
