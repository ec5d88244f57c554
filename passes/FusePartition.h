// Operator fusion's analysis: which top-level nodes may fuse, and the TVM-style partition of a
// graph into fused groups (dataflow graph, post-dominator tree, union-find in phases).
#pragma once

#include "core/Graph.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace fb {

/// How a node's shape inference depends on the contents (not just the types) of its operands.
struct OperandRoles {
  /// False when the node must stay outside every group: its output types depend on a tensor
  /// computed at run time (a Reshape whose target comes from Shape), which a fused body cannot
  /// see, or inference does not reproduce the stored types.
  bool fusible = true;
  /// shapeParameter[i]: inference reads operand i's data (Reshape's shape, Unsqueeze's axes,
  /// Resize's scales). Such an operand is a constant, and the fused body keeps its own copy of it
  /// so that the body's shapes can be inferred on their own.
  std::vector<bool> shapeParameter;
};

/// The data shape inference can read from `v`: a constant's data or a Constant node's tensor.
const Tensor* knownOperandData(const Value* v);

/// Classifies the operands of `node` by re-running its shape inference with each data-carrying
/// operand (a constant, a Constant node's result, a propagated shape value) made opaque.
OperandRoles classifyOperands(const Node& node);

/// Options of the partitioner.
struct FusionOptions {
  /// The most ops one group may hold (TVM's kMaxFusedOps is 256; a smaller limit keeps kernels
  /// and the graph view readable).
  size_t maxGroupSize = 16;
  /// Checks the partitioner's bounded cycle search against the exhaustive one it replaced (for
  /// tests and debugging: O(nodes + edges) per union). Every try runs both and the exhaustive
  /// answer decides, so the plan is the reference plan; the maintained order of the groups is
  /// checked after every union. Failures are counted in FusionPlan.
  bool verifyConvexity = false;
  /// Asked before each union is made, once it is legal (the pass's rewrite counter: one union
  /// is one rewrite). Returns the union's 1-based index, or 0 to refuse it. Empty: always made.
  std::function<int64_t()> mayUnite;
};

/// One group of nodes that will become one fused node.
struct FusionGroup {
  std::vector<Node*> members; ///< in execution order; at least two
  /// The member the group is named after: its ComplexOutFusable or Reduction op when it has one,
  /// else its first member.
  Node* anchor = nullptr;
  /// The index mayUnite gave the group's last union (0 without mayUnite): the rewrite its
  /// materialization is attributed to.
  int64_t lastUnion = 0;
};

/// The partition of a graph's top-level nodes.
struct FusionPlan {
  std::vector<FusionGroup> groups; ///< groups of two or more nodes, in execution order
  size_t refusedForSize = 0;       ///< fusions refused because the group would exceed the limit
  size_t refusedForCycle = 0;      ///< fusions refused because a path would leave and re-enter
  size_t refusedForAnchors = 0;    ///< fusions refused because two anchors would meet
  /// Edges the bounded cycle searches examined, all unions together: their cost, for tests.
  size_t cycleSearchSteps = 0;
  /// With verifyConvexity: tries on which the bounded and the exhaustive cycle search disagreed.
  size_t convexityMismatches = 0;
  /// With verifyConvexity: unions after which the order of the groups was not topological.
  size_t orderViolations = 0;
};

/// Partitions the top-level nodes of `graph` (in a valid execution order, with inferred types):
///   1. builds the dataflow graph of nodes; each edge carries the consumer's fusion category,
///      lowered to Elementwise when a Broadcast consumer does not actually broadcast that operand;
///   2. computes the post-dominator tree: a node's immediate post-dominator is the least common
///      ancestor of its consumers; a node whose result is a graph output hangs off a virtual sink;
///   3. phase 0: a ComplexOutFusable group absorbs the path to its post-dominator when that
///      relation is elementwise and every node on the way is Elementwise or Broadcast;
///   4. phase 1: Elementwise/Broadcast groups join their post-dominator when it is reached
///      through injective or reduction edges (chains feeding a reduction, or a side branch into
///      an epilogue);
///   5. phase 2: injective groups join their post-dominator when every path is injective, and
///      phase 1's rule runs again for what became possible;
///   6. every union is refused when the group would exceed maxGroupSize, hold two anchors, or
///      have a path that leaves it and comes back (a cycle once it is one node); that search
///      stays within the union's window of a maintained topological order of the groups
///      (ContractedDag), so a long chain partitions in linear time.
FusionPlan planFusion(const Graph& graph, const FusionOptions& options);

} // namespace fb
