// A read-only, monospaced text editor for generated code with the highlighter of its kind,
// colouring only the visible blocks of a large text so that showing it never freezes the window.
#pragma once

#include "app/workbench/Emit.h"

#include <QPlainTextEdit>

namespace fb::gui {

class CodeHighlighter;

class CodeTextEdit : public QPlainTextEdit {
  Q_OBJECT
public:
  explicit CodeTextEdit(workbench::CodeKind kind, QWidget* parent = nullptr);

  /// Replaces the text; the highlighter colours it now (small texts) or as it is shown.
  void setCode(const QString& text);
  CodeHighlighter* highlighter() const { return m_highlighter; }
  void setTextPointSize(int points);
  /// Colours the blocks in and around the viewport (lazy highlighting).
  void colourVisible();

protected:
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;

private:
  CodeHighlighter* m_highlighter = nullptr;
};

} // namespace fb::gui
