// Background runs of a snapshot through the workbench.
#include "app/gui/RunController.h"
#include "app/gui/GuiJob.h"
#include "app/gui/WorkerGuard.h"

#include "app/workbench/Inputs.h"

#include <QtConcurrent/QtConcurrent>

#include <cmath>

namespace fb::gui {

RunController::RunController(QObject* parent) : QObject(parent) {
  connect(&m_watcher, &QFutureWatcher<RunOutcome>::finished, this, &RunController::onDone);
}

RunController::~RunController() {
  cancel();
  m_watcher.waitForFinished();
}

void RunController::cancel() {
  if (m_job)
    m_job->cancel();
}

void RunController::run(std::shared_ptr<const Graph> graph, std::shared_ptr<const Graph> reference,
                        int index, const workbench::RunSettings& settings) {
  run(std::move(graph), std::move(reference), index, settings, RunInputs{});
}

void RunController::run(std::shared_ptr<const Graph> graph, std::shared_ptr<const Graph> reference,
                        int index, const workbench::RunSettings& settings,
                        const RunInputs& runInputs) {
  assert(graph && reference && "a run needs the snapshot and the imported model");
  cancel();
  m_watcher.waitForFinished(); // cancelled work stops at its next check
  m_running = ++m_request;
  m_index = index;
  m_backend = QString::fromLatin1(workbench::backendName(settings.backend));
  // Progress arrives on the worker thread; it is queued to this object's thread.
  const uint64_t request = m_running;
  m_job = jobReportingTo(this, [this, request](double f, const QString& what) {
    if (m_running == request)
      Q_EMIT progress(int(std::lround(f * 100)), what);
  });
  Q_EMIT started(tr("Running snapshot %1 on %2\u2026").arg(index).arg(m_backend));
  std::shared_ptr<workbench::JobControl> job = m_job;
  m_watcher.setFuture(QtConcurrent::run([graph, reference, settings, runInputs, job] {
    return guardedWork<RunOutcome>(QStringLiteral("The run"), [&] {
      RunOutcome out;
      out.tolerance = runInputs.tolerance;
      auto inputs = workbench::gatherInputs(*graph, runInputs.files, runInputs.seed,
                                            settings.compile.dims);
      if (!inputs.ok()) {
        out.error = QString::fromStdString(inputs.error().message());
        return out;
      }
      auto run = workbench::runGraph(*graph, *inputs, settings, job.get());
      if (!run.ok()) {
        out.cancelled = job->cancelled();
        out.error = QString::fromStdString(run.error().message());
        return out;
      }
      out.outputs = workbench::summarizeOutputs(*graph, run->outputs);
      auto cmp = workbench::compareWithReference(*reference, *graph, *inputs, run->outputs,
                                                 runInputs.tolerance, job.get());
      out.run = std::move(run).value();
      if (cmp.ok())
        out.comparison = std::move(cmp).value();
      else {
        out.cancelled = job->cancelled();
        out.error = QString::fromStdString(cmp.error().message());
      }
      return out;
    });
  }));
}

void RunController::onDone() {
  RunOutcome out = m_watcher.result();
  if (m_running != m_request)
    return; // a newer request replaced this one
  m_last = out;
  const bool ok = out.run && out.comparison && out.comparison->ok;
  Q_EMIT finished(ok, describe(out, m_index, m_backend));
}

QString RunController::describe(const RunOutcome& o, int index, const QString& backend) {
  if (o.cancelled)
    return tr("Run of snapshot %1 on %2 cancelled.").arg(index).arg(backend);
  if (!o.run)
    return tr("Run of snapshot %1 on %2 failed: %3").arg(index).arg(backend, o.error);
  QString text = tr("Snapshot %1 on %2: ").arg(index).arg(backend);
  if (o.comparison) {
    double maxAbs = 0;
    QStringList bad;
    for (const workbench::OutputComparison& c : o.comparison->outputs) {
      maxAbs = std::max(maxAbs, c.result.maxAbs);
      if (!c.result.ok)
        bad << QString::fromStdString(c.name);
    }
    text += bad.isEmpty()
                ? tr("%n output(s) agree with the imported model on the interpreter", "",
                     int(o.comparison->outputs.size()))
                : tr("outputs %1 DISAGREE with the imported model").arg(bad.join(", "));
    text += tr(" (max abs %1)").arg(maxAbs, 0, 'g', 3);
  } else {
    text += tr("ran, but the comparison failed: %1").arg(o.error);
  }
  text += tr("; run %1 ms").arg(o.run->firstRunMs, 0, 'f', 2);
  if (o.run->compileStats)
    text += tr("; compiled %1 kernels in %2 ms")
                .arg(o.run->compileStats->kernels)
                .arg(o.run->compileMs, 0, 'f', 0);
  return text + ".";
}

} // namespace fb::gui
