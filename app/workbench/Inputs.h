// The inputs a snapshot runs on: files the user gives (.npy, ONNX TensorProto .pb) or seeded
// random tensors, one per graph input.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fb::workbench {

/// Reads one input tensor from a .npy or .pb file; the error names the file.
Expected<Tensor> readInputFile(const std::string& path);

/// Fails, naming `path`, when tensor `t` read from it cannot be `input` (another dtype, rank or
/// static size).
Status checkInputFits(const Value& input, const Tensor& t, const std::string& path);

/// One tensor per input of `graph`: read from `files` when given (one entry per input, in
/// graph order; an empty entry is a random tensor for that input), otherwise random from
/// `seed` with symbolic dims sized by `dims` (default 1). A file must fit its input's type.
Expected<std::vector<Tensor>> gatherInputs(const Graph& graph,
                                           const std::vector<std::string>& files, uint64_t seed,
                                           const std::map<std::string, int64_t>& dims);

} // namespace fb::workbench
