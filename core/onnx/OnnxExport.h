// ONNX export: the core IR (after any pass) back to a ModelProto that passes the ONNX checker.
#pragma once

#include "core/Graph.h"

#include <string>

namespace fb {

/// Serializes the graph as an ONNX ModelProto at opset 17. Fused groups are inlined (their body
/// nodes are emitted in place); node ids and provenance are kept in each node's doc_string-free
/// metadata so a re-import restores them.
Expected<std::string> exportOnnxBytes(const Graph& graph);
/// Writes the model to `path`.
Status exportOnnxFile(const Graph& graph, const std::string& path);

} // namespace fb
