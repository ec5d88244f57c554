#include "tests/conformance/CaseBackend.h"

#include "app/workbench/Run.h"
#include "app/workbench/Session.h"
#include "core/Interpreter.h"

namespace fb::conformance {

std::string describe(const CaseBackend& backend) {
  std::string s = backend.cpu ? "cpu" : "interp";
  if (!backend.pipeline.empty())
    s += " after " + backend.pipeline;
  return s;
}

Expected<std::vector<Tensor>> runOnBackend(const Graph& graph, const std::vector<Tensor>& inputs,
                                           const CaseBackend& backend) {
  std::shared_ptr<const Graph> toRun;
  workbench::Session session;
  if (!backend.pipeline.empty()) {
    session.loadGraph(graph.clone(), "case");
    FB_TRY(session.setPipeline(backend.pipeline));
    FB_TRY(session.runPipeline());
    toRun = session.graph(session.currentIndex());
  }
  const Graph& g = toRun ? *toRun : graph;
  if (!backend.cpu) {
    FB_ASSIGN_OR_RETURN(auto result, interpret(g, inputs));
    return std::move(result.outputs);
  }
  workbench::RunSettings settings;
  settings.backend = workbench::Backend::Cpu;
  settings.compile.useCache = false; // each case compiles once; a disk cache only costs here
  FB_ASSIGN_OR_RETURN(auto result, workbench::runGraph(g, inputs, settings));
  return std::move(result.outputs);
}

} // namespace fb::conformance
