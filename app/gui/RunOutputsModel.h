// The item model of a run's outputs: type, statistics, first values and the comparison with
// the interpreter, one row per graph output.
#pragma once

#include "app/gui/RunController.h"

#include <QAbstractTableModel>

namespace fb::gui {

/// Outputs as rows. The numbers are the outcome's (summarized and compared in the worker); the
/// model only formats them. Qt::UserRole gives a cell's number for sorting and tests.
class RunOutputsModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Name, Type, Min, Max, Mean, Values, MaxAbs, MaxRel, Cosine, Result, ColumnCount };
  explicit RunOutputsModel(QObject* parent = nullptr);

  void setOutcome(const RunOutcome& outcome);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  struct Row {
    workbench::OutputSummary summary;
    std::optional<TensorComparison> comparison;
  };
  std::vector<Row> m_rows;
};

} // namespace fb::gui
