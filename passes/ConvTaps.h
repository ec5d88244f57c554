// A canonicalize pattern: kernel taps of a convolution that only ever read padding are dropped.
#pragma once

#include "passes/Pass.h"

namespace fb {

/// When some rows or columns of a 2-D Conv's constant kernel multiply only padding for every
/// output position (an atrous convolution whose dilation is as large as its input, DeepLab's
/// ASPP on a small feature map), rewrites the Conv to the smaller kernel of the taps that read
/// data, with its pads and dilation adjusted so the output is unchanged. Exact: the dropped
/// products were weight × 0 (weights that are not finite are kept, as inf × 0 is NaN). Returns
/// true when it rewrote `n`.
bool dropPaddingOnlyConvTaps(Graph& g, Node* n, PassContext& ctx);

} // namespace fb
