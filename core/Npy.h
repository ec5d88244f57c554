// NumPy .npy reading and writing, for inputs and outputs on the command line.
#pragma once

#include "core/Tensor.h"

#include <string>

namespace fb {

/// Reads a .npy file (format 1.0-3.0, little-endian, C order) of a supported dtype.
Expected<Tensor> readNpy(const std::string& path);
/// Parses .npy bytes; displayName names them in errors.
Expected<Tensor> parseNpy(std::string_view bytes, const std::string& displayName);
/// Writes a tensor as .npy (bf16 is written as float32, which NumPy lacks).
Status writeNpy(const std::string& path, const Tensor& tensor);

} // namespace fb
