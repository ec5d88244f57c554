// Recognition of activation functions that exporters write as several elementwise ops (GELU as
// Div, Erf, Add, Mul, Mul; its tanh approximation with Pow and Tanh), so a GEMM kernel can apply
// them in its epilogue instead of falling back to loop nests.
#pragma once

#include "codegen/kernel/GemmSpec.h"
#include "core/Graph.h"

#include <functional>
#include <optional>

namespace fb::cg::lower {

/// An activation found after a value: what it computes, and the node whose output is its result.
struct MatchedActivation {
  EpilogueOp::Kind kind;
  const Node* last = nullptr;
  size_t nodes = 0; ///< how many ops it replaces
};

/// When every use of `x` lies in one small subgraph of elementwise ops whose other operands are
/// scalar f32 constants (`constantOf` gives a value's compile-time data, or null), whose
/// intermediate values are used only inside it, and which computes GELU (erf form) or GELU's
/// tanh approximation of x: that activation. The subgraph is identified by what it computes —
/// evaluated with the reference interpreter's kernels on probe values and compared with the
/// definition — so any arrangement an exporter chooses (Div by √2 or Mul by 1/√2, the 0.5
/// first or last, x³ as Pow or as Mul) matches.
std::optional<MatchedActivation>
matchActivation(const Value* x, const std::function<const Tensor*(const Value*)>& constantOf);

} // namespace fb::cg::lower
