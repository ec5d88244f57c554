// Dim and TensorType helpers.
#include "core/TensorType.h"

#include <cassert>

namespace fb {

std::string Dim::str() const {
  if (isStatic())
    return std::to_string(m_size);
  if (isSymbol())
    return m_symbol;
  return "?";
}

TensorType TensorType::of(DType d, const std::vector<int64_t>& sizes) {
  std::vector<Dim> ds;
  ds.reserve(sizes.size());
  for (int64_t s : sizes)
    ds.emplace_back(s);
  return TensorType(d, std::move(ds));
}

bool TensorType::isStatic() const {
  for (const Dim& d : dims)
    if (!d.isStatic())
      return false;
  return true;
}

std::optional<int64_t> TensorType::numElements() const {
  if (!isStatic())
    return std::nullopt;
  return checkedProduct(staticSizes());
}

std::vector<int64_t> TensorType::staticSizes() const {
  assert(isStatic() && "staticSizes() of a type with symbolic dims");
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const Dim& d : dims)
    out.push_back(d.size());
  return out;
}

std::string TensorType::str() const {
  std::string s = dtypeName(dtype);
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += dims[i].str();
  }
  s += "]";
  return s;
}

std::optional<int64_t> checkedProduct(const std::vector<int64_t>& sizes) {
  // A zero anywhere makes the product 0, even when the other sizes alone would overflow.
  bool anyZero = false;
  for (int64_t s : sizes) {
    if (s < 0)
      return std::nullopt;
    anyZero = anyZero || s == 0;
  }
  if (anyZero)
    return 0;
  int64_t p = 1;
  for (int64_t s : sizes) {
    if (__builtin_mul_overflow(p, s, &p))
      return std::nullopt;
  }
  return p;
}

bool hasCountableSize(const TensorType& type) {
  int64_t count = 1;
  bool zero = false, overflow = false;
  for (const Dim& d : type.dims) {
    if (!d.isStatic())
      continue;
    if (d.size() < 0)
      return false;
    zero = zero || d.size() == 0;
    overflow = overflow || __builtin_mul_overflow(count, d.size(), &count);
  }
  int64_t bytes = 0;
  return zero ||
         !(overflow || __builtin_mul_overflow(count, int64_t(dtypeSize(type.dtype)), &bytes));
}

} // namespace fb
