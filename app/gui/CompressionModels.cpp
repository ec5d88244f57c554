// Formatting of compression reports for the quantize & prune view's tables.
#include "app/gui/CompressionModels.h"
#include "app/gui/ShownText.h"
#include "app/gui/graph/OpColors.h"

#include <QBrush>

#include <algorithm>

namespace fb::gui {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QVariant rightAligned() {
  return int(Qt::AlignRight | Qt::AlignVCenter);
}

/// A node name fit for a table cell: long names are elided in the middle.
QString elided(const std::string& name) {
  return shownName(name, 57);
}

} // namespace

// -- LayerCompressionModel --

LayerCompressionModel::LayerCompressionModel(QObject* parent) : QAbstractTableModel(parent) {}

void LayerCompressionModel::setReport(workbench::CompressionReport report) {
  beginResetModel();
  m_report = std::move(report);
  m_maxValue = 0;
  for (const auto& l : m_report.layers)
    m_maxValue = std::max(m_maxValue, l.value);
  endResetModel();
}

int LayerCompressionModel::rowOfNode(NodeId id) const {
  for (size_t i = 0; i < m_report.layers.size(); ++i)
    if (m_report.layers[i].node == id)
      return int(i);
  return -1;
}

int LayerCompressionModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_report.layers.size());
}

int LayerCompressionModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid())
    return 0;
  return isQuantize() ? int(QColumnCount) : int(PColumnCount);
}

QVariant LayerCompressionModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const workbench::LayerCompression& l = m_report.layers[size_t(index.row())];
  const int col = index.column();
  if (role == NodeRole)
    return qulonglong(l.node);
  if (role == Qt::ToolTipRole && col == 0)
    return tr("%1 (#%2)").arg(shownName(l.name, kShownLineChars).toHtmlEscaped()).arg(l.node);
  const bool metric = isQuantize() ? col == QError : col == PRemoved;
  if (role == Qt::BackgroundRole && metric && m_maxValue > 0)
    return QBrush(heatColor(0.55 * l.value / m_maxValue)); // pale to orange: text stays legible
  if (isQuantize()) {
    if (role == Qt::UserRole) {
      switch (col) {
      case QLayer:
        return qs(l.name);
      case QOp:
        return qs(l.op);
      case QQuantized:
        return int(l.quantized);
      case QError:
        return l.value;
      case QCosine:
        return l.cosine;
      case QMaxAbs:
        return l.maxAbs;
      default:
        return {};
      }
    }
    if (role == Qt::DisplayRole) {
      switch (col) {
      case QLayer:
        return elided(l.name);
      case QOp:
        return qs(l.op);
      case QQuantized:
        return l.quantized ? tr("int8") : tr("float");
      case QError:
        return QString::number(l.value, 'e', 2);
      case QCosine:
        return QString::number(l.cosine, 'f', 6);
      case QMaxAbs:
        return QString::number(l.maxAbs, 'g', 4);
      default:
        return {};
      }
    }
    if (role == Qt::TextAlignmentRole && col >= QError)
      return rightAligned();
    return {};
  }
  if (role == Qt::UserRole) {
    switch (col) {
    case PLayer:
      return qs(l.name);
    case POp:
      return qs(l.op);
    case PBefore:
      return qlonglong(l.weightsBefore);
    case PAfter:
      return qlonglong(l.weightsAfter);
    case PRemoved:
      return l.value;
    default:
      return {};
    }
  }
  if (role == Qt::DisplayRole) {
    switch (col) {
    case PLayer:
      return elided(l.name);
    case POp:
      return qs(l.op);
    case PBefore:
      return QString::number(l.weightsBefore);
    case PAfter:
      return QString::number(l.weightsAfter);
    case PRemoved:
      return QString::number(l.value * 100.0, 'f', 1);
    default:
      return {};
    }
  }
  if (role == Qt::TextAlignmentRole && col >= PBefore)
    return rightAligned();
  return {};
}

QVariant LayerCompressionModel::headerData(int section, Qt::Orientation orientation,
                                           int role) const {
  if (orientation != Qt::Horizontal)
    return {};
  if (isQuantize()) {
    if (role == Qt::ToolTipRole && section == QError)
      return tr("1 \u2212 cosine similarity of this layer's output with the float model's on the "
                "same input: the error accumulated from the inputs up to this layer");
    if (role != Qt::DisplayRole)
      return {};
    switch (section) {
    case QLayer:
      return tr("Layer");
    case QOp:
      return tr("Op");
    case QQuantized:
      return tr("Weights");
    case QError:
      return tr("Error (1\u2212cos)");
    case QCosine:
      return tr("Cosine");
    case QMaxAbs:
      return tr("Max |error|");
    default:
      return {};
    }
  }
  if (role == Qt::ToolTipRole && section == PAfter)
    return tr("Nonzero weights after the pass (structured pruning also shrinks the tensor)");
  if (role != Qt::DisplayRole)
    return {};
  switch (section) {
  case PLayer:
    return tr("Layer");
  case POp:
    return tr("Op");
  case PBefore:
    return tr("Weights before");
  case PAfter:
    return tr("Nonzero after");
  case PRemoved:
    return tr("Removed %");
  default:
    return {};
  }
}

// -- CompressionFactsModel --

CompressionFactsModel::CompressionFactsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompressionFactsModel::setFacts(std::vector<std::pair<std::string, std::string>> facts) {
  beginResetModel();
  m_facts = std::move(facts);
  endResetModel();
}

int CompressionFactsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_facts.size());
}

int CompressionFactsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 2;
}

QVariant CompressionFactsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  if (role != Qt::DisplayRole && role != Qt::UserRole)
    return {};
  const auto& [label, text] = m_facts[size_t(index.row())];
  return qs(index.column() == 0 ? label : text);
}

QVariant CompressionFactsModel::headerData(int section, Qt::Orientation orientation,
                                           int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  return section == 0 ? tr("What") : tr("Result");
}

} // namespace fb::gui
