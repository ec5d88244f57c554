// The item models of the profile view: kernels of one profile, and what fusion saved between two.
#pragma once

#include "app/workbench/ProfileReport.h"

#include <QAbstractTableModel>

namespace fb::gui {

/// Kernels as rows, in execution order (sort through a QSortFilterProxyModel on Qt::UserRole,
/// which gives each cell's number, or its text for text columns). The numbers are the
/// summary's (workbench::summarizeProfile), formatted only: TimeMs is the median over the runs,
/// and the share and rates follow it; MeanMs is what `fusebox-opt --profile` prints.
class KernelProfileModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column {
    Kernel, Op, Nodes, TimeMs, MeanMs, Percent, GFlops, GBps, Intensity, Generator, ColumnCount
  };
  explicit KernelProfileModel(QObject* parent = nullptr);

  void setSummary(workbench::ProfileSummary summary);
  const workbench::ProfileSummary& summary() const { return m_summary; }
  /// The row of kernel `kernel` (rows are kernels in execution order).
  int rowOfKernel(int kernel) const { return kernel; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  workbench::ProfileSummary m_summary;
  double m_maxPercent = 0;
};

/// Rows of a profile comparison: the kernels after, the kernels they replaced, both times and
/// the time saved. Sorted by saved time (the comparison's order); UserRole gives numbers.
class ProfileCompareModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { After, Op, Before, BeforeMs, AfterMs, SavedMs, SavedPercent, ColumnCount };
  explicit ProfileCompareModel(QObject* parent = nullptr);

  void setComparison(workbench::ProfileComparison comparison);
  const workbench::ProfileComparison& comparison() const { return m_comparison; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  workbench::ProfileComparison m_comparison;
};

} // namespace fb::gui
