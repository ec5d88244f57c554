// plan-memory: an analysis that plans every intermediate tensor into one arena.
#include "passes/Analyses.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include <cstdio>

namespace fb {

namespace {

/// Plans memory for the intermediates of the graph in its current order, after Glow's
/// allocateAll and ONNX Runtime's memory pattern planner:
///   1. liveness: every node output that is not a graph output lives from the step that produces
///      it to the last step that reads it (a fused group is one step; its internals never reach
///      memory); sizes come from the static types, rounded up to 64 bytes;
///   2. in-place reuse: an elementwise or broadcast op whose result has the type of an input
///      that dies at that op writes its result over that input;
///   3. offsets: the buffers are placed one by one into the smallest gap left by the buffers
///      live at the same time (best fit), under three orderings (largest first, longest
///      lifetime first, first use first); the smallest arena wins;
///   4. report the naive total (one allocation per tensor), the arena, the lower bound (the
///      most bytes live at one step) and the efficiency lower bound / arena.
/// The graph is never changed.
class PlanMemoryPass : public Pass {
public:
  std::string name() const override { return "plan-memory"; }
  std::string summary() const override {
    return "plan intermediate tensors into one arena (liveness, in-place reuse, best fit)";
  }
  std::string description() const override {
    return "Plans where every intermediate tensor lives in memory, without changing the model. "
           "An inference runtime does not call malloc for each tensor: it computes once, ahead "
           "of time, one block of memory (the arena) and an offset in it for every tensor. Two "
           "tensors may share bytes when they are never alive at the same time, so the planner "
           "first computes each tensor's lifetime: from the op that writes it to the last op "
           "that reads it. An elementwise op such as Relu may even write its result over its "
           "input when that input is not needed afterwards (in place). Then the tensors are "
           "packed like boxes on a shelf whose horizontal axis is time: each goes into the "
           "smallest free gap that fits (best fit), trying several orders (largest first, "
           "longest-lived first, earliest first) and keeping the smallest arena, as Glow and "
           "ONNX Runtime do. No plan can use less than the most bytes alive at one moment, the "
           "lower bound; the efficiency is that bound divided by the arena, and 1.0 is optimal. "
           "Fusion helps too: the tensors inside a fused group never reach memory at all.";
  }
  bool isAnalysis() const override { return true; }
  std::vector<PassOptionSpec> options() const override {
    return {PassOptionSpec::boolean("in-place", true,
                                    "let an elementwise op write over an input that dies there")};
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    FB_ASSIGN_OR_RETURN(bool inPlace, ctx.options().getBool("in-place"));
    MemoryPlanOptions options;
    options.inPlace = inPlace;
    FB_ASSIGN_OR_RETURN(MemoryPlan plan, planMemory(graph, options));
    ctx.addStatistic("naive_bytes", double(plan.naiveBytes));
    ctx.addStatistic("arena_bytes", double(plan.arenaBytes));
    ctx.addStatistic("lower_bound_bytes", double(plan.lowerBoundBytes));
    ctx.addStatistic("efficiency", plan.efficiency());
    ctx.addStatistic("buffers", double(plan.buffers.size()));
    ctx.addStatistic("in-place reuses", double(plan.inPlaceReuses));
    char eff[32];
    std::snprintf(eff, sizeof eff, "%.2f", plan.efficiency());
    ctx.setSummary("arena " + formatBytes(double(plan.arenaBytes)) + " for " +
                   std::to_string(plan.buffers.size()) +
                   (plan.buffers.size() == 1 ? " buffer" : " buffers") + " (naive " +
                   formatBytes(double(plan.naiveBytes)) + ", lower bound " +
                   formatBytes(double(plan.lowerBoundBytes)) + ", efficiency " + eff + ", " +
                   plan.strategy + ")");
    return false;
  }
};

} // namespace

std::unique_ptr<Pass> createPlanMemoryPass() { return std::make_unique<PlanMemoryPass>(); }

} // namespace fb
