// The pass manager: runs a pipeline with instrumentation and keeps a snapshot after every pass.
#pragma once

#include "passes/AnalysisCache.h"
#include "passes/PassRegistry.h"

#include <functional>
#include <memory>
#include <optional>
#include <set>

namespace fb {

/// What one pass application did.
struct PassRecord {
  std::string pass;               ///< pass name
  std::string step;               ///< the pipeline step as written (with options)
  bool changed = false;
  double milliseconds = 0;
  int iterations = 1;             ///< how many times run() was called (> 1: fixed-point passes)
  bool analysis = false;          ///< the pass only annotates (Pass::isAnalysis)
  std::map<std::string, double> statistics;
  std::string summary;            ///< one line: "fold-batchnorm: folded 20 ...; -20 nodes"
  std::vector<ProvenanceEvent> events;
  int64_t nodesBefore = 0, nodesAfter = 0;
  /// Rewrites the pass made (PassContext::mayRewrite), all fixed-point iterations together.
  int64_t rewrites = 0;
  /// Set when the application ran under a rewrite limit; `rewriteLimitHit` when the limit
  /// refused a rewrite (the pass stopped early).
  std::optional<int64_t> rewriteLimit;
  bool rewriteLimitHit = false;
  /// Largest |before - after| over graph outputs when the numeric check ran.
  std::optional<double> numericMaxAbs;
};

/// The graph after a pass (or the imported graph, for snapshot 0). Graphs are immutable once
/// stored, and share constant data with each other.
struct Snapshot {
  std::shared_ptr<const Graph> graph;
  std::optional<PassRecord> record; ///< absent for snapshot 0
  /// Analyses of `graph`, computed on demand (see AnalysisCache.h).
  std::shared_ptr<AnalysisCache> analyses = std::make_shared<AnalysisCache>();
};

/// Instrumentation and limits.
struct PassManagerOptions {
  bool verifyEach = true;                   ///< run the verifier after every pass
  std::optional<int64_t> passLimit;         ///< stop after this many pass applications
  /// The last pass application that runs (the passLimit-th, or the pipeline's last) stops
  /// after this many rewrites (--rewrite-limit: bisection by hand, inside a pass).
  std::optional<int64_t> rewriteLimit;
  std::set<std::string> disabled;           ///< pass names to skip
  bool numericCheck = false;                ///< interpreter before vs after each pass
  uint64_t numericSeed = 0;                 ///< seed of the numeric check's inputs
  /// On failure, write the failing pass's input IR and the pipeline here (a parseable .fbir).
  std::string reproducerDir;
  int maxFixedPointIterations = 16;
  /// Called after each pass application with the new snapshot (print-after-all, progress).
  std::function<void(const Snapshot&)> afterPass;
};

/// The outcome of a pipeline: snapshots 0..k, and the error that stopped it, if any.
struct PipelineResult {
  std::vector<Snapshot> snapshots;
  std::optional<Error> error;
  std::string reproducerPath; ///< written when a pass failed and reproducerDir was set
  const Graph& finalGraph() const { return *snapshots.back().graph; }
};

/// Runs pipelines. A pass runs on a copy of the current graph; when it fails (or the verifier
/// rejects its result) the copy is dropped, so the last snapshot is always a valid graph.
class PassManager {
public:
  explicit PassManager(PassManagerOptions options = {}) : m_options(std::move(options)) {}
  /// Runs `steps` on `input` (which becomes snapshot 0).
  PipelineResult run(std::unique_ptr<Graph> input, const std::vector<PipelineStep>& steps) const;
  /// Applies one step to `current`, producing the next snapshot or an error. With a
  /// `rewriteLimit` the pass stops after that many rewrites (PassContext::mayRewrite).
  Expected<Snapshot> applyStep(const Graph& current, const PipelineStep& step,
                               std::optional<int64_t> rewriteLimit = std::nullopt) const;
  /// Applies a pass object that need not be registered (tests, plugins) with `step`'s options,
  /// under the same instrumentation as applyStep: copy, run (to a fixed point when the pass asks),
  /// verify, record. `current` is never modified.
  Expected<Snapshot> applyPass(const Graph& current, Pass& pass, const PipelineStep& step,
                               std::optional<int64_t> rewriteLimit = std::nullopt) const;

private:
  PassManagerOptions m_options;
};

/// "fold-batchnorm: folded 20 BatchNormalization into Conv; -20 nodes" from a record.
std::string describeRecord(const PassRecord& record);

} // namespace fb
