// Tensor storage, element conversions and copy-on-write.
#include "core/Tensor.h"
#include "core/MemoryLimit.h"

#include <cmath>

namespace fb {

Expected<size_t> checkedTensorBytes(DType dtype, const std::vector<int64_t>& sizes) {
  auto n = checkedProduct(sizes);
  size_t bytes = 0;
  if (!n || __builtin_mul_overflow(size_t(*n), dtypeSize(dtype), &bytes))
    return makeError("a tensor of ", TensorType::of(dtype, sizes).str(),
                     " has a size that overflows 64 bits");
  FB_TRY(checkAllocation(bytes, "a tensor of " + TensorType::of(dtype, sizes).str()));
  return bytes;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> sizes)
    : m_dtype(dtype), m_sizes(std::move(sizes)) {
  // Kernels size outputs from their operands at run time: a size that cannot be allocated
  // throws AllocationRefused, which the interpreter and the executor turn into an error for
  // the node (Tensor::create returns it directly).
  auto bytes = checkedTensorBytes(dtype, m_sizes);
  if (!bytes)
    throw AllocationRefused(bytes.error().message());
  m_numElements = *checkedProduct(m_sizes);
  m_storage = std::make_shared<Storage>(*bytes);
}

Expected<Tensor> Tensor::create(DType dtype, std::vector<int64_t> sizes) {
  if (auto bytes = checkedTensorBytes(dtype, sizes); !bytes)
    return bytes.error();
  try {
    return Tensor(dtype, std::move(sizes));
  } catch (const std::bad_alloc& e) {
    return makeError("a tensor of ", TensorType::of(dtype, sizes).str(),
                     " could not be allocated: ", e.what());
  }
}

std::byte* Tensor::mutableRawData() {
  if (!m_storage)
    return nullptr;
  if (m_storage.use_count() > 1)
    m_storage = std::make_shared<Storage>(*m_storage);
  return m_storage->data();
}

double Tensor::getAsDouble(int64_t i) const {
  return dispatchDType(m_dtype, [&]<typename T>() -> double {
    return double(reinterpret_cast<const T*>(rawData())[i]);
  });
}

int64_t Tensor::getAsInt64(int64_t i) const {
  return dispatchDType(m_dtype, [&]<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T>)
      return int64_t(reinterpret_cast<const T*>(rawData())[i]);
    else
      return int64_t(float(reinterpret_cast<const T*>(rawData())[i]));
  });
}

void Tensor::setFromDouble(int64_t i, double v) {
  dispatchDType(m_dtype, [&]<typename T>() {
    T* p = reinterpret_cast<T*>(mutableRawData());
    if constexpr (std::is_same_v<T, bool>)
      p[i] = v != 0.0;
    else if constexpr (std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>)
      p[i] = T(float(v));
    else
      p[i] = T(v);
  });
}

std::vector<int64_t> Tensor::toInt64Vector() const {
  std::vector<int64_t> out(static_cast<size_t>(m_numElements));
  for (int64_t i = 0; i < m_numElements; ++i)
    out[size_t(i)] = getAsInt64(i);
  return out;
}

Tensor Tensor::reshaped(std::vector<int64_t> sizes) const {
  Tensor t = *this;
  assert(checkedProduct(sizes) && *checkedProduct(sizes) == m_numElements &&
         "reshaped: element count must not change");
  t.m_sizes = std::move(sizes);
  return t;
}

bool Tensor::identical(const Tensor& other) const {
  if (m_dtype != other.m_dtype || m_sizes != other.m_sizes)
    return false;
  if (m_storage == other.m_storage)
    return true;
  return byteSize() == 0 || std::memcmp(rawData(), other.rawData(), byteSize()) == 0;
}

std::vector<int64_t> Tensor::strides() const {
  std::vector<int64_t> s(m_sizes.size());
  int64_t acc = 1;
  for (size_t i = m_sizes.size(); i-- > 0;) {
    s[i] = acc;
    acc *= m_sizes[i];
  }
  return s;
}

} // namespace fb
