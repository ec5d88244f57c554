// The item models of the quantize & prune view: the report's facts, and its layers.
#pragma once

#include "app/workbench/CompressionReport.h"

#include <QAbstractTableModel>

namespace fb::gui {

/// The weighted layers of a compression report as rows, in graph order. The columns depend on
/// the pass: quantize shows the error against the float model, prune the weights removed.
/// Qt::UserRole gives each cell's number (or its text) for sorting through a proxy;
/// NodeRole gives the row's node id.
class LayerCompressionModel : public QAbstractTableModel {
  Q_OBJECT
public:
  static constexpr int NodeRole = Qt::UserRole + 1;
  enum QuantizeColumn { QLayer, QOp, QQuantized, QError, QCosine, QMaxAbs, QColumnCount };
  enum PruneColumn { PLayer, POp, PBefore, PAfter, PRemoved, PColumnCount };
  explicit LayerCompressionModel(QObject* parent = nullptr);

  void setReport(workbench::CompressionReport report);
  const workbench::CompressionReport& report() const { return m_report; }
  bool isQuantize() const { return m_report.pass == "quantize"; }
  /// The row of the layer of node `id`, or -1.
  int rowOfNode(NodeId id) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  workbench::CompressionReport m_report;
  double m_maxValue = 0;
};

/// The report's facts ("weights", "44.6 MiB -> 11.2 MiB (3.98x smaller)") as two columns.
class CompressionFactsModel : public QAbstractTableModel {
  Q_OBJECT
public:
  explicit CompressionFactsModel(QObject* parent = nullptr);
  void setFacts(std::vector<std::pair<std::string, std::string>> facts);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

private:
  std::vector<std::pair<std::string, std::string>> m_facts;
};

} // namespace fb::gui
