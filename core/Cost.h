// Per-node cost (FLOPs, bytes moved) from the op table, and whole-model statistics.
#pragma once

#include "core/Graph.h"

#include <map>
#include <string>

namespace fb {

/// Bytes of a value's type, with symbolic and unknown dims counted as 1.
double typeBytes(const TensorType& type);

/// FLOPs and bytes moved by one node: the op's cost function for FLOPs (elementwise ops default to
/// one per output element), and bytes = every input read once + every output written once. A
/// fused group costs its body's FLOPs but only its own boundary bytes: that is what fusion saves.
OpCost nodeCost(const Node& node);

/// Whole-model statistics for --stats and the snapshot timeline.
struct ModelStats {
  size_t nodes = 0;                ///< top-level nodes (a fused group counts once)
  std::map<std::string, size_t> ops; ///< op name → count, counting the ops inside groups
  int64_t params = 0;              ///< elements of all constants
  double flops = 0;                ///< total FLOPs (symbolic dims as 1)
  double bytesMoved = 0;           ///< total bytes read and written by nodes
  int64_t weightBytes = 0;         ///< bytes of all constants
  int64_t peakActivationBytes = 0; ///< largest total of live non-constant tensors over the order
};

/// Computes the statistics of a graph with inferred types.
ModelStats computeModelStats(const Graph& graph);

/// Peak bytes of live activations when nodes run in the graph's order: inputs live from the start,
/// a node's outputs become live when it runs, a value dies after its last use (graph outputs
/// never die).
int64_t peakActivationBytes(const Graph& graph);

} // namespace fb
