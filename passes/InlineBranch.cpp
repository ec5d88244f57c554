// Inlining the taken branch of an If with a constant condition (used by fold-constants).
#include "passes/InlineBranch.h"
#include "passes/RewriteUtil.h"

#include <cassert>
#include <unordered_map>

namespace fb {

std::vector<Node*> inlineConstantIf(Graph& graph, Node* ifNode) {
  assert(ifNode->op() == OpKind::If && "inlineConstantIf on another op");
  const Value* cond = ifNode->input(0);
  if (!cond || !cond->isConstant() || cond->constantData().numElements() != 1 ||
      cond->constantData().dtype() != DType::Bool)
    return {};
  const bool taken = cond->constantData().rawData()[0] != std::byte{0};
  const Graph* branch = ifNode->bodyNamed(taken ? "then_branch" : "else_branch");
  if (!branch || branch->inputs().size() + 1 != ifNode->numInputs() ||
      branch->outputs().size() != ifNode->numOutputs())
    return {};

  std::unordered_map<const Value*, Value*> map; // branch value → value of `graph`
  for (size_t i = 0; i < branch->inputs().size(); ++i)
    map[branch->inputs()[i]] = ifNode->input(1 + i);
  for (const Value* c : branch->constants()) {
    Value* nc = graph.addConstant(graph.uniqueValueName(c->name()), c->constantData());
    nc->setType(c->type());
    map[c] = nc;
  }
  std::vector<Node*> inlined;
  for (const auto& bn : branch->nodes()) {
    std::vector<Value*> ins;
    for (const Value* in : bn->inputs())
      ins.push_back(in ? map.at(in) : nullptr);
    std::vector<std::string> outNames;
    for (const Value* out : bn->outputs())
      outNames.push_back(graph.uniqueValueName(out->name()));
    Node* nn = graph.addNodeWithId(bn->id(), bn->op(), ins, bn->numOutputs(), outNames,
                                   bn->name());
    nn->attrs() = bn->attrs();
    nn->setProvenance(bn->provenance());
    nn->absorbProvenanceOf(*ifNode);
    for (size_t i = 0; i < bn->numOutputs(); ++i) {
      nn->output(i)->setType(bn->output(i)->type());
      nn->output(i)->setShapeValue(bn->output(i)->shapeValue());
      map[bn->output(i)] = nn->output(i);
    }
    for (const NodeBody& b : bn->bodies())
      nn->addBody(b.role, b.graph->clone());
    inlined.push_back(nn);
  }
  for (size_t i = 0; i < ifNode->numOutputs(); ++i) {
    Value* from = ifNode->output(i);
    Value* to = map.at(branch->outputs()[i]);
    if (!canReplaceKeepingName(graph, from, to)) {
      // The branch yields an operand or a value already yielded: a copy keeps the output name.
      Node* copy = graph.addNode(OpKind::Identity, {to}, 1, {}, ifNode->name());
      copy->addProvenanceFrom(*ifNode);
      copy->output(0)->setType(from->type());
      inlined.push_back(copy);
      to = copy->output(0);
    }
    replaceValue(graph, from, to);
  }
  graph.eraseNode(ifNode);
  Status sorted = graph.topologicalSort();
  assert(sorted.ok() && "inlining a branch cannot create a cycle");
  (void)sorted;
  return inlined;
}

} // namespace fb
