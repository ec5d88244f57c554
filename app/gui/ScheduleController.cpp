// Background kernel descriptions and schedule trials for the schedule editor.
#include "app/gui/ScheduleController.h"
#include "app/gui/GuiJob.h"

#include "app/gui/CodeController.h"
#include "app/gui/Coordinator.h"
#include "app/gui/ScheduleForm.h"
#include "app/gui/ScheduleModels.h"
#include "app/gui/ScheduleView.h"
#include "app/gui/WorkerGuard.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QPointer>
#include <QTimer>
#include <QtConcurrent/QtConcurrent>

#include <cmath>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

constexpr size_t kCacheLimit = 16;

/// Runs `work()` (an Expected of what `Outcome::*value` holds) in a worker under `job`: the
/// outcome has the value, or the error and whether the job was cancelled.
template <typename Outcome, typename Value, typename Work>
QFuture<Outcome> runJob(const QString& what, std::optional<Value> Outcome::*value,
                        std::shared_ptr<workbench::JobControl> job, Work work) {
  return QtConcurrent::run([what, value, job, work] {
    return guardedWork<Outcome>(what, [&] {
      Outcome out;
      auto result = work(job.get());
      if (result.ok())
        out.*value = std::move(result).value();
      else {
        out.error = qs(result.error().message());
        out.cancelled = job->cancelled();
      }
      return out;
    });
  });
}

} // namespace

ScheduleController::ScheduleController(Coordinator* coordinator, ScheduleView* view,
                                       CodeController* code, QObject* parent)
    : QObject(parent), m_coordinator(coordinator), m_view(view), m_code(code) {
  connect(&m_describeWatcher, &QFutureWatcher<DescribeOutcome>::finished, this,
          &ScheduleController::onDescribeDone);
  connect(&m_trialWatcher, &QFutureWatcher<TrialOutcome>::finished, this,
          &ScheduleController::onTrialDone);
  connect(m_coordinator, &Coordinator::snapshotChanged, this, &ScheduleController::refresh);
  connect(m_coordinator, &Coordinator::selectionChanged, this, &ScheduleController::showSelected);
  connect(m_view, &ScheduleView::applyRequested, this, &ScheduleController::apply);
  connect(m_view, &ScheduleView::cancelRequested, this, &ScheduleController::cancel);
  connect(m_view, &ScheduleView::tuneRequested, this, &ScheduleController::tune);
  connect(&m_tuneWatcher, &QFutureWatcher<TuneOutcome>::finished, this,
          &ScheduleController::onTuneDone);
  // Kernels are described lazily: when the editor is shown.
  connect(m_view, &ScheduleView::shownChanged, this, [this](bool shown) {
    if (shown)
      refresh();
  });
}

ScheduleController::~ScheduleController() {
  cancel();
  m_describeWatcher.waitForFinished(); // workers hold only their job's values
  m_trialWatcher.waitForFinished();
  m_tuneWatcher.waitForFinished();
}

ScheduleController::DescribeKey ScheduleController::currentKey() const {
  const workbench::Session& s = m_coordinator->session();
  if (!s.hasModel())
    return {nullptr, {}};
  return {s.graph(s.currentIndex()).get(), s.scheduleText(s.currentIndex())};
}

std::shared_ptr<const std::vector<workbench::KernelSchedule>> ScheduleController::kernels() const {
  auto it = m_describeCache.find(currentKey());
  return it == m_describeCache.end() ? nullptr : it->second.outcome.kernels;
}

void ScheduleController::refresh() {
  const workbench::Session& s = m_coordinator->session();
  m_view->setSessionText(s.hasModel() ? qs(s.scheduleText(s.currentIndex())) : QString());
  if (!s.hasModel()) {
    m_viewGraph = nullptr;
    m_view->setKernel(std::nullopt, tr("Open a model to edit its kernels' schedules."));
    return;
  }
  if (m_describeCache.count(currentKey())) {
    showSelected();
    return;
  }
  // Lowering a large model takes a moment: only for a visible editor.
  if (m_view->isShown() && !m_describing)
    startDescribe();
  else if (!m_view->isShown() && m_viewGraph != currentKey().first) {
    // Another snapshot: its kernels are described when the editor is shown again.
    m_viewGraph = nullptr;
    m_view->setKernel(std::nullopt, tr("Select a node in the graph to edit its kernel's schedule."));
  }
}

