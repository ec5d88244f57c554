// Activation and weight layouts (NCHW, NHWC, blocked NCHW8c): how a logical NCHW tensor is laid
// out in each, and the exact conversions the layout ops and the `layout` pass share.
#pragma once

#include "core/Tensor.h"
#include "core/TensorType.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace fb {

/// How an activation tensor of logical shape [N, C, S...] (S: one or more spatial dims) is
/// stored.
///   - NCHW:   [N, C, S...], ONNX's layout.
///   - NHWC:   [N, S..., C], channels innermost.
///   - NCHW8c: [N, ceil(C/8), S..., 8], channels in blocks of 8 (one AVX2 vector of f32), the
///     tail block zero-padded. Every NCHW8c tensor that Fusebox produces keeps the padding lanes
///     at exactly zero; the `layout` pass relies on it (a Conv multiplies them by zero weights).
enum class DataLayout : uint8_t { NCHW, NHWC, NCHW8c };

/// Channels per block of NCHW8c.
inline constexpr int64_t kChannelBlock = 8;

/// "NCHW", "NHWC" or "NCHW8c", as the `layout`, `from` and `to` attributes spell it.
const char* layoutName(DataLayout layout);
/// Parses a layout name, ignoring case ("nchw8c" as the pass option spells it). The error lists
/// the known names.
Expected<DataLayout> parseLayout(std::string_view name);

/// Number of 8-channel blocks that hold `channels` (>= 0) channels; cannot overflow.
inline int64_t channelBlocks(int64_t channels) {
  return channels / kChannelBlock + (channels % kChannelBlock != 0);
}

/// The dims of a logical NCHW type [N, C, S...] in `to`. NCHW8c needs a static C.
Expected<std::vector<Dim>> dimsToLayout(const std::vector<Dim>& nchw, DataLayout to);
/// The logical NCHW dims of a type stored in `from` with `channels` channels, checking that the
/// stored dims agree with that channel count.
Expected<std::vector<Dim>> dimsFromLayout(const std::vector<Dim>& dims, DataLayout from,
                                          int64_t channels);
/// The channel count a type stored in `layout` shows: dim 1 (NCHW), the last dim (NHWC); NCHW8c
/// does not show it (the padding hides it): unknown.
Dim visibleChannels(const std::vector<Dim>& dims, DataLayout layout);

/// Stores a logical NCHW tensor (rank >= 3) in `to`, zero-padding the NCHW8c tail block. Exact:
/// only moves elements.
Expected<Tensor> tensorToLayout(const Tensor& nchw, DataLayout to);
/// The logical NCHW tensor of `t`, stored in `from` with `channels` channels (padding dropped).
Expected<Tensor> tensorFromLayout(const Tensor& t, DataLayout from, int64_t channels);

/// Conv weights W [M, C/group, K...] packed for a Conv whose activations are in `to`:
///   - NCHW:   unchanged.
///   - NHWC:   [M, K..., C/group] (OHWI, as XNNPACK and TFLite store them), any group.
///   - NCHW8c with group 1: [ceil(M/8), ceil(C/8), K..., 8 (input lane), 8 (output lane)], the
///     layout of ONNX Runtime's NCHWc Conv (OIHW8i8o); padded channels are zero.
///   - NCHW8c depthwise (group == C == M): [ceil(C/8), 1, K..., 8 (channel lane)] (OIHW8o).
///   - NCHW8c with group 1 reading an NCHW input (`inputBlocked` false; ONNX Runtime's choice
///     for a first Conv on few channels, which padding to 8 would waste): [ceil(M/8), C, K...,
///     8 (output lane)] (OIHW8o).
/// Other grouped convolutions have no NCHW8c packing: an Unsupported error.
Expected<Tensor> packConvWeight(const Tensor& w, int64_t group, DataLayout to,
                                bool inputBlocked = true);
/// The inverse of packConvWeight for a Conv with `inChannels` (C) and `outChannels` (M).
Expected<Tensor> unpackConvWeight(const Tensor& packed, int64_t group, DataLayout from,
                                  int64_t inChannels, int64_t outChannels,
                                  bool inputBlocked = true);
/// The sizes packConvWeight gives for W [M, C/group, K...].
Expected<std::vector<int64_t>> packedWeightSizes(int64_t outChannels, int64_t inChannels,
                                                 int64_t group,
                                                 const std::vector<int64_t>& kernel,
                                                 DataLayout to, bool inputBlocked = true);

/// Conv bias B [M] packed for `to`: [ceil(M/8), 8] zero-padded for NCHW8c, unchanged otherwise.
Tensor packConvBias(const Tensor& bias, DataLayout to);
/// The inverse of packConvBias.
Expected<Tensor> unpackConvBias(const Tensor& packed, DataLayout from, int64_t outChannels);

} // namespace fb
