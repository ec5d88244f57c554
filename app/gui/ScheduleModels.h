// Item models of the schedule editor: a kernel's loop nest as compiled, and a schedule trial's
// before/after comparison (time, generator, blocking, code sizes).
#pragma once

#include "app/workbench/KernelSchedule.h"
#include "app/workbench/ScheduleTrial.h"

#include <QAbstractTableModel>

#include <optional>

namespace fb::gui {

/// One row per loop of the scheduled nest, in pre-order: the loop (indented by depth), its
/// iterations and how it runs (serial, parallel, vectorized, unrolled).
class LoopNestModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Loop, Iterations, Kind, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void setLoops(std::vector<workbench::LoopDescription> loops);
  const std::vector<workbench::LoopDescription>& loops() const { return m_loops; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
  std::vector<workbench::LoopDescription> m_loops;
};

/// Rows of measures, columns Before, After and Change, for one schedule trial.
class TrialComparisonModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Row {
    Schedule, MedianTime, MinTime, MaxTime, Runs, Generator, Blocking, LoopLines, LlvmLines,
    AsmInstructions, VectorFmas, RowCount
  };
  enum Column { Before, After, Change, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void setTrial(std::optional<workbench::ScheduleTrial> trial);
  const std::optional<workbench::ScheduleTrial>& trial() const { return m_trial; }
  /// Before's median over after's (above 1: the new schedule is faster); 0 when not timed.
  double speedup() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  /// "248.6 µs", "1.12 ms", "0.04 µs": a kernel time for the table and the status line.
  static QString formatTime(double us);
  /// Instructions in an assembly text: lines that are neither labels, directives nor comments.
  static int countInstructions(const std::string& assembly);
  /// Vector fused multiply-adds (vfmadd…/vfnmadd…) in an assembly text.
  static int countVectorFmas(const std::string& assembly);

private:
  QVariant valueText(int row, const workbench::ScheduleVariant& v) const;
  QVariant changeText(int row) const;

  std::optional<workbench::ScheduleTrial> m_trial;
};

} // namespace fb::gui
