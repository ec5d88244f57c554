// Compiled-model tests' shared check: a graph through a named pipeline, compiled for the CPU
// and run, against the interpreter on the graph as imported.
#pragma once

#include "codegen/exec/CompiledModel.h"
#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/TensorCompare.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <string>

namespace fb::cg::test {

/// A constant's text IR body of n varied values: scale * (e % period - period / 2).
inline std::string denseText(int n, double scale, int period) {
  std::string t = "dense<[";
  for (int e = 0; e < n; ++e)
    t += (e ? ", " : "") + std::to_string(scale * double(e % period - period / 2));
  return t + "]>";
}

/// The graph after the named pipeline `level` ("O0" .. "O3"), or the pipeline's error.
inline Expected<std::shared_ptr<const Graph>> afterPipeline(const Graph& g,
                                                            const std::string& level) {
  auto steps = namedPipeline(level);
  if (!steps.ok())
    return steps.error();
  PipelineResult pr = PassManager().run(g.clone(), *steps);
  if (pr.error)
    return makeError("pipeline: ", pr.error->message());
  return pr.snapshots.back().graph;
}

/// Runs a graph through a named pipeline, compiles it for the CPU and compares with the
/// interpreter on the imported graph; returns an empty string or what went wrong.
inline std::string compareWithInterpreter(const Graph& imported, const std::string& level,
                                          int llvmLevel, int threads) {
  auto optimized = afterPipeline(imported, level);
  if (!optimized.ok())
    return optimized.error().message();
  auto inputs = makeRandomInputs(imported, 7);
  if (!inputs.ok())
    return inputs.error().message();
  auto ref = interpret(imported, *inputs);
  if (!ref.ok())
    return "interpreter: " + ref.error().message();
  CompileOptions co;
  co.llvmOptLevel = llvmLevel;
  co.threads = threads;
  co.specializeInputs = *inputs;
  auto model = CompiledModel::compile(**optimized, co);
  if (!model.ok())
    return "compile: " + model.error().message();
  auto got = (*model)->run(*inputs);
  if (!got.ok())
    return "run: " + got.error().message();
  if (got->size() != ref->outputs.size())
    return "output count differs";
  for (size_t o = 0; o < got->size(); ++o) {
    const Tensor& r = ref->outputs[o];
    TensorComparison c = compareTensors(r, (*got)[o], defaultTolerance(r.dtype()));
    if (!c.ok)
      return "output " + std::to_string(o) + ": " + c.reason + " (max abs " +
             std::to_string(c.maxAbs) + ")";
  }
  // A second run on the same bindings gives the same answer (no state leaks between runs).
  auto again = (*model)->run(*inputs);
  if (!again.ok() || !(*again)[0].identical((*got)[0]))
    return "second run differs";
  return "";
}

} // namespace fb::cg::test
