// Tensor: a dtype, static sizes and shared, copy-on-write element storage.
#pragma once

#include "core/DType.h"
#include "core/Error.h"
#include "core/TensorType.h"

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace fb {

/// A dense, row-major tensor. Copies share their storage, so constants in many snapshots cost one
/// buffer; writing through mutableData() detaches a private copy first (copy on write).
class Tensor {
public:
  /// An empty f32 scalar-less tensor (no storage); valid() is false.
  Tensor() = default;
  /// A zero-filled tensor. Sizes must be non-negative and their product must fit in memory.
  Tensor(DType dtype, std::vector<int64_t> sizes);
  /// Builds a tensor of sizes from values of the matching C++ type.
  template <typename T> static Tensor fromVector(std::vector<int64_t> sizes, const std::vector<T>& values);
  /// A rank-0 tensor holding one value.
  template <typename T> static Tensor scalar(T value) { return fromVector<T>({}, {value}); }
  /// A zero-filled tensor, or an error when the sizes overflow or are negative.
  static Expected<Tensor> create(DType dtype, std::vector<int64_t> sizes);

  bool valid() const { return m_storage != nullptr; }
  DType dtype() const { return m_dtype; }
  const std::vector<int64_t>& sizes() const { return m_sizes; }
  size_t rank() const { return m_sizes.size(); }
  int64_t numElements() const { return m_numElements; }
  size_t byteSize() const { return size_t(m_numElements) * dtypeSize(m_dtype); }
  TensorType type() const { return TensorType::of(m_dtype, m_sizes); }

  const std::byte* rawData() const { return m_storage ? m_storage->data() : nullptr; }
  std::byte* mutableRawData();
  /// Typed read access; T must match dtype().
  template <typename T> std::span<const T> data() const {
    assert(DTypeOf<T>::value == m_dtype && "Tensor::data<T> with the wrong element type");
    return {reinterpret_cast<const T*>(rawData()), size_t(m_numElements)};
  }
  /// Typed write access; detaches shared storage first.
  template <typename T> std::span<T> mutableData() {
    assert(DTypeOf<T>::value == m_dtype && "Tensor::mutableData<T> with the wrong element type");
    return {reinterpret_cast<T*>(mutableRawData()), size_t(m_numElements)};
  }

  /// Element i converted to double (bool → 0/1), for printing and statistics.
  double getAsDouble(int64_t i) const;
  /// Element i converted to int64 (floats truncate), for shape-like tensors.
  int64_t getAsInt64(int64_t i) const;
  /// Writes element i from a double, converting to dtype().
  void setFromDouble(int64_t i, double v);
  /// All elements as int64, for shape operands (Reshape's shape, Slice's starts, ...).
  std::vector<int64_t> toInt64Vector() const;

  /// Same storage, new sizes with the same element count.
  Tensor reshaped(std::vector<int64_t> sizes) const;
  /// True when both share the same storage object (no copy was made).
  bool sharesStorageWith(const Tensor& other) const { return m_storage == other.m_storage; }
  /// Bitwise equality of dtype, sizes and contents.
  bool identical(const Tensor& other) const;
  /// Row-major strides in elements.
  std::vector<int64_t> strides() const;

private:
  using Storage = std::vector<std::byte>;
  DType m_dtype = DType::F32;
  std::vector<int64_t> m_sizes;
  int64_t m_numElements = 0;
  std::shared_ptr<Storage> m_storage; // shared between copies; detached on write
};

template <typename T>
Tensor Tensor::fromVector(std::vector<int64_t> sizes, const std::vector<T>& values) {
  Tensor t(DTypeOf<T>::value, std::move(sizes));
  assert(int64_t(values.size()) == t.numElements() && "fromVector: element count mismatch");
  auto out = t.mutableData<T>();
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = values[i];
  return t;
}

} // namespace fb
