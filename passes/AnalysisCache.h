// Analyses cached per snapshot: computed on first use, dropped with the snapshot. A pass that
// changes the graph produces a new snapshot with an empty cache, which is how passes invalidate
// analyses; an analysis pass that changes nothing shares the previous snapshot's graph and cache.
#pragma once

#include "core/Cost.h"
#include "core/Graph.h"
#include "passes/Analyses.h"
#include "passes/MemoryPlan.h"

#include <memory>
#include <mutex>
#include <typeindex>
#include <unordered_map>

namespace fb {

/// A thread-safe cache of analyses of one immutable graph, keyed by the analysis' result type.
class AnalysisCache {
public:
  /// The analysis A of `graph`, computing it with `compute(graph)` the first time.
  template <typename A, typename Compute> const A& get(const Graph& graph, Compute compute) {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto key = std::type_index(typeid(A));
    auto it = m_entries.find(key);
    if (it == m_entries.end()) {
      ++m_computations;
      it = m_entries.emplace(key, std::make_shared<A>(compute(graph))).first;
    }
    return *std::static_pointer_cast<A>(it->second);
  }
  /// How many analyses were computed (not served from the cache).
  size_t computations() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_computations;
  }

private:
  mutable std::mutex m_mutex;
  std::unordered_map<std::type_index, std::shared_ptr<void>> m_entries;
  size_t m_computations = 0;
};

struct Snapshot;

/// FLOPs, bytes, intensity per node and in total, cached on the snapshot.
const GraphEstimate& snapshotEstimate(const Snapshot& snapshot);
/// Wavefront levels, cached on the snapshot.
const ParallelLevels& snapshotParallelLevels(const Snapshot& snapshot);
/// Whole-model statistics (--stats, the snapshot timeline), cached on the snapshot.
const ModelStats& snapshotStats(const Snapshot& snapshot);
/// The static memory plan of the snapshot's graph (default options), cached on the snapshot.
/// When planning fails (symbolic shapes) the plan is empty and its `error` says why.
const MemoryPlan& snapshotMemoryPlan(const Snapshot& snapshot);

} // namespace fb
