// Bisection of a miscompile: the first pass application after which --compare fails, the first
// rewrite inside it (the rewrite debug counter), and, when the graph is right but the backend's
// code is not, the first compiled kernel that disagrees (mixed execution).
#pragma once

#include "app/workbench/Compare.h"
#include "app/workbench/Run.h"
#include "passes/PassManager.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// How to bisect: the backend and tolerance of the comparison, as --compare takes them.
struct BisectSettings {
  /// The backend the snapshots run on (compile settings included); bench and profile are
  /// ignored. The reference is always snapshot 0 on the interpreter.
  RunSettings run;
  /// The tolerance of every comparison; per output dtype default when absent (as --compare).
  std::optional<Tolerance> tolerance;
  /// Bisect inside the guilty pass application over its rewrites.
  bool rewrites = true;
  /// When the interpreter finds the guilty graph right, find the compiled kernel that is not.
  bool kernels = true;
};

/// A node the guilty rewrite touched.
struct TouchedNode {
  NodeId id = 0;
  std::string name; ///< "name" or "Op#id" when the node has no name
};

/// The kernel whose compiled code disagrees with the interpreter, with what a user needs to
/// read it (the code views take the index).
struct KernelBlame {
  size_t index = 0;
  std::string name;          ///< "k3_conv_relu"
  std::string opSummary;     ///< "Conv+Relu"
  std::string generator;     ///< "gemm", "loops", ...
  std::string schedule;      ///< the override applied, empty for the default
  std::vector<NodeId> nodes; ///< the graph nodes it computes
  std::string nodeNames;     ///< their names, comma-separated
};

/// What a bisection found.
struct BisectReport {
  /// True when the last snapshot fails the comparison; everything below is set only then.
  bool mismatch = false;
  size_t snapshots = 0;  ///< snapshots compared against (pass applications + 1)
  /// The first snapshot that fails: 0 when the imported model itself fails on the backend
  /// (the backend's code is wrong before any pass), else the 1-based pass application.
  size_t index = 0;
  std::string pass;      ///< its pass name (empty for index 0)
  std::string step;      ///< its pipeline step as written, options included
  int64_t rewrites = 0;  ///< rewrites that application made
  /// The first rewrite (1-based) after which the comparison fails; absent when the pass
  /// counts no rewrites, or the failure does not come from one.
  std::optional<int64_t> rewrite;
  /// The nodes the guilty rewrite touched: from the provenance events it logged, else from
  /// the structural diff of the graphs before and after it.
  std::vector<TouchedNode> nodes;
  std::string nodesFrom; ///< "provenance" or "structural diff"
  /// The state that fails first: the graph after the guilty rewrite (or snapshot).
  std::shared_ptr<const Graph> badGraph;
  OutputComparisons comparison; ///< its outputs against the reference
  std::string runError;         ///< why it failed to run, when it did (then no comparison)
  double maxAbs = 0;            ///< largest max_abs over its outputs
  /// Numeric diff (interpreter, by meaning) of snapshot 0 and the bad state: where the graph
  /// starts to compute something else. Absent when every matched value agrees.
  std::optional<NodeId> firstDivergent;
  std::string firstDivergentName;
  /// True when the bad state on the interpreter agrees with the reference: the graph is right
  /// and the backend's code is wrong.
  bool interpreterAgrees = false;
  std::optional<KernelBlame> kernel; ///< the first kernel whose code disagrees
  int probes = 0;        ///< runs compared, all stages together
  double seconds = 0;    ///< wall time of the bisection
};

/// Bisects `snapshots` (snapshot 0 the imported model, snapshot k after pass application k,
/// as PassManager::run and the Session make them) on `inputs`:
///   1. runs snapshot 0 on the interpreter: the reference outputs;
///   2. compares the last snapshot on the backend with them; when it passes, stops;
///   3. binary search for the first failing snapshot (snapshot 0 included: it fails when the
///      backend miscompiles the imported model);
///   4. re-applies that pass to the snapshot before it under rewrite limits (the pass's step,
///      parsed back from its record), binary search for the first failing limit r: rewrite r
///      is guilty, the nodes it touched come from its provenance events;
///   5. numeric diff of snapshot 0 and the bad state (the first divergent node);
///   6. on a compiled backend, when the bad state on the interpreter agrees with the
///      reference, compiles it once and binary-searches the number m of kernels run as code
///      (the rest by the interpreter) for the first failing m: kernel m-1 is guilty.
/// Progress and cancellation through `job`. Faults enabled in core/Faults.h stay as they are.
/// A state that fails to run counts as failing, unless the backend does not support the
/// graph (then there is nothing to bisect: an Unsupported error). Fails when the reference
/// cannot run.
Expected<BisectReport> bisectSnapshots(const std::vector<Snapshot>& snapshots,
                                       const std::vector<Tensor>& inputs,
                                       const BisectSettings& settings,
                                       const JobControl* job = nullptr);

} // namespace fb::workbench
