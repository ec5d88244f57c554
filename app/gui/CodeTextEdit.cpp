// The code editor: documents built anywhere, lazy highlighting.
#include "app/gui/CodeTextEdit.h"

#include "app/gui/CodeHighlighter.h"
#include "app/gui/ShownText.h"

#include <QCoreApplication>
#include <QFontDatabase>
#include <QPlainTextDocumentLayout>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextDocument>
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

std::shared_ptr<QTextDocument> CodeTextEdit::buildDocument(const QString& text, const QFont& font) {
  auto* doc = new QTextDocument;
  doc->setDefaultFont(font);
  // As the editor will set it, so that setting it there changes nothing.
  QTextOption option = doc->defaultTextOption();
  option.setWrapMode(QTextOption::NoWrap);
  doc->setDefaultTextOption(option);
  auto* layout = new QPlainTextDocumentLayout(doc);
  doc->setDocumentLayout(layout);
  doc->setPlainText(shownText(text));
  // Makes each block's QTextLayout here (QTextBlock::layout creates it on first use); the
  // editor's relayout then only clears them, a third of the cost on the GUI thread.
  for (QTextBlock block = doc->begin(); block.isValid(); block = block.next())
    block.layout();
  if (QCoreApplication* app = QCoreApplication::instance())
    doc->moveToThread(app->thread());
  // The last owner may be a worker's result dropped on another thread: delete on the GUI one.
  return std::shared_ptr<QTextDocument>(doc, [](QTextDocument* d) { d->deleteLater(); });
}

void CodeTextEdit::setCode(const QString& text) {
  if (m_highlighter)
    m_highlighter->setDocument(nullptr);
  auto* doc = new QTextDocument(this); // owned: QPlainTextEdit deletes it when replaced
  doc->setDefaultFont(font());
  doc->setDocumentLayout(new QPlainTextDocumentLayout(doc));
  doc->setPlainText(shownText(text));
  setDocument(doc);
  m_shared.reset();
  startColouring();
}

void CodeTextEdit::setSharedDocument(std::shared_ptr<QTextDocument> document) {
  if (!document) {
    setCode({});
    return;
  }
  if (m_highlighter)
    m_highlighter->setDocument(nullptr);
  if (document->defaultFont() != font()) // a new font lays every block out again
    document->setDefaultFont(font());
  setDocument(document.get());
  m_shared = std::move(document); // after setDocument: the previous shared one is not shown now
  startColouring();
}

void CodeTextEdit::startColouring() {
  m_lazy = document()->blockCount() > kLazyBlockLimit;
  m_coloured.assign(m_lazy ? size_t(document()->blockCount()) : 0, false);
  if (m_highlighter && !m_lazy)
    m_highlighter->setDocument(document()); // colours a small text at once
  QTimer::singleShot(0, this, &CodeTextEdit::colourVisible);
}

void CodeTextEdit::setTextPointSize(int points) {
  QFont f = font();
  f.setPointSize(points);
  setFont(f);
}

void CodeTextEdit::colourVisible() {
  if (!m_highlighter || !m_lazy)
    return;
  const int first = firstVisibleBlock().blockNumber();
  const int visible = viewport()->height() / std::max(1, fontMetrics().lineSpacing()) + 1;
  // A margin either side, so a small scroll shows coloured text at once.
  const int from = std::max(0, first - visible);
  const int to = std::min(int(m_coloured.size()) - 1, first + 2 * visible);
  QTextDocument* doc = document();
  for (QTextBlock block = doc->findBlockByNumber(from); block.isValid() && block.blockNumber() <= to;
       block = block.next()) {
    if (m_coloured[size_t(block.blockNumber())])
      continue;
    m_coloured[size_t(block.blockNumber())] = true;
    // What QSyntaxHighlighter does for a block, without its pass over the whole document.
    block.layout()->setFormats(m_highlighter->formatsFor(block.text()));
    doc->markContentsDirty(block.position(), block.length());
  }
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
