// Text and JSON reports printed by fusebox-opt.
#pragma once

#include "app/workbench/Run.h"
#include "core/Cost.h"
#include "core/Graph.h"
#include "core/Json.h"

#include <string>
#include <vector>

namespace fb::cli {

/// --stats as text.
std::string statsText(const std::string& modelName, const ModelStats& stats);
/// --stats as JSON fields (keys of the CLI contract plus bytes_moved) of the open object.
void writeStatsJson(JsonWriter& w, const ModelStats& stats);

/// One computed output, for --run reports.
struct RunOutput {
  std::string name;
  Tensor tensor;
  std::string file; ///< where it was written, or empty
};

/// --run as text: each output's type and summary statistics and a preview of values.
std::string runText(const std::string& backend, const std::vector<RunOutput>& outputs,
                    double elapsedMs);
/// --run as JSON fields: backend, elapsed_ms, outputs:[{name, dtype, shape, min, max, mean, file}].
void writeRunJson(JsonWriter& w, const std::string& backend, const std::vector<RunOutput>& outputs,
                  double elapsedMs);

/// --bench as text: one line with the median, min, max and mean of the runs.
std::string benchText(const std::string& backend, const workbench::BenchStats& s);
/// --bench as JSON fields of the open object (the contract's keys at top level): backend
/// (unless another report already wrote it), runs, median_ms, min_ms, max_ms, mean_ms,
/// compile_ms, threads.
void writeBenchJson(JsonWriter& w, const std::string& backend, const workbench::BenchStats& s,
                    bool writeBackend);
/// --profile as JSON fields: profile{file, kernels[{kernel, op, generator, ms, gflops_per_s,
/// gb_per_s}]}.
void writeProfileJson(JsonWriter& w, const std::string& file, const cg::Profile& profile);

/// "1.23 M", "4.5 G": a count with an SI suffix.
std::string humanCount(double v);
/// "2.50 MiB": a byte count with a binary suffix.
std::string humanBytes(double v);

} // namespace fb::cli
