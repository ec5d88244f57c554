// Formatting of a run's outputs for the run panel's table.
#include "app/gui/RunOutputsModel.h"
#include "app/gui/ShownText.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <cmath>

namespace fb::gui {

namespace {
QString number(double v) { return QString::number(v, 'g', 4); }
} // namespace

RunOutputsModel::RunOutputsModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunOutputsModel::setOutcome(const RunOutcome& outcome) {
  beginResetModel();
  m_rows.clear();
  for (size_t i = 0; i < outcome.outputs.size(); ++i) {
    Row r;
    r.summary = outcome.outputs[i];
    if (outcome.comparison && i < outcome.comparison->outputs.size())
      r.comparison = outcome.comparison->outputs[i].result;
    m_rows.push_back(std::move(r));
  }
  endResetModel();
}

void RunOutputsModel::clear() {
  beginResetModel();
  m_rows.clear();
  endResetModel();
}

int RunOutputsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_rows.size());
}

int RunOutputsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunOutputsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& r = m_rows[size_t(index.row())];
  const workbench::OutputSummary& s = r.summary;
  const std::optional<TensorComparison>& c = r.comparison;
  if (role == Qt::UserRole) {
    switch (index.column()) {
    case Min: return s.min;
    case Max: return s.max;
    case Mean: return s.mean;
    case MaxAbs: return c ? QVariant(c->maxAbs) : QVariant();
    case MaxRel: return c ? QVariant(c->maxRel) : QVariant();
    case Cosine: return c ? QVariant(c->cosine) : QVariant();
    case Result: return c ? QVariant(c->ok) : QVariant();
    default: return {};
    }
  }
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
    case Name:
      return shownName(s.name);
    case Type: return QString::fromStdString(s.type);
    case Min: return number(s.min);
    case Max: return number(s.max);
    case Mean: return number(s.mean);
    case Values: {
      QStringList v;
      for (double x : s.preview)
        v << number(x);
      QString text = QStringLiteral("[") + v.join(QStringLiteral(", "));
      if (s.elements > int64_t(s.preview.size()))
        text += QStringLiteral(", \u2026");
      text += QStringLiteral("]");
      if (s.nonFinite > 0)
        text += tr(" (%n non-finite)", nullptr, int(s.nonFinite));
      return text;
    }
    case MaxAbs: return c ? number(c->maxAbs) : QString();
    case MaxRel: return c ? number(c->maxRel) : QString();
    case Cosine: return c ? QString::number(c->cosine, 'f', 6) : QString();
    case Result:
      if (!c)
        return tr("not compared");
      if (role == Qt::ToolTipRole && !c->ok)
        return QString::fromStdString(c->reason);
      return c->ok ? tr("pass") : tr("FAIL");
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() != Name && index.column() != Type &&
      index.column() != Values)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == Result && c)
    return QBrush(c->ok ? QColor(0x0B, 0x6E, 0x2E) : QColor(0xB0, 0x1C, 0x14));
  if (role == Qt::FontRole && index.column() == Result) {
    QFont f;
    f.setBold(true);
    return f;
  }
  return {};
}

QVariant RunOutputsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Name: return tr("Output");
  case Type: return tr("Type");
  case Min: return tr("Min");
  case Max: return tr("Max");
  case Mean: return tr("Mean");
  case Values: return tr("First values");
  case MaxAbs: return tr("Max abs err");
  case MaxRel: return tr("Max rel err");
  case Cosine: return tr("Cosine");
  case Result: return tr("vs interpreter");
  default: return {};
  }
}

} // namespace fb::gui
