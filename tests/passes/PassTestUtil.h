// Helpers for pass tests: load samples, run pipelines, and compare the interpreter's results
// before and after (the numeric-equivalence check every pass must pass).
#pragma once

#include "core/Graph.h"
#include "passes/PassManager.h"

#include <map>
#include <memory>
#include <string>

namespace fb::test {

/// Loads samples/NAME (.onnx or .fbir) and verifies it; asserts on failure.
std::unique_ptr<Graph> loadSample(const std::string& name);

/// Parses text IR (for hand-written test graphs); asserts on failure.
std::unique_ptr<Graph> parseIr(const std::string& text);

/// Runs a pipeline string on a copy of `graph`; the result's error is set when a pass failed.
PipelineResult runPipeline(const Graph& graph, const std::string& pipeline);

/// Largest |before - after| over all outputs and `seeds` seeded random inputs, running the
/// interpreter on `before` and `after`. Symbolic dims take sizes from `dims` (default 2).
/// Outputs of different shape or dtype count as infinity.
double maxOutputDifference(const Graph& before, const Graph& after, int seeds = 3,
                           const std::map<std::string, int64_t>& dims = {});

/// Number of top-level nodes of an op kind.
size_t countOps(const Graph& graph, OpKind op);

} // namespace fb::test
