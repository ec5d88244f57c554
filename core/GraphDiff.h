// Structural diff of two snapshots: nodes matched by stable id, then by provenance.
#pragma once

#include "core/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace fb {

/// One matched node that differs, and how.
struct NodeChange {
  NodeId id;
  std::vector<std::string> details; ///< "attribute pads: [1, 1] -> [0, 0]", "operand 1: ..."
};

/// The difference between two graphs (usually two snapshots of one pipeline).
struct GraphDiff {
  std::vector<NodeId> added;   ///< in b only
  std::vector<NodeId> removed; ///< in a only
  std::vector<NodeChange> changed;
  std::vector<NodeId> unchanged;
  /// For an added node: the nodes of `a` it was made from (via provenance).
  std::map<NodeId, std::vector<NodeId>> addedFrom;
  /// For a removed node: the nodes of `b` that were made from it, added ones and kept ones that
  /// absorbed it (their provenance names it).
  std::map<NodeId, std::vector<NodeId>> removedInto;
  bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};

/// Diffs the top-level nodes of two graphs:
///   1. nodes with the same id are matched; their op, name, attributes, operands (by producer id
///      or value name; constants also by contents), output types, provenance and, for fused
///      groups, bodies (diffed the same way) are compared;
///   2. nodes only in b are added, nodes only in a removed;
///   3. provenance links them: an added node made from nodes of a (named by its provenance or by
///      the ids of its body's nodes) lists them, so a fused group points back to the ops it
///      replaced; every removed node lists the nodes of b made from it.
GraphDiff diffGraphs(const Graph& a, const Graph& b);

/// Ids of every node whose appearance changed from a to b (added + changed): what the GUI
/// highlights after a pass.
std::vector<NodeId> changedNodeIds(const GraphDiff& diff);

} // namespace fb
