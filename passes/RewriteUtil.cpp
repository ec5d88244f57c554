// Rewrite helpers.
#include "passes/RewriteUtil.h"

namespace fb {

void replaceValue(Graph& graph, Value* from, Value* to) {
  bool wasOutput = from->isGraphOutput();
  std::string name = from->name();
  from->replaceAllUsesWith(to);
  if (!wasOutput || to->isInput() || to->isConstant())
    return;
  int outputs = 0;
  for (const Value* o : graph.outputs())
    outputs += o == to;
  if (outputs != 1)
    return;
  // `from` is now unused; give its name to `to` so the model's interface does not change.
  std::string tmp = graph.uniqueValueName(name + ".old");
  graph.renameValue(from, tmp);
  graph.renameValue(to, name);
}

bool canReplaceKeepingName(const Graph& graph, const Value* from, const Value* to) {
  if (!from->isGraphOutput())
    return true;
  if (to->isInput() || to->isConstant() || to->isGraphOutput())
    return false;
  // `from` may fill several output slots; after the replacement `to` must fill exactly one.
  int slots = 0;
  for (const Value* o : graph.outputs())
    slots += o == from;
  return slots == 1;
}

bool isConstantSplat(const Value* v, double x) {
  const Tensor* t = constantOf(v);
  if (!t || t->numElements() == 0)
    return false;
  for (int64_t i = 0; i < t->numElements(); ++i)
    if (t->getAsDouble(i) != x)
      return false;
  return true;
}

const Tensor* constantOf(const Value* v) {
  if (!v || !v->isConstant() || !v->constantData().valid())
    return nullptr;
  return &v->constantData();
}

bool sameType(const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype || a.dims.size() != b.dims.size())
    return false;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i].isUnknown() || !(a.dims[i] == b.dims[i]))
      return false;
  return true;
}

} // namespace fb
