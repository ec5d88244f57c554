// The schedule editor's loop-nest and comparison models.
#include "app/gui/ScheduleModels.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <cctype>
#include <string_view>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

int lineCount(const std::string& text) {
  int n = 0;
  for (char c : text)
    n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

QColor kindColor(const std::string& kind) {
  if (kind == "parallel")
    return QColor(0xC6, 0x28, 0x28);
  if (kind == "vectorized")
    return QColor(0x1B, 0x7F, 0x3B);
  if (kind == "unrolled")
    return QColor(0x00, 0x69, 0x8C);
  return QColor(0x44, 0x44, 0x44);
}

} // namespace

// ---- LoopNestModel ----

void LoopNestModel::setLoops(std::vector<workbench::LoopDescription> loops) {
  beginResetModel();
  m_loops = std::move(loops);
  endResetModel();
}

int LoopNestModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_loops.size());
}

int LoopNestModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant LoopNestModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(m_loops.size()) || index.column() >= ColumnCount)
    return {};
  const workbench::LoopDescription& l = m_loops[size_t(index.row())];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
    case Loop: return QString(l.depth * 2, QLatin1Char(' ')) + qs(l.var);
    case Iterations: return l.extent >= 0 ? QVariant(qlonglong(l.extent)) : QVariant(tr("varies"));
    case Kind: return qs(l.kind);
    }
  }
  if (role == Qt::ForegroundRole && index.column() == Kind)
    return QBrush(kindColor(l.kind));
  if (role == Qt::FontRole && index.column() == Loop) {
    QFont f(QStringLiteral("monospace"));
    f.setStyleHint(QFont::Monospace);
    return f;
  }
  if (role == Qt::ToolTipRole)
    return tr("loop %1 at depth %2: %3").arg(qs(l.var)).arg(l.depth).arg(qs(l.kind));
  return {};
}

QVariant LoopNestModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Loop: return tr("Loop");
  case Iterations: return tr("Iterations");
  case Kind: return tr("Runs as");
  }
  return {};
}

// ---- TrialComparisonModel ----

QString TrialComparisonModel::formatTime(double us) {
  if (us >= 1000)
    return QStringLiteral("%1 ms").arg(us / 1000, 0, 'f', 2);
  return QStringLiteral("%1 \u00B5s").arg(us, 0, 'f', us < 10 ? 2 : 1);
}

void TrialComparisonModel::setTrial(std::optional<workbench::ScheduleTrial> trial) {
  beginResetModel();
  m_trial = std::move(trial);
  endResetModel();
}

double TrialComparisonModel::speedup() const {
  if (!m_trial || m_trial->after.timing.medianUs <= 0 || m_trial->before.timing.medianUs <= 0)
    return 0;
  return m_trial->before.timing.medianUs / m_trial->after.timing.medianUs;
}

int TrialComparisonModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !m_trial ? 0 : RowCount;
}

int TrialComparisonModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

int TrialComparisonModel::countInstructions(const std::string& assembly) {
  int n = 0;
  size_t start = 0;
  while (start < assembly.size()) {
    size_t end = assembly.find('\n', start);
    if (end == std::string::npos)
      end = assembly.size();
    std::string_view line(assembly.data() + start, end - start);
    size_t first = line.find_first_not_of(" \t");
    // An instruction is indented and starts with a letter: not a label, directive or comment.
    if (first != std::string_view::npos && first > 0 &&
        std::isalpha(static_cast<unsigned char>(line[first])))
      ++n;
    start = end + 1;
  }
  return n;
}

int TrialComparisonModel::countVectorFmas(const std::string& assembly) {
  int n = 0;
  for (std::string_view needle : {"vfmadd", "vfnmadd", "vfmsub", "vfnmsub"})
    for (size_t p = assembly.find(needle); p != std::string::npos; p = assembly.find(needle, p + 1))
      ++n;
  return n;
}

