// schedule-memory: reorders nodes to lower the peak of live activation bytes.
#include "core/Cost.h"
#include "passes/Analyses.h"
#include "passes/Passes.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

namespace fb {

namespace {

/// Peak live bytes when `order` (indices into graph.nodes()) runs, with the accounting of
/// core/Cost.h's peakActivationBytes: inputs live from the start, outputs never die.
double peakOf(const Graph& graph, const std::vector<size_t>& order) {
  const auto& nodes = graph.nodes();
  std::unordered_map<const Value*, size_t> lastUse;
  for (size_t s = 0; s < order.size(); ++s)
    for (const Value* in : nodes[order[s]]->inputs())
      if (in && !in->isConstant())
        lastUse[in] = s;
  for (const Value* out : graph.outputs())
    lastUse[out] = order.size();
  double live = 0;
  for (const Value* in : graph.inputs())
    live += typeBytes(in->type());
  double peak = live;
  for (size_t s = 0; s < order.size(); ++s) {
    const Node& n = *nodes[order[s]];
    for (const Value* out : n.outputs())
      live += typeBytes(out->type());
    peak = std::max(peak, live);
    for (const Value* in : n.inputs()) {
      if (!in || in->isConstant())
        continue;
      auto it = lastUse.find(in);
      if (it != lastUse.end() && it->second == s) {
        live -= typeBytes(in->type());
        lastUse.erase(it);
      }
    }
    for (const Value* out : n.outputs())
      if (!lastUse.count(out))
        live -= typeBytes(out->type());
  }
  return peak;
}

/// A greedy list schedule: among the ready nodes, run the one whose net effect on live bytes
/// (what it allocates minus what dies at it) is smallest; ties keep the original order.
std::vector<size_t> greedySchedule(const Graph& graph) {
  const auto& nodes = graph.nodes();
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i)
    position[nodes[i].get()] = i;
  // Readers still to run per value (a node reading a value twice counts once).
  std::unordered_map<const Value*, size_t> pendingReaders;
  std::vector<size_t> pendingProducers(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<const Value*> seen;
    for (const Value* in : nodes[i]->inputs()) {
      if (!in || in->isConstant() || std::count(seen.begin(), seen.end(), in))
        continue;
      seen.push_back(in);
      ++pendingReaders[in];
      if (in->producer() && position.count(in->producer()))
        ++pendingProducers[i];
    }
  }
  std::vector<size_t> ready, order;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pendingProducers[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    size_t bestSlot = 0;
    double bestNet = 0;
    for (size_t r = 0; r < ready.size(); ++r) {
      const Node& n = *nodes[ready[r]];
      double net = 0;
      for (const Value* out : n.outputs())
        net += typeBytes(out->type());
      std::vector<const Value*> seen;
      for (const Value* in : n.inputs()) {
        if (!in || in->isConstant() || in->isGraphOutput() ||
            std::count(seen.begin(), seen.end(), in))
          continue;
        seen.push_back(in);
        if (pendingReaders[in] == 1)
          net -= typeBytes(in->type());
      }
      if (r == 0 || net < bestNet || (net == bestNet && ready[r] < ready[bestSlot])) {
        bestSlot = r;
        bestNet = net;
      }
    }
    size_t i = ready[bestSlot];
    ready.erase(ready.begin() + std::ptrdiff_t(bestSlot));
    order.push_back(i);
    std::vector<const Value*> seen;
    for (const Value* in : nodes[i]->inputs()) {
      if (!in || in->isConstant() || std::count(seen.begin(), seen.end(), in))
        continue;
      seen.push_back(in);
      --pendingReaders[in];
    }
    for (const Value* out : nodes[i]->outputs()) {
      std::vector<const Node*> users;
      for (const Use& u : out->uses())
        if (!std::count(users.begin(), users.end(), u.user)) {
          users.push_back(u.user);
          auto it = position.find(u.user);
          if (it != position.end() && --pendingProducers[it->second] == 0)
            ready.push_back(it->second);
        }
    }
  }
  assert(order.size() == nodes.size() && "a verified graph has no cycle");
  return order;
}

/// Puts the nodes into `order`: chaining each node to its predecessor in `order` by a temporary
/// extra operand makes that order the only topological one, so the stable sort produces it.
Status applyOrder(Graph& graph, const std::vector<size_t>& order) {
  std::vector<Node*> nodes;
  for (size_t i : order)
    nodes.push_back(graph.nodes()[i].get());
  std::vector<size_t> arity;
  for (Node* n : nodes)
    arity.push_back(n->numInputs());
  for (size_t k = 1; k < nodes.size(); ++k) {
    assert(nodes[k - 1]->numOutputs() > 0 && "every node has a result to chain on");
    nodes[k]->addInput(nodes[k - 1]->output(0));
  }
  Status sorted = graph.topologicalSort();
  for (size_t k = 0; k < nodes.size(); ++k)
    nodes[k]->truncateInputs(arity[k]);
  return sorted;
}

/// Memory-aware scheduling:
///   1. compute the peak of live activation bytes of the current order;
///   2. build a greedy list schedule: repeatedly run, among the nodes whose producers have run,
///      the one that allocates the least net of what dies at it (ties: the original order);
///   3. keep the new order only when its peak is strictly lower, and apply it by a stable
///      topological sort constrained to that order.
/// Values and nodes are untouched; only their order changes.
class ScheduleMemoryPass : public Pass {
public:
  std::string name() const override { return "schedule-memory"; }
  std::string summary() const override {
    return "reorder nodes to lower the peak of live activation memory";
  }
  std::string description() const override {
    return "Changes the order in which independent operations run so that fewer tensors are "
           "alive at the same time. A graph with parallel branches can run them one after the "
           "other or interleaved: when each branch first produces a big tensor and then shrinks "
           "it, interleaving keeps all the big tensors alive at once, while finishing one "
           "branch before starting the next keeps only one. The pass builds the order step by "
           "step, each time choosing among the ops that are ready the one that allocates the "
           "least memory net of what it frees, and keeps the new order only when its peak is "
           "lower than the original's. The results are exactly the same; only the memory a "
           "device needs (and what a memory planner such as plan-memory can reach) goes down, "
           "which matters most on phones and microcontrollers with little RAM.";
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    std::vector<size_t> identity(graph.numNodes());
    for (size_t i = 0; i < identity.size(); ++i)
      identity[i] = i;
    double before = double(peakActivationBytes(graph));
    std::vector<size_t> order = greedySchedule(graph);
    // The reordering is one rewrite.
    bool better = order != identity && peakOf(graph, order) < peakOf(graph, identity) &&
                  ctx.mayRewrite();
    if (better)
      FB_TRY(applyOrder(graph, order));
    double after = double(peakActivationBytes(graph));
    ctx.addStatistic("peak bytes before", before);
    ctx.addStatistic("peak bytes after", after);
    ctx.setSummary(better ? "peak activations " + formatBytes(before) + " -> " +
                                formatBytes(after)
                          : "kept the order: peak activations " + formatBytes(before));
    return better;
  }
};

} // namespace

std::unique_ptr<Pass> createScheduleMemoryPass() {
  return std::make_unique<ScheduleMemoryPass>();
}

} // namespace fb
