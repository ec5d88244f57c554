// A canonicalize pattern: a zero Pad of the spatial dims before a Conv or AveragePool becomes
// that operation's own padding.
#pragma once

#include "passes/Pass.h"

namespace fb {

/// When `n` is a Conv or an AveragePool (ceil_mode 0) whose input is the only use of a
/// constant-mode Pad by zeros with constant, non-negative pads on the spatial dims only (what
/// PyTorch exports for Inception's `avg_pool2d(..., padding=1)` with count_include_pad), adds
/// those pads to `n`'s pads and erases the Pad; an AveragePool then counts the padding
/// (count_include_pad = 1), which is what averaging the explicit zeros did. Exact: the same
/// zeros enter the same sums. Returns true when it rewrote `n`.
bool foldPadIntoWindow(Graph& g, Node* n, PassContext& ctx);

} // namespace fb
