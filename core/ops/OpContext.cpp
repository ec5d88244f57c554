// InferContext, EvalContext and CostContext.
#include "core/ops/OpContext.h"

namespace fb {

static int64_t graphOpset(const Node& n) {
  const Graph* g = n.graph();
  while (g && g->parent())
    g = g->parent();
  return g ? g->opset() : 17;
}

InferContext::InferContext(const Node& node)
    : m_node(node), m_outputTypes(node.numOutputs()), m_outputShapeValues(node.numOutputs()) {}

int64_t InferContext::opset() const { return graphOpset(m_node); }

const TensorType& InferContext::inputType(size_t i) const {
  assert(hasInput(i) && "inputType of an absent input");
  return m_node.input(i)->type();
}

const Tensor* InferContext::inputConstant(size_t i) const {
  const Value* v = m_node.input(i);
  if (!v)
    return nullptr;
  if (v->isConstant() && v->constantData().valid())
    return &v->constantData();
  if (const Node* p = v->producer(); p && p->op() == OpKind::Constant)
    if (const AttrValue* a = p->attrs().find("value"))
      if (const Tensor* t = std::get_if<Tensor>(a))
        return t;
  return nullptr;
}

std::optional<std::vector<Dim>> InferContext::inputShapeValue(size_t i) const {
  const Value* v = m_node.input(i);
  if (!v)
    return std::nullopt;
  if (const Tensor* t = inputConstant(i)) {
    if (t->rank() > 1 || !isInteger(t->dtype()))
      return std::nullopt;
    std::vector<Dim> dims;
    for (int64_t k = 0; k < t->numElements(); ++k)
      dims.emplace_back(t->getAsInt64(k));
    return dims;
  }
  return v->shapeValue();
}

EvalContext::EvalContext(const Node& node, std::vector<Tensor> inputs)
    : m_node(node), m_inputs(std::move(inputs)), m_outputs(node.numOutputs()) {}

int64_t EvalContext::opset() const { return graphOpset(m_node); }

double CostContext::elements(const TensorType& t) {
  double n = 1;
  for (const Dim& d : t.dims)
    n *= d.isStatic() ? double(d.size()) : 1.0;
  return n;
}

} // namespace fb
