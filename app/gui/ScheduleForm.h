// The editable schedule of one kernel: tile, loop order, vectorize, unroll, parallel, for
// GEMM-class kernels the register tile and cache blocks, and for GPU code the threads per block
// and the per-thread register tile, kept in step with the exact override
// text `fusebox-opt --schedule` takes, which is the form's source of truth.
#pragma once

#include "app/workbench/KernelSchedule.h"

#include <QWidget>

class QComboBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace fb::gui {

class ScheduleForm : public QWidget {
  Q_OBJECT
public:
  explicit ScheduleForm(QWidget* parent = nullptr);

  /// Shows `kernel`'s current override (its `override` directives) in the fields and the text.
  void setKernel(const workbench::KernelSchedule& kernel);
  /// No kernel: the fields are cleared and disabled.
  void clearKernel();
  const QString& kernelName() const { return m_kernel; }

  /// The override the text says, or an error naming what does not parse or names another
  /// kernel. An override without directives means "back to the default schedule".
  Expected<cg::ScheduleOverride> currentOverride() const;
  /// The text of the override, "k3_conv_relu:tile=8x8,vectorize=8" (what --schedule takes).
  QString overrideText() const;
  /// Sets the text as if typed; the fields follow when they can show it. Returns an error
  /// message or "".
  QString setOverrideText(const QString& text);
  /// Fills the fields from directives; false (fields unchanged) when they cannot show them
  /// (split, fuse, cache, a repeated directive): the text still holds them.
  bool setDirectives(const std::vector<cg::ScheduleDirective>& directives);
  /// The directives the fields say, in the order they apply.
  std::vector<cg::ScheduleDirective> formDirectives() const;

  QLineEdit* tileEdit() const { return m_tile; }
  QLineEdit* reorderEdit() const { return m_reorder; }
  QSpinBox* vectorizeSpin() const { return m_vectorize; }
  QSpinBox* unrollSpin() const { return m_unroll; }
  QComboBox* parallelCombo() const { return m_parallel; }
  QComboBox* startCombo() const { return m_start; }
  /// The GEMM blocking fields: mr, nr, mc, kc, nc (0: the generator's choice).
  QSpinBox* blockingSpin(const QString& name) const;
  QLineEdit* textEdit() const { return m_text; }
  QGroupBox* gemmGroup() const { return m_gemmBox; }
  /// The GPU fields: threads per block (block=, data 0: auto) and register tile (regtile=).
  QComboBox* gpuBlockCombo() const { return m_gpuBlock; }
  QSpinBox* gpuTileSpin() const { return m_gpuTile; }

Q_SIGNALS:
  /// The override changed (a field or the text); `error` is "" when the text parses.
  void overrideChanged(const QString& error);

private:
  void formEdited();

  QString m_kernel;
  bool m_updating = false;
  QComboBox* m_start;
  QLineEdit* m_tile;
  QLineEdit* m_reorder;
  QSpinBox* m_vectorize;
  QSpinBox* m_unroll;
  QComboBox* m_parallel;
  QGroupBox* m_gemmBox;
  QLabel* m_gemmNote;
  std::vector<std::pair<QString, QSpinBox*>> m_blocking; ///< mr, nr, mc, kc, nc
  QGroupBox* m_gpuBox;
  QComboBox* m_gpuBlock;
  QSpinBox* m_gpuTile;
  QLineEdit* m_text;
  QLabel* m_custom;
};

} // namespace fb::gui
