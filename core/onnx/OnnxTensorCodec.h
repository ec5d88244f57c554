// Private to core/onnx: ONNX element types and TensorProto decoding/encoding, shared by the importer,
// the exporter and the backend-test tensor reader.
#pragma once

#include "core/Tensor.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

namespace fb::onnxio {

/// The Fusebox dtype of an ONNX TensorProto.DataType, or nullopt when Fusebox has no such dtype.
std::optional<DType> dtypeFromOnnx(int32_t elemType);
/// The ONNX TensorProto.DataType of a Fusebox dtype.
int32_t dtypeToOnnx(DType dtype);
/// The ONNX spelling of an element type ("DOUBLE", "STRING", ...), for error messages.
std::string onnxElemTypeName(int32_t elemType);

/// Where a tensor's external data may come from.
struct ExternalDataPolicy {
  /// The folder external data files are resolved against; empty refuses external data.
  std::string baseDir;
};

/// Decodes a TensorProto (raw_data, typed fields or external data) into a Tensor. `what` names
/// the tensor in errors ("initializer 'w'"). Dims, data sizes and external paths are validated:
/// nothing in a hostile file makes this allocate more than the data it actually holds.
Expected<Tensor> decodeTensor(const onnx::TensorProto& proto, const std::string& what,
                              const ExternalDataPolicy& external);

/// Encodes a Tensor as a TensorProto with raw_data (little-endian, as ONNX specifies).
void encodeTensor(const Tensor& tensor, const std::string& name, onnx::TensorProto& proto);

/// Checks that `location` (an external_data path from the model) names a file inside `baseDir`
/// after normalization and symlink resolution, and returns its resolved path. Absolute paths and
/// paths that escape the folder are refused.
Expected<std::string> resolveExternalPath(const std::string& baseDir, const std::string& location);

} // namespace fb::onnxio
