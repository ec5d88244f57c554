// The pipeline panel's widgets and the signals they emit.
#include "app/gui/PipelinePanel.h"

#include "app/gui/PassOptionsDialog.h"
#include "app/gui/PipelineModels.h"

#include <QCompleter>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStringListModel>
#include <QVBoxLayout>

namespace fb::gui {

namespace {
QLabel* heading(const QString& text) {
  auto* l = new QLabel(text);
  l->setStyleSheet("font-weight: bold;"); // a style, not a QFont, so it follows the text size
  return l;
}
} // namespace

PipelinePanel::PipelinePanel(QWidget* parent)
    : QWidget(parent), m_passModel(new PassListModel(this)), m_pipelineModel(new PipelineModel(this)) {
  m_passList = new QListView;
  m_passList->setObjectName("passList");
  m_passList->setModel(m_passModel);
  m_passList->setSelectionMode(QAbstractItemView::SingleSelection);
  m_passList->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_description = new QLabel(tr("Select a pass to read what it does."));
  m_description->setObjectName("passDescription");
  m_description->setWordWrap(true);
  m_description->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  m_description->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_description->setStyleSheet("QLabel { background: #F7F7F2; padding: 6px; }");
  // The description scrolls inside a fixed-height box so long paragraphs never squeeze the lists.
  auto* descriptionBox = new QScrollArea;
  descriptionBox->setWidget(m_description);
  descriptionBox->setWidgetResizable(true);
  descriptionBox->setFrameShape(QFrame::StyledPanel);
  descriptionBox->setMinimumHeight(90);
  descriptionBox->setMaximumHeight(150);
  m_add = new QPushButton(tr("Add to pipeline \u2193"));

  m_pipelineList = new QListView;
  m_pipelineList->setObjectName("pipelineList");
  m_pipelineList->setModel(m_pipelineModel);
  m_pipelineList->setSelectionMode(QAbstractItemView::SingleSelection);
  m_pipelineList->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_up = new QPushButton(tr("Up"));
  m_down = new QPushButton(tr("Down"));
  m_remove = new QPushButton(tr("Remove"));
  m_options = new QLineEdit;
  m_options->setPlaceholderText(tr("options of the selected step: key=value,..."));
  m_applyOptions = new QPushButton(tr("Set"));
  m_optionsDialog = new QPushButton(tr("Options\u2026"));
  m_optionsDialog->setObjectName("optionsDialogButton");
  m_optionsDialog->setToolTip(tr("Edit the selected step's options in a form built from the "
                                 "pass's declared options"));
  m_pipelineText = new QLineEdit;
  m_pipelineText->setObjectName("pipelineText");
  m_pipelineText->setPlaceholderText(tr("or type a pipeline: canonicalize,fold-constants,fuse"));

  m_reset = new QPushButton(tr("Reset"));
  m_back = new QPushButton(tr("\u25C0 Back"));
  m_step = new QPushButton(tr("Step \u25B6"));
  m_run = new QPushButton(tr("Run to end \u25B6\u25B6"));
  m_forward = new QPushButton(tr("Forward \u25B6"));
  m_step->setDefault(true);
  m_step->setStyleSheet("font-weight: bold;");
  m_reset->setToolTip(tr("Back to the imported model; drops the computed snapshots"));
  m_back->setToolTip(tr("Show the previous snapshot (undo)"));
  m_forward->setToolTip(tr("Show the next computed snapshot (redo)"));
  m_step->setToolTip(tr("Apply the next pass of the pipeline"));
  m_run->setToolTip(tr("Apply every remaining pass"));

  m_summary = new QLabel(tr("Open a model, build a pipeline, then Step."));
  m_summary->setObjectName("stepSummary");
  m_summary->setWordWrap(true);
  m_summary->setStyleSheet(
      "QLabel { background: #FFF4CC; border: 1px solid #E0C060; padding: 6px; font-weight: bold; }");

  auto* passBox = new QWidget;
  auto* pl = new QVBoxLayout(passBox);
  pl->setContentsMargins(0, 0, 0, 0);
  pl->addWidget(heading(tr("Passes")));
  pl->addWidget(m_passList, 2);
  pl->addWidget(descriptionBox, 1);
  pl->addWidget(m_add);

  auto* pipeBox = new QWidget;
  auto* ql = new QVBoxLayout(pipeBox);
  ql->setContentsMargins(0, 0, 0, 0);
  ql->addWidget(heading(tr("Pipeline")));
  ql->addWidget(m_pipelineList, 1);
  auto* editRow = new QHBoxLayout;
  editRow->addWidget(m_up);
  editRow->addWidget(m_down);
  editRow->addWidget(m_remove);
  ql->addLayout(editRow);
  auto* optRow = new QHBoxLayout;
  optRow->addWidget(m_options, 1);
  optRow->addWidget(m_applyOptions);
  optRow->addWidget(m_optionsDialog);
  ql->addLayout(optRow);
  ql->addWidget(m_pipelineText);
  auto* controls = new QGridLayout;
  controls->addWidget(m_reset, 0, 0);
  controls->addWidget(m_back, 0, 1);
  controls->addWidget(m_forward, 0, 2);
  controls->addWidget(m_step, 1, 0, 1, 2);
  controls->addWidget(m_run, 1, 2);
  ql->addLayout(controls);

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(passBox);
  split->addWidget(pipeBox);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split, 1);
  // Outside the splitter: the summary of the last step always gets the height it needs.
  layout->addWidget(m_summary);

