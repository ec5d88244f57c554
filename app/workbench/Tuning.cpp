// The auto-tuner: per-kernel coordinate descent over schedule candidates, measured by
// schedule trials, checked against the interpreter, filed in the tuning log.
#include "app/workbench/Tuning.h"
#include "app/workbench/Compare.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/KernelSchedule.h"
#include "app/workbench/KernelSignature.h"
#include "app/workbench/ScheduleTrial.h"
#include "app/workbench/TuningCandidates.h"
#include "app/workbench/TuningLog.h"
#include "codegen/gemm/GemmPlan.h"
#include "core/Interpreter.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

namespace fb::workbench {

namespace {

using Clock = std::chrono::steady_clock;

/// "mr=6,nr=32": the directives as an override's text after "kN:".
std::string directivesText(const TuningCandidate& directives) {
  std::string text = cg::printScheduleOverrides({cg::ScheduleOverride{"k", directives}});
  return text.substr(text.find(':') + 1);
}

bool namedExplicitly(const std::vector<cg::ScheduleOverride>& schedule, const KernelSchedule& k) {
  return std::any_of(schedule.begin(), schedule.end(), [&](const cg::ScheduleOverride& o) {
    return o.kernel == "*" || o.kernel == k.kernel || o.kernel == "k" + std::to_string(k.index);
  });
}

class Tuner {
public:
  Tuner(const Graph& graph, const TuneRequest& request, const JobControl* job)
      : m_graph(graph), m_request(request), m_job(job), m_start(Clock::now()) {
    m_base = request.settings;
    m_base.tuningLog = "off"; // the search starts from the default schedules
    m_base.adaptiveThreads = false; // every sample of a candidate on the pool
  }

  Expected<TuneReport> run() {
    FB_ASSIGN_OR_RETURN(cg::TargetInfo target, targetFor(m_base));
    if (m_base.forGpu || !target.runsOnHost())
      return makeError("--tune measures on this CPU: compile for the host (no --cpu/--target)");
    m_report.cpu = target.cpu;
    m_report.isa = targetIsa(target);
    m_report.budgetSeconds = m_request.budgetSeconds;
    const std::string logPath = tuningLogPath(m_request.settings.tuningLog);
    TuningLog log;
    if (m_request.writeLog && !logPath.empty()) {
      // Read first: a malformed log stops the run before the measuring, not after it.
      FB_ASSIGN_OR_RETURN(log, readTuningLog(logPath));
    }
    FB_TRY(prepare());
    // The budget is the search's: the default compilation and timing before it are one
    // model's worth of work, however small the budget.
    m_start = Clock::now();
    for (size_t k : hottestFirst())
      FB_TRY(tuneKernel(m_report.kernels[k]));
    for (const KernelTuning& k : m_report.kernels) {
      m_report.defaultUs += k.defaultUs;
      m_report.tunedUs += k.tunedUs;
      m_report.candidates += k.candidates;
    }
    m_report.seconds = elapsed();
    if (m_request.writeLog && !logPath.empty()) {
      for (const KernelTuning& k : m_report.kernels) {
        if (!k.tuned)
          continue;
        log.record({k.signature, m_report.cpu, m_report.isa, k.op, k.kernel, m_request.modelName,
                    k.directives, k.defaultUs, k.tunedUs});
      }
      FB_TRY(writeTuningLog(logPath, log));
      m_report.logPath = logPath;
    }
    reportProgress(m_job, 1.0, "tuned");
    return m_report;
  }

private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  double remaining() const { return m_request.budgetSeconds - elapsed(); }

