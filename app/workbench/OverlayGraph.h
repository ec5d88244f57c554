// The overlay of two snapshots: snapshot B plus ghost copies of the nodes snapshot A had and B
// lost, wired to the values they read, so one picture shows what a pass removed and what it added.
#pragma once

#include "core/Graph.h"
#include "core/GraphDiff.h"

#include <map>
#include <memory>

namespace fb {

/// A union graph for display; not a valid program (ghost outputs feed only other ghosts).
struct OverlayGraph {
  std::unique_ptr<Graph> graph;
  /// Each ghost node's id in `graph` -> the removed node's id in snapshot A. Ghost ids are fresh
  /// (A's ids may live on inside B's fused bodies).
  std::map<NodeId, NodeId> ghostToRemoved;
};

/// Builds the overlay of `a` (before) and `b` (after) from their structural diff: a copy of `b`
/// (ids kept) followed by a copy of each top-level node in diff.removed. A ghost reads the value
/// of the same name in the overlay (B's value, or another ghost's output); an operand that
/// exists in neither (a folded-away constant) is copied from `a` (constant data is shared).
OverlayGraph buildOverlayGraph(const Graph& a, const Graph& b, const GraphDiff& diff);

} // namespace fb
