// Shape inference driver: runs each op's inference function in execution order.
#include "core/ShapeInference.h"
#include "core/ops/OpContext.h"

namespace fb {

namespace {

/// Every size that inference computes must be a count and a byte size that 64-bit arithmetic
/// holds: a hostile shape (a Reshape whose product wraps around, Tile to 2^31 x 2^31, a huge
/// pad) is refused here, naming the node, before any later stage multiplies it out.
Status checkCountable(const Node& node, size_t i, const TensorType& t) {
  if (!hasCountableSize(t))
    return makeError(node.describe(), ": output ", i, " would be ", t.str(),
                     ": a size that overflows 64 bits or is negative");
  return Status::success();
}

} // namespace

Status inferNodeShapes(Node& node) {
  const OpInfo& info = node.info();
  if (!info.infer)
    return makeError(node.describe(), ": no shape inference for op ", info.name);
  for (size_t i = 0; i < node.numInputs(); ++i) {
    const Value* in = node.input(i);
    if (!in && int(i) < info.minInputs)
      return makeError(node.describe(), ": required input ", i, " is missing");
  }
  InferContext ctx(node);
  Status st = info.infer(ctx);
  if (!st.ok())
    return st;
  for (size_t i = 0; i < node.numOutputs(); ++i)
    FB_TRY(checkCountable(node, i, ctx.outputTypes()[i]));
  for (size_t i = 0; i < node.numOutputs(); ++i) {
    TensorType t = ctx.outputTypes()[i];
    // Quantization parameters are annotations that inference does not compute: keep them.
    if (!t.quant)
      t.quant = node.output(i)->type().quant;
    node.output(i)->setType(std::move(t));
    node.output(i)->setShapeValue(ctx.outputShapeValues()[i]);
  }
  return Status::success();
}

Status inferShapes(Graph& graph) {
  for (const auto& n : graph.nodes())
    FB_TRY(inferNodeShapes(*n));
  return Status::success();
}

bool isAtLeastAsPrecise(const TensorType& refined, const TensorType& before) {
  if (refined.dtype != before.dtype || refined.rank() != before.rank())
    return false;
  for (size_t d = 0; d < before.rank(); ++d) {
    const Dim& was = before.dims[d];
    const Dim& now = refined.dims[d];
    if (was.isStatic() && !(now.isStatic() && now.size() == was.size()))
      return false;
    if (was.isSymbol() && now.isUnknown())
      return false;
  }
  return true;
}

Status refineShapes(Graph& graph) {
  for (const auto& n : graph.nodes()) {
    std::vector<TensorType> before;
    for (size_t i = 0; i < n->numOutputs(); ++i)
      before.push_back(n->output(i)->type());
    FB_TRY(inferNodeShapes(*n));
    for (size_t i = 0; i < n->numOutputs(); ++i)
      if (!isAtLeastAsPrecise(n->output(i)->type(), before[i]))
        return makeError(n->describe(), ": output '", n->output(i)->name(), "' was typed ",
                         before[i].str(), " but now infers as ", n->output(i)->type().str(),
                         ", which says less or contradicts it");
  }
  return Status::success();
}

Status specializeDims(Graph& graph, const std::map<std::string, int64_t>& sizes) {
  for (Value* in : graph.inputs()) {
    TensorType t = in->type();
    for (Dim& d : t.dims) {
      if (!d.isSymbol())
        continue;
      auto it = sizes.find(d.symbolName());
      if (it != sizes.end())
        d = Dim(it->second);
    }
    in->setType(std::move(t));
  }
  return inferShapes(graph);
}

} // namespace fb
