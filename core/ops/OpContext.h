// The contexts through which per-op shape inference, interpreter kernels and cost functions see
// a node: its attributes, its inputs' types or data, and where results go.
#pragma once

#include "core/Graph.h"

#include <optional>
#include <vector>

namespace fb {

/// What an op's shape-inference function sees and produces.
class InferContext {
public:
  explicit InferContext(const Node& node);

  const Node& node() const { return m_node; }
  const AttrMap& attrs() const { return m_node.attrs(); }
  int64_t opset() const;
  size_t numInputs() const { return m_node.numInputs(); }
  /// True when input i is present (optional inputs may be absent).
  bool hasInput(size_t i) const { return m_node.input(i) != nullptr; }
  /// The type of a present input.
  const TensorType& inputType(size_t i) const;
  /// Input i's data when it is known at compile time (an initializer or a Constant node).
  const Tensor* inputConstant(size_t i) const;
  /// Input i's elements as dims when known: a constant 1-D integer tensor, or a shape value
  /// propagated from Shape. Used by Reshape, Expand, Tile, ConstantOfShape, Slice, ...
  std::optional<std::vector<Dim>> inputShapeValue(size_t i) const;

  size_t numOutputs() const { return m_node.numOutputs(); }
  void setOutputType(size_t i, TensorType type) { m_outputTypes.at(i) = std::move(type); }
  /// Records that output i (a 1-D i64 tensor) holds these dims, for later shape consumers.
  void setOutputShapeValue(size_t i, std::vector<Dim> v) { m_outputShapeValues.at(i) = std::move(v); }

  const std::vector<TensorType>& outputTypes() const { return m_outputTypes; }
  const std::vector<std::optional<std::vector<Dim>>>& outputShapeValues() const {
    return m_outputShapeValues;
  }

  /// An error prefixed with the node's description.
  template <typename... Parts> Error error(const Parts&... parts) const {
    return makeError(m_node.describe(), ": ", parts...);
  }
  /// An Unsupported error prefixed with the node's description.
  template <typename... Parts> Error unsupported(const Parts&... parts) const {
    return makeUnsupported(m_node.describe(), ": ", parts...);
  }

private:
  const Node& m_node;
  std::vector<TensorType> m_outputTypes;
  std::vector<std::optional<std::vector<Dim>>> m_outputShapeValues;
};

/// What an interpreter kernel sees and produces.
class EvalContext {
public:
  EvalContext(const Node& node, std::vector<Tensor> inputs);

  const Node& node() const { return m_node; }
  const AttrMap& attrs() const { return m_node.attrs(); }
  int64_t opset() const;
  size_t numInputs() const { return m_inputs.size(); }
  /// True when input i is present (an absent optional input is an invalid Tensor).
  bool hasInput(size_t i) const { return i < m_inputs.size() && m_inputs[i].valid(); }
  const Tensor& input(size_t i) const { return m_inputs.at(i); }
  size_t numOutputs() const { return m_node.numOutputs(); }
  /// The inferred type of output i (its dtype is authoritative, e.g. for Cast).
  const TensorType& outputType(size_t i) const { return m_node.output(i)->type(); }
  void setOutput(size_t i, Tensor t) { m_outputs.at(i) = std::move(t); }
  std::vector<Tensor>& outputs() { return m_outputs; }

  template <typename... Parts> Error error(const Parts&... parts) const {
    return makeError(m_node.describe(), ": ", parts...);
  }
  template <typename... Parts> Error unsupported(const Parts&... parts) const {
    return makeUnsupported(m_node.describe(), ": ", parts...);
  }

private:
  const Node& m_node;
  std::vector<Tensor> m_inputs;
  std::vector<Tensor> m_outputs;
};

/// What a cost function sees: the node with inferred types. Symbolic dims count as 1.
class CostContext {
public:
  explicit CostContext(const Node& node) : m_node(node) {}
  const Node& node() const { return m_node; }
  const AttrMap& attrs() const { return m_node.attrs(); }
  bool hasInput(size_t i) const { return m_node.input(i) != nullptr; }
  const TensorType& inputType(size_t i) const { return m_node.input(i)->type(); }
  const TensorType& outputType(size_t i) const { return m_node.output(i)->type(); }
  /// Element count of a type, with symbolic and unknown dims taken as 1.
  static double elements(const TensorType& t);
  double outputElements(size_t i = 0) const { return elements(outputType(i)); }
  double inputElements(size_t i) const { return hasInput(i) ? elements(inputType(i)) : 0; }

private:
  const Node& m_node;
};

} // namespace fb
