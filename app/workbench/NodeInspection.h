// What the inspector shows about one node or constant of a snapshot, computed as plain values.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fb::workbench {

class Session;

/// Statistics of a constant's data.
struct ConstantStats {
  std::string name;
  std::string type;     ///< "f32[64, 3, 7, 7]"
  int64_t elements = 0;
  double min = 0, max = 0, mean = 0, stddev = 0;
  double sparsity = 0;  ///< fraction of elements that are exactly zero
  /// Equal-width bins over [min, max]; the last bin includes max.
  std::vector<int64_t> histogram;
  std::vector<double> preview; ///< the first elements, in row-major order
};

/// Computes statistics, a `bins`-bin histogram and a preview of `previewCount` values.
ConstantStats constantStats(const Value& constant, size_t bins = 24, size_t previewCount = 16);

/// One operand or result of a node.
struct PortInfo {
  std::string value;          ///< the value's name ("" for an absent optional input)
  std::string type;           ///< "f32[1, 64, 56, 56]"
  std::string kind;           ///< "input", "constant" or "node output"
  NodeId producer = 0;        ///< 0 for inputs and constants
  std::string producerText;   ///< "#3 Conv \"/conv1/Conv\"" or "graph input" / "constant"
  std::vector<NodeId> consumers;
  bool graphOutput = false;
};

/// One original node the inspected node was made from, and where to find it.
struct ProvenanceLink {
  NodeId id = 0;
  std::optional<size_t> snapshot; ///< the latest earlier snapshot that holds the node
  std::string text;               ///< "#5 Conv \"/conv2/Conv\" (snapshot 0)"
};

/// One body of an If, Loop or Scan, with what feeds each of its inputs and what each of its
/// outputs becomes.
struct BodyInspection {
  std::string role;  ///< "then_branch", "else_branch", "body"
  std::string graph; ///< the body graph's name
  size_t nodes = 0;
  /// Per body input: "%name : type" and its source ("capture of %w", "iteration number",
  /// "carried value 0 (starts as %v)", "slice of scanned input 0 (%x)").
  std::vector<std::pair<std::string, std::string>> inputs;
  /// Per body output: "%name : type" and what it becomes ("result 0 (%y)", "condition of the
  /// next iteration", "carried value 0", "scan output 0 (%s), stacked").
  std::vector<std::pair<std::string, std::string>> outputs;
};

/// Everything the inspector shows about one node.
struct NodeInspection {
  NodeId id = 0;
  std::string name;
  std::string op;
  std::string category;
  std::vector<std::pair<std::string, std::string>> attributes; ///< name, printed value
  std::vector<PortInfo> inputs;
  std::vector<PortInfo> outputs;
  double flops = 0;
  double bytes = 0;
  double intensity = 0; ///< flops / bytes (0 when the node moves nothing)
  size_t bodyNodes = 0; ///< nodes in a fused group's body
  std::vector<std::string> bodyOps; ///< the ops of a fused group's body, in order
  std::vector<BodyInspection> bodies; ///< an If's branches, a Loop's or Scan's body
  std::vector<ProvenanceLink> provenance;
  std::vector<ConstantStats> constants; ///< statistics of each constant operand
  /// What the op computes, for a student (the gates and equations of RNN/GRU/LSTM with the
  /// node's hidden size, direction and activations); empty for ops without one.
  std::string explanation;
};

/// Inspects node `id` of snapshot `snapshot`; nullopt when the snapshot has no such node.
std::optional<NodeInspection> inspectNode(const Session& session, size_t snapshot, NodeId id);

/// "[1, 1]", "0.1", "\"NCHW\"", "tensor f32[3]": an attribute value for display.
std::string formatAttribute(const AttrValue& value);

/// "#3 Conv \"/conv1/Conv\"": how the GUI names a node.
std::string nodeLabel(const Node& node);

} // namespace fb::workbench