  /// Inputs, the interpreter's outputs, each kernel's schedule, signature and default time.
  Status prepare() {
    reportProgress(m_job, 0.0, "time the default schedules");
    FB_ASSIGN_OR_RETURN(m_inputs, gatherInputs(m_graph, {}, m_request.seed, m_base.dims));
    FB_ASSIGN_OR_RETURN(m_schedules, describeSchedules(m_graph, m_base, m_job));
    FB_ASSIGN_OR_RETURN(std::vector<std::string> signatures,
                        kernelSignatures(m_graph, m_base, m_inputs));
    FB_ASSIGN_OR_RETURN(std::shared_ptr<cg::CompiledModel> model,
                        compileGraph(m_graph, m_base, m_inputs, m_job));
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> defaultOutputs, model->run(m_inputs));
    FB_ASSIGN_OR_RETURN(InterpretResult reference, interpret(m_graph, m_inputs));
    m_reference = std::move(reference.outputs);
    FB_ASSIGN_OR_RETURN(OutputComparisons cmp,
                        compareOutputs(m_graph, m_reference, defaultOutputs, m_request.tolerance));
    if (!cmp.ok) {
      // The default is what tuning must not change: compare with it where it already differs
      // from the interpreter (at this tolerance).
      m_reference = std::move(defaultOutputs);
      m_referenceNote = "compared with the default schedule's outputs (they differ from the "
                        "interpreter's at this tolerance)";
    }
    FB_ASSIGN_OR_RETURN(std::vector<TrialTiming> timings,
                        timeKernels(*model, m_inputs, m_request.runs, /*warmupRuns=*/1, m_job));
    const size_t n = std::min({m_schedules.size(), signatures.size(), timings.size()});
    for (size_t i = 0; i < n; ++i) {
      KernelTuning k;
      k.index = i;
      k.kernel = m_schedules[i].kernel;
      k.op = m_schedules[i].opSummary;
      k.signature = signatures[i];
      k.defaultUs = k.tunedUs = timings[i].medianUs;
      m_report.kernels.push_back(std::move(k));
    }
    return Status::success();
  }

