// infer-shapes: re-infers every value's type from the op table (an analysis pass).
#include "core/ShapeInference.h"
#include "passes/Passes.h"

namespace fb {

namespace {

/// Infers types in execution order:
///   1. for each node, run its op's inference function on its inputs' types;
///   2. store the output types (and, for shape tensors, their known contents);
///   3. report how many values changed type.
class InferShapesPass : public Pass {
public:
  std::string name() const override { return "infer-shapes"; }
  std::string summary() const override { return "infer every tensor's dtype and shape"; }
  std::string description() const override {
    return "Shape inference walks the graph in execution order and asks each operator what "
           "type its outputs have, given the types of its inputs: a 3x3 convolution with stride 2 "
           "halves the spatial size, a MatMul of [N,K] by [K,M] gives [N,M]. Dynamic dims such as "
           "a batch size N flow through symbolically. Every later pass, the memory planner and "
           "the code generator rely on these shapes.";
  }
  bool isAnalysis() const override { return true; }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    std::vector<TensorType> before;
    for (const auto& n : graph.nodes())
      for (const Value* v : n->outputs())
        before.push_back(v->type());
    FB_TRY(inferShapes(graph));
    size_t i = 0, changed = 0;
    for (const auto& n : graph.nodes())
      for (const Value* v : n->outputs())
        if (!(v->type() == before[i++]))
          ++changed;
    ctx.addStatistic("values retyped", double(changed));
    ctx.setSummary(changed ? std::to_string(changed) + " value types refined"
                           : "all types already known");
    return changed != 0;
  }
};

} // namespace

std::unique_ptr<Pass> createInferShapesPass() { return std::make_unique<InferShapesPass>(); }

} // namespace fb
