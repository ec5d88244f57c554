// The IR text view and its two-way selection sync.
#include "app/gui/IrTextView.h"

#include "app/gui/IrHighlighter.h"
#include "app/gui/ShownText.h"

#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QVBoxLayout>

namespace fb::gui {

IrTextView::IrTextView(QWidget* parent) : QWidget(parent) {
  m_edit = new QPlainTextEdit;
  m_edit->setObjectName("irText");
  m_edit->setReadOnly(true);
  m_edit->setLineWrapMode(QPlainTextEdit::NoWrap);
  m_edit->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSize(10);
  m_edit->setFont(mono);
  m_highlighter = new IrHighlighter(m_edit->document());
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_edit);
  connect(m_edit, &QPlainTextEdit::cursorPositionChanged, this, [this] {
    if (m_updating)
      return;
    NodeId id = nodeAtCursor();
    if (id != 0) {
      highlightLine(m_edit->textCursor().blockNumber());
      Q_EMIT nodeSelected(id);
    }
  });
}

void IrTextView::setIrText(workbench::IrText ir) {
  m_updating = true;
  m_ir = std::move(ir);
  // QSyntaxHighlighter colours the whole document at once on the GUI thread (about 100 ms per
  // 10,000 lines here), so very large IR is shown plain to keep the window responsive.
  const bool highlight = m_ir.nodeOfLine.size() <= kHighlightLineLimit;
  m_highlighter->setDocument(nullptr);
  m_edit->setPlainText(shownText(m_ir.text));
  if (highlight)
    m_highlighter->setDocument(m_edit->document());
  m_highlightedLine = -1;
  m_edit->setExtraSelections({});
  m_updating = false;
}

void IrTextView::setTextPointSize(int points) {
  QFont f = m_edit->font();
  f.setPointSize(points);
  m_edit->setFont(f);
}

NodeId IrTextView::nodeAtCursor() const {
  return m_ir.nodeAtLine(size_t(m_edit->textCursor().blockNumber()));
}

void IrTextView::selectNode(NodeId id) {
  auto it = m_ir.lineOfNode.find(id);
  if (it == m_ir.lineOfNode.end()) {
    highlightLine(-1);
    return;
  }
  m_updating = true;
  QTextBlock block = m_edit->document()->findBlockByNumber(int(it->second));
  QTextCursor cursor(block);
  m_edit->setTextCursor(cursor);
  m_edit->centerCursor();
  m_updating = false;
  highlightLine(int(it->second));
}

void IrTextView::highlightLine(int line) {
  m_highlightedLine = line;
  if (line < 0) {
    m_edit->setExtraSelections({});
    return;
  }
  QTextEdit::ExtraSelection sel;
  sel.format.setBackground(QColor(0xFF, 0xEB, 0x99));
  sel.format.setProperty(QTextFormat::FullWidthSelection, true);
  sel.cursor = QTextCursor(m_edit->document()->findBlockByNumber(line));
  m_edit->setExtraSelections({sel});
}

} // namespace fb::gui
