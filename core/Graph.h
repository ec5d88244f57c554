// The core IR: an SSA dataflow graph that owns its nodes and values.
#pragma once

#include "core/Attribute.h"
#include "core/OpTable.h"
#include "core/Tensor.h"
#include "core/TensorType.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fb {

class Graph;
class Node;

/// A stable node identity: survives cloning, printing and parsing, and names a node in every
/// snapshot it lives in. Ids are unique within a model, including fused-group bodies.
using NodeId = uint32_t;

/// How a value comes to exist.
enum class ValueKind : uint8_t {
  Input,      ///< a graph input (or a fused-group body parameter)
  Constant,   ///< an initializer: immutable data known at compile time
  NodeOutput, ///< the result of a node
};

/// One use of a value: operand `operand` of `user`.
struct Use {
  Node* user;
  unsigned operand;
  bool operator==(const Use& other) const = default;
};

/// An SSA value: produced by exactly one node output, or a graph input, or a constant.
class Value {
public:
  const std::string& name() const { return m_name; }
  ValueKind kind() const { return m_kind; }
  bool isInput() const { return m_kind == ValueKind::Input; }
  bool isConstant() const { return m_kind == ValueKind::Constant; }
  const TensorType& type() const { return m_type; }
  void setType(TensorType type) { m_type = std::move(type); }
  /// The producing node, or nullptr for inputs and constants.
  Node* producer() const { return m_producer; }
  /// Which output of the producer this value is.
  unsigned resultIndex() const { return m_resultIndex; }
  /// The data of a constant; an invalid Tensor otherwise.
  const Tensor& constantData() const { return m_constant; }
  /// Replaces a constant's data (shape and dtype follow the tensor).
  void setConstantData(Tensor data);
  Graph* graph() const { return m_graph; }

  const std::vector<Use>& uses() const { return m_uses; }
  bool hasUses() const { return !m_uses.empty(); }
  /// True when the owning graph lists this value as an output.
  bool isGraphOutput() const;
  /// Redirects every use (and graph-output slot) of this value to `other`.
  void replaceAllUsesWith(Value* other);

  /// For 1-D i64 values that hold a shape (Shape's output and what is computed from it), the
  /// elements as dims, possibly symbolic: lets shape inference see through Shape→Gather→Concat.
  const std::optional<std::vector<Dim>>& shapeValue() const { return m_shapeValue; }
  void setShapeValue(std::optional<std::vector<Dim>> v) { m_shapeValue = std::move(v); }

private:
  friend class Graph;
  friend class Node;
  std::string m_name;
  ValueKind m_kind = ValueKind::NodeOutput;
  TensorType m_type;
  Node* m_producer = nullptr; // not owned
  unsigned m_resultIndex = 0;
  Tensor m_constant;          // shares storage with every clone
  std::vector<Use> m_uses;    // one entry per operand slot that reads this value
  std::optional<std::vector<Dim>> m_shapeValue;
  Graph* m_graph = nullptr;   // the owning graph
};

/// A sub-graph owned by a node: a fused group's body, an If's `then_branch`/`else_branch`, a
/// Loop's or Scan's `body`. Bodies are closed: every value a body reads is one of its inputs (the
/// importer turns reads of enclosing-scope values into explicit operands, see docs/decisions.md).
struct NodeBody {
  std::string role;             ///< the ONNX attribute it stands for ("then_branch", "body")
  std::unique_ptr<Graph> graph; ///< owned
};

/// An operation: op kind, attributes, input values (nullptr for an absent optional input) and
/// output values. A fused group owns one body sub-graph; If, Loop and Scan own named bodies.
class Node {
public:
  NodeId id() const { return m_id; }
  OpKind op() const { return m_op; }
  const OpInfo& info() const { return opInfo(m_op); }
  /// The name from the model (ONNX node name), possibly empty.
  const std::string& name() const { return m_name; }
  void setName(std::string name) { m_name = std::move(name); }
  /// "#12 \"/conv1/Conv\" (Conv)": how errors and reports refer to a node.
  std::string describe() const;

