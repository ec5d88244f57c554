// The pass list and pipeline item models.
#include "app/gui/PipelineModels.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace fb::gui {

PassListModel::PassListModel(QObject* parent)
    : QAbstractListModel(parent), m_passes(workbench::passDescriptions()) {}

int PassListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_passes.size());
}

QVariant PassListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount())
    return {};
  const workbench::PassDescription& p = m_passes[size_t(index.row())];
  switch (role) {
  case Qt::DisplayRole:
    return p.analysis ? QString::fromStdString(p.name) + QStringLiteral("  (analysis)")
                      : QString::fromStdString(p.name);
  case NameRole:
    return QString::fromStdString(p.name);
  case Qt::ToolTipRole:
    return QString::fromStdString(p.summary);
  case DescriptionRole:
    return QString::fromStdString(p.description);
  case OptionsHelpRole: {
    QString html;
    for (const PassOptionSpec& o : p.options)
      html += QStringLiteral("<br><code>%1%2</code> — %3; %4")
                  .arg(QString::fromStdString(o.name).toHtmlEscaped(),
                       o.defaultValue.empty()
                           ? QString()
                           : "=" + QString::fromStdString(o.defaultValue).toHtmlEscaped(),
                       QString::fromStdString(o.accepts()).toHtmlEscaped(),
                       QString::fromStdString(o.help).toHtmlEscaped());
    return html.isEmpty() ? html : QStringLiteral("<br><b>Options</b>") + html;
  }
  case Qt::ForegroundRole:
    return p.analysis ? QVariant(QBrush(QColor(0x60, 0x60, 0x60))) : QVariant();
  default:
    return {};
  }
}

const workbench::PassDescription* PassListModel::find(const QString& name) const {
  for (const workbench::PassDescription& p : m_passes)
    if (QString::fromStdString(p.name) == name)
      return &p;
  return nullptr;
}

PipelineModel::PipelineModel(QObject* parent) : QAbstractListModel(parent) {}

void PipelineModel::setState(const QStringList& steps, int applied, int current,
                             const QStringList& summaries) {
  if (steps.size() != m_steps.size()) {
    beginResetModel();
    m_steps = steps;
    m_summaries = summaries;
    m_applied = applied;
    m_current = current;
    endResetModel();
    return;
  }
  m_steps = steps;
  m_summaries = summaries;
  m_applied = applied;
  m_current = current;
  if (!m_steps.isEmpty())
    Q_EMIT dataChanged(index(0), index(int(m_steps.size()) - 1));
}

int PipelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_steps.size());
}

QVariant PipelineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount())
    return {};
  const int row = index.row();
  const bool applied = row < m_applied;
  const bool current = row + 1 == m_current;
  switch (role) {
  case Qt::DisplayRole: {
    QString mark = current ? QStringLiteral("\u25B6 ") : applied ? QStringLiteral("\u2713 ")
                                                                 : QStringLiteral("   ");
    return mark + QStringLiteral("%1. %2").arg(row + 1).arg(m_steps[row]);
  }
  case StepRole:
    return m_steps[row];
  case AppliedRole:
    return applied;
  case CurrentRole:
    return current;
  case Qt::ToolTipRole:
    return row < m_summaries.size() && !m_summaries[row].isEmpty() ? QVariant(m_summaries[row])
                                                                   : QVariant(QStringLiteral("not applied yet"));
  case Qt::FontRole: {
    if (!current)
      return {};
    QFont f;
    f.setBold(true);
    return f;
  }
  case Qt::ForegroundRole:
    return applied ? QVariant() : QVariant(QBrush(QColor(0x70, 0x70, 0x70)));
  default:
    return {};
  }
}

} // namespace fb::gui
