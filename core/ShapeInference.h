// Shape inference over a graph, driven by the op table's per-op inference functions.
#pragma once

#include "core/Graph.h"

namespace fb {

/// Infers the output types (and shape values) of one node from its inputs. On error the node's
/// outputs are left as they were.
Status inferNodeShapes(Node& node);

/// Infers every node in execution order, recursing into fused-group bodies. Stops at the first
/// error, which names the node.
Status inferShapes(Graph& graph);

} // namespace fb
