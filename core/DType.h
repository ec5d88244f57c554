// Element types of tensors (f32, f16, bf16, i8, u8, i32, i64, bool) and 16-bit float storage types.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace fb {

/// The element type of a tensor.
enum class DType : uint8_t { F32, F16, BF16, I8, U8, I32, I64, Bool };

/// Every dtype, in declaration order, for loops over all of them.
inline constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I8,
                                       DType::U8,  DType::I32, DType::I64,  DType::Bool};

/// Bytes one element occupies.
size_t dtypeSize(DType dtype);
/// The IR spelling: "f32", "i64", "bool", ...
const char* dtypeName(DType dtype);
/// Parses the IR spelling.
std::optional<DType> parseDType(std::string_view name);
/// True for f32, f16 and bf16.
bool isFloat(DType dtype);
/// True for i8, u8, i32, i64 (not bool).
bool isInteger(DType dtype);

/// IEEE half: stored as bits, computed with as float.
struct f16_t {
  uint16_t bits = 0;
  f16_t() = default;
  f16_t(float f) : bits(floatToHalfBits(f)) {}
  operator float() const { return halfBitsToFloat(bits); }
  static uint16_t floatToHalfBits(float f);
  static float halfBitsToFloat(uint16_t h);
};

/// bfloat16: the top half of an f32, rounded to nearest even.
struct bf16_t {
  uint16_t bits = 0;
  bf16_t() = default;
  bf16_t(float f) : bits(floatToBf16Bits(f)) {}
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t floatToBf16Bits(float f);
};

/// Maps a C++ element type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<f16_t> { static constexpr DType value = DType::F16; };
template <> struct DTypeOf<bf16_t> { static constexpr DType value = DType::BF16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::I8; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };

/// Calls `fn.template operator()<T>()` with T the C++ type of `dtype`:
///   dispatchDType(t.dtype(), [&]<typename T>() { ... });
template <typename Fn> decltype(auto) dispatchDType(DType dtype, Fn&& fn) {
  switch (dtype) {
  case DType::F32: return fn.template operator()<float>();
  case DType::F16: return fn.template operator()<f16_t>();
  case DType::BF16: return fn.template operator()<bf16_t>();
  case DType::I8: return fn.template operator()<int8_t>();
  case DType::U8: return fn.template operator()<uint8_t>();
  case DType::I32: return fn.template operator()<int32_t>();
  case DType::I64: return fn.template operator()<int64_t>();
  case DType::Bool: return fn.template operator()<bool>();
  }
  __builtin_unreachable();
}

} // namespace fb
