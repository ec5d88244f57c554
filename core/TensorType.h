// Tensor types: a dtype plus a shape whose dimensions are numbers, named symbols or unknown.
#pragma once

#include "core/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fb {

/// One dimension of a shape: a known size, a named symbol (a dynamic batch "N"), or unknown ("?").
/// A known size is non-negative in a type; shape values (Reshape's target) may hold -1 or 0
/// literally, so a known number is not range-checked here.
class Dim {
public:
  Dim() = default; // unknown
  Dim(int64_t size) : m_size(size), m_known(true) {}
  static Dim symbol(std::string name) {
    Dim d;
    d.m_symbol = std::move(name);
    return d;
  }
  static Dim unknown() { return Dim(); }

  bool isStatic() const { return m_known; }
  bool isSymbol() const { return !m_known && !m_symbol.empty(); }
  bool isUnknown() const { return !m_known && m_symbol.empty(); }
  /// The size; only meaningful when isStatic().
  int64_t size() const { return m_size; }
  const std::string& symbolName() const { return m_symbol; }

  bool operator==(const Dim& other) const = default;
  /// "3", "N" or "?".
  std::string str() const;

private:
  int64_t m_size = -1;  // meaningful when m_known
  bool m_known = false;
  std::string m_symbol; // non-empty for a named symbolic dimension
};

/// Quantization parameters carried by a quantized value: per tensor (axis empty) or per channel.
struct QuantParams {
  std::vector<float> scales;
  std::vector<int64_t> zeroPoints;
  std::optional<int64_t> axis; // set for per-channel quantization
  bool operator==(const QuantParams& other) const = default;
};

/// The type of a value: element type, shape and optional quantization parameters.
struct TensorType {
  DType dtype = DType::F32;
  std::vector<Dim> dims;
  std::optional<QuantParams> quant;

  TensorType() = default;
  TensorType(DType d, std::vector<Dim> ds) : dtype(d), dims(std::move(ds)) {}
  /// A fully static type from concrete sizes.
  static TensorType of(DType d, const std::vector<int64_t>& sizes);

  size_t rank() const { return dims.size(); }
  /// True when every dimension is a known number.
  bool isStatic() const;
  /// Product of the dimensions when static.
  std::optional<int64_t> numElements() const;
  /// Static sizes; asserts isStatic().
  std::vector<int64_t> staticSizes() const;
  /// "f32[N, 3, 224, 224]" as printed in the text IR.
  std::string str() const;

  bool operator==(const TensorType& other) const = default;
};

/// Product of sizes, or nullopt on int64 overflow or a negative size.
std::optional<int64_t> checkedProduct(const std::vector<int64_t>& sizes);

/// False when the known dims of `type` already multiply out (times the element size) beyond
/// what int64 counts, or one is negative: no such tensor can exist, and sizes computed from it
/// would wrap around. Unknown and symbolic dims are ignored; any zero dim makes it countable.
bool hasCountableSize(const TensorType& type);

} // namespace fb
