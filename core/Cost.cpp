// Node costs and model statistics.
#include "core/Cost.h"
#include "core/ops/OpContext.h"

#include <algorithm>
#include <unordered_map>

namespace fb {

double typeBytes(const TensorType& type) {
  return CostContext::elements(type) * double(dtypeSize(type.dtype));
}

static double bodyFlops(const Graph& body) {
  double f = 0;
  for (const auto& n : body.nodes())
    f += nodeCost(*n).flops;
  return f;
}

OpCost nodeCost(const Node& node) {
  OpCost c;
  for (const Value* in : node.inputs())
    if (in)
      c.bytes += typeBytes(in->type());
  for (const Value* out : node.outputs())
    c.bytes += typeBytes(out->type());
  const OpInfo& info = node.info();
  if (node.op() == OpKind::Fused && node.body())
    c.flops = bodyFlops(*node.body());
  else if (info.cost)
    c.flops = info.cost(CostContext(node)).flops;
  else if (info.category == OpCategory::Elementwise || info.category == OpCategory::Broadcast)
    c.flops = node.numOutputs() ? CostContext::elements(node.output(0)->type()) : 0;
  return c;
}

static void countOps(const Graph& g, std::map<std::string, size_t>& ops) {
  for (const auto& n : g.nodes()) {
    if (n->op() == OpKind::Fused && n->body()) {
      countOps(*n->body(), ops);
      continue;
    }
    ++ops[opName(n->op())];
    for (const NodeBody& b : n->bodies()) // an If's branches, a Loop's body
      countOps(*b.graph, ops);
  }
}

int64_t peakActivationBytes(const Graph& graph) {
  std::unordered_map<const Value*, size_t> lastUse;
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value* in : nodes[i]->inputs())
      if (in && !in->isConstant())
        lastUse[in] = i;
  for (const Value* out : graph.outputs())
    lastUse[out] = nodes.size(); // outputs stay live to the end
  double live = 0;
  for (const Value* in : graph.inputs())
    live += typeBytes(in->type());
  double peak = live;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Value* out : nodes[i]->outputs())
      live += typeBytes(out->type());
    peak = std::max(peak, live);
    // Free what dies here: inputs whose last use is this node, outputs never used.
    for (const Value* in : nodes[i]->inputs()) {
      if (!in || in->isConstant())
        continue;
      auto it = lastUse.find(in);
      if (it != lastUse.end() && it->second == i) {
        live -= typeBytes(in->type());
        lastUse.erase(it); // a value read twice by one node dies once
      }
    }
    for (const Value* out : nodes[i]->outputs())
      if (!lastUse.count(out))
        live -= typeBytes(out->type());
  }
  return int64_t(peak);
}

ModelStats computeModelStats(const Graph& graph) {
  ModelStats s;
  s.nodes = graph.numNodes();
  countOps(graph, s.ops);
  for (const Value* c : graph.constants()) {
    s.params += c->constantData().numElements();
    s.weightBytes += int64_t(c->constantData().byteSize());
  }
  for (const auto& n : graph.nodes()) {
    OpCost c = nodeCost(*n);
    s.flops += c.flops;
    s.bytesMoved += c.bytes;
  }
  s.peakActivationBytes = peakActivationBytes(graph);
  return s;
}

} // namespace fb
