// Folding a zero Pad into the padding of the Conv or AveragePool after it (see PadFolding.h).
// An explicit Pad is one more kernel and one more tensor in memory: on Inception-v3 the nine
// before its branch AveragePools took 100 µs of a 4.3 ms run, copying each map to a slightly
// larger one.
#include "passes/PadFolding.h"

#include "passes/RewriteUtil.h"

#include <optional>
#include <vector>

namespace fb {

namespace {

/// The Pad's amounts as [begin of each spatial dim..., end of each spatial dim...] when it pads
/// only the spatial dims (2..rank-1) of a rank-`rank` tensor, by constant zeros, non-negative.
std::optional<std::vector<int64_t>> spatialZeroPads(const Node& pad, int64_t rank) {
  if (pad.op() != OpKind::Pad || pad.numOutputs() != 1 || pad.numInputs() < 2)
    return std::nullopt;
  auto mode = pad.attrs().getString("mode", "constant");
  if (!mode.ok() || *mode != "constant")
    return std::nullopt;
  if (pad.numInputs() > 3 && pad.input(3))
    return std::nullopt; // axes
  if (pad.numInputs() > 2 && pad.input(2)) {
    const Tensor* value = constantOf(pad.input(2));
    if (!value || value->numElements() > 1 ||
        (value->numElements() == 1 && value->getAsDouble(0) != 0.0))
      return std::nullopt;
  }
  const Tensor* amounts = constantOf(pad.input(1));
  if (!amounts || amounts->numElements() != 2 * rank)
    return std::nullopt;
  std::vector<int64_t> all = amounts->toInt64Vector();
  std::vector<int64_t> spatial;
  for (int64_t side = 0; side < 2; ++side)
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t p = all[size_t(side * rank + d)];
      if (p < 0 || (d < 2 && p != 0))
        return std::nullopt;
      if (d >= 2)
        spatial.push_back(p);
    }
  return spatial;
}

} // namespace

bool foldPadIntoWindow(Graph& g, Node* n, PassContext& ctx) {
  if ((n->op() != OpKind::Conv && n->op() != OpKind::AveragePool) || n->numInputs() < 1 ||
      !n->input(0))
    return false;
  Value* padded = n->input(0);
  Node* pad = padded->producer();
  if (!pad || padded->isGraphOutput() || padded->uses().size() != 1 ||
      padded->uses()[0].user != n || padded->uses()[0].operand != 0 || !pad->input(0))
    return false;
  const TensorType& t = pad->input(0)->type();
  if (t.rank() < 3)
    return false;
  const int64_t rank = int64_t(t.rank()), spatialDims = rank - 2;
  auto extra = spatialZeroPads(*pad, rank);
  if (!extra)
    return false;
  auto autoPad = n->attrs().getString("auto_pad", "NOTSET");
  auto pads = n->attrs().getInts("pads", std::vector<int64_t>(size_t(2 * spatialDims), 0));
  if (!autoPad.ok() || *autoPad != "NOTSET" || !pads.ok() ||
      int64_t(pads->size()) != 2 * spatialDims)
    return false;
  bool hadPads = false;
  for (int64_t p : *pads)
    hadPads = hadPads || p != 0;
  if (n->op() == OpKind::AveragePool) {
    // With ceil_mode a last window may hang past the padded input, where the explicit zeros
    // do not reach; with pads of its own that exclude the padding, the two kinds of zeros
    // would be counted differently.
    auto ceilMode = n->attrs().getInt("ceil_mode", 0);
    auto includePad = n->attrs().getInt("count_include_pad", 0);
    if (!ceilMode.ok() || *ceilMode != 0 || !includePad.ok() || (hadPads && *includePad == 0))
      return false;
  }
  if (!ctx.mayRewrite())
    return false;
  std::vector<int64_t> merged = *pads;
  for (size_t i = 0; i < merged.size(); ++i)
    merged[i] += (*extra)[i];
  n->attrs().set("pads", merged);
  if (n->op() == OpKind::AveragePool)
    n->attrs().set("count_include_pad", int64_t(1));
  n->setInput(0, pad->input(0));
  n->absorbProvenanceOf(*pad);
  ctx.logReplaced(pad->id(), {n->id()}, std::string("folded into ") + opName(n->op()) + "'s pads");
  ctx.addStatistic(std::string("zero Pad folded into ") + opName(n->op()));
  g.eraseNode(pad);
  return true;
}

} // namespace fb