  connect(m_passList->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this] { showPassDescription(); });
  auto addSelected = [this] {
    QModelIndex i = m_passList->currentIndex();
    if (!i.isValid())
      return;
    int at = selectedStep() >= 0 ? selectedStep() + 1 : m_pipelineModel->rowCount();
    Q_EMIT addStepRequested(i.data(PassListModel::NameRole).toString(), at);
  };
  connect(m_add, &QPushButton::clicked, this, addSelected);
  connect(m_passList, &QListView::doubleClicked, this, addSelected);
  connect(m_remove, &QPushButton::clicked, this, [this] {
    if (selectedStep() >= 0)
      Q_EMIT removeStepRequested(selectedStep());
  });
  connect(m_up, &QPushButton::clicked, this, [this] {
    int s = selectedStep();
    if (s > 0)
      Q_EMIT moveStepRequested(s, s - 1);
  });
  connect(m_down, &QPushButton::clicked, this, [this] {
    int s = selectedStep();
    if (s >= 0 && s + 1 < m_pipelineModel->rowCount())
      Q_EMIT moveStepRequested(s, s + 1);
  });
  // Completion of the selected step's declared options: each entry is the text before the
  // option being typed plus one "name=value" the pass declares.
  m_optionCompletions = new QStringListModel(this);
  auto* completer = new QCompleter(m_optionCompletions, this);
  completer->setCaseSensitivity(Qt::CaseInsensitive);
  completer->setObjectName("optionCompleter");
  m_options->setCompleter(completer);
  connect(m_options, &QLineEdit::textEdited, this, [this] { updateOptionCompletions(); });
  auto applyOptions = [this] {
    if (selectedStep() >= 0)
      Q_EMIT stepOptionsRequested(selectedStep(), m_options->text().trimmed());
  };
  connect(m_applyOptions, &QPushButton::clicked, this, applyOptions);
  connect(m_optionsDialog, &QPushButton::clicked, this, [this] {
    const int index = selectedStep();
    const QString step = m_pipelineList->currentIndex().data(PipelineModel::StepRole).toString();
    const workbench::PassDescription* pass = m_passModel->find(step.section('{', 0, 0));
    if (index < 0 || !pass)
      return;
    PassOptionsDialog dialog(*pass, this);
    dialog.setOptions(m_options->text());
    if (dialog.exec() == QDialog::Accepted)
      Q_EMIT stepOptionsRequested(index, dialog.optionsText());
  });
  connect(m_options, &QLineEdit::returnPressed, this, applyOptions);
  connect(m_pipelineText, &QLineEdit::returnPressed, this,
          [this] { Q_EMIT pipelineTextRequested(m_pipelineText->text().trimmed()); });
  connect(m_pipelineList->selectionModel(), &QItemSelectionModel::currentChanged, this, [this] {
    // Show the selected step's options for editing.
    QString step = m_pipelineList->currentIndex().data(PipelineModel::StepRole).toString();
    int brace = int(step.indexOf('{'));
    m_options->setText(brace >= 0 ? step.mid(brace + 1, step.size() - brace - 2) : QString());
    updateOptionCompletions();
    if (!step.isEmpty())
      showDescriptionOf(step);
    updateButtons();
  });
  connect(m_reset, &QPushButton::clicked, this, &PipelinePanel::resetRequested);
  connect(m_back, &QPushButton::clicked, this, &PipelinePanel::backRequested);
  connect(m_step, &QPushButton::clicked, this, &PipelinePanel::stepRequested);
  connect(m_run, &QPushButton::clicked, this, &PipelinePanel::runToEndRequested);
  connect(m_forward, &QPushButton::clicked, this, &PipelinePanel::forwardRequested);
  updateButtons();
}

