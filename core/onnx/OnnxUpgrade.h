// Private to core/onnx: upgrading nodes of opsets 11-16 to the IR's opset-17 semantics, and
// reading opset-18 nodes in it.
#pragma once

#include "core/Graph.h"

#include <optional>
#include <string>
#include <unordered_set>

namespace fb::onnxio {

/// Hands out value names for values the importer synthesizes (upgrade constants, rewrite
/// temporaries). A name is never one the file uses anywhere nor one already in the graph, so the
/// graph never has to rename a value that comes from the file.
class NameAllocator {
public:
  NameAllocator(const std::unordered_set<std::string>& fileNames, Graph& graph)
      : m_fileNames(fileNames), m_graph(graph) {}
  /// A fresh name derived from `base`.
  std::string fresh(const std::string& base);

private:
  const std::unordered_set<std::string>& m_fileNames; // every name the model file mentions
  Graph& m_graph;
  uint64_t m_counter = 0;
};

/// Turns attributes that became inputs after `opset` into constant inputs: Squeeze/Unsqueeze and
/// ReduceSum `axes` (before 13), Split `split` (before 13), Dropout `ratio` (before 12). Runs once
/// the node's inputs are resolved. `where` names the node in errors.
Status upgradeLegacyAttributes(Node& node, int64_t opset, Graph& graph, NameAllocator& names,
                               const std::string& where);

/// Reads a node of an opset-18 model in the IR's opset-17 semantics, or refuses it with an error
/// naming the opset-18 feature when the IR cannot express it. The reductions' axes input, Split's
/// num_outputs and ScatterElements/ScatterND's max/min reductions mean the same in the IR;
/// Resize's antialias, axes and keep_aspect_ratio_policy and Pad's axes input are accepted only
/// at values that change nothing (and are then dropped). GroupNormalization is opset 18 only.
Status readOpset18Node(Node& node, int64_t opset, const std::string& where);

/// The op that a deprecated ONNX op is read as: Scatter (opsets 9-10) as ScatterElements, and
/// Upsample (opsets 7-9) as Resize (see upgradeLegacyOp). nullopt for any other op type.
std::optional<OpKind> legacyOpKind(const std::string& onnxType);

/// Gives a node read through legacyOpKind the semantics of the old op: Upsample(X, scales)
/// becomes Resize(X, "", scales) with coordinate_transformation_mode 'asymmetric' and
/// nearest_mode 'floor' (Upsample's index mapping); before opset 9 its `scales` attribute
/// becomes the input. Scatter needs nothing.
Status upgradeLegacyOp(Node& node, const std::string& onnxType, Graph& graph, NameAllocator& names,
                       const std::string& where);

/// True when the node is a Softmax/LogSoftmax/Hardmax whose opset (< 13) coerces its input to 2-D at
/// `axis`; such a node needs upgradeLegacySoftmax once its input type is known.
bool needsSoftmaxUpgrade(const Node& node, int64_t opset);

/// Gives a legacy Softmax/LogSoftmax opset-17 semantics. When the axis is the last one, only the
/// axis attribute is made explicit; otherwise the node is rewritten as Flatten(axis) →
/// Softmax(axis=1) → Reshape to the input's shape, and the Reshape takes over the original output
/// name. Nodes it inserts are returned in execution order (before and after `node`) so the caller
/// can infer their shapes; they carry `node`'s id as provenance.
Status upgradeLegacySoftmax(Node& node, Graph& graph, NameAllocator& names,
                            std::vector<Node*>& insertedBefore, std::vector<Node*>& insertedAfter);

} // namespace fb::onnxio
