// The code editor with lazy highlighting.
#include "app/gui/CodeTextEdit.h"

#include "app/gui/CodeHighlighter.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTextBlock>
#include <QTimer>

namespace fb::gui {

CodeTextEdit::CodeTextEdit(workbench::CodeKind kind, QWidget* parent) : QPlainTextEdit(parent) {
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSize(10);
  setFont(mono);
  m_highlighter = makeCodeHighlighter(kind, nullptr);
  if (m_highlighter)
    m_highlighter->setParent(this);
  connect(verticalScrollBar(), &QScrollBar::valueChanged, this, &CodeTextEdit::colourVisible);
}

void CodeTextEdit::setCode(const QString& text) {
  // Detach the highlighter while the text changes: attached, it would colour every block now.
  if (m_highlighter)
    m_highlighter->setDocument(nullptr);
  setPlainText(text);
  if (m_highlighter) {
    m_highlighter->setDocument(document());
    m_highlighter->resetForNewText();
  }
  QTimer::singleShot(0, this, &CodeTextEdit::colourVisible);
}

void CodeTextEdit::setTextPointSize(int points) {
  QFont f = font();
  f.setPointSize(points);
  setFont(f);
}

void CodeTextEdit::colourVisible() {
  if (!m_highlighter || !m_highlighter->isLazy())
    return;
  const int first = firstVisibleBlock().blockNumber();
  const int visible = viewport()->height() / std::max(1, fontMetrics().lineSpacing()) + 1;
  // A margin either side, so a small scroll shows coloured text at once.
  m_highlighter->highlightBlocks(first - visible, first + 2 * visible);
}

void CodeTextEdit::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  colourVisible();
}

void CodeTextEdit::showEvent(QShowEvent* event) {
  QPlainTextEdit::showEvent(event);
  colourVisible();
}

} // namespace fb::gui
