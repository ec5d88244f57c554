// The profile view's controls, tables, timeline and roofline.
#include "app/gui/ProfileView.h"

#include "app/gui/ProfileModels.h"
#include "app/gui/RectChart.h"
#include "app/gui/ReportTable.h"
#include "app/gui/RooflineChart.h"
#include "app/gui/graph/OpColors.h"

#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

/// The fill of a kernel in the timeline: the graph view's colour of the op it computes (a
/// fused group's colour when it computes several).
QColor kernelColor(const workbench::KernelTiming& k, const Graph& graph) {
  if (k.nodes.size() > 1)
    return fusedColor();
  if (!k.nodes.empty())
    if (const Node* n = graph.findNode(k.nodes.front()))
      return opColor(n->op());
  return groupColor();
}

} // namespace

ProfileView::ProfileView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  auto* bar = new QHBoxLayout;
  m_profile = new QPushButton(tr("Profile"));
  m_profile->setObjectName("profileButton");
  m_profile->setToolTip(tr("Compile the current snapshot for this CPU and time every kernel over "
                           "the timed runs"));
  m_cancel = new QPushButton(tr("Cancel"));
  m_runs = new QSpinBox;
  m_runs->setRange(1, 1000);
  m_runs->setValue(10);
  m_runs->setPrefix(tr("runs: "));
  m_runs->setToolTip(tr("Timed runs; each kernel's time is its mean over them"));
  m_threads = new QSpinBox;
  m_threads->setRange(0, 256);
  m_threads->setSpecialValueText(tr("threads: default"));
  m_threads->setPrefix(tr("threads: "));
  m_compareBox = new QComboBox;
  m_compareBox->setObjectName("profileCompare");
  m_compareBox->setToolTip(tr("Profile another snapshot too and show what changed per kernel"));
  m_colour = new QCheckBox(tr("Colour graph by time"));
  m_colour->setToolTip(tr("Colour the graph's nodes by the share of kernel time of the kernels "
                          "that compute them (through provenance, on any snapshot)"));
  m_export = new QPushButton(tr("Export Chrome Trace\u2026"));
  m_export->setToolTip(tr("Save the per-kernel trace as JSON for Perfetto or chrome://tracing"));
  m_progress = new QProgressBar;
  m_progress->setRange(0, 100);
  m_progress->setMaximumWidth(160);
  m_progress->hide();
  m_status = new QLabel;
  bar->addWidget(m_profile);
  bar->addWidget(m_cancel);
  bar->addWidget(m_runs);
  bar->addWidget(m_threads);
  bar->addWidget(new QLabel(tr("Compare with:")));
  bar->addWidget(m_compareBox);
  bar->addWidget(m_colour);
  bar->addWidget(m_export);
  bar->addWidget(m_progress);
  bar->addWidget(m_status, 1);
  layout->addLayout(bar);

  m_summary = new QLabel(tr("Profile the current snapshot to see where its time goes."));
  m_summary->setObjectName("profileSummary");
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_summary);

  m_tabs = new QTabWidget;
  m_tabs->setObjectName("profileTabs");
  // Kernels: filter, table, and the timeline below.
  m_kernelsPage = new QWidget;
  auto* kl = new QVBoxLayout(m_kernelsPage);
  kl->setContentsMargins(0, 4, 0, 0);
  m_filter = new QLineEdit;
  m_filter->setPlaceholderText(tr("Filter kernels by name, op or node"));
  m_filter->setClearButtonEnabled(true);
  kl->addWidget(m_filter);
  m_kernels = new KernelProfileModel(this);
  m_proxy = new QSortFilterProxyModel(this);
  m_proxy->setSourceModel(m_kernels);
  m_proxy->setSortRole(Qt::UserRole);
  m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
  m_proxy->setFilterKeyColumn(-1); // any column: kernel, op or node names
  m_table = makeReportTable(m_proxy, /*sortable=*/true);
  m_table->setObjectName("kernelTable");
  m_table->sortByColumn(KernelProfileModel::TimeMs, Qt::DescendingOrder);
  m_timeline = new RectChart;
  m_timeline->setObjectName("kernelTimeline");
  m_timeline->setMinimumHeight(120); // the boxes and the axis; drag the splitter for more
  m_timeline->axisY()->setVisible(false);
  m_timeline->axisY()->setRange(0, 1);
  m_timeline->axisX()->setTitleText(tr("time within the run (ms)"));
  m_timeline->axisX()->setLabelFormat(QStringLiteral("%.3g"));
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(m_table);
  split->addWidget(m_timeline);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({600, 260});
  kl->addWidget(split, 1);
  m_tabs->addTab(m_kernelsPage, tr("Kernels"));
  m_roofline = new RooflineChart;
  m_roofline->setObjectName("roofline");
  auto* roofPage = new QWidget;
  auto* rl = new QVBoxLayout(roofPage);
  rl->setContentsMargins(0, 4, 0, 0);
  auto* roofBar = new QHBoxLayout;
  m_remeasure = new QPushButton(tr("Measure the Roofs Again"));
  m_remeasure->setToolTip(tr("Run the micro-benchmark again (about a second) and replace the cached "
                             "peaks: a measurement taken while the machine was busy reads low"));
  auto* roofHelp = new QLabel(tr("Each kernel sits at its FLOPs per byte and achieved GFLOP/s; the "
                                 "roof is what this machine allows there. Under the slope: memory "
                                 "bound; under the flat part: compute bound."));
  roofHelp->setWordWrap(true);
  roofBar->addWidget(roofHelp, 1);
  roofBar->addWidget(m_remeasure);
  rl->addLayout(roofBar);
  rl->addWidget(m_roofline, 1);
  m_tabs->addTab(roofPage, tr("Roofline"));
  auto* savingsPage = new QWidget;
  auto* sl = new QVBoxLayout(savingsPage);
  sl->setContentsMargins(0, 4, 0, 0);
  m_savings = new QLabel(tr("Choose a snapshot to compare with (the imported model shows what "
                            "the whole pipeline saved), then Profile."));
  m_savings->setWordWrap(true);
  m_savings->setObjectName("profileSavings");
  sl->addWidget(m_savings);
  m_compare = new ProfileCompareModel(this);
  auto* compareProxy = new QSortFilterProxyModel(this);
  compareProxy->setSourceModel(m_compare);
  compareProxy->setSortRole(Qt::UserRole);
  m_compareTable = makeReportTable(compareProxy, /*sortable=*/true);
  m_compareTable->setObjectName("profileCompareTable");
  m_compareTable->sortByColumn(ProfileCompareModel::SavedMs, Qt::DescendingOrder);
  sl->addWidget(m_compareTable, 1);
  m_tabs->addTab(savingsPage, tr("Fusion savings"));
  layout->addWidget(m_tabs, 1);

  connect(m_profile, &QPushButton::clicked, this, &ProfileView::profileRequested);
  connect(m_cancel, &QPushButton::clicked, this, &ProfileView::cancelRequested);
  connect(m_export, &QPushButton::clicked, this, &ProfileView::exportDialog);
  connect(m_colour, &QCheckBox::toggled, this, &ProfileView::colourGraphToggled);
  connect(m_remeasure, &QPushButton::clicked, this, &ProfileView::remeasureRequested);
  connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!m_selecting && current.isValid())
              Q_EMIT kernelActivated(m_proxy->mapToSource(current).row());
          });
  connect(m_timeline, &RectChart::rectClicked, this,
          [this](quint64 key, int) { Q_EMIT kernelActivated(int(key)); });
  connect(m_roofline, &RooflineChart::kernelClicked, this, &ProfileView::kernelActivated);
  setRunning(false);
}

