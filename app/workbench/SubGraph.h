// Cutting a sub-graph out of a model for reduction: a chosen set of top-level nodes keeps its
// operators; every value it reads from a dropped node becomes a graph input fed with the tensor
// that value had in a recorded interpreter run, so the sub-graph computes what it computed inside
// the model.
#pragma once

#include "core/Graph.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace fb::workbench {

/// A stand-alone graph and one input tensor per graph input, in graph order.
struct SubGraph {
  std::unique_ptr<Graph> graph;
  std::vector<Tensor> inputs;
};

/// The sub-graph of `graph` made of the top-level nodes whose position in graph.nodes() is
/// marked in `keep` (one flag per node), built as follows:
///   1. a value a kept node reads from a dropped node becomes a graph input of the same name
///      and type, fed with `recorded[name]` (an interpreter run of `graph` that kept every
///      intermediate); a small integer one (at most 64 elements: a shape, axes, indices)
///      becomes a constant instead, so shapes computed from it stay static;
///   2. the original inputs that kept nodes still read stay inputs, fed with `inputs`;
///   3. the outputs are the original outputs that kept nodes produce, then every value of a
///      kept node that was consumed in `graph` and no longer is (in node order);
///   4. unused inputs and constants are dropped, and the result must verify (core's verifier,
///      types re-inferred) with static shapes throughout.
/// Ids, names, attributes, provenance and bodies of kept nodes are kept. Fails, saying why,
/// when the selection is empty, produces nothing, or does not verify.
Expected<SubGraph> extractSubGraph(const Graph& graph, const std::vector<bool>& keep,
                                   const std::vector<Tensor>& inputs,
                                   const std::unordered_map<std::string, Tensor>& recorded);

} // namespace fb::workbench
