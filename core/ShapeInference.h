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

/// True when `refined` says at least what `before` says about a value: the same dtype and rank,
/// every static size kept, and unknown or symbolic dims possibly made a size or a symbol.
bool isAtLeastAsPrecise(const TensorType& refined, const TensorType& before);

/// Re-infers every type after a rewrite, so what a pass made static (a folded shape, a constant
/// scale) reaches the types downstream. Types only ever become more precise: an output whose
/// inferred type would lose a size or change its dtype, rank or a static size is an error naming
/// the node and both types (the rewrite left the graph inconsistent), and the graph's types may
/// then be partly updated (the pass manager works on a copy).
Status refineShapes(Graph& graph);

/// Binds named symbolic dims of the graph inputs to sizes (`N` = 1) and re-infers every type, so
/// passes that need static shapes (plan-memory, codegen) can run on a dynamic-batch model. Symbols
/// not named stay symbolic. On error the graph's types may be partly updated: run it on a copy.
Status specializeDims(Graph& graph, const std::map<std::string, int64_t>& sizes);

} // namespace fb