void ProfileView::setSnapshots(const QStringList& labels, int current) {
  const int keep = compareIndex();
  QSignalBlocker block(m_compareBox);
  m_compareBox->clear();
  m_compareBox->addItem(tr("nothing"), -1);
  for (int i = 0; i < labels.size(); ++i)
    if (i != current)
      m_compareBox->addItem(labels[i], i);
  const int at = m_compareBox->findData(keep);
  m_compareBox->setCurrentIndex(at >= 0 ? at : 0);
}

int ProfileView::compareIndex() const {
  return m_compareBox->currentIndex() < 0 ? -1 : m_compareBox->currentData().toInt();
}

void ProfileView::setCompareIndex(int index) {
  const int at = m_compareBox->findData(index);
  m_compareBox->setCurrentIndex(at >= 0 ? at : 0);
}

int ProfileView::runs() const { return m_runs->value(); }
int ProfileView::threads() const { return m_threads->value(); }
bool ProfileView::colourGraph() const { return m_colour->isChecked(); }
void ProfileView::setColourGraph(bool on) { m_colour->setChecked(on); }

void ProfileView::setRunning(bool running) {
  m_running = running;
  m_progress->setVisible(running);
  if (running) {
    m_progress->setValue(0);
    m_status->setText(tr("Starting\u2026"));
  } else {
    m_status->clear();
  }
  m_profile->setEnabled(!running);
  m_cancel->setEnabled(running);
  m_runs->setEnabled(!running);
  m_threads->setEnabled(!running);
  m_compareBox->setEnabled(!running);
  m_export->setEnabled(!running && m_outcome.main.has_value());
  m_remeasure->setEnabled(!running && m_outcome.main.has_value());
}

