// The run panel's form, inputs table, progress and outputs.
#include "app/gui/RunPanel.h"
#include "app/gui/RunOutputsModel.h"
#include "app/gui/ShownText.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

/// "A[,R[,S]]" as --tolerance takes it; empty is the dtype default.
Expected<std::optional<Tolerance>> parseTolerance(const QString& text) {
  const QString t = text.trimmed();
  if (t.isEmpty())
    return std::optional<Tolerance>();
  const QStringList parts = t.split(QLatin1Char(','));
  if (parts.size() > 3)
    return makeError("the tolerance is A[,R[,S]] (absolute, relative, scale), got '",
                     t.toStdString(), "'");
  double v[3] = {0, 0, 0};
  for (int i = 0; i < parts.size(); ++i) {
    bool ok = false;
    v[i] = parts[i].trimmed().toDouble(&ok);
    if (!ok || !(v[i] >= 0) || !std::isfinite(v[i]))
      return makeError("the tolerance is A[,R[,S]] with non-negative numbers, got '",
                       t.toStdString(), "'");
  }
  return std::optional<Tolerance>(Tolerance{v[0], v[1], v[2]});
}

} // namespace

RunPanel::RunPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
  m_snapshot = new QLabel(tr("no model"));
  form->addRow(tr("Snapshot:"), m_snapshot);
  m_backend = new QComboBox;
  m_backend->setObjectName("runBackend");
  m_backendNote = new QLabel;
  m_backendNote->setObjectName("runBackendNote");
  m_backendNote->setWordWrap(true);
  m_backendNote->setStyleSheet(QStringLiteral("color: #666;"));
  auto* items = qobject_cast<QStandardItemModel*>(m_backend->model());
  QStringList unavailable;
  for (workbench::Backend b : {workbench::Backend::Interpreter, workbench::Backend::Cpu,
                               workbench::Backend::Gpu}) {
    const QString label = b == workbench::Backend::Interpreter ? tr("Interpreter (reference)")
                          : b == workbench::Backend::Cpu       ? tr("CPU (LLVM, this machine)")
                                                               : tr("GPU (CUDA)");
    m_backend->addItem(label, qs(workbench::backendName(b)));
    Status available = workbench::backendAvailable(b);
    if (!available.ok()) {
      // Disabled with the facade's reason, on the item and in words beside the box.
      QStandardItem* item = items->item(m_backend->count() - 1);
      item->setEnabled(false);
      item->setToolTip(qs(available.error().message()));
      unavailable << tr("%1 unavailable: %2").arg(label, qs(available.error().message()));
    }
  }
  m_backend->setCurrentIndex(m_backend->findData(QStringLiteral("cpu")));
  m_backendNote->setText(unavailable.join(QStringLiteral("\n")));
  m_backendNote->setVisible(!unavailable.isEmpty());
  auto* backendBox = new QVBoxLayout;
  backendBox->setSpacing(2);
  backendBox->addWidget(m_backend);
  backendBox->addWidget(m_backendNote);
  form->addRow(tr("Backend:"), backendBox);
  m_threads = new QSpinBox;
  m_threads->setRange(0, 256);
  m_threads->setSpecialValueText(tr("default"));
  m_threads->setToolTip(tr("Worker threads of the compiled kernels (0: the runtime's default)"));
  form->addRow(tr("Threads:"), m_threads);
  m_runs = new QSpinBox;
  m_runs->setRange(0, 10000);
  m_runs->setToolTip(tr("Timed runs after the first (their median, min and max are reported)"));
  form->addRow(tr("Timed runs:"), m_runs);
  m_seed = new QSpinBox;
  m_seed->setRange(0, 1 << 30);
  m_seed->setValue(1);
  m_seed->setToolTip(tr("Seed of the random inputs (the same seed gives the same tensors)"));
  form->addRow(tr("Seed:"), m_seed);
  m_tolerance = new QLineEdit;
  m_tolerance->setObjectName("runTolerance");
  m_tolerance->setPlaceholderText(tr("dtype default (f32: 1e-4,1e-3,1e-5)"));
  m_tolerance->setToolTip(tr("A[,R[,S]]: |got \u2212 ref| \u2264 A + R\u00b7|ref| + S\u00b7max|ref|, "
                             "as fusebox-opt --tolerance"));
  m_tolerance->setMinimumWidth(220);
  form->addRow(tr("Tolerance:"), m_tolerance);

  m_inputs = new QTableWidget(0, 3);
  m_inputs->setObjectName("runInputs");
  m_inputs->setHorizontalHeaderLabels({tr("Input"), tr("Type"), tr("Source")});
  m_inputs->horizontalHeader()->setStretchLastSection(true);
  m_inputs->verticalHeader()->hide();
  m_inputs->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_inputs->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_inputs->setToolTip(tr("Double-click a row to read that input from a .npy or .pb file"));
  connect(m_inputs, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { chooseFile(row); });

  auto* top = new QHBoxLayout;
  top->addLayout(form);
  top->addWidget(m_inputs, 1);
  layout->addLayout(top);

  auto* buttons = new QHBoxLayout;
  m_run = new QPushButton(tr("Run and Compare"));
  m_run->setObjectName("runButton");
  m_run->setToolTip(tr("Run the snapshot on the chosen backend and compare every output with the "
                       "imported model on the interpreter"));
  m_cancel = new QPushButton(tr("Cancel"));
  m_progress = new QProgressBar;
  m_progress->setRange(0, 100);
  m_progress->setMaximumWidth(220);
  m_progress->hide();
  m_status = new QLabel;
  buttons->addWidget(m_run);
  buttons->addWidget(m_cancel);
  buttons->addWidget(m_progress);
  buttons->addWidget(m_status, 1);
  layout->addLayout(buttons);

  m_summary = new QLabel;
  m_summary->setObjectName("runSummary");
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::PlainText);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_summary);

  m_outputs = new RunOutputsModel(this);
  m_outputsView = new QTableView;
  m_outputsView->setObjectName("runOutputs");
  m_outputsView->setModel(m_outputs);
  m_outputsView->verticalHeader()->hide();
  m_outputsView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_outputsView->horizontalHeader()->setSectionResizeMode(RunOutputsModel::Values,
                                                          QHeaderView::Stretch);
  m_outputsView->setWordWrap(false);
  layout->addWidget(m_outputsView, 1);

  connect(m_run, &QPushButton::clicked, this, &RunPanel::runRequested);
  connect(m_cancel, &QPushButton::clicked, this, &RunPanel::cancelRequested);
  connect(m_backend, &QComboBox::currentIndexChanged, this, [this] { updateEnabled(); });
  updateEnabled();
}

