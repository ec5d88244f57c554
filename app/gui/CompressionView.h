// The quantize & prune view: buttons that open the passes' option dialogs, and the report of the
// current snapshot's quantize or prune step: size and accuracy, and every layer's error or
// sparsity (sortable; a click selects the layer; the graph can be coloured by it).
#pragma once

#include "app/workbench/CompressionReport.h"

#include <QWidget>

class QCheckBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace fb::gui {

class CompressionFactsModel;
class LayerCompressionModel;

/// Shows reports and emits what the user wants; it runs nothing itself.
class CompressionView : public QWidget {
  Q_OBJECT
public:
  explicit CompressionView(QWidget* parent = nullptr);

  /// Shows the report of snapshot `snapshot`'s step.
  void showReport(const workbench::CompressionReport& report, int snapshot);
  /// Shows a message instead of a report ("Measuring the quantized model..." or why none).
  void showMessage(const QString& text);
  /// Enables the buttons when a model is loaded and no pass runs.
  void setActionsEnabled(bool enabled);
  void setSelectedNode(NodeId id);
  bool colourGraph() const;
  void setColourGraph(bool on);
  /// The snapshot whose report is shown, or -1.
  int reportSnapshot() const { return m_snapshot; }

  LayerCompressionModel* layerModel() const { return m_layers; }
  CompressionFactsModel* factsModel() const { return m_facts; }
  QTableView* layerTable() const { return m_layerTable; }
  QString headline() const;
  QString messageText() const;

Q_SIGNALS:
  void quantizeRequested();
  void pruneRequested();
  void layerActivated(fb::NodeId id);
  void colourGraphToggled(bool on);

private:
  QPushButton* m_quantize;
  QPushButton* m_prune;
  QLabel* m_headline;
  QLabel* m_message;
  QCheckBox* m_colour;
  QTableView* m_factTable;
  QTableView* m_layerTable;
  CompressionFactsModel* m_facts;
  LayerCompressionModel* m_layers;
  QSortFilterProxyModel* m_proxy;
  int m_snapshot = -1;
};

} // namespace fb::gui