  /// Kernel indices, the largest default time first (the request's kernel alone when given).
  std::vector<size_t> hottestFirst() const {
    std::vector<size_t> order;
    for (const KernelTuning& k : m_report.kernels)
      if (!m_request.kernel || k.index == *m_request.kernel)
        order.push_back(k.index);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return m_report.kernels[a].defaultUs > m_report.kernels[b].defaultUs;
    });
    return order;
  }

  /// The kernel's share of the budget left: its default time over that of the kernels not yet
  /// tuned, so time a kernel leaves unused passes on to the rest.
  double shareOfBudget(const KernelTuning& kernel) {
    double pending = 0;
    for (const KernelTuning& k : m_report.kernels)
      if (!k.tuned && k.note.empty() && (!m_request.kernel || k.index == *m_request.kernel))
        pending += k.defaultUs;
    return pending > 0 ? remaining() * kernel.defaultUs / pending : remaining();
  }

  /// One trial of `directives` against the current schedule: after / before median, or
  /// nullopt when the kernel cannot take them (or the trial could not time them).
  Expected<std::optional<ScheduleTrial>> trial(const KernelTuning& k,
                                               const TuningCandidate& directives, int runs) {
    ScheduleTrialRequest request;
    request.settings = m_base;
    request.change = cg::ScheduleOverride{"k" + std::to_string(k.index), directives};
    request.runs = runs;
    request.warmupRuns = 1;
    request.seed = m_request.seed;
    const Clock::time_point start = Clock::now();
    auto result = trySchedule(m_graph, request, m_job);
    m_trialSeconds =
        0.7 * m_trialSeconds + 0.3 * std::chrono::duration<double>(Clock::now() - start).count();
    FB_TRY(checkCancelled(m_job, "tuning"));
    if (!result.ok() || result->before.timing.medianUs <= 0 || result->after.timing.us.empty())
      return std::optional<ScheduleTrial>();
    return std::optional<ScheduleTrial>(std::move(result).value());
  }

  /// True when the model compiled with `directives` on kernel `k` computes the reference.
  Expected<bool> resultsMatch(const KernelTuning& k, const TuningCandidate& directives) {
    CompileSettings settings = m_base;
    settings.schedule = withOverride(
        settings.schedule, cg::ScheduleOverride{"k" + std::to_string(k.index), directives});
    auto model = compileGraph(m_graph, settings, m_inputs, m_job);
    if (!model.ok())
      return false;
    auto outputs = (*model)->run(m_inputs);
    if (!outputs.ok())
      return false;
    FB_ASSIGN_OR_RETURN(OutputComparisons cmp,
                        compareOutputs(m_graph, m_reference, *outputs, m_request.tolerance));
    return cmp.ok;
  }

  Status tuneKernel(KernelTuning& k) {
    const KernelSchedule& schedule = m_schedules[k.index];
    if (schedule.interpreted) {
      k.note = "interpreted";
      return Status::success();
    }
    if (namedExplicitly(m_request.settings.schedule, schedule)) {
      k.note = "--schedule names it";
      return Status::success();
    }
    const auto groups = tuningCandidates(schedule, cg::hostVectorRegisters(), threadsInUse());
    if (groups.empty()) {
      k.note = schedule.depthwise ? "depthwise generator: no directive applies" : "no candidates";
      return Status::success();
    }
    const double share = shareOfBudget(k);
    const Clock::time_point kernelStart = Clock::now();
    auto kernelLeft = [&] {
      return share - std::chrono::duration<double>(Clock::now() - kernelStart).count();
    };
    if (remaining() < m_trialSeconds || kernelLeft() < 0.5 * m_trialSeconds) {
      k.note = "no budget left";
      return Status::success();
    }
    k.tuned = true;
    reportProgress(m_job, std::min(0.99, elapsed() / std::max(1e-3, m_request.budgetSeconds)),
                   "tune " + k.kernel);
    TuningCandidate best;
    double bestRatio = 1;
    bool out = false;
    for (const auto& group : groups) {
      const TuningCandidate start = bestRatio <= 1 - m_request.minGain ? best : TuningCandidate{};
      for (const TuningCandidate& change : group) {
        // Keep time to confirm a winner: a longer trial and a check of the outputs.
        const double reserve = bestRatio <= 1 - m_request.minGain ? 2 * m_trialSeconds : 0.0;
        if (kernelLeft() < m_trialSeconds + reserve || remaining() < m_trialSeconds + reserve) {
          out = true;
          break;
        }
        TuningCandidate candidate = withDirectives(start, change);
        FB_ASSIGN_OR_RETURN(std::optional<ScheduleTrial> t, trial(k, candidate, m_request.runs));
        ++k.candidates;
        if (!t) {
          ++k.rejected;
          continue;
        }
        double ratio = t->after.timing.medianUs / t->before.timing.medianUs;
        if (ratio < bestRatio) {
          bestRatio = ratio;
          best = candidate;
        }
      }
      if (out)
        break;
    }
    if (best.empty() || bestRatio > 1 - m_request.minGain)
      return Status::success();
    // Noise picks a winner among many candidates: time the best again, twice as long.
    if (remaining() < 1.5 * m_trialSeconds) {
      k.note = "no budget left to confirm " + directivesText(best);
      return Status::success();
    }
    FB_ASSIGN_OR_RETURN(std::optional<ScheduleTrial> confirm, trial(k, best, 2 * m_request.runs));
    if (!confirm)
      return Status::success();
    const double before = confirm->before.timing.medianUs, after = confirm->after.timing.medianUs;
    if (after > (1 - m_request.minGain) * before) {
      k.note = directivesText(best) + " was not faster when timed again";
      return Status::success();
    }
    FB_ASSIGN_OR_RETURN(bool same, resultsMatch(k, best));
    if (!same) {
      ++k.rejected;
      k.note = directivesText(best) + " changed the results: discarded";
      return Status::success();
    }
    k.directives = directivesText(best);
    k.defaultUs = before;
    k.tunedUs = after;
    if (!m_referenceNote.empty())
      k.note = m_referenceNote;
    m_base.schedule =
        withOverride(m_base.schedule, cg::ScheduleOverride{"k" + std::to_string(k.index), best});
    return Status::success();
  }

  int threadsInUse() const {
    if (m_base.threads > 0)
      return m_base.threads;
    return int(std::max(1u, std::thread::hardware_concurrency()));
  }

  const Graph& m_graph;
  const TuneRequest& m_request;
  const JobControl* m_job;
  Clock::time_point m_start; ///< when the search began
  CompileSettings m_base; ///< the user's settings plus the overrides kept so far, no log
  std::vector<Tensor> m_inputs;
  std::vector<Tensor> m_reference; ///< the outputs every kept candidate must reproduce
  std::string m_referenceNote;
  std::vector<KernelSchedule> m_schedules;
  double m_trialSeconds = 0.3; ///< running estimate of one trial's wall time
  TuneReport m_report;
};

} // namespace

Expected<TuneReport> tuneGraph(const Graph& graph, const TuneRequest& request,
                               const JobControl* job) {
  if (request.budgetSeconds <= 0)
    return makeError("the tuning budget must be positive, got ", request.budgetSeconds, " s");
  return Tuner(graph, request, job).run();
}

} // namespace fb::workbench
