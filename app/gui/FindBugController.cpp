// Background find-the-bug searches.
#include "app/gui/FindBugController.h"
#include "app/gui/GuiJob.h"
#include "app/gui/WorkerGuard.h"

#include "app/workbench/Inputs.h"

#include <QtConcurrent/QtConcurrent>

#include <cmath>

namespace fb::gui {

FindBugController::FindBugController(QObject* parent) : QObject(parent) {
  connect(&m_watcher, &QFutureWatcher<FindBugOutcome>::finished, this, &FindBugController::onDone);
}

FindBugController::~FindBugController() {
  cancel();
  m_watcher.waitForFinished();
}

void FindBugController::cancel() {
  if (m_job)
    m_job->cancel();
}

void FindBugController::start(std::vector<Snapshot> snapshots,
                              const workbench::FindBugSettings& settings) {
  cancel();
  m_watcher.waitForFinished(); // cancelled work stops at its next check
  m_running = ++m_request;
  const uint64_t request = m_running;
  m_job = jobReportingTo(this, [this, request](double f, const QString& what) {
    if (m_running == request)
      Q_EMIT progress(int(std::lround(f * 100)), what);
  });
  const QString backend = QString::fromLatin1(workbench::backendName(settings.bisect.run.backend));
  Q_EMIT started(tr("Looking for the bug on %1\u2026").arg(backend));
  std::shared_ptr<workbench::JobControl> job = m_job;
  m_watcher.setFuture(QtConcurrent::run([snapshots = std::move(snapshots), settings, job, backend] {
    return guardedWork<FindBugOutcome>(QStringLiteral("Find the bug"), [&] {
      FindBugOutcome out;
      out.snapshots = snapshots;
      out.backend = backend;
      auto inputs = workbench::gatherInputs(*snapshots.front().graph, {}, 1,
                                            settings.bisect.run.compile.dims);
      if (!inputs.ok()) {
        out.error = QString::fromStdString(inputs.error().message());
        return out;
      }
      auto report = workbench::findBug(snapshots, *inputs, settings, job.get());
      if (!report.ok()) {
        out.cancelled = job->cancelled();
        out.error = QString::fromStdString(report.error().message());
        return out;
      }
      out.report = std::move(report).value();
      return out;
    });
  }));
}

void FindBugController::onDone() {
  FindBugOutcome out = m_watcher.result();
  if (m_running != m_request)
    return; // a newer request replaced this one
  m_last = std::move(out);
  Q_EMIT finished(m_last.report && m_last.report->bisect.mismatch);
}

} // namespace fb::gui
