// Background profiling through the workbench.
#include "app/gui/ProfileController.h"
#include "app/gui/GuiJob.h"
#include "app/gui/WorkerGuard.h"
#include "app/workbench/GpuPeaks.h"

#include "app/workbench/Inputs.h"
#include "app/workbench/Compile.h"
#include "app/workbench/ProfileRuns.h"

#include <QtConcurrent/QtConcurrent>

#include <atomic>
#include <chrono>
#include <cmath>

namespace fb::gui {

namespace {

/// Which part of a job is running, so one progress bar spans them all.
struct Stages {
  std::atomic<int> current{0};
  int count = 1;
};

/// A snapshot compiled for the CPU with the inputs it will be profiled on.
struct Compiled {
  std::shared_ptr<const Graph> graph;
  int index = -1;
  workbench::ProfileTarget target;
  double compileMs = 0;
};

Expected<Compiled> compileOne(std::shared_ptr<const Graph> graph, int index,
                              const ProfileRequest& request, const workbench::JobControl* job) {
  Compiled c;
  c.graph = std::move(graph);
  c.index = index;
  FB_ASSIGN_OR_RETURN(c.target.inputs, workbench::gatherInputs(*c.graph, {}, 1, {}));
  workbench::CompileSettings settings;
  settings.threads = request.threads;
  settings.forGpu = request.backend == workbench::Backend::Gpu;
  const auto t0 = std::chrono::steady_clock::now();
  FB_ASSIGN_OR_RETURN(c.target.model, workbench::compileGraph(*c.graph, settings, c.target.inputs, job));
  c.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

/// The roofs of what the profile ran on: the CPU's (cached or measured) or the GPU's.
/// `remeasure`: the CPU's are measured again instead of read from the cache.
Expected<workbench::MachinePeaks> roofsFor(const ProfileRequest& request, int threads,
                                           const workbench::JobControl* job,
                                           bool remeasure = false) {
  if (request.backend == workbench::Backend::Gpu)
    return workbench::gpuPeaks();
  return workbench::machinePeaks(threads, request.peaksCachePath, job, remeasure);
}

ProfiledSnapshot profiled(const Compiled& c, cg::Profile profile) {
  ProfiledSnapshot p;
  p.index = c.index;
  p.graph = c.graph;
  p.summary = workbench::summarizeProfile(profile);
  p.medianRunMs = workbench::medianRunMs(profile);
  p.profile = std::make_shared<const cg::Profile>(std::move(profile));
  p.compileMs = c.compileMs;
  return p;
}

} // namespace

ProfileController::ProfileController(QObject* parent) : QObject(parent) {
  connect(&m_watcher, &QFutureWatcher<ProfileOutcome>::finished, this, &ProfileController::onDone);
}

ProfileController::~ProfileController() {
  cancel();
  m_watcher.waitForFinished();
}

void ProfileController::cancel() {
  if (m_job)
    m_job->cancel();
}

template <typename Work> void ProfileController::start(const QString& what, int stageCount, Work work) {
  cancel();
  m_watcher.waitForFinished(); // cancelled work stops at its next check
  m_running = ++m_request;
  auto stages = std::make_shared<Stages>();
  stages->count = stageCount;
  const uint64_t id = m_running;
  m_job = jobReportingTo(this, [this, id, stages](double f, const QString& text) {
    const double overall = (stages->current.load() + std::clamp(f, 0.0, 1.0)) / stages->count;
    if (m_running == id)
      Q_EMIT progress(int(std::lround(overall * 100)), text);
  });
  Q_EMIT started(what);
  std::shared_ptr<workbench::JobControl> job = m_job;
  m_watcher.setFuture(QtConcurrent::run([work = std::move(work), job, stages] {
    return guardedWork<ProfileOutcome>(QStringLiteral("Profiling"),
                                       [&] { return work(*job, *stages); });
  }));
}

void ProfileController::profile(std::shared_ptr<const Graph> graph, int index,
                                std::shared_ptr<const Graph> before, int beforeIndex,
                                const ProfileRequest& request) {
  assert(graph && "profiling needs a snapshot");
  const int stages = 2 + (before ? 1 : 0) + (request.peaks ? 1 : 0); // compiles, runs, peaks
  start(tr("Profiling snapshot %1\u2026").arg(index), stages,
        [graph, index, before, beforeIndex, request](const workbench::JobControl& job,
                                                     Stages& stage) {
          ProfileOutcome out;
          auto fail = [&](const Error& e) {
            out.cancelled = job.cancelled();
            out.error = QString::fromStdString(e.message());
            return out;
          };
          // Compile both, then profile them in alternation: load that drifts while they run
          // slows both alike, so "what fusion saved" is not what the machine did meanwhile.
          auto main = compileOne(graph, index, request, &job);
          if (!main.ok())
            return fail(main.error());
          std::vector<workbench::ProfileTarget> targets{main->target};
          std::optional<Compiled> other;
          if (before) {
            // A snapshot the CPU backend cannot compile (an imported model before
            // fold-constants, say) costs the comparison, not the profile asked for.
            stage.current = 1;
            auto b = compileOne(before, beforeIndex, request, &job);
            if (b.ok()) {
              other = std::move(b).value();
              targets.push_back(other->target);
            } else if (job.cancelled()) {
              return fail(b.error());
            } else {
              out.compareError = QString::fromStdString(
                  b.error().withContext("snapshot " + std::to_string(beforeIndex)).message());
            }
          }
          stage.current = before ? 2 : 1;
          auto profiles = workbench::profileAlternating(targets, std::max(1, request.runs),
                                                        /*warmupRuns=*/2, &job);
          if (!profiles.ok())
            return fail(profiles.error());
          out.main = profiled(*main, std::move((*profiles)[0]));
          if (other) {
            out.before = profiled(*other, std::move((*profiles)[1]));
            out.comparison = workbench::compareProfiles(out.before->summary, *out.before->graph,
                                                        out.main->summary, *out.main->graph);
          }
          if (request.peaks) {
            stage.current = stage.count - 1;
            auto peaks = roofsFor(request, out.main->summary.threads, &job);
            if (peaks.ok())
              out.peaks = std::move(peaks).value();
            else if (job.cancelled())
              return fail(peaks.error());
            else
              out.peaksError = QString::fromStdString(peaks.error().message());
          }
          return out;
        });
}

void ProfileController::remeasurePeaks(const ProfileRequest& request) {
  ProfileOutcome last = m_last;
  const int threads = last.main ? last.main->summary.threads : std::max(1, request.threads);
  start(tr("Measuring this machine's peaks\u2026"), 1,
        [last, threads, request](const workbench::JobControl& job, Stages&) {
          ProfileOutcome out = last;
          auto peaks = roofsFor(request, threads, &job, /*remeasure=*/true);
          if (peaks.ok()) {
            out.peaks = std::move(peaks).value();
            out.peaksError.clear();
          } else {
            out.peaksError = QString::fromStdString(peaks.error().message());
          }
          return out;
        });
}

void ProfileController::onDone() {
  ProfileOutcome out = m_watcher.result();
  if (m_running != m_request)
    return; // a newer request replaced this one
  m_last = out;
  Q_EMIT finished(out);
}

} // namespace fb::gui
