// One tab of the code view: a whole-model text of one kind (or one kernel's part of it),
// highlighted, with the selected kernel's lines marked and clicks mapped back to kernels.
#pragma once

#include "app/gui/CodeTextEdit.h"
#include "app/workbench/ModelCode.h"

#include <QWidget>

#include <memory>

class QLabel;
class QPlainTextEdit;
class QStackedWidget;
class QTextDocument;

namespace fb::gui {

class CodeHighlighter;
class CodeTextEdit;

/// Shows a ModelCode of one kind. In whole-model scope the text is the module and the
/// selected kernel's section is shaded and scrolled to; in kernel scope the text is that
/// section alone. Until code arrives (or when there is none) a message takes the text's place.
class CodePane : public QWidget {
  Q_OBJECT
public:
  explicit CodePane(workbench::CodeKind kind, QWidget* parent = nullptr);

  workbench::CodeKind kind() const { return m_kind; }
  /// Shows `code` with kernel `kernel` (-1: none) marked and scrolled to. `document`, when
  /// given, is the whole text already built off the GUI thread (CodeTextEdit::buildDocument).
  void setCode(std::shared_ptr<const workbench::ModelCode> code, int kernel,
               std::shared_ptr<QTextDocument> document = nullptr);
  const std::shared_ptr<const workbench::ModelCode>& code() const { return m_code; }
  /// Replaces the text by a message ("Compiling…", why PTX is unavailable); `error` in red.
  void setMessage(const QString& text, bool error = false);
  /// The message shown instead of code, or "" when code is shown.
  QString message() const;
  /// Whole model (false) or the selected kernel only (true).
  void setKernelScope(bool kernelOnly);
  bool kernelScope() const { return m_kernelOnly; }
  /// Marks kernel `k` (-1: none) and, with `scroll`, brings its first line to the top.
  void showKernel(int k, bool scroll = true);
  int shownKernel() const { return m_kernel; }
  /// The 0-based line range of the shown kernel in the editor's text (count 0 when none).
  std::pair<int, int> markedLines() const { return m_marked; }
  /// Finds `text` from the cursor (wrapping around); false when it does not occur.
  bool find(const QString& text, bool backward);
  /// The text in the editor (the module or the kernel's section).
  QString text() const;
  CodeTextEdit* editor() const { return m_edit; }
  CodeHighlighter* highlighter() const;
  void setTextPointSize(int points);

Q_SIGNALS:
  /// The user put the cursor in kernel `k`'s code.
  void kernelClicked(int k);

private:
  void reload();
  void markKernel();
  void scrollToMarked();

  workbench::CodeKind m_kind;
  QStackedWidget* m_stack;
  QLabel* m_message;
  CodeTextEdit* m_edit;
  std::shared_ptr<const workbench::ModelCode> m_code;
  std::shared_ptr<QTextDocument> m_document; ///< the whole text, when built elsewhere
  bool m_kernelOnly = false;
  int m_kernel = -1;
  std::pair<int, int> m_marked{0, 0};
  bool m_updating = false;
};

} // namespace fb::gui
