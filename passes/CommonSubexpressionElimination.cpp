// cse: merges nodes that compute the same thing, and constants that hold the same data.
#include "core/Faults.h"
#include "passes/Passes.h"
#include "passes/RewriteUtil.h"

#include <algorithm>
#include <cstdint>
#include <functional>
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

/// Training-mode Dropout draws a fresh mask per node: two of them are not the same value.
bool isDeterministic(const Node& n) {
  if (n.op() != OpKind::Dropout || !n.input(2))
    return true;
  const Tensor* training = constantOf(n.input(2));
  return training && training->numElements() == 1 && training->getAsDouble(0) == 0;
}

/// True when both nodes' results have the same types (what the faulty CSE compares instead
/// of the attributes, so that its merges still type-check and miscompile silently).
bool sameResultTypes(const Node& a, const Node& b) {
  for (size_t i = 0; i < a.numOutputs(); ++i)
    if (!sameType(a.output(i)->type(), b.output(i)->type()))
      return false;
  return true;
}

/// The operands of a node in canonical order: commutative ops sort them (by identity), so a+b
/// and b+a are recognised as the same expression.
std::vector<const Value*> canonicalOperands(const Node& n) {
  std::vector<const Value*> ins(n.inputs().begin(), n.inputs().end());
  if (isCommutative(n.op()))
    std::sort(ins.begin(), ins.end(), std::less<const Value*>());
  return ins;
}

/// The lookup key of a node: its op and canonical operands. Operands are keyed by identity, not
/// by name, because merging a graph output renames values while the walk goes on.
std::string expressionKey(const Node& n) {
  std::string key = opName(n.op());
  for (const Value* in : canonicalOperands(n)) {
    key += '|';
    key += std::to_string(reinterpret_cast<uintptr_t>(in));
  }
  return key;
}

/// Common-subexpression elimination:
///   1. merge constants with identical dtype, shape and bytes (exporters often repeat them);
///   2. walk nodes in execution order, keyed by (op, canonical operands); a node whose key and
///      attributes match an earlier node's is replaced by it (all outputs redirected), then
///      erased. Nodes with bodies (fused groups, If, Loop, Scan: equal operands do not
///      make equal bodies) and nodes without outputs are left alone.
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
    size_t constantsMerged = mergeConstants(graph, ctx);
    // The fault compares the op and operands only, as if attributes never mattered.
    const bool ignoreAttributes = faultEnabled(Fault::CseIgnoresAttributes);
    size_t nodesMerged = 0;
    std::unordered_map<std::string, std::vector<Node*>> seen;
    std::vector<Node*> order;
    for (const auto& n : graph.nodes())
      order.push_back(n.get());
    for (Node* n : order) {
      if (n->hasBodies() || n->numOutputs() == 0 || !isDeterministic(*n))
        continue;
      const std::string key = expressionKey(*n);
      Node* match = nullptr;
      for (Node* cand : seen[key])
        if (cand->numOutputs() == n->numOutputs() &&
            (cand->attrs() == n->attrs() || (ignoreAttributes && sameResultTypes(*cand, *n))))
          match = cand;
      if (!match) {
        seen[key].push_back(n);
        continue;
      }
      // Graph outputs keep their names: merging two outputs into one value would rename one.
      bool keepsNames = true;
      for (size_t i = 0; i < n->numOutputs(); ++i)
        keepsNames = keepsNames && canReplaceKeepingName(graph, n->output(i), match->output(i));
      if (!keepsNames || !ctx.mayRewrite())
        continue;
      for (size_t i = 0; i < n->numOutputs(); ++i)
        replaceValue(graph, n->output(i), match->output(i));
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
  static size_t mergeConstants(Graph& graph, PassContext& ctx) {
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
      if (c->isGraphOutput() || !ctx.mayRewrite())
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