void PipelinePanel::setState(const QStringList& steps, int applied, int current,
                             const QStringList& summaries, const QString& currentSummary,
                             bool canStep, bool canBack, bool canForward) {
  const int selected = selectedStep();
  m_pipelineModel->setState(steps, applied, current, summaries);
  if (selected >= 0 && selected < steps.size())
    m_pipelineList->setCurrentIndex(m_pipelineModel->index(selected));
  if (!m_pipelineText->hasFocus())
    m_pipelineText->setText(steps.join(','));
  m_summary->setText(currentSummary);
  // Explain the pass that made the current snapshot, or the one Step applies next.
  if (!m_passList->currentIndex().isValid() && !m_pipelineList->currentIndex().isValid()) {
    if (current > 0 && current <= steps.size())
      showDescriptionOf(steps[current - 1]);
    else if (current < steps.size())
      showDescriptionOf(steps[current]);
  }
  m_canStep = canStep;
  m_canBack = canBack;
  m_canForward = canForward;
  updateButtons();
}

void PipelinePanel::setBusy(bool busy) {
  m_busy = busy;
  updateButtons();
}

QString PipelinePanel::summaryText() const { return m_summary->text(); }

int PipelinePanel::selectedStep() const {
  QModelIndex i = m_pipelineList->currentIndex();
  return i.isValid() ? i.row() : -1;
}

void PipelinePanel::showPassDescription() {
  QModelIndex i = m_passList->currentIndex();
  if (!i.isValid())
    return;
  m_description->setText(QStringLiteral("<b>%1</b><br>%2%3")
                             .arg(i.data(PassListModel::NameRole).toString().toHtmlEscaped(),
                                  i.data(PassListModel::DescriptionRole).toString().toHtmlEscaped(),
                                  i.data(PassListModel::OptionsHelpRole).toString()));
}

void PipelinePanel::updateOptionCompletions() {
  const QString step = m_pipelineList->currentIndex().data(PipelineModel::StepRole).toString();
  const workbench::PassDescription* pass = m_passModel->find(step.section('{', 0, 0));
  QStringList entries;
  if (pass) {
    const QString text = m_options->text();
    const QString before = text.left(text.lastIndexOf(',') + 1);
    for (const std::string& c : workbench::optionCompletions(*pass))
      entries << before + QString::fromStdString(c);
  }
  m_optionCompletions->setStringList(entries);
  const bool hasOptions = pass && !pass->options.empty();
  m_options->setPlaceholderText(
      !pass         ? tr("options of the selected step: key=value,...")
      : hasOptions  ? tr("e.g. %1").arg(QString::fromStdString(workbench::optionCompletions(*pass).front()))
                    : tr("%1 takes no options").arg(QString::fromStdString(pass->name)));
}

QStringList PipelinePanel::optionCompletions() const { return m_optionCompletions->stringList(); }

void PipelinePanel::showDescriptionOf(const QString& step) {
  const QString name = step.section('{', 0, 0);
  for (int row = 0; row < m_passModel->rowCount(); ++row) {
    QModelIndex i = m_passModel->index(row);
    if (i.data(PassListModel::NameRole).toString() == name) {
      m_description->setText(QStringLiteral("<b>%1</b><br>%2%3")
                                 .arg(name.toHtmlEscaped(),
                                      i.data(PassListModel::DescriptionRole).toString().toHtmlEscaped(),
                                      i.data(PassListModel::OptionsHelpRole).toString()));
      return;
    }
  }
}

void PipelinePanel::updateButtons() {
  const bool hasStep = selectedStep() >= 0;
  m_remove->setEnabled(hasStep && !m_busy);
  m_up->setEnabled(hasStep && selectedStep() > 0 && !m_busy);
  m_down->setEnabled(hasStep && selectedStep() + 1 < m_pipelineModel->rowCount() && !m_busy);
  m_applyOptions->setEnabled(hasStep && !m_busy);
  m_optionsDialog->setEnabled(hasStep && !m_busy);
  m_add->setEnabled(!m_busy);
  m_step->setEnabled(m_canStep && !m_busy);
  m_run->setEnabled(m_canStep && !m_busy);
  m_back->setEnabled(m_canBack && !m_busy);
  m_forward->setEnabled(m_canForward && !m_busy);
  m_reset->setEnabled(m_canBack && !m_busy);
}

} // namespace fb::gui
