// Cutting a sub-graph out of a model, with recorded tensors for the values it no longer computes.
#include "app/workbench/SubGraph.h"
#include "core/Verifier.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <set>

namespace fb::workbench {

namespace {

/// Cut values at most this large with an integer dtype become constants, not inputs: they are
/// shapes, axes or indices, and as inputs they would make the shapes computed from them unknown.
constexpr int64_t kConstantCutElements = 64;

bool usedByAny(const Value& v, const std::set<const Node*>& nodes) {
  return std::any_of(v.uses().begin(), v.uses().end(),
                     [&](const Use& u) { return nodes.count(u.user) != 0; });
}

} // namespace

Expected<SubGraph> extractSubGraph(const Graph& graph, const std::vector<bool>& keep,
                                   const std::vector<Tensor>& inputs,
                                   const std::unordered_map<std::string, Tensor>& recorded) {
  assert(keep.size() == graph.numNodes() && "one flag per top-level node");
  assert(inputs.size() == graph.inputs().size() && "one tensor per graph input");
  std::unique_ptr<Graph> g = graph.clone();
  std::vector<Node*> kept, dropped;
  for (size_t i = 0; i < g->nodes().size(); ++i)
    (keep[i] ? kept : dropped).push_back(g->nodes()[i].get());
  if (kept.empty())
    return makeError("sub-graph: no node selected");
  const std::set<const Node*> keptSet(kept.begin(), kept.end());

  // The tensor each input of the result is fed with, by value.
  std::map<const Value*, Tensor> feed;
  for (size_t i = 0; i < g->inputs().size(); ++i)
    feed[g->inputs()[i]] = inputs[i];

  // 3. Outputs, decided while the dropped nodes still show who consumed what.
  const std::set<const Value*> originalOutputs(g->outputs().begin(), g->outputs().end());
  std::vector<Value*> outputs;
  for (Value* v : g->outputs())
    if (v->producer() && keptSet.count(v->producer()) &&
        std::find(outputs.begin(), outputs.end(), v) == outputs.end())
      outputs.push_back(v);
  for (Node* n : kept)
    for (Value* v : n->outputs())
      if (!originalOutputs.count(v) && v->hasUses() && !usedByAny(*v, keptSet))
        outputs.push_back(v);
  if (outputs.empty())
    return makeError("sub-graph: the selected nodes produce nothing that was used");
  g->setOutputs(outputs);

  // 1. Cut values: kept nodes read them from a stand-in.
  std::vector<std::pair<Value*, std::string>> renames;
  for (Node* n : dropped) {
    for (Value* v : n->outputs()) {
      if (!usedByAny(*v, keptSet))
        continue;
      auto it = recorded.find(v->name());
      if (it == recorded.end() || !it->second.valid())
        return makeError("sub-graph: no recorded tensor for value '", v->name(), "'");
      const Tensor& t = it->second;
      const std::string temp = g->uniqueValueName(v->name() + ".cut");
      Value* standIn = nullptr;
      if (isInteger(t.dtype()) && t.numElements() <= kConstantCutElements) {
        standIn = g->addConstant(temp, t);
      } else {
        standIn = g->addInput(temp, v->type());
        feed[standIn] = t;
      }
      std::vector<Use> uses = v->uses();
      for (const Use& u : uses)
        if (keptSet.count(u.user))
          u.user->setInput(u.operand, standIn);
      renames.emplace_back(standIn, v->name());
    }
  }

  // Dropped nodes go consumers first, so every output is unused when its node goes.
  for (auto it = dropped.rbegin(); it != dropped.rend(); ++it) {
    for (Value* v : (*it)->outputs())
      if (v->hasUses())
        return makeError("sub-graph: value '", v->name(), "' of a dropped node is still read");
    g->eraseNode(*it);
  }
  // 4. Inputs and constants nothing reads any more.
  for (Value* v : std::vector<Value*>(g->inputs()))
    if (!v->hasUses() && !v->isGraphOutput())
      g->eraseValue(v);
  for (Value* v : std::vector<Value*>(g->constants()))
    if (!v->hasUses() && !v->isGraphOutput())
      g->eraseValue(v);
  for (const auto& [v, name] : renames)
    g->renameValue(v, name);

  FB_TRY(verify(*g));
  for (const Value* in : g->inputs())
    if (!in->type().isStatic())
      return makeError("sub-graph: input '", in->name(), "' has a symbolic shape ",
                       in->type().str());
  for (const auto& n : g->nodes())
    for (const Value* v : n->outputs())
      if (!v->type().isStatic())
        return makeError("sub-graph: ", n->describe(), " has a symbolic output shape ",
                         v->type().str());

  SubGraph sub;
  for (const Value* in : g->inputs())
    sub.inputs.push_back(feed.at(in));
  sub.graph = std::move(g);
  return sub;
}

} // namespace fb::workbench
