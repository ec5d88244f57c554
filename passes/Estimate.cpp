// estimate: an analysis that reports FLOPs, bytes moved, arithmetic intensity and memory.
#include "core/Cost.h"
#include "passes/Analyses.h"
#include "passes/Passes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace fb {

namespace {

bool typeHasSymbolicDims(const TensorType& type) {
  return std::any_of(type.dims.begin(), type.dims.end(),
                     [](const Dim& d) { return !d.isStatic(); });
}

bool graphHasSymbolicDims(const Graph& graph) {
  for (const Value* v : graph.inputs())
    if (typeHasSymbolicDims(v->type()))
      return true;
  for (const auto& n : graph.nodes())
    for (const Value* v : n->outputs())
      if (typeHasSymbolicDims(v->type()))
        return true;
  return false;
}

std::string formatIntensity(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

/// Reports the estimated cost of the graph; the numbers come from estimateGraph, so the GUI and
/// the CLI show the same ones. The algorithm:
///   1. estimate every top-level node from the op table's cost function (a fused group costs its
///      body's FLOPs but only its boundary bytes) and sum the totals;
///   2. add the bytes of all constants (weights) and the peak of live activations when the nodes
///      run in their current order;
///   3. record the totals as statistics and build a one-line summary naming the three nodes with
///      the most FLOPs.
/// The graph is never changed.
class EstimatePass : public Pass {
public:
  std::string name() const override { return "estimate"; }
  std::string summary() const override {
    return "report FLOPs, bytes moved, arithmetic intensity, weights and peak memory";
  }
  std::string description() const override {
    return "Estimates what running the model costs, without changing it. For every node it "
           "counts the floating-point operations (a multiply-add counts as two) and the bytes "
           "the node reads and writes if each operand and result crosses memory once. Their "
           "ratio, the arithmetic intensity in FLOP per byte, says whether a node is limited by "
           "compute or by memory bandwidth: on a CPU that does about 200 GFLOP/s with 20 GB/s of "
           "DRAM bandwidth, anything under about 10 FLOP/B waits on memory. That is why fusing "
           "elementwise ops into their producer pays off: the FLOPs stay, the bytes go. The pass "
           "also reports the bytes of the weights and the peak of live activations when nodes "
           "run in the current order, and names the three nodes with the most FLOPs.";
  }
  bool isAnalysis() const override { return true; }

  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    GraphEstimate e = estimateGraph(graph);
    ctx.addStatistic("FLOPs", e.totals.flops);
    ctx.addStatistic("bytes moved", e.totals.bytesMoved);
    ctx.addStatistic("arithmetic intensity (FLOP/B)", e.intensity);
    ctx.addStatistic("weight bytes", double(e.totals.weightBytes));
    ctx.addStatistic("peak activation bytes", double(e.totals.peakActivationBytes));

    std::ostringstream os;
    os << formatFlops(e.totals.flops) << ", " << formatBytes(e.totals.bytesMoved) << " moved, intensity "
       << formatIntensity(e.intensity) << " FLOP/B; weights " << formatBytes(double(e.totals.weightBytes))
       << "; peak activations " << formatBytes(double(e.totals.peakActivationBytes));
    std::vector<NodeEstimate> top = topNodesByFlops(e, 3);
    if (!top.empty() && top.front().flops > 0) {
      os << "; top:";
      bool first = true;
      for (const NodeEstimate& n : top) {
        if (n.flops <= 0)
          break;
        const Node* node = graph.findNode(n.id);
        assert(node && "estimate names a node of this graph");
        os << (first ? " " : ", ") << "#" << n.id << " " << opName(node->op()) << " "
           << formatFlops(n.flops);
        if (e.totals.flops > 0)
          os << " (" << int(std::lround(100.0 * n.flops / e.totals.flops)) << "%)";
        first = false;
      }
    }
    if (e.hasSymbolicDims)
      os << " (symbolic dims counted as 1)";
    ctx.setSummary(os.str());
    return false;
  }
};

} // namespace

GraphEstimate estimateGraph(const Graph& graph) {
  GraphEstimate e;
  e.totals = computeModelStats(graph);
  e.nodes.reserve(graph.numNodes());
  for (const auto& n : graph.nodes()) {
    OpCost c = nodeCost(*n);
    e.nodes.push_back({n->id(), c.flops, c.bytes, c.bytes > 0 ? c.flops / c.bytes : 0.0});
  }
  e.intensity = e.totals.bytesMoved > 0 ? e.totals.flops / e.totals.bytesMoved : 0.0;
  e.hasSymbolicDims = graphHasSymbolicDims(graph);
  return e;
}

std::vector<NodeEstimate> topNodesByFlops(const GraphEstimate& estimate, size_t k) {
  std::vector<NodeEstimate> sorted = estimate.nodes;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const NodeEstimate& x, const NodeEstimate& y) { return x.flops > y.flops; });
  if (sorted.size() > k)
    sorted.resize(k);
  return sorted;
}

std::unique_ptr<Pass> createEstimatePass() {
  return std::make_unique<EstimatePass>();
}

} // namespace fb
