// Auto-tuning: measure schedule candidates for each compiled kernel of a snapshot, keep those
// clearly faster than the default and equal in results, and file them in the tuning log that
// later compilations read (app/workbench/TuningLog.h).
#pragma once

#include "app/workbench/Compile.h"
#include "core/TensorCompare.h"

#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// What to tune and how long.
struct TuneRequest {
  /// How the model compiles; its `schedule` entries are the user's and those kernels are left
  /// alone; its `tuningLog` is the log written (and only written: the search starts from the
  /// default schedules).
  CompileSettings settings;
  /// The search's wall time (after compiling and timing the default schedules once), split
  /// over kernels by their default time.
  double budgetSeconds = 60;
  int runs = 7;                 ///< timed runs of each variant in a trial
  double minGain = 0.03;        ///< a candidate must be this much faster (median) to be kept
  uint64_t seed = 1;            ///< random inputs
  std::optional<size_t> kernel; ///< tune this kernel only (the GUI's schedule form)
  std::optional<Tolerance> tolerance; ///< for the result check; default: per dtype
  std::string modelName;              ///< recorded in the log's entries
  bool writeLog = true;               ///< false: measure and report only
};

/// One kernel's outcome.
struct KernelTuning {
  size_t index = 0;
  std::string kernel;     ///< "k3_conv_relu"
  std::string op;         ///< "Conv+Relu"
  std::string signature;  ///< kernelSignature(): the log's key
  double defaultUs = 0;   ///< median time with the default schedule
  double tunedUs = 0;     ///< median time with `directives` (= defaultUs when none kept)
  std::string directives; ///< the kept override ("mr=6,nr=32"); empty: the default
  int candidates = 0;     ///< candidates measured
  int rejected = 0;       ///< candidates that did not compile or changed the results
  bool tuned = false;     ///< searched (false: no budget left, or nothing to tune)
  std::string note;       ///< why a kernel was skipped, or what a check found
};

/// Every kernel, in the model's order, and the totals.
struct TuneReport {
  std::vector<KernelTuning> kernels;
  double defaultUs = 0, tunedUs = 0; ///< sums over kernels of the medians
  double seconds = 0; ///< the search's wall time (the budget, plus at most one trial)
  double budgetSeconds = 0;
  int candidates = 0;
  std::string cpu, isa; ///< the log's CPU key
  std::string logPath;  ///< where the log was written ("" when not written)
};

/// Tunes the kernels of `graph` on this CPU: times the default schedule of every kernel (median
/// over request.runs model runs), then, hottest kernel first and with a share of the budget
/// proportional to its default time (left-over time passes on), measures candidates
/// (TuningCandidates.h) with trySchedule: the candidate and the current schedule alternately,
/// their kernel medians compared. The best candidate at least request.minGain faster is timed
/// again with twice the runs and must stay that fast, then the model's outputs with it are
/// compared with the interpreter's at the tolerance (a mismatch discards it). Kept directives
/// and the measured times go to the log. Cancellable between trials.
Expected<TuneReport> tuneGraph(const Graph& graph, const TuneRequest& request,
                               const JobControl* job = nullptr);

} // namespace fb::workbench
