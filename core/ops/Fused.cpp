// Fused groups: shape inference and evaluation by recursing into the body sub-graph.
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

namespace fb {

namespace {

Status inferFused(InferContext& ctx) {
  Graph* body = ctx.node().body();
  if (!body)
    return ctx.error("fused group has no body");
  if (body->inputs().size() != ctx.numInputs())
    return ctx.error("body takes ", body->inputs().size(), " inputs, group has ",
                     ctx.numInputs());
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    TensorType t = ctx.inputType(i);
    body->inputs()[i]->setType(t);
  }
  Status st = inferShapes(*body);
  if (!st.ok())
    return st.error().withContext("in the body of " + ctx.node().describe());
  if (body->outputs().size() != ctx.numOutputs())
    return ctx.error("body yields ", body->outputs().size(), " outputs, group has ",
                     ctx.numOutputs());
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    ctx.setOutputType(i, body->outputs()[i]->type());
    if (body->outputs()[i]->shapeValue())
      ctx.setOutputShapeValue(i, *body->outputs()[i]->shapeValue());
  }
  return Status::success();
}

Status evalFused(EvalContext& ctx) {
  const Graph* body = ctx.node().body();
  if (!body)
    return ctx.error("fused group has no body");
  std::vector<Tensor> ins;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    ins.push_back(ctx.input(i));
  auto r = interpret(*body, ins);
  if (!r.ok())
    return r.error().withContext("in the body of " + ctx.node().describe());
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutput(i, r->outputs[i]);
  return Status::success();
}

} // namespace

void registerFusedOps(OpRegistry& r) { r.set(OpKind::Fused, inferFused, evalFused); }

} // namespace fb
