// The quantize & prune view.
#include "app/gui/CompressionView.h"

#include "app/gui/CompressionModels.h"
#include "app/gui/ReportTable.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

} // namespace

CompressionView::CompressionView(QWidget* parent) : QWidget(parent) {
  m_quantize = new QPushButton(tr("Quantize\u2026"));
  m_quantize->setObjectName("quantizeButton");
  m_quantize->setToolTip(tr("Post-training int8 quantization of the current snapshot: choose "
                            "the calibration and apply it as the next pipeline step"));
  m_prune = new QPushButton(tr("Prune\u2026"));
  m_prune->setObjectName("pruneButton");
  m_prune->setToolTip(tr("Magnitude pruning of the current snapshot: choose the sparsity and "
                         "apply it as the next pipeline step"));
  m_colour = new QCheckBox(tr("Colour the graph"));
  m_colour->setObjectName("colourGraph");
  m_colour->setChecked(true);
  m_headline = new QLabel;
  m_headline->setObjectName("compressionHeadline");
  m_headline->setWordWrap(true);
  m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_message = new QLabel;
  m_message->setObjectName("compressionMessage");
  m_message->setWordWrap(true);
  m_message->setAlignment(Qt::AlignCenter);

  auto* top = new QHBoxLayout;
  top->addWidget(m_quantize);
  top->addWidget(m_prune);
  top->addWidget(m_colour);
  top->addStretch(1);

  m_facts = new CompressionFactsModel(this);
  m_factTable = makeReportTable(m_facts, /*sortable=*/false);
  m_factTable->setObjectName("factsTable");
  m_factTable->horizontalHeader()->hide();
  m_factTable->setSelectionMode(QAbstractItemView::NoSelection);
  m_layers = new LayerCompressionModel(this);
  m_proxy = new QSortFilterProxyModel(this);
  m_proxy->setSourceModel(m_layers);
  m_proxy->setSortRole(Qt::UserRole);
  m_layerTable = makeReportTable(m_proxy, /*sortable=*/true);
  m_layerTable->setObjectName("layerTable");
  m_layerTable->sortByColumn(-1, Qt::AscendingOrder); // graph order until the user sorts
  // The layer names take the room; the numbers keep their width.
  m_layerTable->horizontalHeader()->setStretchLastSection(false);
  m_layerTable->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);

  auto* left = new QWidget;
  auto* l = new QVBoxLayout(left);
  l->setContentsMargins(0, 0, 0, 0);
  l->addWidget(m_headline);
  l->addWidget(m_factTable, 1);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(m_layerTable);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(m_message);
  layout->addWidget(split, 1);
  split->setObjectName("compressionSplit");

  connect(m_quantize, &QPushButton::clicked, this, &CompressionView::quantizeRequested);
  connect(m_prune, &QPushButton::clicked, this, &CompressionView::pruneRequested);
  connect(m_colour, &QCheckBox::toggled, this, &CompressionView::colourGraphToggled);
  connect(m_layerTable, &QTableView::clicked, this, [this](const QModelIndex& index) {
    const QVariant id = m_proxy->data(index, LayerCompressionModel::NodeRole);
    if (id.isValid())
      Q_EMIT layerActivated(NodeId(id.toULongLong()));
  });
  showMessage(tr("Quantize or prune the model (buttons above, or a quantize or prune step in "
                 "the pipeline) to see what it does to size and accuracy, layer by layer."));
}

void CompressionView::showReport(const workbench::CompressionReport& report, int snapshot) {
  m_snapshot = snapshot;
  m_facts->setFacts(report.facts);
  m_layers->setReport(report);
  QString head = tr("<b>Snapshot %1 \u00b7 %2</b><br>%3")
                     .arg(snapshot)
                     .arg(qs(report.step).toHtmlEscaped())
                     .arg(qs(report.summary).toHtmlEscaped());
  if (!report.layers.empty())
    head += tr("<br>Layers: %1; the graph shows %2.")
                .arg(qs(report.metric).toHtmlEscaped())
                .arg(qs(report.heatLegend).toHtmlEscaped());
  m_headline->setText(head);
  m_message->hide();
  m_factTable->resizeColumnsToContents();
}

void CompressionView::showMessage(const QString& text) {
  m_snapshot = -1;
  m_message->setText(text);
  m_message->show();
  m_headline->clear();
  m_facts->setFacts({});
  m_layers->setReport({});
}

void CompressionView::setActionsEnabled(bool enabled) {
  m_quantize->setEnabled(enabled);
  m_prune->setEnabled(enabled);
}

void CompressionView::setSelectedNode(NodeId id) {
  const int row = m_layers->rowOfNode(id);
  if (row < 0) {
    m_layerTable->clearSelection();
    return;
  }
  const QModelIndex at = m_proxy->mapFromSource(m_layers->index(row, 0));
  m_layerTable->selectRow(at.row());
  m_layerTable->scrollTo(at);
}

bool CompressionView::colourGraph() const {
  return m_colour->isChecked();
}

void CompressionView::setColourGraph(bool on) {
  m_colour->setChecked(on);
}

QString CompressionView::headline() const {
  return m_headline->text();
}

QString CompressionView::messageText() const {
  return m_message->isHidden() ? QString() : m_message->text();
}

} // namespace fb::gui
