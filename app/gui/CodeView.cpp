// The code view's tabs, tool row, selection marking, search, copy and save.
#include "app/gui/CodeView.h"

#include "app/gui/CodePane.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <map>

namespace fb::gui {

using workbench::CodeKind;

const std::vector<CodeKind>& CodeView::kinds() {
  static const std::vector<CodeKind> k = {CodeKind::Loops, CodeKind::LlvmRaw, CodeKind::Llvm,
                                          CodeKind::Assembly, CodeKind::Ptx};
  return k;
}

QString CodeView::kindTitle(CodeKind kind) {
  switch (kind) {
  case CodeKind::Loops: return tr("Loops");
  case CodeKind::LlvmRaw: return tr("LLVM IR (emitted)");
  case CodeKind::Llvm: return tr("LLVM IR (optimized)");
  case CodeKind::Assembly: return tr("Assembly");
  case CodeKind::Ptx: return tr("PTX");
  case CodeKind::Object: return tr("Object");
  }
  __builtin_unreachable();
}

CodeView::CodeView(QWidget* parent) : QWidget(parent) {
  m_tabs = new QTabWidget;
  m_tabs->setObjectName("codeTabs");
  m_tabs->setDocumentMode(true);
  for (CodeKind kind : kinds()) {
    auto* pane = new CodePane(kind);
    m_panes.push_back(pane);
    m_tabs->addTab(pane, kindTitle(kind));
    connect(pane, &CodePane::kernelClicked, this, [this, pane](int k) {
      const auto& code = pane->code();
      if (!code || k < 0 || size_t(k) >= code->code.kernelList.size())
        return;
      m_clicking = true;
      Q_EMIT nodeSelected(code->code.kernelList[size_t(k)].node);
      m_clicking = false;
      updateStatus();
    });
  }

  m_scope = new QComboBox;
  m_scope->setObjectName("codeScope");
  m_scope->addItem(tr("Whole model"));
  m_scope->addItem(tr("Selected kernel"));
  m_scope->setToolTip(tr("Show the whole model's code with the selected node's kernel marked, "
                         "or only that kernel's code"));
  m_archLabel = new QLabel(tr("Target:"));
  m_arch = new QComboBox;
  m_arch->setObjectName("ptxArch");
  for (const char* sm : {"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"})
    m_arch->addItem(QString::fromLatin1(sm));
  m_arch->setCurrentText(QStringLiteral("sm_80"));
  m_find = new QLineEdit;
  m_find->setObjectName("codeFind");
  m_find->setPlaceholderText(tr("Find in code (Enter: next, Shift+Enter: previous)"));
  m_find->setClearButtonEnabled(true);
  auto makeButton = [this](const QString& text, const QString& tip) {
    auto* b = new QToolButton;
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    return b;
  };
  QToolButton* prev = makeButton(QStringLiteral("\u25B2"), tr("Previous match"));
  QToolButton* next = makeButton(QStringLiteral("\u25BC"), tr("Next match"));
  QToolButton* copy = makeButton(tr("Copy"), tr("Copy the selection, or the whole tab"));
  QToolButton* save = makeButton(tr("Save\u2026"), tr("Save this tab's code to a file"));
  m_cancel = makeButton(tr("Cancel"), tr("Stop compiling"));
  m_cancel->hide();
  m_status = new QLabel;
  m_status->setObjectName("codeStatus");
  m_status->setTextFormat(Qt::PlainText);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* tools = new QHBoxLayout;
  tools->setContentsMargins(4, 2, 4, 2);
  tools->addWidget(m_scope);
  tools->addWidget(m_archLabel);
  tools->addWidget(m_arch);
  tools->addWidget(m_find, 1);
  tools->addWidget(prev);
  tools->addWidget(next);
  tools->addWidget(copy);
  tools->addWidget(save);
  auto* statusRow = new QHBoxLayout;
  statusRow->setContentsMargins(6, 0, 4, 2);
  statusRow->addWidget(m_status, 1);
  statusRow->addWidget(m_cancel);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(tools);
  layout->addLayout(statusRow);
  layout->addWidget(m_tabs, 1);

  auto showArch = [this] {
    const bool ptx = currentKind() == CodeKind::Ptx;
    m_arch->setVisible(ptx);
    m_archLabel->setVisible(ptx);
  };
  showArch();
  connect(m_tabs, &QTabWidget::currentChanged, this, [this, showArch] {
    showArch();
    updateStatus();
    if (m_shown)
      Q_EMIT codeWanted(currentKind());
  });
  connect(m_scope, &QComboBox::currentIndexChanged, this,
          [this](int index) { setKernelScope(index == 1); });
  connect(m_arch, &QComboBox::currentTextChanged, this, [this] { Q_EMIT codeWanted(CodeKind::Ptx); });
  connect(m_find, &QLineEdit::returnPressed, this, [this] {
    find(m_find->text(), QApplication::keyboardModifiers() & Qt::ShiftModifier);
  });
  connect(prev, &QToolButton::clicked, this, [this] { find(m_find->text(), /*backward=*/true); });
  connect(next, &QToolButton::clicked, this, [this] { find(m_find->text(), /*backward=*/false); });
  connect(copy, &QToolButton::clicked, this, &CodeView::copyCurrent);
  connect(save, &QToolButton::clicked, this, &CodeView::saveDialog);
  connect(m_cancel, &QToolButton::clicked, this, &CodeView::cancelRequested);
  updateStatus();
}

CodePane* CodeView::pane(CodeKind kind) const {
  for (CodePane* p : m_panes)
    if (p->kind() == kind)
      return p;
  return nullptr;
}

CodeKind CodeView::currentKind() const {
  return static_cast<CodePane*>(m_tabs->currentWidget())->kind();
}

void CodeView::setCurrentKind(CodeKind kind) {
  if (CodePane* p = pane(kind))
    m_tabs->setCurrentWidget(p);
}

void CodeView::setCode(CodeKind kind, std::shared_ptr<const workbench::ModelCode> code,
                       std::shared_ptr<QTextDocument> document) {
  CodePane* p = pane(kind);
  if (!p)
    return;
  const int k = code ? code->kernelOfNode(m_selected) : -1;
  p->setCode(std::move(code), k, std::move(document));
  updateStatus();
}

void CodeView::setMessage(CodeKind kind, const QString& text, bool error) {
  if (CodePane* p = pane(kind))
    p->setMessage(text, error);
  updateStatus();
}

void CodeView::selectNode(NodeId id) {
  m_selected = id;
  for (CodePane* p : m_panes) {
    const int k = p->code() ? p->code()->kernelOfNode(id) : -1;
    p->showKernel(k, /*scroll=*/!m_clicking);
  }
  updateStatus();
}

void CodeView::setKernelScope(bool kernelOnly) {
  m_scope->setCurrentIndex(kernelOnly ? 1 : 0);
  for (CodePane* p : m_panes) {
    p->setKernelScope(kernelOnly);
    if (!kernelOnly)
      p->showKernel(p->shownKernel());
  }
  updateStatus();
}

bool CodeView::kernelScope() const { return m_scope->currentIndex() == 1; }

QString CodeView::ptxArch() const { return m_arch->currentText(); }

bool CodeView::find(const QString& text, bool backward) {
  const bool found = pane(currentKind())->find(text, backward);
  m_find->setStyleSheet(found || text.isEmpty() ? QString() : QStringLiteral("QLineEdit { background: #FDECEA; }"));
  return found;
}

QString CodeView::currentText() const { return pane(currentKind())->text(); }

void CodeView::copyCurrent() const {
  CodePane* p = pane(currentKind());
  const QString selected = p->editor()->textCursor().selectedText().replace(QChar::ParagraphSeparator, '\n');
  QApplication::clipboard()->setText(selected.isEmpty() ? p->text() : selected);
}

QString CodeView::saveCurrent(const QString& path) const {
  const QString text = currentText();
  if (text.isEmpty())
    return tr("this tab has no code to save");
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
    return tr("cannot write %1: %2").arg(path, f.errorString());
  const QByteArray bytes = text.toUtf8();
  if (f.write(bytes) != bytes.size())
    return tr("cannot write %1: %2").arg(path, f.errorString());
  return {};
}

void CodeView::saveDialog() {
  static const std::map<CodeKind, QString> suffix = {{CodeKind::Loops, "loops.txt"},
                                                     {CodeKind::LlvmRaw, "ll"},
                                                     {CodeKind::Llvm, "opt.ll"},
                                                     {CodeKind::Assembly, "s"},
                                                     {CodeKind::Ptx, "ptx"}};
  const QString path = QFileDialog::getSaveFileName(this, tr("Save Code"),
                                                    QStringLiteral("model.") + suffix.at(currentKind()));
  if (path.isEmpty())
    return;
  const QString error = saveCurrent(path);
  m_status->setText(error.isEmpty() ? tr("Saved %1").arg(path) : error);
}

QString CodeView::statusText() const { return m_status->text(); }

void CodeView::updateStatus() {
  if (!m_cancel->isHidden())
    return; // the busy text stays until the work ends
  CodePane* p = pane(currentKind());
  const auto& code = p->code();
  if (!code) {
    m_status->setText(m_selected ? tr("Node #%1 selected.").arg(m_selected) : QString());
    return;
  }
  const int k = p->shownKernel();
  QString text = tr("%n kernel(s) for %1", "", int(code->code.kernelList.size()))
                     .arg(QString::fromStdString(code->code.cpu));
  if (k >= 0) {
    const workbench::EmittedKernel& kernel = code->code.kernelList[size_t(k)];
    const workbench::CodeSection& s = code->sections[size_t(k)];
    text = QStringLiteral("%1 \u00B7 %2").arg(QString::fromStdString(kernel.name),
                                             QString::fromStdString(kernel.opSummary));
    if (s.lineCount > 0 && !p->kernelScope())
      text += tr(" \u00B7 lines %1\u2013%2 of %3")
                  .arg(s.firstLine + 1)
                  .arg(s.firstLine + s.lineCount)
                  .arg(p->editor()->document()->blockCount());
    else if (s.lineCount > 0)
      text += tr(" \u00B7 %n line(s)", "", int(s.lineCount));
    else
      text += tr(" \u00B7 no code in this view");
  } else if (m_selected) {
    text += tr(" \u00B7 the selected node has no kernel here");
  }
  m_status->setText(text);
}

void CodeView::setBusy(bool busy, const QString& what) {
  m_cancel->setVisible(busy);
  if (busy)
    m_status->setText(what);
  else
    updateStatus();
}

void CodeView::setTextPointSize(int points) {
  for (CodePane* p : m_panes)
    p->setTextPointSize(points);
}

void CodeView::setShown(bool shown) {
  const bool wasShown = m_shown;
  m_shown = shown;
  if (shown && !wasShown)
    Q_EMIT codeWanted(currentKind());
}

} // namespace fb::gui