QVariant TrialComparisonModel::valueText(int row, const workbench::ScheduleVariant& v) const {
  const bool timed = !v.timing.us.empty();
  switch (row) {
  case Schedule: return v.code.schedule.empty() ? tr("default") : qs(v.code.schedule);
  case MedianTime: return timed ? formatTime(v.timing.medianUs) : tr("not timed");
  case MinTime: return timed ? formatTime(v.timing.minUs) : QStringLiteral("\u2014");
  case MaxTime: return timed ? formatTime(v.timing.maxUs) : QStringLiteral("\u2014");
  case Runs: return int(v.timing.us.size());
  case Generator: return qs(v.code.generator);
  case Blocking: // the register tile and cache blocks; the rest is in the tooltip
    return v.code.blocking.empty() ? QStringLiteral("\u2014")
                                   : qs(v.code.blocking.substr(0, v.code.blocking.find(',')));
  case LoopLines: return lineCount(v.code.loops);
  case LlvmLines: return lineCount(v.code.llvmOptimized);
  case AsmInstructions: return countInstructions(v.code.assembly);
  case VectorFmas: return countVectorFmas(v.code.assembly);
  }
  return {};
}

QVariant TrialComparisonModel::changeText(int row) const {
  const workbench::ScheduleTrial& t = *m_trial;
  auto delta = [](int before, int after) -> QVariant {
    if (before == after)
      return tr("same");
    return QStringLiteral("%1%2").arg(after > before ? "+" : "").arg(after - before);
  };
  switch (row) {
  case Schedule:
    return t.before.code.schedule == t.after.code.schedule ? tr("same") : tr("changed");
  case MedianTime: {
    const double s = speedup();
    if (s <= 0)
      return QStringLiteral("\u2014");
    return s >= 1 ? tr("%1\u00D7 faster").arg(s, 0, 'f', 2) : tr("%1\u00D7 slower").arg(1 / s, 0, 'f', 2);
  }
  case Generator:
    return t.before.code.generator == t.after.code.generator ? tr("same") : tr("changed");
  case Blocking:
    return t.before.code.blocking == t.after.code.blocking ? tr("same") : tr("changed");
  case LoopLines:
  case LlvmLines:
  case AsmInstructions:
  case VectorFmas:
    return delta(valueText(row, t.before).toInt(), valueText(row, t.after).toInt());
  default: return {};
  }
}

QVariant TrialComparisonModel::data(const QModelIndex& index, int role) const {
  if (!m_trial || !index.isValid() || index.row() >= RowCount || index.column() >= ColumnCount)
    return {};
  const int row = index.row();
  if (role == Qt::ToolTipRole && row == Blocking && index.column() != Change) {
    const std::string& b = (index.column() == Before ? m_trial->before : m_trial->after).code.blocking;
    return b.empty() ? QVariant() : QVariant(qs(b));
  }
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
    case Before: return valueText(row, m_trial->before);
    case After: return valueText(row, m_trial->after);
    case Change: return changeText(row);
    }
  }
  if (role == Qt::FontRole && row == MedianTime) {
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role == Qt::ForegroundRole && row == MedianTime && index.column() == Change) {
    const double s = speedup();
    if (s > 0)
      return QBrush(s >= 1 ? QColor(0x1B, 0x7F, 0x3B) : QColor(0xC6, 0x28, 0x28));
  }
  return {};
}

QVariant TrialComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole)
    return {};
  if (orientation == Qt::Horizontal) {
    switch (section) {
    case Before: return tr("Before");
    case After: return tr("After");
    case Change: return tr("Change");
    }
    return {};
  }
  switch (section) {
  case Schedule: return tr("Schedule");
  case MedianTime: return tr("Median time");
  case MinTime: return tr("Fastest run");
  case MaxTime: return tr("Slowest run");
  case Runs: return tr("Timed runs");
  case Generator: return tr("Generator");
  case Blocking: return tr("Blocking");
  case LoopLines: return tr("Loop-nest lines");
  case LlvmLines: return tr("LLVM IR lines");
  case AsmInstructions: return tr("Instructions");
  case VectorFmas: return tr("Vector FMAs");
  }
  return {};
}

} // namespace fb::gui
