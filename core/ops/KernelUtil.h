// Helpers shared by per-op shape inference and interpreter kernels: axes, broadcasting,
// symbolic dim arithmetic and strided iteration.
#pragma once

#include "core/Error.h"
#include "core/Tensor.h"
#include "core/TensorType.h"

#include <functional>
#include <vector>

namespace fb {

/// Maps a possibly negative axis into [0, rank); an error names the axis and rank.
Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// Normalizes a list of axes, rejecting duplicates.
Expected<std::vector<int64_t>> normalizeAxes(const std::vector<int64_t>& axes, int64_t rank);

/// NumPy broadcasting of two shapes with symbolic dims ("N" with 1 gives "N"; "N" with 3 gives
/// 3; "N" with "M" gives unknown). An error names both shapes.
Expected<std::vector<Dim>> broadcastDims(const std::vector<Dim>& a, const std::vector<Dim>& b);
/// Multidirectional broadcasting over any number of shapes.
Expected<std::vector<Dim>> broadcastDimsAll(const std::vector<std::vector<Dim>>& shapes);
/// NumPy broadcasting of concrete sizes.
Expected<std::vector<int64_t>> broadcastSizes(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b);

/// Strides (in elements) for reading a tensor of `inSizes` as if broadcast to `outSizes`:
/// broadcast dims get stride 0. inSizes is right-aligned against outSizes.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& inSizes,
                                      const std::vector<int64_t>& outSizes);

/// Calls fn(outIndex, inOffsets...) for every element of outSizes, where inOffsets[k] is the
/// element offset into input k given its (broadcast) strides. The workhorse of broadcast ops.
void forEachBroadcast(const std::vector<int64_t>& outSizes,
                      const std::vector<std::vector<int64_t>>& inStrides,
                      const std::function<void(int64_t, const int64_t*)>& fn);

/// Product of dims when all are static.
std::optional<int64_t> staticProduct(const std::vector<Dim>& dims);
/// a * b on dims: numbers multiply; 1 is the identity; anything else symbolic gives unknown.
Dim mulDims(const Dim& a, const Dim& b);
/// Dims from concrete sizes.
std::vector<Dim> dimsOf(const std::vector<int64_t>& sizes);
/// True when two dims are known to differ (both static and unequal).
bool dimsConflict(const Dim& a, const Dim& b);

/// Reads an optional 1-D integer input tensor as int64 values.
std::vector<int64_t> tensorToInts(const Tensor& t);

} // namespace fb
