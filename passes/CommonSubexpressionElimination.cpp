// cse: merges nodes that compute the same thing, and constants that hold the same data.
#include "passes/Passes.h"

#include <algorithm>
#include <unordered_map>

namespace fb {

namespace {

bool isCommutative(OpKind op) {
  switch (op) {
  case OpKind::Add:
  case OpKind::Mul:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Sum:
  case OpKind::Mean:
  case OpKind::Equal:
  case OpKind::And:
  case OpKind::Or: return true;
  default: return false;
  }
}

/// The operands of a node in canonical order: commutative ops sort them by name, so a+b and
/// b+a are recognised as the same expression.
std::vector<Value*> canonicalOperands(const Node& n) {
  std::vector<Value*> ins = n.inputs();
  if (isCommutative(n.op()))
    std::sort(ins.begin(), ins.end(), [](const Value* a, const Value* b) {
      if (!a || !b)
        return a < b;
      return a->name() < b->name();
    });
  return ins;
}

/// Common-subexpression elimination:
///   1. merge constants with identical dtype, shape and bytes (exporters often repeat them);
///   2. walk nodes in execution order, keyed by (op, canonical operands); a node whose key and
///      attributes match an earlier node's is replaced by it (all outputs redirected), then
///      erased. Fused groups and nodes without outputs are left alone.
class CsePass : public Pass {
public:
  std::string name() const override { return "cse"; }
  std::string summary() const override { return "merge duplicate computations and constants"; }
  std::string description() const override {
    return "Common-subexpression elimination finds operations that compute exactly the same "
           "value from the same inputs and keeps only one of them; Add(a, b) and Add(b, a) count "
           "as the same because addition is commutative. Identical constants are merged too. "
           "Exported models often compute the same shape or the same transpose several times; "
           "merging them removes redundant work on every target.";
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    size_t constantsMerged = mergeConstants(graph);
    size_t nodesMerged = 0;
    std::unordered_map<std::string, std::vector<Node*>> seen;
    std::vector<Node*> order;
    for (const auto& n : graph.nodes())
      order.push_back(n.get());
    for (Node* n : order) {
      if (n->op() == OpKind::Fused || n->numOutputs() == 0)
        continue;
      std::string key = opName(n->op());
      for (const Value* in : canonicalOperands(*n))
        key += "|" + (in ? in->name() : std::string("_"));
      Node* match = nullptr;
      for (Node* cand : seen[key])
        if (cand->attrs() == n->attrs() && cand->numOutputs() == n->numOutputs())
          match = cand;
      if (!match) {
        seen[key].push_back(n);
        continue;
      }
      for (size_t i = 0; i < n->numOutputs(); ++i)
        n->output(i)->replaceAllUsesWith(match->output(i));
      if (std::any_of(n->outputs().begin(), n->outputs().end(),
                      [](const Value* v) { return v->isGraphOutput(); }))
        continue; // an output slot could not be redirected (cannot happen after RAUW)
      ctx.logReplaced(n->id(), {match->id()}, "duplicate");
      graph.eraseNode(n);
      ++nodesMerged;
    }
    ctx.addStatistic("nodes merged", double(nodesMerged));
    ctx.addStatistic("constants merged", double(constantsMerged));
    ctx.setSummary("merged " + std::to_string(nodesMerged) + " duplicate nodes and " +
                   std::to_string(constantsMerged) + " duplicate constants");
    return nodesMerged + constantsMerged > 0;
  }

private:
  static size_t mergeConstants(Graph& graph) {
    std::unordered_map<std::string, std::vector<Value*>> byShape;
    std::vector<Value*> dead;
    std::vector<Value*> constants = graph.constants();
    for (Value* c : constants) {
      const Tensor& t = c->constantData();
      std::string key = t.type().str() + "#" + std::to_string(t.byteSize());
      Value* match = nullptr;
      for (Value* cand : byShape[key])
        if (cand->constantData().identical(t) && cand->type() == c->type())
          match = cand;
      if (!match) {
        byShape[key].push_back(c);
        continue;
      }
      if (c->isGraphOutput())
        continue;
      c->replaceAllUsesWith(match);
      dead.push_back(c);
    }
    for (Value* c : dead)
      graph.eraseValue(c);
    return dead.size();
  }
};

} // namespace

std::unique_ptr<Pass> createCsePass() { return std::make_unique<CsePass>(); }

} // namespace fb
