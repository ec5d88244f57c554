// Text and JSON reports printed by fusebox-opt.
#pragma once

#include "core/Cost.h"
#include "core/Graph.h"

#include <string>
#include <vector>

namespace fb::cli {

/// --stats as text.
std::string statsText(const std::string& modelName, const ModelStats& stats);
/// --stats as one JSON object (keys of shared/CLI.md plus bytes_moved).
std::string statsJson(const ModelStats& stats);

/// One computed output, for --run reports.
struct RunOutput {
  std::string name;
  Tensor tensor;
  std::string file; ///< where it was written, or empty
};

/// --run as text: each output's type and summary statistics and a preview of values.
std::string runText(const std::string& backend, const std::vector<RunOutput>& outputs,
                    double elapsedMs);
/// --run as JSON: {backend, elapsed_ms, outputs:[{name, dtype, shape, min, max, mean, file}]}.
std::string runJson(const std::string& backend, const std::vector<RunOutput>& outputs,
                    double elapsedMs);

/// "1.23 M", "4.5 G": a count with an SI suffix.
std::string humanCount(double v);
/// "2.50 MiB": a byte count with a binary suffix.
std::string humanBytes(double v);

} // namespace fb::cli
