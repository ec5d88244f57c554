// Which nodes the `layout` pass can move out of NCHW, and the regions they form: maximal
// connected sets of such nodes, of which those with a Conv are converted.
#pragma once

#include "core/Graph.h"
#include "core/ops/LayoutTransform.h"

#include <unordered_map>
#include <vector>

namespace fb {

/// How one node is rewritten when its region moves to another layout.
enum class LayoutRole : uint8_t {
  Conv,        ///< becomes LayoutConv with packed weights (the anchor of a region)
  Pool,        ///< MaxPool/AveragePool/Global*Pool: becomes the Layout* pool
  BatchNorm,   ///< inference BatchNormalization: becomes Mul and Add by re-laid constants
  Elementwise, ///< stays the same op on re-laid operands (constants re-laid at pass time)
  Concat,      ///< stays Concat, along the axis that holds the original axis in the layout
};

/// One node that can run in the target layout.
struct LayoutCandidate {
  Node* node = nullptr;
  LayoutRole role = LayoutRole::Elementwise;
  /// Operands that are activations in the region's layout: region values or values converted
  /// at the boundary. Other operands are constants re-laid at pass time (`constantOperands`),
  /// or scalars left as they are (Clip's bounds).
  std::vector<unsigned> activationOperands;
  std::vector<unsigned> constantOperands;
  /// NCHW8c with a padded tail and f(0) != 0 (Sigmoid, Exp): the result is multiplied by a
  /// 0/1 lane mask so that the padding lanes are zero again.
  bool maskPadding = false;
  int region = -1; ///< index into LayoutRegions::regions
};

/// The candidates of a graph grouped into regions.
struct LayoutRegions {
  std::vector<LayoutCandidate> candidates; ///< in execution order
  std::unordered_map<const Node*, size_t> index; ///< node → position in candidates
  /// For each region, the positions of its candidates; `converted[r]` says whether it has a
  /// Conv (only those are worth converting: a region of pools and elementwise ops alone would
  /// only add conversions).
  std::vector<std::vector<size_t>> regions;
  std::vector<bool> converted;

  /// The candidate of `n` when n lies in a converted region; nullptr otherwise.
  const LayoutCandidate* convertedCandidate(const Node* n) const;
};

/// Where axis `axis` of a logical NCHW activation of rank `rank` lives in `to`.
int64_t layoutAxis(int64_t axis, size_t rank, DataLayout to);

/// Finds the candidates of `graph` for layout `to` and their regions. Shapes must be inferred.
/// A node qualifies when its output is an f32/f16/bf16 activation [N, C, S...] with a static C,
/// it has one output, and:
///   - Conv: constant W (and B); for NCHW8c group 1 or depthwise (group = C = M);
///   - MaxPool (without Indices), AveragePool, GlobalAveragePool, GlobalMaxPool;
///   - BatchNormalization in inference mode with constant parameters;
///   - Concat of activations; along channels in NCHW8c only when every input but the last has
///     a multiple of 8 channels (so no padding lands inside the result);
///   - elementwise ops (Relu, Clip, Add, Mul, ...) whose non-constant operands are activations
///     of the same channel count and whose constant operands broadcast per channel or not at
///     all. For NCHW8c with C not a multiple of 8 the padding lanes must stay zero: ops with
///     f(0) = 0 (Relu, Add, Mul, ...) keep them so, ops with a finite f(0) != 0 (Sigmoid,
///     HardSigmoid, Exp) get a lane mask, and ops that may give Inf or NaN there (Div, Log,
///     Reciprocal) bound the region.
/// Two candidates are connected when one reads the other's output as an activation.
LayoutRegions findLayoutRegions(const Graph& graph, DataLayout to);

} // namespace fb
