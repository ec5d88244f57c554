// The schedule editor's layout: the kernel as compiled, the form, and the trial's comparison.
#include "app/gui/ScheduleView.h"

#include "app/gui/CodeTextEdit.h"
#include "app/gui/ScheduleForm.h"
#include "app/gui/ScheduleModels.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace fb::gui {

using workbench::CodeKind;

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

const CodeKind kTabKinds[] = {CodeKind::Loops, CodeKind::Llvm, CodeKind::Assembly};

QTableView* makeTable() {
  auto* t = new QTableView;
  t->setSelectionMode(QAbstractItemView::NoSelection);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->verticalHeader()->setDefaultSectionSize(22);
  t->horizontalHeader()->setStretchLastSection(true);
  t->setWordWrap(false);
  return t;
}

QLabel* wrapLabel() {
  auto* l = new QLabel;
  l->setWordWrap(true);
  l->setTextFormat(Qt::PlainText); // kernel and value names come from the model
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return l;
}

} // namespace

ScheduleView::ScheduleView(QWidget* parent) : QWidget(parent) {
  m_title = wrapLabel();
  m_title->setObjectName("scheduleTitle");
  m_title->setStyleSheet(QStringLiteral("QLabel { font-weight: bold; padding: 4px; }"));

  // Left: the kernel as compiled, and the form.
  m_loopModel = new LoopNestModel(this);
  m_loopTable = makeTable();
  m_loopTable->setObjectName("scheduleLoops");
  m_loopTable->setModel(m_loopModel);
  m_loopTable->verticalHeader()->hide();
  m_loopTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_blocking = wrapLabel();
  m_blocking->setObjectName("scheduleBlocking");
  auto* compiled = new QGroupBox(tr("Compiled with"));
  auto* cl = new QVBoxLayout(compiled);
  cl->addWidget(m_loopTable);
  cl->addWidget(m_blocking);

  m_form = new ScheduleForm;
  m_runs = new QSpinBox;
  m_runs->setObjectName("scheduleRuns");
  m_runs->setRange(1, 200);
  m_runs->setValue(15);
  m_runs->setSuffix(tr(" runs"));
  m_runs->setToolTip(tr("Timed runs of each schedule; the comparison shows the median"));
  m_apply = new QPushButton(tr("Apply"));
  m_apply->setObjectName("scheduleApply");
  m_apply->setToolTip(tr("Recompile this kernel with the new schedule and time it beside the old"));
  m_reset = new QPushButton(tr("Reset to default"));
  m_reset->setObjectName("scheduleReset");
  m_tune = new QPushButton(tr("Tune"));
  m_tune->setObjectName("scheduleTune");
  m_tune->setToolTip(tr("Measure schedule candidates for this kernel (register tile, cache "
                        "blocks, parallel split; loop tiles, vector width, unrolling) and put "
                        "the fastest that keeps the interpreter's results in the form"));
  m_cancel = new QPushButton(tr("Cancel"));
  m_cancel->hide();
  m_status = wrapLabel();
  m_status->setObjectName("scheduleStatus");
  m_session = wrapLabel();
  m_session->setObjectName("scheduleSession");
  m_session->setStyleSheet(QStringLiteral("QLabel { color: #333; font-family: monospace; }"));
  auto* edit = new QGroupBox(tr("New schedule"));
  auto* el = new QVBoxLayout(edit);
  el->addWidget(m_form);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_runs);
  buttons->addStretch(1);
  buttons->addWidget(m_cancel);
  buttons->addWidget(m_reset);
  buttons->addWidget(m_tune);
  buttons->addWidget(m_apply);
  el->addLayout(buttons);
  el->addWidget(m_status);

  auto* left = new QWidget;
  auto* ll = new QVBoxLayout(left);
  ll->setContentsMargins(0, 0, 0, 0);
  ll->addWidget(compiled);
  ll->addWidget(edit);
  ll->addWidget(m_session);
  ll->addStretch(1);

  // Right: the trial's comparison and both variants' code.
  m_comparison = new TrialComparisonModel(this);
  m_compareTable = makeTable();
  m_compareTable->setObjectName("scheduleComparison");
  m_compareTable->setModel(m_comparison);
  // Before and After share the width; every measure shows without scrolling.
  m_compareTable->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_compareTable->horizontalHeader()->setSectionResizeMode(TrialComparisonModel::Change,
                                                           QHeaderView::ResizeToContents);
  m_compareTable->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  m_compareTable->setTextElideMode(Qt::ElideMiddle);
  const int tableHeight = m_compareTable->horizontalHeader()->sizeHint().height() +
                          TrialComparisonModel::RowCount * 22 + 4;
  m_compareTable->setMaximumHeight(tableHeight);
  m_compareTable->setMinimumHeight(80);
  m_codeTabs = new QTabWidget;
  m_codeTabs->setObjectName("scheduleCodeTabs");
  m_codeTabs->setDocumentMode(true);
  const QString titles[] = {tr("Loops"), tr("LLVM IR (optimized)"), tr("Assembly")};
  for (int i = 0; i < 3; ++i) {
    auto* before = new CodeTextEdit(kTabKinds[i]);
    auto* after = new CodeTextEdit(kTabKinds[i]);
    before->setObjectName(QStringLiteral("scheduleBefore.%1").arg(workbench::codeKindName(kTabKinds[i])));
    after->setObjectName(QStringLiteral("scheduleAfter.%1").arg(workbench::codeKindName(kTabKinds[i])));
    m_editors.emplace_back(before, after);
    auto* split = new QSplitter(Qt::Horizontal);
    for (auto [editor, label] : {std::pair{before, tr("Before")}, std::pair{after, tr("After")}}) {
      auto* box = new QWidget;
      auto* bl = new QVBoxLayout(box);
      bl->setContentsMargins(0, 0, 0, 0);
      bl->setSpacing(2);
      auto* head = new QLabel(label);
      head->setStyleSheet(QStringLiteral("QLabel { font-weight: bold; padding-left: 4px; }"));
      bl->addWidget(head);
      bl->addWidget(editor, 1);
      split->addWidget(box);
    }
    m_codeTabs->addTab(split, titles[i]);
  }
  // The comparison above the code, in a splitter: the whole table where the dock is tall
  // enough, and neither sets the height of the dock area it shares with the other docks.
  auto* right = new QSplitter(Qt::Vertical);
  right->setChildrenCollapsible(false);
  right->addWidget(m_compareTable);
  right->addWidget(m_codeTabs);
  right->setStretchFactor(1, 1);
  right->setSizes({tableHeight, 400});
  m_codeTabs->setMinimumHeight(120);

  // The form scrolls rather than setting the height of the dock area it shares with the
  // other bottom docks.
  auto* leftScroll = new QScrollArea;
  leftScroll->setObjectName("scheduleFormScroll");
  leftScroll->setWidget(left);
  leftScroll->setWidgetResizable(true);
  leftScroll->setFrameShape(QFrame::NoFrame);
  leftScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  leftScroll->setMinimumWidth(left->minimumSizeHint().width() + 16);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(leftScroll);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(m_title);
  layout->addWidget(split, 1);

  connect(m_apply, &QPushButton::clicked, this, &ScheduleView::requestApply);
  connect(m_reset, &QPushButton::clicked, this, &ScheduleView::requestReset);
  connect(m_cancel, &QPushButton::clicked, this, &ScheduleView::cancelRequested);
  connect(m_tune, &QPushButton::clicked, this, [this] {
    if (m_kernel && !m_busy)
      Q_EMIT tuneRequested(m_kernel->index);
  });
  connect(m_form, &ScheduleForm::overrideChanged, this, [this](const QString& error) {
    m_apply->setEnabled(error.isEmpty() && m_kernel && !m_busy);
    setStatus(error, /*error=*/!error.isEmpty());
  });
  setKernel(std::nullopt, tr("Select a node in the graph to edit its kernel's schedule."));
}