  AttrMap& attrs() { return m_attrs; }
  const AttrMap& attrs() const { return m_attrs; }

  size_t numInputs() const { return m_inputs.size(); }
  /// Input i, or nullptr when that optional input is absent.
  Value* input(size_t i) const { return i < m_inputs.size() ? m_inputs[i] : nullptr; }
  const std::vector<Value*>& inputs() const { return m_inputs; }
  void setInput(size_t i, Value* v);
  void addInput(Value* v);
  /// Drops trailing inputs beyond n.
  void truncateInputs(size_t n);

  size_t numOutputs() const { return m_outputs.size(); }
  Value* output(size_t i) const { return m_outputs[i]; }
  const std::vector<Value*>& outputs() const { return m_outputs; }

  /// Ids of the original nodes this one was made from, its own id included when it absorbed
  /// others (empty: it is an original node, made from nothing but itself).
  const std::vector<NodeId>& provenance() const { return m_provenance; }
  /// Sets provenance to the sorted, de-duplicated union of `ids`.
  void setProvenance(std::vector<NodeId> ids);
  /// Adds `other` and everything `other` was made from (for a node a pass created).
  void addProvenanceFrom(const Node& other);
  /// Like addProvenanceFrom, for an existing node that absorbs `other` and keeps its id: the
  /// node's own id joins the set, so it still says it was made from itself too.
  void absorbProvenanceOf(const Node& other);

  /// The body of a fused group; nullptr for other ops (an If's branches are not "the body": see
  /// bodies()).
  Graph* body() const;
  /// Makes `body` the one body of a fused group (role "body"), replacing any other.
  void setBody(std::unique_ptr<Graph> body);
  /// Every sub-graph this node owns, in order: one for a fused group, then/else for If, the body
  /// of Loop and Scan; empty for other ops. Walks over a whole model recurse through these.
  const std::vector<NodeBody>& bodies() const { return m_bodies; }
  bool hasBodies() const { return !m_bodies.empty(); }
  /// The body with this role, or nullptr.
  Graph* bodyNamed(std::string_view role) const;
  /// Appends a body under `role` (which must be new) and returns it.
  Graph* addBody(std::string role, std::unique_ptr<Graph> body);
  /// Replaces the graph of the body with this role (which must exist).
  void replaceBody(std::string_view role, std::unique_ptr<Graph> body);
  Graph* graph() const { return m_graph; }

private:
  friend class Graph;
  NodeId m_id = 0;
  OpKind m_op = OpKind::Identity;
  std::string m_name;
  AttrMap m_attrs;
  std::vector<Value*> m_inputs;  // not owned; nullptr for an absent optional input
  std::vector<Value*> m_outputs; // owned by m_graph
  std::vector<NodeId> m_provenance;
  std::vector<NodeBody> m_bodies; // owned sub-graphs (fused body, branches, loop body)
  Graph* m_graph = nullptr;
};

