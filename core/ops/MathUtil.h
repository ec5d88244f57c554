// Helpers shared by the math op files (unary, binary, reduction, normalization): dtype sets,
// compute types, NumPy-like element conversion and wrapping arithmetic, templated broadcast loops.
#pragma once

#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

namespace fb::math {

/// A set of dtypes as a bit mask: which element types an op accepts.
using DTypeSet = uint16_t;

/// The bit of one dtype in a DTypeSet.
constexpr DTypeSet dtypeBit(DType d) {
  return DTypeSet(1u << unsigned(d));
}

inline constexpr DTypeSet kFloatTypes =
    dtypeBit(DType::F32) | dtypeBit(DType::F16) | dtypeBit(DType::BF16);
inline constexpr DTypeSet kSignedIntTypes =
    dtypeBit(DType::I8) | dtypeBit(DType::I32) | dtypeBit(DType::I64);
inline constexpr DTypeSet kIntTypes = kSignedIntTypes | dtypeBit(DType::U8);
inline constexpr DTypeSet kNumericTypes = kFloatTypes | kIntTypes;
inline constexpr DTypeSet kBoolType = dtypeBit(DType::Bool);
inline constexpr DTypeSet kAllTypes = kNumericTypes | kBoolType;

/// True when `d` is in `set`.
constexpr bool inSet(DTypeSet set, DType d) {
  return (set & dtypeBit(d)) != 0;
}
/// True when the dtype of the C++ element type T is in `set`.
template <typename T> constexpr bool typeInSet(DTypeSet set) {
  return inSet(set, DTypeOf<T>::value);
}

/// Spells a dtype set for error messages: "f32, f16, bf16".
inline std::string dtypeSetName(DTypeSet set) {
  std::string s;
  for (DType d : kAllDTypes)
    if (inSet(set, d))
      s += (s.empty() ? "" : ", ") + std::string(dtypeName(d));
  return s;
}

/// Checks that input i's dtype is one of `allowed`; the error names node, operand and dtype.
inline Status checkInputDType(const InferContext& ctx, size_t i, DTypeSet allowed) {
  DType d = ctx.inputType(i).dtype;
  if (!inSet(allowed, d))
    return ctx.error("input ", i, " has dtype ", dtypeName(d), ", but ", ctx.node().info().name,
                     " takes ", dtypeSetName(allowed));
  return Status::success();
}

/// Checks that present inputs a and b have the same dtype, as ONNX's shared type variables require.
inline Status checkSameDType(const InferContext& ctx, size_t a, size_t b) {
  DType da = ctx.inputType(a).dtype, db = ctx.inputType(b).dtype;
  if (da != db)
    return ctx.error("input ", a, " is ", dtypeName(da), " but input ", b, " is ", dtypeName(db),
                     "; ", ctx.node().info().name, " needs equal dtypes");
  return Status::success();
}

/// Reads an int attribute, prefixing a type error with the node.
template <typename Ctx> Expected<int64_t> intAttr(const Ctx& ctx, const char* name, int64_t dflt) {
  auto v = ctx.attrs().getInt(name, dflt);
  if (!v)
    return ctx.error(v.error().message());
  return *v;
}
/// Reads a float attribute, prefixing a type error with the node.
template <typename Ctx> Expected<float> floatAttr(const Ctx& ctx, const char* name, float dflt) {
  auto v = ctx.attrs().getFloat(name, dflt);
  if (!v)
    return ctx.error(v.error().message());
  return *v;
}
/// Reads an ints attribute, prefixing a type error with the node.
template <typename Ctx>
Expected<std::vector<int64_t>> intsAttr(const Ctx& ctx, const char* name,
                                        const std::vector<int64_t>& dflt) {
  auto v = ctx.attrs().getInts(name, dflt);
  if (!v)
    return ctx.error(v.error().message());
  return *v;
}

/// The type arithmetic runs in: float for the 16-bit float storage types, T itself otherwise.
template <typename T>
using ComputeT =
    std::conditional_t<std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>, float, T>;

/// True for f32, f16 and bf16 element types.
template <typename T> inline constexpr bool kIsFloatLike = std::is_floating_point_v<ComputeT<T>>;

/// Converts a floating value to an integer type the way NumPy's astype does on x86-64 for values
/// in range: truncation toward zero, then wrap-around to the narrower width. NaN gives 0 and
/// values beyond int64 clamp, where C++ would be undefined.
template <typename I> I floatToInt(double v) {
  static_assert(std::is_integral_v<I>);
  if (std::isnan(v))
    return I(0);
  v = std::trunc(v);
  if (v >= 9223372036854775807.0)
    return I(std::numeric_limits<int64_t>::max());
  if (v <= -9223372036854775808.0)
    return I(std::numeric_limits<int64_t>::min());
  if constexpr (std::is_same_v<I, bool>)
    return v != 0;
  else
    return I(int64_t(v)); // narrowing integral conversion wraps modulo 2^N in C++20
}

/// Converts one element between element types with ONNX Cast semantics: float to integer
/// truncates toward zero, anything to bool is `!= 0`, no saturation.
template <typename D, typename S> D convertElement(S s) {
  using CS = ComputeT<S>;
  if constexpr (std::is_same_v<D, bool>) {
    return CS(s) != CS(0);
  } else if constexpr (std::is_same_v<S, bool>) {
    return D(ComputeT<D>(s ? 1 : 0));
  } else if constexpr (kIsFloatLike<S> && std::is_integral_v<D>) {
    return floatToInt<D>(double(CS(s)));
  } else if constexpr (kIsFloatLike<D>) {
    return D(ComputeT<D>(CS(s)));
  } else {
    return D(s); // integer to integer wraps
  }
}

/// Integer add, subtract and multiply that wrap modulo 2^N like NumPy instead of overflowing
/// (undefined behaviour on signed types in C++); floats use ordinary arithmetic.
template <typename C> C wrapAdd(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return C(std::make_unsigned_t<C>(a) + std::make_unsigned_t<C>(b));
  else
    return a + b;
}
template <typename C> C wrapSub(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return C(std::make_unsigned_t<C>(a) - std::make_unsigned_t<C>(b));
  else
    return a - b;
}
template <typename C> C wrapMul(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    // Unsigned types narrower than int promote to int, whose product can overflow: use 64 bits.
    using U = std::conditional_t<(sizeof(C) < sizeof(uint64_t)), uint64_t, std::make_unsigned_t<C>>;
    return C(U(std::make_unsigned_t<C>(a)) * U(std::make_unsigned_t<C>(b)));
  } else {
    return a * b;
  }
}

