// Static memory planning: liveness of intermediate tensors and their offsets in one arena.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fb {

/// Where one intermediate tensor lives in the arena and during which steps.
struct BufferAssignment {
  std::string value;   ///< the value's name
  int64_t offset = 0;  ///< byte offset in the arena
  int64_t size = 0;    ///< bytes, rounded up to the alignment
  int first = 0;       ///< the step (top-level node index) that produces it
  int last = 0;        ///< the last step that reads it (first when nothing reads it)
  /// The value whose buffer this one overwrites in place (its last reader produced this one),
  /// or empty. Such a pair shares bytes at exactly one step, which is what in-place means.
  std::string reuses;
  /// The Concat result whose bytes this value occupies (MemoryPlanOptions::concatInPlace): its
  /// producer writes it straight into its slice, at `offset`, of exactly `size` bytes.
  std::string sliceOf;
};

/// Options of the planner.
struct MemoryPlanOptions {
  int64_t alignment = 64; ///< every buffer's size is rounded up to a multiple of this
  bool inPlace = true;    ///< let elementwise ops overwrite an input that dies at them
  /// Leave values of non-static type out of the plan instead of failing (the CPU executor keeps
  /// the results of interpreted control-flow kernels as tensors of their own).
  bool skipDynamic = false;
  /// Let a Concat take its inputs in place where they are slices of its result (every
  /// dimension before the axis is 1): each input is planned inside the result's buffer, at a
  /// multiple of `alignment`, so its producer writes it there and the Concat copies nothing.
  /// Every input must be an intermediate appearing once, not a slice of another Concat and
  /// not a Concat result with slices of its own; otherwise the Concat keeps its copies.
  bool concatInPlace = false;
  /// Beyond elementwise ops: whether the step at top-level node index `step` may write its
  /// result over input `input` (of the result's type, dying there). The CPU executor says yes
  /// for a kernel whose fused epilogue reads that input element by element, each element just
  /// before it stores the result over it (a residual Add after a convolution). Asked only when
  /// everything else allows the pair, so a yes is the pair planned. Empty: never.
  std::function<bool(int step, const Value& input)> overwritesInput;
};

/// A static memory plan: every intermediate with its offset, and the totals.
struct MemoryPlan {
  std::vector<BufferAssignment> buffers; ///< one per intermediate, in execution order
  int64_t naiveBytes = 0;      ///< the sum of all buffer sizes: one allocation each, no reuse
  int64_t arenaBytes = 0;      ///< the arena size of the plan
  int64_t lowerBoundBytes = 0; ///< the largest sum of live buffer sizes at any step
  int inPlaceReuses = 0;       ///< how many values overwrite an input in place
  /// The results of the Concats whose inputs all lie in their slices (concatInPlace): such a
  /// Concat has nothing left to copy.
  std::vector<std::string> concatsInPlace;
  std::string strategy;        ///< the ordering that won: "largest-first", ...
  /// Set only by snapshotMemoryPlan when planning failed (the plan is then empty).
  std::string error;
  /// lowerBoundBytes / arenaBytes: 1 is optimal; 1 for an empty arena.
  double efficiency() const {
    return arenaBytes == 0 ? 1.0 : double(lowerBoundBytes) / double(arenaBytes);
  }
};

/// Plans the intermediates (node outputs that are not graph outputs) of a graph's top-level
/// nodes in their execution order into one arena. Graph inputs, outputs and constants are not
/// in the arena; a fused group is one step. Fails when an intermediate's type is not static.
Expected<MemoryPlan> planMemory(const Graph& graph, const MemoryPlanOptions& options = {});

/// True when [a.first, a.last] and [b.first, b.last] overlap and their byte ranges intersect,
/// except an in-place pair (one reuses the other's buffer at the step where it dies) and a
/// Concat's result with a slice of it.
bool buffersConflict(const BufferAssignment& a, const BufferAssignment& b);

} // namespace fb
