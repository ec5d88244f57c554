// The reference interpreter: the oracle every compiled result is compared with.
#pragma once

#include "core/Graph.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace fb {

/// Options for one interpreter run.
struct InterpretOptions {
  /// Keep every intermediate value (for numeric diffs); otherwise tensors are freed after their
  /// last use.
  bool keepIntermediates = false;
};

/// The result of a run: graph outputs in order, and, when asked for, every value by name.
struct InterpretResult {
  std::vector<Tensor> outputs;
  std::unordered_map<std::string, Tensor> values;
};

/// Runs `graph` on `inputs` (one per graph input, in order). Inputs are checked against the
/// declared types; a symbolic dim must bind to the same size everywhere it appears.
Expected<InterpretResult> interpret(const Graph& graph, const std::vector<Tensor>& inputs,
                                    const InterpretOptions& options = {});

/// Evaluates one node on operand tensors (an absent optional operand is an invalid Tensor) with
/// its interpreter kernel, bodies included, and checks the results against the node's types.
/// The CPU executor runs control-flow nodes this way.
Expected<std::vector<Tensor>> evaluateNode(const Node& node, std::vector<Tensor> inputs);

/// Checks one input tensor against a graph input's declared type, binding symbolic dims.
Status checkInputAgainstType(const Value& input, const Tensor& t,
                             std::unordered_map<std::string, int64_t>& bindings);

} // namespace fb
