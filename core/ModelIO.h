// Loading and saving models by file extension (.onnx or .fbir).
#pragma once

#include "core/Graph.h"

#include <memory>
#include <string>

namespace fb {

/// Loads a .onnx or .fbir model, infers shapes and verifies it. Nothing is returned on error.
Expected<std::unique_ptr<Graph>> loadModel(const std::string& path);
/// Saves a model as .onnx or .fbir (self-contained, with constant data), by extension.
Status saveModel(const Graph& graph, const std::string& path);

} // namespace fb
