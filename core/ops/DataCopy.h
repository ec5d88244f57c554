// Helpers shared by the data-movement ops: element copies through per-dimension offset maps and
// reading shape-like operands (Reshape's shape, Slice's starts, ...) at compile time.
#pragma once

#include "core/Tensor.h"
#include "core/TensorType.h"
#include "core/ops/OpContext.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fb {

/// An entry of an offset map meaning "this output index reads no input element": the element
/// gets the fill value instead (Pad's constant, Resize's extrapolation value).
inline constexpr int64_t kOutsideInput = INT64_MIN;

/// Builds a tensor of `outSizes` whose element at multi-index (i0, i1, ...) is the input element
/// at offset offsets[0][i0] + offsets[1][i1] + ..., or `fill` when any term is kOutsideInput.
/// `offsets[d]` has outSizes[d] entries, each already multiplied by the input stride it walks;
/// this one routine expresses Transpose, Slice, Expand, Tile, Pad and nearest Resize.
/// `fill` points at one element of the input's dtype, or is null for zero bytes.
Expected<Tensor> copyWithOffsets(const Tensor& in, const std::vector<int64_t>& outSizes,
                                 const std::vector<std::vector<int64_t>>& offsets,
                                 const std::byte* fill = nullptr);
/// Checks, before any offset map is built, that an output of `outSizes` can be allocated (the
/// maps are as long as its dims: a huge dim must fail here, not in their allocation). Returns
/// true when the output has elements (the maps are needed), false for an empty output, whose
/// maps copyWithOffsets does not read.
Expected<bool> checkCopyOutput(DType dtype, const std::vector<int64_t>& outSizes);

/// Input i's elements as numbers when every one of them is known at compile time (a constant or a
/// shape value with only static dims); nullopt otherwise.
std::optional<std::vector<int64_t>> knownInts(const InferContext& ctx, size_t i);

/// "[N, 3, -1]": a list of dims as error messages print it.
std::string dimsString(const std::vector<Dim>& dims);
/// "[2, 3]": a list of sizes as error messages print it.
std::string sizesString(const std::vector<int64_t>& sizes);

/// True when `type` can carry a shape value: an integer scalar or 1-D tensor.
bool canHoldShapeValue(const TensorType& type);

/// The longest list of dims propagated as a shape value: shapes are short, and a long 1-D integer
/// tensor (an index table) is data, not a shape.
inline constexpr size_t kMaxShapeValueLength = 64;

/// Records `dims` as output i's shape value when the list is short enough to be a shape.
void setSmallShapeValue(InferContext& ctx, size_t i, std::vector<Dim> dims);

/// A cost function for ops that only move data: zero FLOPs (bytes are counted by the caller).
OpCost zeroFlopsCost(const CostContext& ctx);

/// Registers Concat, Split, Slice, Gather and Pad (ops/Slicing.cpp); called by
/// registerDataMovementOps.
void registerSlicingOps(OpRegistry& r);

} // namespace fb