void ScheduleController::startDescribe() {
  const workbench::Session& s = m_coordinator->session();
  std::shared_ptr<const Graph> graph = s.graph(s.currentIndex());
  workbench::CompileSettings settings;
  settings.schedule = s.scheduleOverrides(s.currentIndex());
  m_describing = currentKey();
  // New overrides on the same snapshot keep the kernel (and a trial's comparison) in view
  // until its new description arrives; another snapshot's kernel is not shown meanwhile.
  if (m_viewGraph != graph.get())
    m_view->setKernel(std::nullopt, tr("Lowering snapshot %1 to kernels\u2026").arg(s.currentIndex()));
  m_describeWatcher.setFuture(QtConcurrent::run([graph, settings] {
    return guardedWork<DescribeOutcome>(QStringLiteral("Describing the kernels"), [&] {
      DescribeOutcome out;
      auto kernels = workbench::describeSchedules(*graph, settings);
      if (kernels.ok())
        out.kernels = std::make_shared<const std::vector<workbench::KernelSchedule>>(std::move(kernels).value());
      else
        out.error = qs(kernels.error().message());
      return out;
    });
  }));
}

void ScheduleController::onDescribeDone() {
  DescribeOutcome out = m_describeWatcher.result();
  const DescribeKey key = *m_describing;
  m_describing.reset();
  const workbench::Session& s = m_coordinator->session();
  // Cache it under its graph only while that graph is one of the session's snapshots.
  for (size_t i = 0; i < s.snapshotCount(); ++i)
    if (s.graph(i).get() == key.first) {
      if (m_describeCache.size() >= kCacheLimit)
        m_describeCache.clear();
      m_describeCache[key] = DescribeEntry{s.graph(i), out};
      break;
    }
  if (key != currentKey()) {
    refresh(); // stale: describe what is current now
    return;
  }
  showSelected();
}

void ScheduleController::showSelected() {
  auto it = m_describeCache.find(currentKey());
  if (it == m_describeCache.end()) {
    refresh();
    return;
  }
  const DescribeOutcome& out = it->second.outcome;
  m_viewGraph = it->first.first;
  if (!out.kernels) {
    m_view->setKernel(std::nullopt, tr("This snapshot has no kernels to schedule: %1").arg(out.error));
    return;
  }
  const NodeId id = m_coordinator->selectedNode();
  for (const workbench::KernelSchedule& k : *out.kernels)
    if (id && (k.node == id || std::find(k.nodes.begin(), k.nodes.end(), id) != k.nodes.end())) {
      m_view->setKernel(k);
      return;
    }
  m_view->setKernel(std::nullopt, id ? tr("Node #%1 has no kernel in this snapshot.").arg(id)
                                     : tr("Select a node in the graph to edit its kernel's schedule."));
}

void ScheduleController::apply(const cg::ScheduleOverride& change, int runs) {
  const workbench::Session& s = m_coordinator->session();
  if (!s.hasModel())
    return;
  TrialRequest t;
  t.snapshot = s.currentIndex();
  t.graph = s.graph(t.snapshot);
  t.scheduleBefore = s.scheduleText(t.snapshot);
  t.request.settings.schedule = s.scheduleOverrides(t.snapshot);
  t.request.change = change;
  t.request.runs = runs;
  ++m_trialRequest;
  if (m_trialRunning) {
    // The newest request wins: stop the running trial and start this one when it ends.
    if (m_trialJob)
      m_trialJob->cancel();
    m_trialPending = std::move(t);
    m_view->setBusy(true, tr("Stopping the previous trial\u2026"));
    return;
  }
  m_trialPending = std::move(t);
  startTrial();
}