void RunPanel::setModel(const Graph& graph, const QString& snapshotText) {
  m_hasModel = true;
  m_snapshot->setText(snapshotText);
  // Keep the files of inputs that still exist under the same name (a new snapshot of the same
  // model has the same inputs).
  std::map<QString, std::string> kept;
  for (int r = 0; r < m_inputs->rowCount() && size_t(r) < m_files.size(); ++r)
    kept[m_inputs->item(r, 0)->data(Qt::UserRole).toString() + QLatin1Char('|') +
         m_inputs->item(r, 1)->text()] = m_files[size_t(r)];
  m_inputs->setRowCount(int(graph.inputs().size()));
  m_files.assign(graph.inputs().size(), std::string());
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* v = graph.inputs()[i];
    const QString name = qs(v->name()), type = qs(v->type().str());
    auto* nameItem = new QTableWidgetItem(shownName(name)); // a cell shows a long name's ends
    nameItem->setData(Qt::UserRole, name);
    m_inputs->setItem(int(i), 0, nameItem);
    m_inputs->setItem(int(i), 1, new QTableWidgetItem(type));
    m_inputs->setItem(int(i), 2, new QTableWidgetItem);
    if (auto it = kept.find(name + QLatin1Char('|') + type); it != kept.end())
      m_files[i] = it->second;
    setInputFile(int(i), qs(m_files[i]));
  }
  m_inputs->resizeColumnsToContents();
  updateEnabled();
}

void RunPanel::clearModel() {
  m_hasModel = false;
  m_snapshot->setText(tr("no model"));
  m_inputs->setRowCount(0);
  m_files.clear();
  m_outputs->clear();
  m_summary->clear();
  updateEnabled();
}

