// Profiling compiled models side by side: runs in alternation, so that a machine whose load
// drifts (a build starting, another user) slows every model alike and a comparison stays fair.
#pragma once

#include "app/workbench/Job.h"
#include "codegen/exec/CompiledModel.h"

#include <memory>
#include <vector>

namespace fb::workbench {

/// One model to profile, compiled, with the inputs it runs on.
struct ProfileTarget {
  std::shared_ptr<cg::CompiledModel> model;
  std::vector<Tensor> inputs;
};

/// Runs every target `warmupRuns` times untimed, then `runs` times with per-kernel timing, one
/// run of each target in turn (A B A B ...); returns one profile per target, in order.
/// Cancellable between runs through `job`.
Expected<std::vector<cg::Profile>> profileAlternating(const std::vector<ProfileTarget>& targets,
                                                     int runs, int warmupRuns,
                                                     const JobControl* job = nullptr);

/// The median wall time of a profile's model runs, in milliseconds (0 without runs).
double medianRunMs(const cg::Profile& profile);

} // namespace fb::workbench