void ScheduleController::startTrial() {
  m_trialRunning = std::move(m_trialPending);
  m_trialPending.reset();
  m_trialRunningRequest = m_trialRequest;
  const QString what = tr("Compiling and timing %1 with '%2'\u2026")
                           .arg(qs(m_trialRunning->request.change.kernel),
                                qs(cg::printScheduleOverrides({m_trialRunning->request.change})));
  m_view->setBusy(true, what);
  const uint64_t request = m_trialRunningRequest;
  m_trialJob = jobReportingTo(this, [this, request, what](double f, const QString& stage) {
    if (m_trialRunning && m_trialRunningRequest == request)
      m_view->setStatus(
          QStringLiteral("%1 %2 (%3%)").arg(what, stage).arg(int(std::lround(f * 100))));
  });
  std::shared_ptr<const Graph> graph = m_trialRunning->graph;
  workbench::ScheduleTrialRequest req = m_trialRunning->request;
  std::shared_ptr<workbench::JobControl> job = m_trialJob;
  m_trialWatcher.setFuture(runJob(QStringLiteral("The schedule trial"), &TrialOutcome::trial, job,
                                  [graph, req](const workbench::JobControl* j) {
                                    return workbench::trySchedule(*graph, req, j);
                                  }));
}

void ScheduleController::onTrialDone() {
  TrialOutcome out = m_trialWatcher.result();
  TrialRequest t = std::move(*m_trialRunning);
  m_trialRunning.reset();
  m_trialJob.reset();
  if (m_trialPending) {
    startTrial(); // a newer Apply replaced this one
    return;
  }
  m_view->setBusy(false);
  workbench::Session& s = m_coordinator->session();
  const bool stale = !s.hasModel() || t.snapshot >= s.snapshotCount() ||
                     s.graph(t.snapshot) != t.graph || s.scheduleText(t.snapshot) != t.scheduleBefore;
  const QString kernel = qs(t.request.change.kernel);
  QString summary;
  bool ok = false;
  if (out.cancelled) {
    summary = tr("The trial of %1 was cancelled; the schedule is unchanged.").arg(kernel);
  } else if (!out.trial) {
    summary = tr("%1 cannot take that schedule; nothing changed. %2").arg(kernel, out.error);
  } else if (stale) {
    summary = tr("Dropped the trial of %1: the snapshot or its schedule changed meanwhile.").arg(kernel);
  } else {
    ok = true;
    s.setScheduleOverrides(t.snapshot, out.trial->afterOverrides);
    const workbench::ScheduleTrial& tr_ = *out.trial;
    if (!tr_.after.timing.us.empty() && tr_.after.timing.medianUs > 0) {
      const double speedup = tr_.before.timing.medianUs / tr_.after.timing.medianUs;
      summary = tr("%1: %2 \u2192 %3 (%4\u00D7 %5), median of %6 runs each.")
                    .arg(kernel, TrialComparisonModel::formatTime(tr_.before.timing.medianUs),
                         TrialComparisonModel::formatTime(tr_.after.timing.medianUs))
                    .arg(speedup >= 1 ? speedup : 1 / speedup, 0, 'f', 2)
                    .arg(speedup >= 1 ? tr("faster") : tr("slower"))
                    .arg(tr_.after.timing.us.size());
    } else {
      summary = tr("%1 compiled with the new schedule (not timed: the code is for another CPU).").arg(kernel);
    }
    m_view->setTrial(out.trial);
  }
  m_view->setStatus(summary, /*error=*/!ok && !out.cancelled);
  if (ok) {
    // The new overrides are a new key: the editor and the code view show the new code.
    refresh();
    if (m_code)
      m_code->refresh();
    Q_EMIT scheduleChanged();
  }
  Q_EMIT trialFinished(ok, summary);
}

void ScheduleController::cancel() {
  m_trialPending.reset();
  if (m_trialJob)
    m_trialJob->cancel();
  if (m_tuneJob)
    m_tuneJob->cancel();
}

