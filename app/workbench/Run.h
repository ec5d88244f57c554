// Running a snapshot on a backend: one run, a benchmark of N runs, a per-kernel profile.
#pragma once

#include "app/workbench/Compile.h"
#include "codegen/exec/Profiler.h"

#include <optional>
#include <vector>

namespace fb::workbench {

/// How to run.
struct RunSettings {
  Backend backend = Backend::Interpreter;
  CompileSettings compile;  ///< for compiled backends
  int64_t benchRuns = 0;    ///< timed runs after the first (0: none)
  int warmupRuns = 15;      ///< untimed runs before a compiled backend's benchmark (runs 3..14
                            ///< also measure each kernel on the pool and alone)
  bool profile = false;     ///< per-kernel timings of the benchmark runs (or of one run)
};

/// Timing statistics of a benchmark.
struct BenchStats {
  int runs = 0;
  double medianMs = 0, minMs = 0, maxMs = 0, meanMs = 0;
  double compileMs = 0;
  int threads = 0;
};
/// The statistics of `timesMs`, one per run.
BenchStats benchStats(std::vector<double> timesMs, double compileMs, int threads);

/// What a run produced and measured.
struct RunResult {
  std::vector<Tensor> outputs;   ///< of the first run, one per graph output
  double firstRunMs = 0;         ///< wall time of that run
  double compileMs = 0;          ///< compiled backends: the compilation's wall time
  std::optional<cg::CompileStats> compileStats;
  std::optional<BenchStats> bench;  ///< with RunSettings::benchRuns > 0
  std::optional<cg::Profile> profile; ///< with RunSettings::profile
  /// The compiled model (compiled backends), for its kernels' code and for more runs.
  std::shared_ptr<cg::CompiledModel> compiled;
};

/// Runs `graph` on `inputs` (one per graph input) on settings.backend: compiles first for a
/// compiled backend, then runs once, then benchmarks and profiles as asked. Progress and
/// cancellation (between runs) through `job`.
Expected<RunResult> runGraph(const Graph& graph, const std::vector<Tensor>& inputs,
                             const RunSettings& settings, const JobControl* job = nullptr);

/// The same on an already compiled model (the GUI recompiles only when something changed).
Expected<RunResult> runCompiled(std::shared_ptr<cg::CompiledModel> model,
                                const std::vector<Tensor>& inputs, const RunSettings& settings,
                                const JobControl* job = nullptr);

} // namespace fb::workbench
