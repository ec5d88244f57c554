// Binding a graph's symbolic input dims and small shape-deciding inputs before compilation.
#include "codegen/exec/CompiledModel.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

namespace fb::cg {

namespace {

/// One attempt of bindStaticShapes; `floats` also specializes f32 inputs of up to 8 elements.
Expected<std::unique_ptr<Graph>> bindOnce(const Graph& graph,
                                          const std::vector<std::vector<int64_t>>& inputSizes,
                                          const std::map<std::string, int64_t>& dims,
                                          const std::vector<Tensor>& specialize, bool floats,
                                          std::vector<Tensor>* specialized) {
  std::unique_ptr<Graph> g = graph.clone();
  if (specialized)
    specialized->assign(g->inputs().size(), Tensor());
  if (!specialize.empty() && specialize.size() != g->inputs().size())
    return makeError("compile: ", specialize.size(), " inputs given for ", g->inputs().size(),
                     " graph inputs");
  for (size_t i = 0; i < specialize.size(); ++i) {
    const Tensor& t = specialize[i];
    Value* in = g->inputs()[i];
    // A bool mask is compiled in only where it decides a shape (Compress's condition); on the
    // retry (`floats`), a single bool too: a Loop's or If's condition decides how many
    // iterations a scan output has or which branch's shape a result takes.
    auto decidesShape = [in] {
      for (const auto& u : in->uses())
        if (u.user->op() == OpKind::Compress && u.operand == 1)
          return true;
      return false;
    };
    bool small = t.valid() && in->type().dtype == t.dtype() && in->hasUses() &&
                 (((t.dtype() == DType::I64 || t.dtype() == DType::I32) && t.numElements() <= 64) ||
                  (floats && t.dtype() == DType::F32 && t.numElements() <= 8) ||
                  (t.dtype() == DType::Bool && t.numElements() <= 64 && decidesShape()) ||
                  (floats && t.dtype() == DType::Bool && t.numElements() == 1));
    if (!small)
      continue;
    Value* c = g->addConstant(g->uniqueValueName(in->name() + ".specialized"), t);
    in->replaceAllUsesWith(c);
    if (specialized)
      (*specialized)[i] = t;
  }
  if (!inputSizes.empty() && inputSizes.size() != g->inputs().size())
    return makeError("compile: ", inputSizes.size(), " input shapes given for ",
                     g->inputs().size(), " graph inputs");
  for (size_t i = 0; i < g->inputs().size(); ++i) {
    Value* in = g->inputs()[i];
    TensorType t = in->type();
    std::vector<int64_t> sizes = inputSizes.empty() ? resolveSizes(t, dims) : inputSizes[i];
    if (sizes.size() != t.rank())
      return makeError("input ", in->name(), " has rank ", t.rank(), " but sizes of rank ",
                       sizes.size(), " were given");
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (t.dims[d].isStatic() && t.dims[d].size() != sizes[d])
        return makeError("input ", in->name(), " is ", t.str(), " but dimension ", d,
                         " was given size ", sizes[d]);
      t.dims[d] = Dim(sizes[d]);
    }
    in->setType(t);
  }
  FB_TRY(inferShapes(*g));
  // Results of interpreted kernels (control flow, and what reads their run-time shapes) may
  // stay dynamic; every other value must become static.
  auto firstDynamic = [](const Graph& graph) -> std::optional<Error> {
    for (const auto& node : graph.nodes()) {
      if (runsInterpreted(*node))
        continue;
      for (const Value* out : node->outputs())
        if (!out->type().isStatic())
          return makeUnsupported("value ", out->name(), " of ", node->describe(),
                                 " has a non-static type ", out->type().str(),
                                 " after binding the input sizes (the CPU backend compiles "
                                 "static shapes only)");
    }
    return std::nullopt;
  };
  std::optional<Error> dynamic = firstDynamic(*g);
  if (!dynamic)
    return g;
  // Shape arithmetic that inference does not follow (ConstantOfShape, Size, ...) folds to
  // constants once the input sizes are known.
  // (The verifier runs once at the end: fold-constants leaves downstream types for
  // infer-shapes to refine.)
  auto steps = parsePipeline("canonicalize,fold-constants,infer-shapes,dce");
  if (!steps.ok())
    return *dynamic;
  PassManagerOptions pmo;
  pmo.verifyEach = false;
  PipelineResult folded = PassManager(pmo).run(std::move(g), *steps);
  if (folded.error)
    return *dynamic;
  std::unique_ptr<Graph> f = folded.finalGraph().clone();
  if (!inferShapes(*f).ok() || !verify(*f).ok() || firstDynamic(*f))
    return *dynamic;
  return f;
}

} // namespace

Expected<std::unique_ptr<Graph>> bindStaticShapes(
    const Graph& graph, const std::vector<std::vector<int64_t>>& inputSizes,
    const std::map<std::string, int64_t>& dims, const std::vector<Tensor>& specialize,
    std::vector<Tensor>* specialized) {
  auto g = bindOnce(graph, inputSizes, dims, specialize, /*floats=*/false, specialized);
  if (g.ok() || specialize.empty())
    return g;
  // Shapes may also follow from small float inputs (Resize's scales, Range's bounds).
  auto retry = bindOnce(graph, inputSizes, dims, specialize, /*floats=*/true, specialized);
  return retry.ok() ? std::move(retry) : std::move(g);
}


} // namespace fb::cg
