// Differential fuzzing: random valid graphs through every -O level and backend, each result
// compared with the interpreter on the unoptimized graph (--fuzz, the fuzz tests).
#pragma once

#include "app/workbench/Compile.h"
#include "app/workbench/Job.h"
#include "core/GraphFuzzer.h"
#include "core/TensorCompare.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// What to fuzz and how.
struct FuzzSettings {
  int64_t graphs = 100;    ///< graphs to draw; graph i is drawn from seed + i
  uint64_t seed = 0;
  /// Backends to check. Empty: the interpreter, the cpu backend, and the gpu backend where
  /// backendAvailable says it can run.
  std::vector<Backend> backends;
  std::vector<std::string> levels = {"O0", "O1", "O2", "O3"}; ///< named pipelines
  /// The comparison's tolerance; none: each output dtype's default (as --compare).
  std::optional<Tolerance> tolerance;
  /// Where reproducers of findings go (created on the first); empty: none written.
  std::string outputDir;
  GraphFuzzOptions generator;
  CompileSettings compile; ///< for compiled backends (the kernel cache is turned off)
};

/// Why a run is a finding.
enum class FindingKind {
  Mismatch, ///< outputs outside tolerance of the interpreter's on the unoptimized graph
  Error,    ///< a pass, compile or run failed with an error that is not an Unsupported refusal
};

/// One finding: which graph, level and backend, and what went wrong.
struct FuzzFinding {
  uint64_t seed = 0;       ///< the graph's seed (`--fuzz 1 --seed S` draws it again)
  std::string level;       ///< "O2"
  std::string backend;     ///< "cpu"
  FindingKind kind = FindingKind::Mismatch;
  std::string message;     ///< the error, or the worst output's comparison
  std::vector<std::string> files; ///< the reproducer: .fbir of the unoptimized graph, inputs .npy
  /// One line: "seed 17 O2/cpu mismatch: output 'v12': max abs 0.31 ... [files]".
  std::string str() const;
};

/// Runs and outcomes of one level on one backend.
struct FuzzConfigStats {
  int64_t runs = 0;      ///< graphs compared
  int64_t refused = 0;   ///< clean Unsupported refusals (not findings)
  int64_t findings = 0;
};

/// What a fuzzing run found.
struct FuzzReport {
  int64_t graphs = 0;
  int64_t discards = 0;                       ///< draws the verifier rejected (generator bugs)
  std::vector<std::string> discardReasons;    ///< the first few
  std::map<std::string, int64_t> opCounts;    ///< op -> nodes generated
  std::map<std::string, FuzzConfigStats> configs; ///< "O2/cpu" -> stats
  std::map<std::string, int64_t> refusals;    ///< refusal message -> count
  std::vector<FuzzFinding> findings;
  double seconds = 0;
  int64_t count(FindingKind kind) const;
};

/// Draws `settings.graphs` random graphs and checks each on every level and backend. Findings
/// are reported to `onFinding` as they happen (the CLI prints them) and collected in the report.
/// Fails only on a bad setting (an unknown level, an unavailable backend), an output folder
/// that cannot be written, or cancellation.
Expected<FuzzReport> fuzzDifferential(const FuzzSettings& settings,
                                      const std::function<void(const FuzzFinding&)>& onFinding = {},
                                      const JobControl* job = nullptr);

} // namespace fb::workbench
