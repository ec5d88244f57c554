// The schedule space a tuner searches for one kernel, as groups of override directives: the
// register tile, cache blocks and parallel split of a GEMM-generator kernel; parallelism,
// vector width, unrolling, tiling and loop order of a loop-nest kernel.
#pragma once

#include "app/workbench/KernelSchedule.h"

#include <vector>

namespace fb::workbench {

/// One point to measure: directives added to (replacing same-named ones in) the best found so
/// far, "mr=6,nr=32" as directives.
using TuningCandidate = std::vector<cg::ScheduleDirective>;

/// Candidates grouped by the dimension they change, most promising group first. A tuner tries
/// a group's candidates on top of the best schedule found so far (coordinate descent), so the
/// best register tile is kept while cache blocks are tried. `vectorRegisters` bounds the GEMM
/// register tile (16 with AVX2, 32 with AVX-512); `threads` > 1 allows parallel candidates.
/// A candidate the kernel cannot take is an error at compilation, which the tuner skips.
std::vector<std::vector<TuningCandidate>> tuningCandidates(const KernelSchedule& kernel,
                                                           int vectorRegisters, int threads);

/// `base` with each directive of `change` replacing the one of the same name (or added).
TuningCandidate withDirectives(TuningCandidate base, const TuningCandidate& change);

} // namespace fb::workbench
