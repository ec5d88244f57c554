// Comparing outputs and snapshots.
#include "app/workbench/Compare.h"
#include "core/Interpreter.h"

namespace fb::workbench {

Expected<OutputComparisons> compareOutputs(const Graph& graph,
                                           const std::vector<Tensor>& reference,
                                           const std::vector<Tensor>& got,
                                           const std::optional<Tolerance>& tolerance) {
  if (reference.size() != graph.outputs().size() || got.size() != graph.outputs().size())
    return makeError("cannot compare: the model has ", graph.outputs().size(),
                     " outputs, the reference gave ", reference.size(), " and the run ",
                     got.size());
  OutputComparisons c;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    Tolerance tol = tolerance.value_or(defaultTolerance(reference[i].dtype()));
    c.outputs.push_back({graph.outputs()[i]->name(), compareTensors(reference[i], got[i], tol)});
    c.ok = c.ok && c.outputs.back().result.ok;
  }
  return c;
}

Expected<OutputComparisons> compareWithReference(const Graph& reference, const Graph& result,
                                                 const std::vector<Tensor>& inputs,
                                                 const std::vector<Tensor>& got,
                                                 const std::optional<Tolerance>& tolerance,
                                                 const JobControl* job) {
  FB_TRY(checkCancelled(job, "comparison"));
  reportProgress(job, 0.0, "reference run on the interpreter");
  FB_ASSIGN_OR_RETURN(InterpretResult ref, interpret(reference, inputs));
  return compareOutputs(result, ref.outputs, got, tolerance);
}

Expected<NumericDiff> numericDiffGraphs(const Graph& a, const Graph& b,
                                        const std::vector<Tensor>& inputs,
                                        const std::optional<Tolerance>& tolerance,
                                        const JobControl* job) {
  FB_TRY(checkCancelled(job, "numeric diff"));
  reportProgress(job, 0.0, "numeric diff");
  Tolerance tol = tolerance.value_or(defaultTolerance(DType::F32));
  return fb::numericDiff(a, b, inputs, tol.atol, tol.rtol);
}

} // namespace fb::workbench
