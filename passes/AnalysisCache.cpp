// Snapshot-cached analyses.
#include "passes/AnalysisCache.h"
#include "passes/PassManager.h"

namespace fb {

const GraphEstimate& snapshotEstimate(const Snapshot& s) {
  return s.analyses->get<GraphEstimate>(*s.graph, estimateGraph);
}

const ParallelLevels& snapshotParallelLevels(const Snapshot& s) {
  return s.analyses->get<ParallelLevels>(*s.graph, computeParallelLevels);
}

const ModelStats& snapshotStats(const Snapshot& s) {
  return s.analyses->get<ModelStats>(*s.graph, computeModelStats);
}

const MemoryPlan& snapshotMemoryPlan(const Snapshot& s) {
  return s.analyses->get<MemoryPlan>(*s.graph, [](const Graph& g) {
    Expected<MemoryPlan> plan = planMemory(g);
    if (plan)
      return std::move(plan).value();
    MemoryPlan failed;
    failed.error = plan.error().message();
    return failed;
  });
}

} // namespace fb
