// Shape inference driver: runs each op's inference function in execution order.
#include "core/ShapeInference.h"
#include "core/ops/OpContext.h"

namespace fb {

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