void ScheduleController::tune(size_t kernel) {
  const workbench::Session& s = m_coordinator->session();
  auto described = kernels();
  if (!s.hasModel() || m_tuning || m_trialRunning || !described || kernel >= described->size())
    return;
  const std::string name = (*described)[kernel].kernel;
  m_tuning = TuneRequest{s.graph(s.currentIndex()), name};
  workbench::TuneRequest request;
  // From the kernel's default schedule: the session's override of it is what is tuned against.
  request.settings.schedule = workbench::withOverride(s.scheduleOverrides(s.currentIndex()),
                                                      cg::ScheduleOverride{name, {}});
  request.budgetSeconds = m_tuneBudgetSeconds;
  request.kernel = kernel;
  request.writeLog = false; // the form shows the result; Apply keeps it in the session
  const QString what = tr("Tuning %1 (up to %2 s)…").arg(qs(name)).arg(m_tuneBudgetSeconds);
  m_view->setBusy(true, what);
  m_tuneJob = jobReportingTo(this, [this, what](double f, const QString& stage) {
    if (m_tuning)
      m_view->setStatus(
          QStringLiteral("%1 %2 (%3%)").arg(what, stage).arg(int(std::lround(f * 100))));
  });
  std::shared_ptr<const Graph> graph = m_tuning->graph;
  std::shared_ptr<workbench::JobControl> job = m_tuneJob;
  m_tuneWatcher.setFuture(runJob(QStringLiteral("Tuning"), &TuneOutcome::report, job,
                                 [graph, request](const workbench::JobControl* j) {
                                   return workbench::tuneGraph(*graph, request, j);
                                 }));
}

void ScheduleController::onTuneDone() {
  TuneOutcome out = m_tuneWatcher.result();
  TuneRequest t = std::move(*m_tuning);
  m_tuning.reset();
  m_tuneJob.reset();
  m_view->setBusy(false);
  const workbench::Session& s = m_coordinator->session();
  const QString kernel = qs(t.kernel);
  const workbench::KernelTuning* result = nullptr;
  if (out.report)
    for (const workbench::KernelTuning& k : out.report->kernels)
      if (k.kernel == t.kernel)
        result = &k;
  QString summary, directives;
  const bool current = s.hasModel() && s.graph(s.currentIndex()) == t.graph && m_view->kernel() &&
                       m_view->kernel()->kernel == t.kernel;
  if (out.cancelled) {
    summary = tr("Tuning %1 was cancelled.").arg(kernel);
  } else if (!result) {
    summary = tr("Tuning %1 failed: %2").arg(kernel, out.error);
  } else if (result->directives.empty()) {
    summary = tr("%1: the default schedule stays (%3 µs; %2 candidates measured, none kept as "
                 "at least 3% faster)%4.")
                  .arg(kernel)
                  .arg(result->candidates)
                  .arg(result->defaultUs, 0, 'f', 1)
                  .arg(result->note.empty() ? QString() : QStringLiteral("; ") + qs(result->note));
  } else {
    directives = qs(result->directives);
    summary = tr("%1: %2 is %3× faster (%4 → %5 µs, %6 candidates, outputs equal "
                 "the interpreter's). Apply keeps it.")
                  .arg(kernel, directives)
                  .arg(result->defaultUs / std::max(result->tunedUs, 1e-9), 0, 'f', 2)
                  .arg(result->defaultUs, 0, 'f', 1)
                  .arg(result->tunedUs, 0, 'f', 1)
                  .arg(result->candidates);
    if (current) // as if typed: the fields follow the text
      m_view->form()->setOverrideText(kernel + ":" + directives);
  }
  if (!current && !out.cancelled && result)
    summary = tr("Dropped the tuning of %1: the snapshot or the selection changed meanwhile.")
                  .arg(kernel);
  m_view->setStatus(summary, /*error=*/!result && !out.cancelled);
  Q_EMIT tuneFinished(current ? directives : QString(), summary);
}

bool ScheduleController::waitForTune(int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while (m_tuning) {
    if (timer.elapsed() > timeoutMs)
      return false;
    QEventLoop loop;
    QTimer::singleShot(20, &loop, &QEventLoop::quit);
    loop.exec();
  }
  return true;
}

bool ScheduleController::waitForKernels(int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < timeoutMs) {
    if (!m_coordinator->session().hasModel())
      return false;
    // Described, or failed to describe (the editor then says why): either way done.
    if (!m_describing && m_describeCache.count(currentKey())) {
      showSelected();
      return true;
    }
    if (!m_describing && !m_describeCache.count(currentKey()))
      startDescribe();
    QEventLoop loop;
    QTimer::singleShot(20, &loop, &QEventLoop::quit);
    loop.exec();
  }
  return false;
}

bool ScheduleController::waitForTrial(int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while (m_trialRunning || m_trialPending) {
    if (timer.elapsed() > timeoutMs)
      return false;
    QEventLoop loop;
    QTimer::singleShot(20, &loop, &QEventLoop::quit);
    loop.exec();
  }
  return true;
}

} // namespace fb::gui
