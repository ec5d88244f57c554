// Helpers shared by rewriting passes: replacing values while keeping output names, reading
// constant operands.
#pragma once

#include "core/Graph.h"

#include <optional>

namespace fb {

/// Redirects every use of `from` to `to`. When `from` was a graph output, the output keeps its
/// name (users feed and read models by name): `to` takes over the name if it is a node output
/// that is not already an output.
void replaceValue(Graph& graph, Value* from, Value* to);

/// True when replaceValue(graph, from, to) keeps every graph-output name: `from` is not an
/// output, or `to` is a node output that is not an output yet (so it can take over the name).
/// Rewrites check this first and leave the node alone otherwise, so that a model's interface
/// (the names users feed and read) never changes.
bool canReplaceKeepingName(const Graph& graph, const Value* from, const Value* to);

/// True when `v` is a constant whose every element equals `x`.
bool isConstantSplat(const Value* v, double x);

/// The constant data of `v`, or nullptr.
const Tensor* constantOf(const Value* v);

/// True when both types are known to be identical (dtype and every dim, symbols included).
bool sameType(const TensorType& a, const TensorType& b);

} // namespace fb
