// Item models of the pipeline panel: the registered passes, and the pipeline being built.
#pragma once

#include "app/workbench/Session.h"

#include <QAbstractListModel>
#include <QStringList>

#include <vector>

namespace fb::gui {

/// Every registered pass; the tooltip and DescriptionRole carry its student-facing text.
class PassListModel : public QAbstractListModel {
  Q_OBJECT
public:
  enum Role {
    NameRole = Qt::UserRole + 1,
    DescriptionRole,
    OptionsHelpRole, ///< the declared options as HTML ("" for a pass without options)
  };
  explicit PassListModel(QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  const workbench::PassDescription& pass(int row) const { return m_passes.at(size_t(row)); }
  /// The pass named `name`, or null.
  const workbench::PassDescription* find(const QString& name) const;

private:
  std::vector<workbench::PassDescription> m_passes;
};

/// The pipeline's steps, marked applied (a snapshot exists) or pending, and the step that made
/// the current snapshot in bold.
class PipelineModel : public QAbstractListModel {
  Q_OBJECT
public:
  enum Role { StepRole = Qt::UserRole + 1, AppliedRole, CurrentRole };
  explicit PipelineModel(QObject* parent = nullptr);
  /// Replaces the steps ("fold-batchnorm", "quantize{samples=8}"), how many are applied and the
  /// current snapshot (0: imported; k: after step k).
  void setState(const QStringList& steps, int applied, int current, const QStringList& summaries);
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  const QStringList& steps() const { return m_steps; }

private:
  QStringList m_steps;
  QStringList m_summaries;
  int m_applied = 0;
  int m_current = 0;
};

} // namespace fb::gui