void ScheduleView::setKernel(std::optional<workbench::KernelSchedule> kernel, const QString& why) {
  const bool sameKernel = kernel && m_kernel && kernel->kernel == m_kernel->kernel;
  m_kernel = std::move(kernel);
  if (!m_kernel) {
    m_title->setText(why);
    m_loopModel->setLoops({});
    m_blocking->clear();
    m_form->clearKernel();
    m_apply->setEnabled(false);
    m_reset->setEnabled(false);
    m_tune->setEnabled(false);
    setTrial(std::nullopt);
    return;
  }
  const workbench::KernelSchedule& k = *m_kernel;
  QStringList nodes;
  for (NodeId id : k.nodes)
    nodes << QStringLiteral("#%1").arg(id);
  const QString generator =
      k.interpreted                    ? tr("interpreted")
      : k.convAlgorithm == "winograd"  ? tr("Winograd F(2×2) on the GEMM generator")
      : k.convAlgorithm == "winograd4" ? tr("Winograd F(4×4) on the GEMM generator")
      : k.convAlgorithm == "direct"    ? tr("direct convolution generator")
      : k.gemm                         ? tr("GEMM generator")
      : k.depthwise                    ? tr("depthwise generator")
                                       : tr("loop emitter");
  m_title->setText(tr("%1 \u00B7 %2 \u00B7 %3 \u00B7 nodes %4 \u00B7 schedule: %5")
                       .arg(qs(k.kernel), qs(k.opSummary), generator, nodes.join(' '),
                            k.override.empty() ? tr("default") : qs(k.override)));
  m_loopModel->setLoops(k.loops);
  // As tall as the nest (up to a dozen loops), so the form below keeps its room.
  m_loopTable->setFixedHeight(m_loopTable->horizontalHeader()->sizeHint().height() +
                              int(std::min<size_t>(std::max<size_t>(k.loops.size(), 1), 12)) * 22 + 8);
  m_blocking->setText(k.interpreted ? tr("The executor runs this kernel with the reference "
                                         "interpreter: it has no schedule.")
                      : k.blocking.empty() ? tr("No GEMM blocking: the loop nest above is the code.")
                                           : tr("Blocking and packing: %1").arg(qs(k.blocking)));
  m_form->setKernel(k);
  m_apply->setEnabled(!k.interpreted && !m_busy);
  m_tune->setEnabled(!k.interpreted && !m_busy);
  m_reset->setEnabled(!k.interpreted && !k.override.empty() && !m_busy);
  // A trial of another kernel no longer describes what is shown; the current code stays.
  if (!sameKernel || !m_comparison->trial()) {
    setTrial(std::nullopt);
    m_editors[0].first->setCode(qs(k.loopsText));
  }
}

