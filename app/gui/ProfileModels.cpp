// Formatting of kernel profiles and profile comparisons for the profile view's tables.
#include "app/gui/ProfileModels.h"
#include "app/gui/ShownText.h"
#include "app/gui/graph/OpColors.h"

#include <QBrush>
#include <QFont>

#include <algorithm>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QVariant rightAligned() { return int(Qt::AlignRight | Qt::AlignVCenter); }

/// "#3, #4, #5" for a tooltip.
QString idList(const std::vector<NodeId>& ids) {
  QStringList out;
  for (NodeId id : ids)
    out << QStringLiteral("#%1").arg(id);
  return out.join(QStringLiteral(", "));
}

} // namespace

// -- KernelProfileModel --

KernelProfileModel::KernelProfileModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelProfileModel::setSummary(workbench::ProfileSummary summary) {
  beginResetModel();
  m_summary = std::move(summary);
  m_maxPercent = 0;
  for (const auto& k : m_summary.kernels)
    m_maxPercent = std::max(m_maxPercent, k.percent);
  endResetModel();
}

int KernelProfileModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_summary.kernels.size());
}

int KernelProfileModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelProfileModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const workbench::KernelTiming& k = m_summary.kernels[size_t(index.row())];
  const int col = index.column();
  if (role == Qt::UserRole) {
    switch (col) {
    case Kernel: return qs(k.name);
    case Op: return qs(k.op);
    case Nodes: return int(k.nodes.size());
    case TimeMs: return k.medianUs / 1000.0;
    case MeanMs: return k.meanUs / 1000.0;
    case Percent: return k.percent;
    case GFlops: return k.gflops;
    case GBps: return k.gbps;
    case Intensity: return k.intensity();
    case Generator: return qs(k.generator);
    default: return {};
    }
  }
  if (role == Qt::DisplayRole) {
    switch (col) {
    case Kernel: return qs(k.name);
    case Op: return qs(k.op);
    case Nodes:
      return QStringLiteral("%1: %2").arg(k.nodes.size()).arg(shownName(k.nodeNames, 81));
    case TimeMs: return QString::number(k.medianUs / 1000.0, 'f', 4);
    case MeanMs: return QString::number(k.meanUs / 1000.0, 'f', 4);
    case Percent: return QString::number(k.percent, 'f', 1);
    case GFlops: return QString::number(k.gflops, 'f', 2);
    case GBps: return QString::number(k.gbps, 'f', 2);
    case Intensity: return k.bytes > 0 ? QString::number(k.intensity(), 'f', 2) : QStringLiteral("\u2013");
    case Generator: return qs(k.generator);
    default: return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    if (col == Nodes || col == Kernel)
      return tr("%1 (%2)<br>computes %3<br>%4")
          .arg(qs(k.name).toHtmlEscaped(), qs(k.op).toHtmlEscaped(), idList(k.nodes),
               shownName(k.nodeNames, 401).toHtmlEscaped());
    return {};
  }
  if (role == Qt::TextAlignmentRole && col >= TimeMs && col <= Intensity)
    return rightAligned();
  if (role == Qt::BackgroundRole && col == Percent && m_maxPercent > 0)
    return QBrush(heatColor(0.55 * k.percent / m_maxPercent)); // pale to orange: text stays legible
  return {};
}

QVariant KernelProfileModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal)
    return {};
  if (role == Qt::ToolTipRole && section == Intensity)
    return tr("Arithmetic intensity: FLOPs per byte the kernel reads and writes");
  if (role == Qt::ToolTipRole && section == TimeMs)
    return tr("Median time per run over the timed runs; %, GFLOP/s and GB/s follow it");
  if (role == Qt::ToolTipRole && section == MeanMs)
    return tr("Mean time per run (what fusebox-opt --profile prints); a busy machine's outliers "
              "raise it above the median");
  if (role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Kernel: return tr("Kernel");
  case Op: return tr("Op");
  case Nodes: return tr("Nodes covered");
  case TimeMs: return tr("Median (ms)");
  case MeanMs: return tr("Mean (ms)");
  case Percent: return tr("%");
  case GFlops: return tr("GFLOP/s");
  case GBps: return tr("GB/s");
  case Intensity: return tr("FLOP/B");
  case Generator: return tr("Generator");
  default: return {};
  }
}

// -- ProfileCompareModel --

ProfileCompareModel::ProfileCompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProfileCompareModel::setComparison(workbench::ProfileComparison comparison) {
  beginResetModel();
  m_comparison = std::move(comparison);
  endResetModel();
}

int ProfileCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_comparison.rows.size());
}

int ProfileCompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProfileCompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const workbench::KernelSaving& r = m_comparison.rows[size_t(index.row())];
  const int col = index.column();
  const double savedPercent = r.beforeUs > 0 ? 100.0 * r.savedUs() / r.beforeUs : 0.0;
  if (role == Qt::UserRole) {
    switch (col) {
    case After:
      return shownName(r.afterNames, kShownLineChars);
    case Op: return qs(r.afterOp);
    case Before:
      return shownName(r.beforeNames, kShownLineChars);
    case BeforeMs: return r.beforeUs / 1000.0;
    case AfterMs: return r.afterUs / 1000.0;
    case SavedMs: return r.savedUs() / 1000.0;
    case SavedPercent: return savedPercent;
    default: return {};
    }
  }
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    auto elided = [&](const std::string& s) {
      return shownName(s, role == Qt::DisplayRole ? 71 : kShownLineChars);
    };
    switch (col) {
    case After: return r.after.empty() ? tr("(gone)") : elided(r.afterNames);
    case Op: return elided(r.afterOp);
    case Before:
      return r.before.empty() ? tr("(new)")
                              : tr("%n kernel(s): ", nullptr, int(r.before.size())) + elided(r.beforeNames);
    case BeforeMs: return QString::number(r.beforeUs / 1000.0, 'f', 4);
    case AfterMs: return QString::number(r.afterUs / 1000.0, 'f', 4);
    case SavedMs: return QString::number(r.savedUs() / 1000.0, 'f', 4);
    case SavedPercent: return r.beforeUs > 0 ? QString::number(savedPercent, 'f', 1) : QStringLiteral("\u2013");
    default: return {};
    }
  }
  if (role == Qt::TextAlignmentRole && col >= BeforeMs)
    return rightAligned();
  if (role == Qt::ForegroundRole && (col == SavedMs || col == SavedPercent))
    return QBrush(r.savedUs() >= 0 ? QColor(0x0B, 0x6E, 0x2E) : QColor(0xB0, 0x1C, 0x14));
  return {};
}

QVariant ProfileCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case After: return tr("Kernel after");
  case Op: return tr("Op");
  case Before: return tr("Kernels before");
  case BeforeMs: return tr("Before (median ms)");
  case AfterMs: return tr("After (median ms)");
  case SavedMs: return tr("Saved (ms)");
  case SavedPercent: return tr("Saved %");
  default: return {};
  }
}

} // namespace fb::gui