void ProfileView::setProgress(int percent, const QString& what) {
  m_progress->setValue(percent);
  m_status->setText(what);
}

void ProfileView::showOutcome(const ProfileOutcome& outcome) {
  m_outcome = outcome;
  setRunning(false);
  if (!outcome.main) {
    m_summary->setText(outcome.cancelled ? tr("Profiling cancelled.")
                                         : tr("Profiling failed: %1").arg(outcome.error));
    m_kernels->setSummary({});
    m_compare->setComparison({});
    m_timeline->setRects({});
    m_roofline->clear();
    m_export->setEnabled(false);
    m_remeasure->setEnabled(false);
    return;
  }
  const ProfiledSnapshot& p = *outcome.main;
  const workbench::ProfileSummary& s = p.summary;
  m_kernels->setSummary(s);
  m_summary->setText(tr("Snapshot %1: %2 kernels, %3 ms of kernel time per run (sum of the "
                        "kernels' medians; the whole run: median %4 ms over %5 runs on %6 "
                        "thread(s)); compiled in %7 ms.")
                         .arg(p.index)
                         .arg(s.kernels.size())
                         .arg(s.totalUs / 1000.0, 0, 'f', 3)
                         .arg(p.medianRunMs, 0, 'f', 3)
                         .arg(s.runs)
                         .arg(s.threads)
                         .arg(p.compileMs, 0, 'f', 0));
  showTimeline(p);
  m_roofline->setData(s, p.index, outcome.peaks,
                      outcome.peaksError.isEmpty()
                          ? tr("no roofs: the machine's peaks were not measured")
                          : tr("no roofs: %1").arg(outcome.peaksError));
  if (outcome.comparison && outcome.before) {
    const workbench::ProfileComparison& c = *outcome.comparison;
    m_compare->setComparison(c);
    const double saved = c.beforeTotalUs - c.afterTotalUs;
    m_savings->setText(tr("Snapshot %1: %2 kernels, %3 ms \u2192 snapshot %4: %5 kernels, %6 ms. "
                          "%7 %8 ms of kernel time per run (%9 %).")
                           .arg(outcome.before->index)
                           .arg(c.beforeKernels)
                           .arg(c.beforeTotalUs / 1000.0, 0, 'f', 3)
                           .arg(p.index)
                           .arg(c.afterKernels)
                           .arg(c.afterTotalUs / 1000.0, 0, 'f', 3)
                           .arg(saved >= 0 ? tr("Saved") : tr("Lost"))
                           .arg(std::abs(saved) / 1000.0, 0, 'f', 3)
                           .arg(c.beforeTotalUs > 0 ? 100.0 * std::abs(saved) / c.beforeTotalUs : 0.0,
                                0, 'f', 1));
  } else if (!outcome.compareError.isEmpty()) {
    m_compare->setComparison({});
    m_savings->setText(tr("No comparison: %1").arg(outcome.compareError));
  } else {
    m_compare->setComparison({});
    m_savings->setText(tr("Choose a snapshot to compare with (the imported model shows what the "
                          "whole pipeline saved), then Profile."));
  }
  m_export->setEnabled(true);
  m_remeasure->setEnabled(true);
}

