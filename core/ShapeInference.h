// Shape inference over a graph, driven by the op table's per-op inference functions.
#pragma once

#include "core/Graph.h"

#include <map>
#include <string>

namespace fb {

/// Infers the output types (and shape values) of one node from its inputs. On error the node's
/// outputs are left as they were.
Status inferNodeShapes(Node& node);

/// Infers every node in execution order, recursing into fused-group bodies. Stops at the first
/// error, which names the node.
Status inferShapes(Graph& graph);

/// Binds named symbolic dims of the graph inputs to sizes (`N` = 1) and re-infers every type, so
/// passes that need static shapes (plan-memory, codegen) can run on a dynamic-batch model. Symbols
/// not named stay symbolic. On error the graph's types may be partly updated: run it on a copy.
Status specializeDims(Graph& graph, const std::map<std::string, int64_t>& sizes);

} // namespace fb
