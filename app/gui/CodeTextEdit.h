// A read-only, monospaced text editor for generated code with the highlighter of its kind. Large
// texts stay responsive: their document can be built off the GUI thread (buildDocument), and
// they are coloured lazily, only the blocks in and around the viewport.
#pragma once

#include "app/workbench/Emit.h"

#include <QPlainTextEdit>

#include <memory>
#include <vector>

namespace fb::gui {

class CodeHighlighter;

class CodeTextEdit : public QPlainTextEdit {
  Q_OBJECT
public:
  /// Documents with more blocks than this are coloured lazily.
  static constexpr int kLazyBlockLimit = 2000;

  explicit CodeTextEdit(workbench::CodeKind kind, QWidget* parent = nullptr);

  /// A plain-text document of `text` in `font`, laid out for a QPlainTextEdit. Callable on any
  /// thread: the document is handed to the GUI thread (setting a large text costs the GUI
  /// thread about 5 ms per 1,000 lines; setting a built document, a tenth of that).
  static std::shared_ptr<QTextDocument> buildDocument(const QString& text, const QFont& font);

  /// Shows `text` in a document of its own.
  void setCode(const QString& text);
  /// Shows a document built by buildDocument; the editor keeps it alive while shown.
  void setSharedDocument(std::shared_ptr<QTextDocument> document);
  CodeHighlighter* highlighter() const { return m_highlighter; }
  /// Whether the document is coloured lazily (more than kLazyBlockLimit blocks).
  bool isLazy() const { return m_lazy; }
  void setTextPointSize(int points);
  /// Colours the blocks in and around the viewport (lazy mode).
  void colourVisible();

protected:
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;

private:
  /// Attaches the highlighter to a small document, or prepares lazy colouring of a large one.
  void startColouring();

  CodeHighlighter* m_highlighter = nullptr;
  std::shared_ptr<QTextDocument> m_shared; ///< a document this editor does not own
  bool m_lazy = false;
  std::vector<bool> m_coloured; ///< per block, in lazy mode
};

} // namespace fb::gui
