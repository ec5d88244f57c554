// The verifier: structural and type invariants of a graph.
#pragma once

#include "core/Graph.h"

namespace fb {

/// Options for verification.
struct VerifyOptions {
  /// Re-run shape inference on a copy and require the stored types to match it.
  bool checkTypes = true;
};

/// Checks that the graph is well formed: SSA (each value defined once, before its uses, in this
/// graph), acyclic, use lists consistent, arities within the op table's limits, unique node ids,
/// bodies (fused groups, If/Loop/Scan) closed and consistent with their nodes, constants consistent with their types, and
/// (optionally) stored types equal to what shape inference computes. The error names the node.
Status verify(const Graph& graph, const VerifyOptions& options = {});

} // namespace fb
