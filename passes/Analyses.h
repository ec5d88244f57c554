// Graph analyses as library functions: cost estimates and wavefront (parallel) levels.
#pragma once

#include "core/Cost.h"
#include "core/Format.h"
#include "core/Graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fb {

/// The estimated cost of one top-level node (a fused group counts as one kernel).
struct NodeEstimate {
  NodeId id = 0;
  double flops = 0;     ///< floating-point operations (multiply and add count as two)
  double bytes = 0;     ///< bytes read and written, each operand and result once
  double intensity = 0; ///< flops / bytes, the roofline's x axis; 0 for a node that moves nothing
};

/// The estimated cost of a whole graph: the graph's statistics (core's ModelStats, the same
/// numbers --stats and the timeline show) broken down by node. Symbolic and unknown dims
/// count as 1.
struct GraphEstimate {
  ModelStats totals;               ///< FLOPs and bytes summed over nodes, weights, peak memory
  std::vector<NodeEstimate> nodes; ///< one per top-level node, in execution order
  double intensity = 0;            ///< FLOPs / bytes over the whole graph (0 when bytes is 0)
  bool hasSymbolicDims = false;    ///< true when some value's size was a guess (dims as 1)
};

/// Estimates FLOPs, bytes moved, arithmetic intensity, weights and peak activation memory of a
/// graph whose types are inferred. Does not change the graph.
GraphEstimate estimateGraph(const Graph& graph);

/// The `k` most expensive nodes of an estimate by FLOPs, most expensive first (ties by
/// execution order).
std::vector<NodeEstimate> topNodesByFlops(const GraphEstimate& estimate, size_t k);

/// Wavefront levels of a graph: nodes on one level depend only on nodes of lower levels, so a
/// runtime with enough workers can run each level's nodes concurrently.
struct ParallelLevels {
  /// Level of each top-level node: 1 + the largest level of its producers, where graph inputs
  /// and constants are level 0.
  std::map<NodeId, int> level;
  /// The number of node levels: the critical path length counted in nodes.
  int numLevels = 0;
  /// The level with the most nodes (the lowest such level on a tie); 0 for an empty graph.
  int widest = 0;
  /// How many nodes the widest level holds.
  size_t widestCount = 0;
  /// widths[l] is the number of nodes on level l; widths[0] is 0 because level 0 holds only
  /// inputs and constants.
  std::vector<size_t> widths;
};

/// Computes the wavefront level of every top-level node of a graph in a valid execution order.
ParallelLevels computeParallelLevels(const Graph& graph);


} // namespace fb
