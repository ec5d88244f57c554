// Inlining the branch an If takes when its condition is a compile-time constant.
#pragma once

#include "core/Graph.h"

#include <vector>

namespace fb {

/// When `ifNode`'s condition is a constant, moves the nodes and constants of the branch it takes
/// into `graph` in its place: branch inputs become the If's captured operands, the If's results
/// are redirected to the branch's results (graph outputs keep their names), and the If is erased.
/// Inlined nodes keep their ids and also record the If in their provenance. Returns the inlined
/// nodes (empty when the condition is not a constant, and then nothing changed). `graph` is
/// re-sorted topologically.
std::vector<Node*> inlineConstantIf(Graph& graph, Node* ifNode);

} // namespace fb