void ScheduleView::setSessionText(const QString& text) {
  m_session->setText(text.isEmpty() ? tr("Every kernel has its default schedule (no --schedule).")
                                    : tr("Session: --schedule '%1'").arg(text));
}

QString ScheduleView::sessionText() const { return m_session->text(); }

void ScheduleView::setTrial(std::optional<workbench::ScheduleTrial> trial) {
  m_comparison->setTrial(trial);
  for (size_t i = 0; i < m_editors.size(); ++i) {
    auto pick = [&](const workbench::ScheduleVariant& v) -> const std::string& {
      return kTabKinds[i] == CodeKind::Loops ? v.code.loops
             : kTabKinds[i] == CodeKind::Llvm ? v.code.llvmOptimized
                                              : v.code.assembly;
    };
    m_editors[i].first->setCode(trial ? qs(pick(trial->before)) : QString());
    m_editors[i].second->setCode(trial ? qs(pick(trial->after)) : QString());
  }
}

void ScheduleView::setBusy(bool busy, const QString& what) {
  m_busy = busy;
  m_cancel->setVisible(busy);
  m_apply->setEnabled(!busy && m_kernel && !m_kernel->interpreted);
  m_tune->setEnabled(!busy && m_kernel && !m_kernel->interpreted);
  m_reset->setEnabled(!busy && m_kernel && !m_kernel->interpreted && !m_kernel->override.empty());
  if (busy)
    setStatus(what);
}

void ScheduleView::setStatus(const QString& text, bool error) {
  m_status->setText(text);
  m_status->setStyleSheet(error ? QStringLiteral("QLabel { color: #8A1C14; }") : QString());
}

QString ScheduleView::statusText() const { return m_status->text(); }

int ScheduleView::runs() const { return m_runs->value(); }

void ScheduleView::setRuns(int runs) { m_runs->setValue(runs); }

void ScheduleView::setShown(bool shown) {
  if (shown == m_shown)
    return;
  m_shown = shown;
  Q_EMIT shownChanged(shown);
}

void ScheduleView::setTextPointSize(int points) {
  for (auto& [before, after] : m_editors) {
    before->setTextPointSize(points);
    after->setTextPointSize(points);
  }
}

CodeTextEdit* ScheduleView::beforeEditor(CodeKind kind) const {
  for (size_t i = 0; i < m_editors.size(); ++i)
    if (kTabKinds[i] == kind)
      return m_editors[i].first;
  return nullptr;
}

CodeTextEdit* ScheduleView::afterEditor(CodeKind kind) const {
  for (size_t i = 0; i < m_editors.size(); ++i)
    if (kTabKinds[i] == kind)
      return m_editors[i].second;
  return nullptr;
}

void ScheduleView::requestApply() {
  auto change = m_form->currentOverride();
  if (!change.ok()) {
    setStatus(qs(change.error().message()), /*error=*/true);
    return;
  }
  Q_EMIT applyRequested(*change, runs());
}

void ScheduleView::requestReset() {
  if (!m_kernel)
    return;
  Q_EMIT applyRequested(cg::ScheduleOverride{m_kernel->kernel, {}}, runs());
}

} // namespace fb::gui
