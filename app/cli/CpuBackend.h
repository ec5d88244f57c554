// fusebox-opt's cpu backend: compile for this CPU, benchmark, profile, and --emit code views.
#pragma once

#include "app/cli/CliOptions.h"
#include "codegen/exec/CompiledModel.h"
#include "core/Graph.h"
#include "core/Json.h"

#include <memory>
#include <ostream>
#include <vector>

namespace fb::cli {

/// The compile options the CLI flags ask for: --threads, --schedule, --llvm-opt, --no-gemm,
/// with input sizes taken from `inputs` (or --dim when there are none).
cg::CompileOptions cpuCompileOptions(const CliOptions& o, const std::vector<Tensor>& inputs);

/// Compiles `g` for this CPU for the sizes of `inputs`.
Expected<std::unique_ptr<cg::CompiledModel>> compileForCpu(const Graph& g, const CliOptions& o,
                                                           const std::vector<Tensor>& inputs);

/// --emit loops | llvm | llvm-raw | obj for the resulting graph (static shapes from --dim).
/// Text goes to `out`, or to -o FILE; obj needs -o FILE.o and also writes FILE.h.
Status emitCode(const Graph& g, const CliOptions& o, std::ostream& out);

/// Timing statistics of --bench.
struct BenchStats {
  int runs = 0;
  double medianMs = 0, minMs = 0, maxMs = 0, meanMs = 0;
  double compileMs = 0;
  int threads = 0;
};
BenchStats benchStats(std::vector<double> timesMs, double compileMs, int threads);
std::string benchText(const std::string& backend, const BenchStats& s);
/// JSON fields of the open object (the contract's keys at top level): backend (unless another
/// report already wrote it), runs, median_ms, min_ms, max_ms, mean_ms, compile_ms, threads.
void writeBenchJson(JsonWriter& w, const std::string& backend, const BenchStats& s,
                    bool writeBackend);

/// One line about a compilation for stderr: kernels, GEMM kernels, cache hits, times, notes.
std::string compileSummary(const cg::CompileStats& s);

} // namespace fb::cli
