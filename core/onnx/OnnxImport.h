// ONNX import: ModelProto (with initializers, Constant nodes, external data) to the core IR.
#pragma once

#include "core/Graph.h"

#include <memory>
#include <string>
#include <string_view>

namespace fb {

/// Imports an .onnx file. External data files are resolved against the model's folder; an
/// absolute path or one that escapes the folder is refused. Older opsets (11-16) are upgraded to
/// the IR's canonical opset 17 semantics. Shapes are inferred. Errors name the file, node, op and
/// operand; nothing is returned on error.
Expected<std::unique_ptr<Graph>> importOnnxFile(const std::string& path);

/// Imports serialized ModelProto bytes. `baseDir` is where external data lives (empty: a model
/// with external data is refused). `displayName` names the model in error messages.
Expected<std::unique_ptr<Graph>> importOnnxBytes(std::string_view bytes,
                                                 const std::string& baseDir,
                                                 const std::string& displayName);

/// Parses a serialized TensorProto (the ONNX backend tests' input_N.pb / output_N.pb files).
Expected<Tensor> tensorFromOnnxProtoBytes(std::string_view bytes, const std::string& displayName);
/// Reads a TensorProto .pb file.
Expected<Tensor> readOnnxTensorFile(const std::string& path);

} // namespace fb
