// The code view: the current snapshot's generated code in tabs (kernel loop nests, LLVM IR
// before and after optimization, host assembly, PTX), the whole model or the selected node's
// kernel, with search, copy and save. A page in the hotspot manner: it shows what it is given
// and emits what the user wants; CodeController computes the code off the GUI thread.
#pragma once

#include "app/workbench/ModelCode.h"

#include <QWidget>

#include <memory>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QTabWidget;
class QTextDocument;
class QToolButton;

namespace fb::gui {

class CodePane;

class CodeView : public QWidget {
  Q_OBJECT
public:
  explicit CodeView(QWidget* parent = nullptr);

  /// The tabs' kinds, in order: loops, LLVM IR as emitted, optimized LLVM IR, assembly, PTX.
  static const std::vector<workbench::CodeKind>& kinds();
  /// A tab's title ("LLVM IR (O3)").
  static QString kindTitle(workbench::CodeKind kind);

  CodePane* pane(workbench::CodeKind kind) const;
  workbench::CodeKind currentKind() const;
  void setCurrentKind(workbench::CodeKind kind);
  /// Shows `kind`'s code of the current snapshot, marking the selected node's kernel;
  /// `document` is its text built off the GUI thread, when it was.
  void setCode(workbench::CodeKind kind, std::shared_ptr<const workbench::ModelCode> code,
               std::shared_ptr<QTextDocument> document = nullptr);
  /// Shows a message in `kind`'s tab instead of code.
  void setMessage(workbench::CodeKind kind, const QString& text, bool error = false);
  /// Marks the kernel computing node `id` in every tab and scrolls to it (emits nothing).
  void selectNode(fb::NodeId id);
  fb::NodeId selectedNode() const { return m_selected; }
  /// The whole model (false) or the selected kernel's code only (true), in every tab.
  void setKernelScope(bool kernelOnly);
  bool kernelScope() const;
  /// The GPU architecture the PTX tab asks for ("sm_80").
  QString ptxArch() const;
  /// Searches the current tab from its cursor, wrapping; false when the text does not occur.
  bool find(const QString& text, bool backward = false);
  /// The current tab's text (the module or the kernel's code), or "" when it shows a message.
  QString currentText() const;
  /// Copies the current tab's selection, or all of its text when nothing is selected.
  void copyCurrent() const;
  /// Writes the current tab's text to `path`; returns an error message or "".
  QString saveCurrent(const QString& path) const;
  /// A status line for the current tab and kernel ("k3_conv_relu · Conv+Relu · lines …").
  QString statusText() const;
  void setBusy(bool busy, const QString& what = {});
  /// Whether the user can see the view (its dock is open and its tab on top). A hidden view
  /// makes no code; becoming shown asks for the current tab's.
  void setShown(bool shown);
  bool isShown() const { return m_shown; }
  void setTextPointSize(int points);

Q_SIGNALS:
  /// The tab of `kind` is shown (or its target changed) and needs code for the current snapshot.
  void codeWanted(workbench::CodeKind kind);
  /// The user clicked into the code of the kernel that computes node `id`.
  void nodeSelected(fb::NodeId id);
  void cancelRequested();

private:
  void updateStatus();
  void saveDialog();

  QTabWidget* m_tabs;
  std::vector<CodePane*> m_panes; ///< in kinds() order
  QComboBox* m_scope;
  QComboBox* m_arch;
  QLabel* m_archLabel;
  QLineEdit* m_find;
  QLabel* m_status;
  QToolButton* m_cancel;
  fb::NodeId m_selected = 0;
  bool m_shown = false;
  bool m_clicking = false; ///< a click in the code is selecting its node: do not scroll away
};

} // namespace fb::gui
