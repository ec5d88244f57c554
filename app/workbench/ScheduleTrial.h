// Trying a schedule on one kernel: the model compiled with and without the kernel's new
// override, the kernel's code from both, and its time in both measured alternately on the same
// inputs (median of repeated runs), so a student sees what a tile does to the code and the speed.
#pragma once

#include "app/workbench/Compile.h"

#include <string>
#include <vector>

namespace fb::workbench {

/// The times of one kernel over repeated model runs.
struct TrialTiming {
  std::vector<double> us; ///< one per timed run, in microseconds
  double medianUs = 0, minUs = 0, maxUs = 0;
};
/// Statistics of `us` (one sample per run).
TrialTiming trialTiming(std::vector<double> us);

/// One side of a trial: the override text in effect, the kernel's code and its time.
struct ScheduleVariant {
  std::string schedule;  ///< the whole model's override text (what --schedule says)
  cg::KernelCode code;   ///< the kernel's loops, LLVM IR, assembly, generator and blocking
  TrialTiming timing;
  bool runnable = true;  ///< false when the code is for a CPU this host cannot run (no timing)
};

/// What to try.
struct ScheduleTrialRequest {
  CompileSettings settings;      ///< "before": with the session's current overrides
  cg::ScheduleOverride change;   ///< the kernel's new directives; none: back to the default
  int runs = 15;                 ///< timed runs of each variant
  int warmupRuns = 2;            ///< untimed runs of each before timing
  uint64_t seed = 1;             ///< random inputs
};

/// Before and after.
struct ScheduleTrial {
  size_t kernel = 0;             ///< the kernel's index in the model
  ScheduleVariant before, after;
  /// after.schedule parsed: the overrides to keep when the trial is accepted.
  std::vector<cg::ScheduleOverride> afterOverrides;
};

/// Every kernel's time in `model` over `runs` runs on `inputs`, after `warmupRuns` untimed
/// runs (one TrialTiming per kernel, in the model's order). Cancellable between runs.
Expected<std::vector<TrialTiming>> timeKernels(cg::CompiledModel& model,
                                               const std::vector<Tensor>& inputs, int runs,
                                               int warmupRuns, const JobControl* job = nullptr);

/// Compiles `graph` with request.settings and with the kernel's override replaced by
/// request.change (the kernel cache makes the second compile cost about one kernel), reads the
/// kernel's code from both, then runs both models alternately on the same seeded inputs and
/// keeps the kernel's time from each run's profile. An override the kernel cannot take is an
/// error naming the directive; nothing is changed by a failing trial. Cancellable between
/// compilations and runs.
Expected<ScheduleTrial> trySchedule(const Graph& graph, const ScheduleTrialRequest& request,
                                    const JobControl* job = nullptr);

} // namespace fb::workbench