void RunPanel::setInputFile(int input, const QString& path) {
  if (input < 0 || size_t(input) >= m_files.size())
    return;
  m_files[size_t(input)] = path.toStdString();
  QTableWidgetItem* item = m_inputs->item(input, 2);
  item->setText(path.isEmpty() ? tr("random (seed)") : QFileInfo(path).fileName());
  item->setToolTip(path.isEmpty() ? tr("A seeded random tensor; double-click to choose a file")
                                  : path);
}

void RunPanel::chooseFile(int row) {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Input %1").arg(m_inputs->item(row, 0)->text()), {},
      tr("Tensors (*.npy *.pb);;All files (*)"));
  // Cancelling the dialog returns the input to random: the one way back without a button.
  setInputFile(row, path);
}

bool RunPanel::setBackend(const QString& name) {
  const int i = m_backend->findData(name);
  auto* items = qobject_cast<QStandardItemModel*>(m_backend->model());
  if (i < 0 || !items->item(i)->isEnabled())
    return false;
  m_backend->setCurrentIndex(i);
  return true;
}

workbench::RunSettings RunPanel::settings() const {
  workbench::RunSettings s;
  s.backend = workbench::backendFromName(m_backend->currentData().toString().toStdString())
                  .value_or(workbench::Backend::Cpu);
  s.compile.threads = m_threads->value();
  s.benchRuns = m_runs->value();
  return s;
}

Expected<RunInputs> RunPanel::inputs() const {
  RunInputs in;
  in.seed = uint64_t(m_seed->value());
  bool anyFile = false;
  for (const std::string& f : m_files)
    anyFile = anyFile || !f.empty();
  if (anyFile)
    in.files = m_files;
  FB_ASSIGN_OR_RETURN(in.tolerance, parseTolerance(m_tolerance->text()));
  return in;
}

void RunPanel::setRunning(bool running) {
  m_running = running;
  m_progress->setVisible(running);
  if (running) {
    m_progress->setValue(0);
    m_status->setText(tr("Starting\u2026"));
  }
  updateEnabled();
}

void RunPanel::setProgress(int percent, const QString& what) {
  m_progress->setValue(percent);
  m_status->setText(what);
}

void RunPanel::showOutcome(const RunOutcome& outcome, const QString& summary, bool ok) {
  setRunning(false);
  m_status->clear();
  m_outputs->setOutcome(outcome);
  QString text = summary;
  if (outcome.run && outcome.run->bench) {
    const workbench::BenchStats& b = *outcome.run->bench;
    text += tr(" Timed runs: median %1 ms (min %2, max %3) over %4 runs on %5 thread(s).")
                .arg(b.medianMs, 0, 'f', 3)
                .arg(b.minMs, 0, 'f', 3)
                .arg(b.maxMs, 0, 'f', 3)
                .arg(b.runs)
                .arg(b.threads);
  }
  if (outcome.comparison) {
    const Tolerance t = outcome.tolerance.value_or(defaultTolerance(DType::F32));
    text += outcome.tolerance
                ? tr(" Tolerance %1, %2, %3 (abs, rel, scale).").arg(t.atol).arg(t.rtol).arg(t.stol)
                : tr(" Tolerance: each dtype's default (f32 %1, %2, %3).").arg(t.atol).arg(t.rtol).arg(t.stol);
  }
  m_summary->setText(text);
  m_summary->setStyleSheet(ok ? QStringLiteral("QLabel { color: #0B6E2E; font-weight: bold; }")
                              : QStringLiteral("QLabel { color: #B01C14; font-weight: bold; }"));
}

QString RunPanel::summaryText() const { return m_summary->text(); }

void RunPanel::updateEnabled() {
  const bool compiled = m_backend->currentData().toString() != QLatin1String("interp");
  m_threads->setEnabled(compiled && !m_running);
  m_run->setEnabled(m_hasModel && !m_running);
  m_cancel->setEnabled(m_running);
  for (QWidget* w : std::initializer_list<QWidget*>{m_backend, m_runs, m_seed, m_tolerance, m_inputs})
    w->setEnabled(!m_running);
}

} // namespace fb::gui