/// Calls fn(outIndex, offsets) for every element of outSizes, where offsets[k] is the element
/// offset into operand k given its (broadcast) strides. A template, unlike fb::forEachBroadcast,
/// so the per-element call inlines in hot kernels.
template <size_t N, typename Fn>
void forEachBroadcastN(const std::vector<int64_t>& outSizes,
                       const std::array<std::vector<int64_t>, N>& strides, Fn&& fn) {
  const size_t rank = outSizes.size();
  int64_t total = 1;
  for (int64_t s : outSizes)
    total *= s;
  if (total == 0)
    return;
  std::array<int64_t, N> offsets{};
  if (rank == 0) {
    fn(int64_t(0), offsets);
    return;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = outSizes[rank - 1];
  std::array<int64_t, N> innerStride{};
  for (size_t k = 0; k < N; ++k)
    innerStride[k] = strides[k][rank - 1];
  for (int64_t out = 0; out < total; out += inner) {
    std::array<int64_t, N> cur = offsets;
    for (int64_t j = 0; j < inner; ++j) {
      fn(out + j, cur);
      for (size_t k = 0; k < N; ++k)
        cur[k] += innerStride[k];
    }
    // Carry the multi-index over dims [0, rank - 1).
    for (size_t d = rank - 1; d-- > 0;) {
      ++index[d];
      for (size_t k = 0; k < N; ++k)
        offsets[k] += strides[k][d];
      if (index[d] < outSizes[d])
        break;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= strides[k][d] * outSizes[d];
      index[d] = 0;
    }
  }
}

/// Maps an ONNX TensorProto element type number (Cast's `to`, LayerNormalization's stash_type)
/// to a Fusebox dtype; nullopt for types Fusebox lacks (double, string, int16, ...).
inline std::optional<DType> dtypeFromOnnxElemType(int64_t elemType) {
  switch (elemType) {
  case 1:
    return DType::F32;
  case 2:
    return DType::U8;
  case 3:
    return DType::I8;
  case 6:
    return DType::I32;
  case 7:
    return DType::I64;
  case 9:
    return DType::Bool;
  case 10:
    return DType::F16;
  case 16:
    return DType::BF16;
  default:
    return std::nullopt;
  }
}

/// Returns the op's OpCost with `perElement` FLOPs for every element of output 0.
template <int PerElement> OpCost costPerOutputElement(const CostContext& ctx) {
  return OpCost{PerElement * ctx.outputElements(0), 0};
}
/// Returns the op's OpCost with `perElement` FLOPs for every element of input 0.
template <int PerElement> OpCost costPerInputElement(const CostContext& ctx) {
  return OpCost{PerElement * ctx.inputElements(0), 0};
}

} // namespace fb::math
