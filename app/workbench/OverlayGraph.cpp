// Overlay of two snapshots for the diff view: B plus ghosts of A's removed nodes.
#include "app/workbench/OverlayGraph.h"

#include <set>

namespace fb {

OverlayGraph buildOverlayGraph(const Graph& a, const Graph& b, const GraphDiff& diff) {
  OverlayGraph out;
  out.graph = b.clone();
  Graph& g = *out.graph;
  const std::set<NodeId> removed(diff.removed.begin(), diff.removed.end());
  // Ghost outputs get fresh names (so they never capture a B value of the same name);
  // `renamed` maps A's output names to them for the ghosts that read them.
  std::map<std::string, Value*> renamed;
  // 1. Ghost every removed top-level node in A's execution order, so producers come first.
  for (const auto& n : a.nodes()) {
    if (!removed.count(n->id()))
      continue;
    std::vector<Value*> inputs;
    for (Value* in : n->inputs()) {
      if (!in) {
        inputs.push_back(nullptr);
        continue;
      }
      Value* v = nullptr;
      if (auto it = renamed.find(in->name()); it != renamed.end())
        v = it->second;
      else if (Value* same = g.findValue(in->name()))
        v = same;
      else if (in->isConstant())
        v = g.addConstant(in->name(), in->constantData());
      else
        v = g.addInput(in->name(), in->type());
      inputs.push_back(v);
    }
    std::vector<std::string> names;
    for (Value* o : n->outputs())
      names.push_back(g.uniqueValueName(o->name() + ".removed"));
    Node* ghost = g.addNode(n->op(), inputs, n->numOutputs(), names, n->name());
    ghost->attrs() = n->attrs();
    ghost->setProvenance({n->id()});
    for (const NodeBody& b : n->bodies()) // a fused body, or an If's branches
      ghost->addBody(b.role, b.graph->clone());
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      ghost->output(i)->setType(n->output(i)->type());
      renamed[n->output(i)->name()] = ghost->output(i);
    }
    out.ghostToRemoved[ghost->id()] = n->id();
  }
  return out;
}

} // namespace fb
