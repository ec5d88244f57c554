// A code tab: text, lazy highlighting, the selected kernel's lines, find, clicks to kernels.
#include "app/gui/CodePane.h"

#include "app/gui/CodeHighlighter.h"
#include "app/gui/CodeTextEdit.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTextBlock>
#include <QVBoxLayout>

namespace fb::gui {

namespace {
/// More shaded lines than this cost more to paint than they help: the rest stays plain.
constexpr int kMaxShadedLines = 4000;
} // namespace

CodePane::CodePane(workbench::CodeKind kind, QWidget* parent) : QWidget(parent), m_kind(kind) {
  m_edit = new CodeTextEdit(kind);
  m_edit->setObjectName(QStringLiteral("codeText.%1").arg(workbench::codeKindName(kind)));
  m_message = new QLabel;
  m_message->setObjectName("codeMessage");
  m_message->setWordWrap(true);
  m_message->setAlignment(Qt::AlignCenter);
  m_message->setTextFormat(Qt::PlainText); // error texts quote names from the model
  m_message->setMargin(24);
  m_stack = new QStackedWidget;
  m_stack->addWidget(m_message);
  m_stack->addWidget(m_edit);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_stack);

  connect(m_edit, &QPlainTextEdit::cursorPositionChanged, this, [this] {
    if (m_updating || !m_code)
      return;
    const int k = m_kernelOnly ? m_kernel : m_code->kernelAtLine(size_t(m_edit->textCursor().blockNumber()));
    if (k >= 0 && k != m_kernel) {
      showKernel(k, /*scroll=*/false);
      Q_EMIT kernelClicked(k);
    }
  });
  setMessage(tr("No code yet."));
}

void CodePane::setCode(std::shared_ptr<const workbench::ModelCode> code, int kernel,
                       std::shared_ptr<QTextDocument> document) {
  m_code = std::move(code);
  m_document = std::move(document);
  m_kernel = m_code && kernel >= 0 && size_t(kernel) < m_code->sections.size() ? kernel : -1;
  reload();
  if (m_kernel >= 0)
    scrollToMarked();
}

void CodePane::setMessage(const QString& text, bool error) {
  m_code.reset();
  m_document.reset();
  m_message->setText(text);
  m_message->setStyleSheet(error ? QStringLiteral("QLabel { color: #8A1C14; }") : QString());
  m_stack->setCurrentWidget(m_message);
}

QString CodePane::message() const {
  return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

void CodePane::setKernelScope(bool kernelOnly) {
  if (kernelOnly == m_kernelOnly)
    return;
  m_kernelOnly = kernelOnly;
  if (m_code)
    reload();
}

void CodePane::reload() {
  if (!m_code)
    return;
  if (!m_kernelOnly && m_document) {
    m_updating = true;
    m_edit->setSharedDocument(m_document);
    m_stack->setCurrentWidget(m_edit);
    m_updating = false;
    markKernel();
    return;
  }
  QString text;
  if (m_kernelOnly) {
    if (m_kernel < 0) {
      m_message->setText(tr("Select a node in the graph to see its kernel's code."));
      m_stack->setCurrentWidget(m_message);
      return;
    }
    text = QString::fromStdString(m_code->sectionText(size_t(m_kernel)));
    if (text.isEmpty()) {
      const workbench::EmittedKernel& k = m_code->code.kernelList.at(size_t(m_kernel));
      m_message->setText(k.interpreted
                             ? tr("%1 (%2) has no generated code: the executor runs it with the "
                                  "reference interpreter.")
                                   .arg(QString::fromStdString(k.name), QString::fromStdString(k.opSummary))
                             : tr("%1 has no code in this view.").arg(QString::fromStdString(k.name)));
      m_stack->setCurrentWidget(m_message);
      return;
    }
  } else {
    text = QString::fromStdString(m_code->code.text);
  }
  m_updating = true;
  m_edit->setCode(text);
  m_stack->setCurrentWidget(m_edit);
  m_updating = false;
  markKernel();
}

CodeHighlighter* CodePane::highlighter() const { return m_edit->highlighter(); }

void CodePane::showKernel(int k, bool scroll) {
  if (!m_code || k < 0 || size_t(k) >= m_code->sections.size())
    k = -1;
  const bool changed = k != m_kernel;
  m_kernel = k;
  if (m_kernelOnly) {
    if (changed || m_stack->currentWidget() != m_edit)
      reload();
    return;
  }
  markKernel();
  if (scroll)
    scrollToMarked();
}

void CodePane::scrollToMarked() {
  if (m_kernelOnly || m_kernel < 0 || m_marked.second == 0 || m_stack->currentWidget() != m_edit)
    return;
  m_updating = true;
  QTextCursor cursor(m_edit->document()->findBlockByNumber(m_marked.first));
  m_edit->setTextCursor(cursor);
  // The kernel's first line at the top of the view, with its code below it.
  m_edit->verticalScrollBar()->setValue(m_marked.first);
  m_updating = false;
  m_edit->colourVisible();
}

void CodePane::markKernel() {
  m_marked = {0, 0};
  QList<QTextEdit::ExtraSelection> selections;
  if (m_code && m_kernel >= 0 && m_stack->currentWidget() == m_edit) {
    const workbench::CodeSection& s = m_code->sections.at(size_t(m_kernel));
    const int first = m_kernelOnly ? 0 : int(s.firstLine);
    const int count = m_kernelOnly ? m_edit->document()->blockCount() : int(s.lineCount);
    m_marked = {first, count};
    if (count > 0) {
      QTextDocument* doc = m_edit->document();
      QTextEdit::ExtraSelection body;
      body.format.setBackground(QColor(0xFF, 0xF8, 0xDC));
      body.format.setProperty(QTextFormat::FullWidthSelection, true);
      QTextCursor c(doc->findBlockByNumber(first));
      c.setPosition(doc->findBlockByNumber(first + std::min(count, kMaxShadedLines) - 1).position(),
                    QTextCursor::KeepAnchor);
      c.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
      body.cursor = c;
      if (!m_kernelOnly)
        selections << body;
      QTextEdit::ExtraSelection head;
      head.format.setBackground(QColor(0xFF, 0xE0, 0x82));
      head.format.setProperty(QTextFormat::FullWidthSelection, true);
      head.cursor = QTextCursor(doc->findBlockByNumber(first));
      selections << head;
    }
  }
  m_edit->setExtraSelections(selections);
}

bool CodePane::find(const QString& text, bool backward) {
  if (text.isEmpty() || m_stack->currentWidget() != m_edit)
    return false;
  const QTextDocument::FindFlags flags = backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
  if (m_edit->find(text, flags)) {
    m_edit->colourVisible();
    return true;
  }
  // Wrap around from the other end.
  QTextCursor c = m_edit->textCursor();
  c.movePosition(backward ? QTextCursor::End : QTextCursor::Start);
  m_edit->setTextCursor(c);
  const bool found = m_edit->find(text, flags);
  m_edit->colourVisible();
  return found;
}

QString CodePane::text() const {
  return m_stack->currentWidget() == m_edit ? m_edit->toPlainText() : QString();
}

void CodePane::setTextPointSize(int points) { m_edit->setTextPointSize(points); }

} // namespace fb::gui