/// A dataflow graph. Owns its nodes (kept in a valid execution order) and values. A model is a
/// top-level Graph; a fused group's body is a nested Graph whose inputs are the group's operands.
class Graph {
public:
  explicit Graph(std::string name = "main");
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return m_name; }
  void setName(std::string name) { m_name = std::move(name); }
  /// The ONNX default-domain opset the graph's op semantics follow (17 after import).
  int64_t opset() const { return m_opset; }
  void setOpset(int64_t opset) { m_opset = opset; }
  /// The graph that owns the node whose body this is; nullptr for a model's graph.
  Graph* parent() const { return m_parent; }
  /// The node whose body this is; nullptr for a model's graph.
  Node* parentNode() const { return m_parentNode; }

  // -- values --
  Value* addInput(const std::string& name, TensorType type);
  Value* addConstant(const std::string& name, Tensor data);
  /// Marks `v` as a graph output (appended).
  void addOutput(Value* v);
  void setOutputs(std::vector<Value*> outputs);
  void setOutput(size_t i, Value* v) { m_outputs[i] = v; }
  const std::vector<Value*>& inputs() const { return m_inputs; }
  const std::vector<Value*>& outputs() const { return m_outputs; }
  /// Constants in creation order.
  const std::vector<Value*>& constants() const { return m_constants; }
  /// Removes an input, constant or node output that has no uses and is not an output.
  void eraseValue(Value* v);
  /// Looks a value up by name.
  Value* findValue(const std::string& name) const;
  /// Reorders the inputs; `order` must hold exactly the current inputs.
  void setInputOrder(std::vector<Value*> order);
  /// A name not yet used in this graph, derived from `base`.
  std::string uniqueValueName(const std::string& base);
  /// Renames a value (the new name must be unused).
  void renameValue(Value* v, const std::string& name);

  // -- nodes --
  /// Appends a node with fresh outputs (named from outputNames, or generated).
  Node* addNode(OpKind op, const std::vector<Value*>& inputs, size_t numOutputs,
                const std::vector<std::string>& outputNames = {}, const std::string& name = "");
  /// Renames nodes whose (non-empty) name an earlier node of this graph already has, to
  /// "name_1", "name_2", ..., in execution order, and does the same inside every fused body
  /// (names are unique per graph). Exporters and ONNX Runtime need unique node names; a pass
  /// that copies a node's name into the nodes it creates need not care. Returns how many nodes
  /// were renamed.
  size_t makeNodeNamesUnique();
  /// Like addNode, but inserts before `before` in the execution order.
  Node* insertNodeBefore(Node* before, OpKind op, const std::vector<Value*>& inputs,
                         size_t numOutputs, const std::vector<std::string>& outputNames = {},
                         const std::string& name = "");
  /// Like addNode with an explicit id (the parser and cloning keep ids).
  Node* addNodeWithId(NodeId id, OpKind op, const std::vector<Value*>& inputs, size_t numOutputs,
                      const std::vector<std::string>& outputNames, const std::string& name);
  /// Removes a node whose outputs have no uses; its outputs are erased with it.
  void eraseNode(Node* node);
  /// Nodes in execution order.
  const std::vector<std::unique_ptr<Node>>& nodes() const { return m_nodes; }
  size_t numNodes() const { return m_nodes.size(); }
  /// The node with this id in this graph or a nested body, or nullptr.
  Node* findNode(NodeId id) const;
  /// Reorders nodes topologically (stable: keeps the current order where it is valid).
  /// Fails naming a node on a cycle.
  Status topologicalSort();

  // -- ids --
  /// A fresh node id, unique across the whole model (delegates to the top-level graph).
  NodeId allocateNodeId();
  /// Makes sure future ids are larger than `id` (used when ids come from a file).
  void reserveNodeId(NodeId id);

  /// A deep copy of the structure. Node ids, names and provenance are kept; constant data is
  /// shared, not copied.
  std::unique_ptr<Graph> clone() const;

private:
  friend class Node;
  friend class Value;
  Value* newValue(const std::string& name, ValueKind kind);
  Node* createNode(NodeId id, OpKind op, const std::vector<Value*>& inputs, size_t numOutputs,
                   const std::vector<std::string>& outputNames, const std::string& name);
  Graph* root();
  void cloneInto(Graph& dst, std::unordered_map<const Value*, Value*>& map) const;

  std::string m_name;
  int64_t m_opset = 17;
  Graph* m_parent = nullptr;                  // not owned
  Node* m_parentNode = nullptr;               // not owned: the node that owns this body
  std::vector<std::unique_ptr<Node>> m_nodes; // owned, in execution order
  std::vector<std::unique_ptr<Value>> m_values; // owned: inputs, constants, node outputs
  std::vector<Value*> m_inputs;
  std::vector<Value*> m_constants;
  std::vector<Value*> m_outputs;
  std::unordered_map<std::string, Value*> m_valueByName;
  NodeId m_nextNodeId = 1; // used only on the top-level graph
  uint64_t m_nameCounter = 0;
};

} // namespace fb
