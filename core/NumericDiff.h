// Numeric diff of two snapshots: run both on the same inputs and compare every matched value.
#pragma once

#include "core/Graph.h"
#include "core/TensorCompare.h"

#include <optional>
#include <string>
#include <vector>

namespace fb {

/// How a value of the later graph was paired with a value of the reference graph.
enum class ValueMatch : uint8_t {
  GraphOutput, ///< the same position in the graphs' output lists
  Name,        ///< the same value name (no longer used: a name can outlive its meaning)
  NodeId,      ///< the same original node, untouched, and output index
  Provenance,  ///< the producer (or, for a fused group, the body node yielding it) was made from
               ///< original ops, the last of which produced the reference value
};

/// A short word for a match kind: "output", "name", "node id", "provenance".
const char* valueMatchName(ValueMatch match);

/// One value of graph b compared with its counterpart in the reference graph a.
struct ValueComparison {
  std::string value;        ///< the value's name in b
  std::string reference;    ///< the name of the matched value in a
  NodeId producer = 0;      ///< the node of b that produces the value
  unsigned resultIndex = 0; ///< which output of the producer
  ValueMatch match = ValueMatch::Name;
  double maxAbs = 0;  ///< largest |b - a|
  double maxRel = 0;  ///< largest |b - a| / max(|a|, 1e-12)
  double cosine = 1;  ///< cosine similarity of the flattened tensors
  bool ok = true;     ///< every element within atol + rtol·|a|, and equal dtype and shape
  std::string reason; ///< why not ok: the first bad element, or the type mismatch
};

/// The result of a numeric diff.
struct NumericDiff {
  /// Every matched value, in the execution order of b (node by node, outputs in order).
  std::vector<ValueComparison> values;
  /// The first node of b, in execution order, with an output outside tolerance: where the two
  /// graphs start to disagree.
  std::optional<NodeId> firstDivergent;
  /// Node outputs of b with no counterpart in a (new intermediate values, say).
  std::vector<std::string> unmatched;
  /// True when every matched value is within tolerance.
  bool ok() const { return !firstDivergent.has_value(); }
  /// The comparisons of the values the node `id` of b produces.
  std::vector<const ValueComparison*> valuesOf(NodeId id) const;
};

/// Runs `a` (the reference, usually the earlier snapshot) and `b` on the same `inputs` with the
/// interpreter, keeping every intermediate value, and compares each value of b with its
/// counterpart in a. Graph outputs are matched by position. Every other value is matched by what
/// it means, never by name: the original op it stands for is the last (largest original id) of
/// the ops its producer was made from (its provenance, or itself when it has none; for a fused
/// group's output, the body node that yields it), with that op's output index. When several
/// values of a graph carry one meaning (a rewrite that splits Gemm into MatMul and Add gives both
/// its provenance), the last in execution order stands for it and the others are unmatched, as
/// are values whose counterpart differs in dtype or shape (a blocked layout) or is missing (an
/// intermediate that fusion hid). Only top-level values are compared: a fused group of b is
/// compared at its outputs, its body stays opaque, because marking internal tensors as outputs
/// would change what is fused. Fails when either graph fails to run (the message says which).
Expected<NumericDiff> numericDiff(const Graph& a, const Graph& b, const std::vector<Tensor>& inputs,
                                  double atol, double rtol);

} // namespace fb
