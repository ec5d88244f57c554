// Internal to the loop evaluator: a value's lanes and how elements of each dtype are read,
// written and rounded, as compiled code does.
#pragma once

#include "codegen/loops/LoopIR.h"
#include "core/DType.h"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace fb::cg::eval_detail {

/// b ** e on integers as the interpreter and the emitted code compute it: exact and wrapping
/// (the caller wraps to the type's width), 1 / b^|e| truncated for e < 0.
inline int64_t intPow(int64_t b, int64_t e) {
  if (e < 0)
    return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, ub = uint64_t(b);
  for (uint64_t ue = uint64_t(e); ue; ue >>= 1) {
    if (ue & 1)
      r *= ub;
    ub *= ub;
  }
  return int64_t(r);
}

/// One lane of a value: floats in `f`, integers and bools in `i`.
struct Lane {
  double f = 0;
  int64_t i = 0;
};
using Val = std::vector<Lane>; // one entry per lane

inline Lane readElement(const std::byte* p, DType d) {
  Lane l;
  dispatchDType(d, [&]<typename T>() {
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>)
      l.f = double(float(v));
    else {
      l.i = int64_t(v);
      l.f = double(l.i);
    }
  });
  return l;
}

inline void writeElement(std::byte* p, DType d, const Lane& l) {
  dispatchDType(d, [&]<typename T>() {
    T v;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>)
      v = T(float(l.f));
    else if constexpr (std::is_same_v<T, bool>)
      v = l.i != 0;
    else
      v = T(l.i);
    std::memcpy(p, &v, sizeof(T));
  });
}

/// Rounds a computed lane to the precision of type t.
inline Lane normalize(Lane l, Type t) {
  if (t.isFloat()) {
    l.f = double(float(l.f));
  } else if (t.dtype == DType::Bool) {
    l.i = l.i != 0;
    l.f = double(l.i);
  } else {
    // Wrap to the type's width, as the emitted code's narrow registers do (BitShift's u8
    // x * 2^8 is 0).
    if (t.dtype == DType::I32)
      l.i = int64_t(int32_t(l.i));
    else if (t.dtype == DType::I8)
      l.i = int64_t(int8_t(l.i));
    else if (t.dtype == DType::U8)
      l.i = int64_t(uint8_t(l.i));
    l.f = double(l.i);
  }
  return l;
}

} // namespace fb::cg::eval_detail
