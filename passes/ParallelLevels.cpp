// parallel-levels: an analysis that groups nodes into wavefronts that can run concurrently.
#include "passes/Analyses.h"
#include "passes/Passes.h"

#include <algorithm>
#include <sstream>

namespace fb {

namespace {

/// Reports the wavefront levels of the graph; the numbers come from computeParallelLevels. The
/// algorithm:
///   1. walk the nodes in execution order (every producer comes before its users);
///   2. give each node the level 1 + the largest level of the nodes producing its operands, where
///      graph inputs and constants count as level 0;
///   3. count the nodes on each level: the number of levels is the critical path in nodes, and
///      the widest level is the most work that could run at once.
/// The graph is never changed.
class ParallelLevelsPass : public Pass {
public:
  std::string name() const override { return "parallel-levels"; }
  std::string summary() const override {
    return "report wavefront levels: the critical path and how many nodes can run at once";
  }
  std::string description() const override {
    return "Groups the nodes into wavefronts without changing the graph. A node's level is one "
           "more than the highest level among the nodes that produce its operands; inputs and "
           "constants are level 0. All nodes on one level are independent of each other, so an "
           "executor with enough cores or GPU streams could run them at the same time. The "
           "number of levels is the length of the critical path: even with unlimited hardware "
           "the model needs that many steps one after another. A chain-like network (most CNNs) "
           "has about one node per level and gains nothing from running nodes in parallel; a "
           "network with branches (Inception blocks, attention's query, key and value "
           "projections) has wide levels.";
  }
  bool isAnalysis() const override { return true; }

  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    ParallelLevels p = computeParallelLevels(graph);
    ctx.addStatistic("levels", p.numLevels);
    ctx.addStatistic("widest level", p.widest);
    ctx.addStatistic("widest level nodes", double(p.widestCount));
    if (p.numLevels > 0)
      ctx.addStatistic("average nodes per level", double(graph.numNodes()) / p.numLevels);
    std::ostringstream os;
    if (p.numLevels == 0) {
      os << "no nodes";
    } else {
      os << p.numLevels << (p.numLevels == 1 ? " level" : " levels") << "; widest level "
         << p.widest << " has ";
      if (p.widestCount == 1)
        os << "1 node: no two nodes can run concurrently";
      else
        os << p.widestCount << " nodes that can run concurrently";
    }
    ctx.setSummary(os.str());
    return false;
  }
};

} // namespace

ParallelLevels computeParallelLevels(const Graph& graph) {
  ParallelLevels p;
  p.widths.push_back(0);
  for (const auto& n : graph.nodes()) {
    int level = 0;
    for (const Value* in : n->inputs()) {
      if (!in || !in->producer())
        continue;
      auto it = p.level.find(in->producer()->id());
      assert(it != p.level.end() && "nodes are kept in a valid execution order");
      if (it != p.level.end())
        level = std::max(level, it->second);
    }
    ++level;
    p.level[n->id()] = level;
    if (size_t(level) >= p.widths.size())
      p.widths.resize(size_t(level) + 1, 0);
    ++p.widths[size_t(level)];
  }
  p.numLevels = int(p.widths.size()) - 1;
  for (size_t l = 1; l < p.widths.size(); ++l) {
    if (p.widths[l] > p.widestCount) {
      p.widestCount = p.widths[l];
      p.widest = int(l);
    }
  }
  return p;
}

std::unique_ptr<Pass> createParallelLevelsPass() {
  return std::make_unique<ParallelLevelsPass>();
}

} // namespace fb
