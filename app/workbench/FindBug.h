// "Find the bug": the whole debugging flow of a miscompile in one call, as the GUI's action runs
// it: bisect the snapshots (pass, rewrite, or kernel), reduce the imported model under the same
// pipeline, backend and tolerance to a minimal reproducer written to disk, and measure where the
// guilty snapshot's values leave the reference's (the numeric diff the graph is coloured by).
#pragma once

#include "app/workbench/Bisect.h"
#include "app/workbench/Reduce.h"
#include "core/NumericDiff.h"

#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// How to look: the backend and tolerance (as --bisect and --reduce take them), where the
/// reproducer goes, and the reduction's budget.
struct FindBugSettings {
  BisectSettings bisect;
  /// The reproducer's path (.fbir; its inputs are written next to it). Empty: no reduction.
  std::string reproducerPath;
  int maxProbes = 400;
  /// Names the model in the reproducer's origin line.
  std::string modelName;
};

/// What the flow found.
struct FindBugReport {
  BisectReport bisect;                 ///< mismatch false: nothing to find
  std::optional<ReduceReport> reduce;  ///< absent without a mismatch or a reproducer path
  std::string reduceError;             ///< why the reduction failed, when it did
  std::string reproducerPath;          ///< written when reduce is set
  std::vector<std::string> inputFiles; ///< the reproducer's inputs
  /// Numeric diff (interpreter, by meaning) of snapshot 0 and the guilty snapshot, when the
  /// graph is wrong (a pass bug); absent for a kernel bug (the graph is right there).
  std::optional<NumericDiff> diff;
  /// Heat in [0, 1] on the guilty snapshot's nodes: each node's largest relative error on a
  /// log scale (pass bug), or 1 on the guilty kernel's nodes (codegen bug).
  std::map<NodeId, double> heat;
  /// One paragraph for a person: what is guilty, where it starts, how small the reproducer is.
  std::string summary;
};

/// Runs the flow on `snapshots` (snapshot 0 the imported model, as the Session holds them) fed
/// with `inputs`:
///   1. bisectSnapshots; without a mismatch, stops (summary says the backend agrees);
///   2. the numeric diff of snapshot 0 and the guilty snapshot, for the heat (pass bugs);
///   3. reduceFailure of snapshot 0 under the recorded pipeline steps, and the reproducer
///      written to settings.reproducerPath with the faults that are on; a reduction that fails
///      leaves reduceError set and the rest of the report intact.
/// Progress spans the stages (bisect 0-50 %, reduce 50-100 %); cancellation through `job`.
Expected<FindBugReport> findBug(const std::vector<Snapshot>& snapshots,
                                const std::vector<Tensor>& inputs, const FindBugSettings& settings,
                                const JobControl* job = nullptr);

} // namespace fb::workbench
