// The memory plan of a snapshot with the nodes around each buffer.
#include "app/workbench/MemoryPlanReport.h"
#include "passes/AnalysisCache.h"

#include <algorithm>
#include <set>

namespace fb::workbench {

std::string nodeOpLabel(const Node& node) {
  if (!node.body())
    return node.info().name;
  std::string ops;
  for (const auto& inner : node.body()->nodes())
    ops += (ops.empty() ? "" : "+") + std::string(inner->info().name);
  return "Fused(" + ops + ")";
}

namespace {

PlanNodeRef refOf(const Node& n) { return {n.id(), n.name(), nodeOpLabel(n), n.op()}; }

} // namespace

MemoryPlanReport describeMemoryPlan(const Snapshot& snapshot) {
  MemoryPlanReport report;
  const MemoryPlan& plan = snapshotMemoryPlan(snapshot);
  if (!plan.error.empty()) {
    report.error = plan.error;
    return report;
  }
  report.plan = plan;
  const Graph& g = *snapshot.graph;
  const auto& nodes = g.nodes();
  std::unordered_map<const Node*, size_t> stepOf;
  for (size_t i = 0; i < nodes.size(); ++i) {
    stepOf[nodes[i].get()] = i;
    report.steps.push_back(refOf(*nodes[i]));
  }
  report.liveBytes.assign(nodes.size(), 0);
  for (const BufferAssignment& b : plan.buffers) {
    PlannedBuffer pb;
    pb.buffer = b;
    if (b.first >= 0 && size_t(b.first) < nodes.size())
      pb.producer = report.steps[size_t(b.first)];
    if (const Value* v = g.findValue(b.value)) {
      pb.type = v->type().str();
      std::set<size_t> readers; // a node reading the value twice is one consumer
      for (const Use& u : v->uses())
        if (auto it = stepOf.find(u.user); it != stepOf.end())
          readers.insert(it->second);
      for (size_t s : readers)
        pb.consumers.push_back(report.steps[s]);
    }
    // An in-place result shares its source's bytes at its first step: count it after that.
    const int from = b.reuses.empty() ? b.first : b.first + 1;
    for (int s = std::max(from, 0); s <= b.last && size_t(s) < nodes.size(); ++s)
      report.liveBytes[size_t(s)] += b.size;
    report.buffers.push_back(std::move(pb));
  }
  return report;
}

} // namespace fb::workbench