void ProfileView::showTimeline(const ProfiledSnapshot& p) {
  const cg::Profile& prof = *p.profile;
  if (prof.runs.empty()) {
    m_timeline->setRects({});
    return;
  }
  // The run of median duration stands for all of them.
  std::vector<size_t> order(prof.runs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return prof.runs[a].second < prof.runs[b].second; });
  const size_t run = order[order.size() / 2];
  const double start = prof.runs[run].first;
  std::vector<ChartRect> rects;
  for (const cg::KernelEvent& e : prof.events) {
    if (size_t(e.run) != run)
      continue;
    const workbench::KernelTiming& k = p.summary.kernels[size_t(e.kernel)];
    ChartRect r;
    r.rect = QRectF((e.startUs - start) / 1000.0, 0.15, e.durationUs / 1000.0, 0.7);
    r.fill = kernelColor(k, *p.graph);
    r.label = qs(k.op);
    r.key = quint64(e.kernel);
    r.tooltip = tr("<b>%1</b> (%2)<br>%3 ms in this run, starting at %4 ms<br>median %5 ms, %6 % of "
                   "kernel time")
                    .arg(qs(k.name).toHtmlEscaped(), qs(k.op).toHtmlEscaped())
                    .arg(e.durationUs / 1000.0, 0, 'f', 4)
                    .arg((e.startUs - start) / 1000.0, 0, 'f', 3)
                    .arg(k.medianUs / 1000.0, 0, 'f', 4)
                    .arg(k.percent, 0, 'f', 1);
    rects.push_back(std::move(r));
  }
  m_timeline->setRects(std::move(rects));
  const double length = prof.runs[run].second / 1000.0;
  m_timeline->axisX()->setRange(0, std::max(length, 1e-6));
  m_timeline->chart()->zoomReset();
  // The run is named in the axis title: a chart title would take the boxes' room in a small dock.
  m_timeline->axisX()->setTitleText(tr("ms into run %1 of %2, the median run (%3 ms); wheel zooms, "
                                       "double-click resets")
                                        .arg(run + 1)
                                        .arg(prof.runs.size())
                                        .arg(length, 0, 'f', 3));
}

void ProfileView::setSelectedKernels(const std::vector<int>& kernels) {
  m_roofline->setSelectedKernels(kernels);
  std::set<int> rects;
  for (size_t i = 0; i < m_timeline->rects().size(); ++i)
    if (std::find(kernels.begin(), kernels.end(), int(m_timeline->rects()[i].key)) != kernels.end())
      rects.insert(int(i));
  m_timeline->setHighlighted(std::move(rects));
  // Select the rows without announcing it back as the user's choice.
  m_selecting = true;
  m_table->selectionModel()->clearSelection();
  if (kernels.empty()) // so that choosing the same row again is a change the user makes
    m_table->selectionModel()->setCurrentIndex(QModelIndex(), QItemSelectionModel::NoUpdate);
  for (int k : kernels) {
    const QModelIndex at = m_proxy->mapFromSource(m_kernels->index(k, 0));
    if (!at.isValid())
      continue;
    m_table->selectionModel()->select(at, QItemSelectionModel::Select | QItemSelectionModel::Rows);
    if (k == kernels.front()) {
      m_table->selectionModel()->setCurrentIndex(at, QItemSelectionModel::NoUpdate);
      m_table->scrollTo(at);
    }
  }
  m_selecting = false;
}

QString ProfileView::exportChromeTrace(const QString& path) const {
  if (!m_outcome.main || !m_outcome.main->profile)
    return tr("there is no profile to export");
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
    return tr("cannot write %1: %2").arg(path, f.errorString());
  const std::string json = m_outcome.main->profile->chromeTraceJson() + "\n";
  if (f.write(json.data(), qint64(json.size())) != qint64(json.size()))
    return tr("cannot write %1: %2").arg(path, f.errorString());
  return {};
}

void ProfileView::exportDialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export Chrome Trace"),
                                                    QStringLiteral("profile.json"),
                                                    tr("Chrome trace JSON (*.json)"));
  if (path.isEmpty())
    return;
  const QString error = exportChromeTrace(path);
  if (!error.isEmpty())
    QMessageBox::warning(this, tr("Export Chrome Trace"), error);
  else
    m_status->setText(tr("Wrote %1").arg(path));
}

QString ProfileView::summaryText() const { return m_summary->text(); }
QString ProfileView::savingsText() const { return m_savings->text(); }

} // namespace fb::gui
