// Element type names, sizes and the f16/bf16 conversions.
#include "core/DType.h"

#include <cassert>
#include <cmath>

namespace fb {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32: return 4;
  case DType::F16: return 2;
  case DType::BF16: return 2;
  case DType::I8: return 1;
  case DType::U8: return 1;
  case DType::I32: return 4;
  case DType::I64: return 8;
  case DType::Bool: return 1;
  }
  assert(false && "unknown dtype");
  return 0;
}

const char* dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I8: return "i8";
  case DType::U8: return "u8";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::Bool: return "bool";
  }
  assert(false && "unknown dtype");
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType d : kAllDTypes)
    if (name == dtypeName(d))
      return d;
  return std::nullopt;
}

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

bool isInteger(DType dtype) {
  return dtype == DType::I8 || dtype == DType::U8 || dtype == DType::I32 || dtype == DType::I64;
}

uint16_t f16_t::floatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
  if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return uint16_t(sign | 0x7c00u);
  if (absx < 0x38800000u) { // subnormal half (or zero)
    // Scale into the subnormal range and round to nearest even via float arithmetic.
    float af;
    std::memcpy(&af, &absx, 4);
    float scaled = af * 16777216.0f; // 2^24: one half-subnormal ulp becomes 1.0
    uint32_t m = uint32_t(std::nearbyint(scaled));
    return uint16_t(sign | m);
  }
  uint32_t exp = ((absx >> 23) - 127 + 15);
  uint32_t mant = absx & 0x7fffffu;
  uint32_t half = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half;
  return uint16_t(sign | half);
}

float f16_t::halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {
      float f = std::ldexp(float(mant), -24);
      std::memcpy(&out, &f, 4);
      out |= sign;
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

uint16_t bf16_t::floatToBf16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) // nan: keep it quiet
    return uint16_t((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return uint16_t((x + rounding) >> 16);
}

} // namespace fb
