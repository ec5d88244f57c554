// Control-flow nodes (If, Loop, Scan): how their operands, bodies and results line up.
//
// Bodies are closed (closure conversion at import): a value a body reads from an enclosing scope
// is an explicit trailing operand of the node (a "capture") and a trailing input of every body,
// in the same order. So:
//
//   If:   operands (cond, c...)              then_branch/else_branch inputs (c...)
//         results  (r...)                     branch outputs (r...)
//   Loop: operands (M?, cond?, v..., c...)    body inputs  (iter, cond, v..., c...)
//         results  (v..., s...)               body outputs (cond, v..., s...)
//   Scan: operands (v..., x..., c...)          body inputs  (v..., x slices..., c...)
//         results  (v..., s...)               body outputs (v..., s...)
//
// v: loop-carried state, x: scanned inputs, s: scan outputs (one slice per iteration, stacked),
// c: captures. Loop and Scan count their captures in the `captures` attribute (absent: none).
#pragma once

#include "core/Graph.h"

#include <optional>

namespace fb {

/// The Fusebox attribute that counts a Loop's or Scan's captured operands. Not an ONNX
/// attribute: the exporter turns captures back into outer-scope references.
inline constexpr const char* kCapturesAttr = "captures";

/// True for ops whose nodes own named bodies (If, Loop, Scan), as opposed to fused groups.
bool isControlFlowOp(OpKind op);

/// The body roles an op must have, in order ({"then_branch", "else_branch"}, {"body"}).
std::vector<const char*> controlFlowBodyRoles(OpKind op);

/// How one control-flow node's operands and results divide (see the file comment).
struct ControlFlowLayout {
  size_t firstCarried = 0; ///< operand index of the first loop-carried value
  size_t numCarried = 0;   ///< loop-carried values v (0 for If)
  size_t numScanInputs = 0; ///< scanned inputs x (Scan only)
  size_t numScanOutputs = 0; ///< stacked outputs s (Loop, Scan)
  size_t firstCapture = 0; ///< operand index of the first capture
  size_t numCaptures = 0;  ///< captured outer values c
  /// Body inputs before the captures: 0 for If, 2 + v for Loop, v + x for Scan.
  size_t bodyInputsBeforeCaptures = 0;
};

/// Works out the layout of an If, Loop or Scan node and checks that its bodies have the inputs
/// and outputs the layout needs. The error names the node and what does not add up.
Expected<ControlFlowLayout> controlFlowLayout(const Node& node);

/// The least type that both `a` and `b` satisfy: equal dims kept, differing dims unknown.
/// nullopt when the dtypes or ranks differ (no tensor type covers both).
std::optional<TensorType> joinTypes(const TensorType& a, const TensorType& b);

/// Calls fn(graph) for `graph` and every body nested in it, outer graphs first.
template <typename Fn> void forEachGraph(Graph& graph, Fn&& fn) {
  fn(graph);
  for (const auto& n : graph.nodes())
    for (const NodeBody& b : n->bodies())
      forEachGraph(*b.graph, fn);
}
template <typename Fn> void forEachGraph(const Graph& graph, Fn&& fn) {
  fn(graph);
  for (const auto& n : graph.nodes())
    for (const NodeBody& b : n->bodies())
      forEachGraph(static_cast<const Graph&>(*b.graph), fn);
}

} // namespace fb
