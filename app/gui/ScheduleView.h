// The schedule editor: the selected kernel's schedule as compiled (its loop nest, GEMM blocking
// and packing), a form to change it, and after Apply the old and new code and time side by
// side. A page in the hotspot manner: it emits what the user wants; ScheduleController runs
// the trials off the GUI thread and keeps the override in the session.
#pragma once

#include "app/workbench/Emit.h"
#include "app/workbench/KernelSchedule.h"
#include "app/workbench/ScheduleTrial.h"

#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;

namespace fb::gui {

class CodeTextEdit;
class LoopNestModel;
class ScheduleForm;
class TrialComparisonModel;

class ScheduleView : public QWidget {
  Q_OBJECT
public:
  explicit ScheduleView(QWidget* parent = nullptr);

  /// Shows `kernel` (nullopt: `why` no kernel is shown) and the session's --schedule text.
  void setKernel(std::optional<workbench::KernelSchedule> kernel, const QString& why = {});
  const std::optional<workbench::KernelSchedule>& kernel() const { return m_kernel; }
  /// The whole session's override text for the current snapshot (what --schedule says).
  void setSessionText(const QString& text);
  QString sessionText() const;
  /// Shows a finished trial: the comparison and both variants' code.
  void setTrial(std::optional<workbench::ScheduleTrial> trial);
  void setBusy(bool busy, const QString& what = {});
  bool isBusy() const { return m_busy; }
  /// A line under the buttons; `error` in red.
  void setStatus(const QString& text, bool error = false);
  QString statusText() const;
  /// Timed runs of each variant a trial makes.
  int runs() const;
  void setRuns(int runs);
  void setTextPointSize(int points);
  /// Whether the user can see the editor (its dock open, its tab on top): kernels are
  /// described only for a shown editor.
  void setShown(bool shown);
  bool isShown() const { return m_shown; }

  ScheduleForm* form() const { return m_form; }
  LoopNestModel* loopModel() const { return m_loopModel; }
  TrialComparisonModel* comparisonModel() const { return m_comparison; }
  QPushButton* applyButton() const { return m_apply; }
  QPushButton* resetButton() const { return m_reset; }
  QPushButton* tuneButton() const { return m_tune; }
  /// The before/after editors of a code tab (Loops, Llvm, Assembly).
  CodeTextEdit* beforeEditor(workbench::CodeKind kind) const;
  CodeTextEdit* afterEditor(workbench::CodeKind kind) const;
  QTabWidget* codeTabs() const { return m_codeTabs; }

Q_SIGNALS:
  /// Compile and time the model with `change` as the kernel's override (no directives: the
  /// default schedule).
  void applyRequested(const cg::ScheduleOverride& change, int runs);
  /// Search this kernel's schedule space (the auto-tuner) and show the fastest override.
  void tuneRequested(size_t kernel);
  void cancelRequested();
  void shownChanged(bool shown);

private:
  void requestApply();
  void requestReset();

  std::optional<workbench::KernelSchedule> m_kernel;
  bool m_busy = false;
  bool m_shown = false;
  QLabel* m_title;
  QTableView* m_loopTable;
  LoopNestModel* m_loopModel;
  QLabel* m_blocking;
  ScheduleForm* m_form;
  QSpinBox* m_runs;
  QPushButton* m_apply;
  QPushButton* m_reset;
  QPushButton* m_tune;
  QPushButton* m_cancel;
  QLabel* m_status;
  QLabel* m_session;
  QTableView* m_compareTable;
  TrialComparisonModel* m_comparison;
  QTabWidget* m_codeTabs;
  std::vector<std::pair<CodeTextEdit*, CodeTextEdit*>> m_editors; ///< Loops, Llvm, Assembly
};

} // namespace fb::gui
