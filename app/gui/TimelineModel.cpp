// The snapshot timeline model.
#include "app/gui/TimelineModel.h"

#include "core/Format.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace fb::gui {

namespace {
/// "+3", "-20", "0": the change of a count from the previous snapshot.
QString delta(double now, double before) {
  double d = now - before;
  if (d == 0)
    return {};
  return d > 0 ? QStringLiteral(" (+%1)").arg(d) : QStringLiteral(" (\u2212%1)").arg(-d);
}
} // namespace

TimelineModel::TimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void TimelineModel::setSnapshots(std::vector<workbench::SnapshotSummary> rows, int current) {
  beginResetModel();
  m_rows = std::move(rows);
  m_current = current;
  endResetModel();
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_rows.size());
}

int TimelineModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(ColumnCount);
}

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
    return {};
  const workbench::SnapshotSummary& s = m_rows[size_t(index.row())];
  const workbench::SnapshotSummary* prev = index.row() > 0 ? &m_rows[size_t(index.row() - 1)] : nullptr;
  if (role == Qt::DisplayRole) {
    switch (Column(index.column())) {
    case Index:
      return int(s.index);
    case Step:
      return QString::fromStdString(s.label);
    case Nodes:
      return QString::number(s.stats.nodes) + (prev ? delta(double(s.stats.nodes), double(prev->stats.nodes)) : QString());
    case Flops:
      return QString::fromStdString(formatFlops(s.stats.flops));
    case Bytes:
      return QString::fromStdString(formatBytes(s.stats.bytesMoved));
    case Params:
      return QString::number(s.stats.params);
    case PeakMemory:
      return QString::fromStdString(formatBytes(double(s.stats.peakActivationBytes)));
    case Time:
      return index.row() == 0 ? QString() : QStringLiteral("%1 ms").arg(s.passMilliseconds, 0, 'f', 2);
    case Summary:
      return QString::fromStdString(s.summary);
    case ColumnCount:
      break;
    }
    return {};
  }
  if (role == Qt::TextAlignmentRole) {
    int c = index.column();
    if (c == Index || (c >= Nodes && c <= Time))
      return int(Qt::AlignRight | Qt::AlignVCenter);
    return int(Qt::AlignLeft | Qt::AlignVCenter);
  }
  if (role == Qt::FontRole && index.row() == m_current) {
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role == Qt::BackgroundRole && index.row() == m_current)
    return QBrush(QColor(0xFF, 0xF4, 0xCC));
  if (role == Qt::ForegroundRole && index.row() > 0 && !s.changed)
    return QBrush(QColor(0x70, 0x70, 0x70));
  if (role == Qt::ToolTipRole)
    return QString::fromStdString(s.summary.empty() ? s.label : s.summary);
  return {};
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  switch (Column(section)) {
  case Index:
    return QStringLiteral("#");
  case Step:
    return QStringLiteral("Step");
  case Nodes:
    return QStringLiteral("Nodes");
  case Flops:
    return QStringLiteral("FLOPs");
  case Bytes:
    return QStringLiteral("Bytes moved");
  case Params:
    return QStringLiteral("Params");
  case PeakMemory:
    return QStringLiteral("Peak memory");
  case Time:
    return QStringLiteral("Pass time");
  case Summary:
    return QStringLiteral("What the pass did");
  case ColumnCount:
    break;
  }
  return {};
}

} // namespace fb::gui
