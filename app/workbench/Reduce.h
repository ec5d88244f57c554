// Reduction of a miscompile to a minimal reproducer: delta debugging over the imported graph's
// nodes (in the manner of Polygraphy's `debug reduce` and llvm-reduce) until no single node can
// go and the pipeline's result on the backend still disagrees with the interpreter.
#pragma once

#include "app/workbench/Compare.h"
#include "app/workbench/Run.h"
#include "passes/PassRegistry.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// The check a reduction preserves, the one --compare and --bisect make: the graph through the
/// pipeline, run on the backend, against the graph itself on the interpreter.
struct FailureCheck {
  std::vector<PipelineStep> pipeline;
  /// The backend and its compile settings (schedule overrides included); bench and profile are
  /// ignored.
  RunSettings run;
  /// Per output dtype default when absent (as --compare).
  std::optional<Tolerance> tolerance;
};

/// One run of the check on one graph.
struct CheckOutcome {
  /// The outputs were compared and at least one is outside the tolerance.
  bool mismatch = false;
  /// Why nothing could be compared (a pass failed, the backend refused or failed to compile,
  /// the interpreter failed); empty when the comparison ran.
  std::string error;
  OutputComparisons comparison;
};

/// Runs `check` on `graph` fed with `inputs`: the pipeline on a copy (verified after every
/// pass), its result on the backend, the outputs compared with `graph` on the interpreter.
/// Every failure to get as far as a comparison is reported in CheckOutcome::error; the only
/// error returned is cancellation through `job`.
Expected<CheckOutcome> runFailureCheck(const Graph& graph, const std::vector<Tensor>& inputs,
                                       const FailureCheck& check,
                                       const JobControl* job = nullptr);

/// How to reduce.
struct ReduceSettings {
  FailureCheck check;
  /// At most this many checks (the first one, on the whole model, included); the smallest
  /// failing graph found by then is the result.
  int maxProbes = 400;
};

/// What a reduction found.
struct ReduceReport {
  /// The smallest failing graph found and its inputs (one per graph input, in order): the
  /// model's own inputs where it still reads them, the recorded values of cut ones.
  std::shared_ptr<const Graph> reduced;
  std::vector<Tensor> inputs;
  size_t nodesBefore = 0;  ///< top-level nodes of the model
  size_t nodesAfter = 0;   ///< top-level nodes of the reduced graph
  size_t cutValues = 0;    ///< values of dropped nodes the reduced graph reads (inputs or constants)
  int probes = 0;          ///< checks run, the first included
  int candidates = 0;      ///< selections rejected before any check (no output, no verify, symbolic)
  bool probeLimitHit = false; ///< stopped at ReduceSettings::maxProbes: maybe not minimal
  CheckOutcome outcome;    ///< the reduced graph's failing check
  CheckOutcome original;   ///< the model's failing check
  double seconds = 0;
};

/// Reduces `graph` (top-level nodes in execution order) fed with `inputs`, on which `check`
/// must find a mismatch:
///   0. refuses a graph with symbolic input dims (a SymbolicShape error: bind them first);
///   1. checks the whole graph: a check that passes is refused ("nothing to reduce: the check
///      passes"), one that cannot compare is an error saying why;
///   2. runs the graph on the interpreter once, keeping every value (the recorded tensors);
///   3. bisection: keeps the later, else the earlier contiguous half of the current nodes
///      while that still fails, down to one node or until neither half fails;
///   4. linear passes from the last node to the first: drops each node alone while the rest
///      still fails, repeated until a pass drops nothing.
/// Candidates are cut out with extractSubGraph (cut values become inputs fed with recorded
/// tensors); one that does not verify or has symbolic shapes is skipped unchecked, and one
/// whose check errors (an unsupported op, a compile error) does not reproduce: only a
/// mismatch does. Progress and cancellation through `job`; faults enabled in core/Faults.h
/// stay as they are.
Expected<ReduceReport> reduceFailure(const Graph& graph, const std::vector<Tensor>& inputs,
                                     const ReduceSettings& settings,
                                     const JobControl* job = nullptr);

} // namespace fb::workbench
