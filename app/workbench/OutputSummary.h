// What a run produced, per output: type, statistics and the first values, computed once
// (off the GUI thread) so a panel only shows them.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::workbench {

/// One output of a run, summarized.
struct OutputSummary {
  std::string name;             ///< the graph output's name
  std::string type;             ///< "f32[1,1000]"
  int64_t elements = 0;
  double min = 0, max = 0, mean = 0; ///< over the finite elements
  int64_t nonFinite = 0;        ///< NaN and infinite elements (left out of min/max/mean)
  std::vector<double> preview;  ///< the first elements in row-major order
};

/// The outputs of a run of `graph` (names from its outputs), each with its first
/// `previewCount` values.
std::vector<OutputSummary> summarizeOutputs(const Graph& graph, const std::vector<Tensor>& outputs,
                                            int previewCount = 8);

} // namespace fb::workbench
