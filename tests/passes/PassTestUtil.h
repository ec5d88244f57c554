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

/// The path of a model exported by tests/zoo/export_zoo.py ("resnet18_bn" ->
/// BUILD/zoo/resnet18_bn.onnx); the ctest fixture zoo_models exports them before these tests.
std::string zooModel(const std::string& name);

/// The message of a pipeline's error, or "" when it succeeded (safe inside QVERIFY2, whose
/// message is evaluated even when the check passes).
std::string errorText(const PipelineResult& result);

/// Largest |before - after| over all outputs and `seeds` seeded random inputs, running the
/// interpreter on `before` and `after`. Symbolic dims take sizes from `dims` (default 2).
/// Outputs of different shape or dtype count as infinity.
double maxOutputDifference(const Graph& before, const Graph& after, int seeds = 3,
                           const std::map<std::string, int64_t>& dims = {});

/// Runs `pipeline` on every committed sample and checks that it succeeds, that the verifier
/// accepts the result, that outputs differ from the imported model's by at most `tolerance`, and
/// (when keepOutputNames) that output names are unchanged. Returns "" or the first failure.
std::string checkSamplesUnchanged(const std::string& pipeline, double tolerance = 0,
                                  bool keepOutputNames = true);

/// Number of top-level nodes of an op kind.
size_t countOps(const Graph& graph, OpKind op);

/// A random valid graph over f32[2, 3, 4] values, dense with what the simplifying passes look
/// for: Identity and inference Dropout, x*1 / x+0 / x-0 / x/1, neg(neg x), transpose and reshape
/// pairs, same-typed Cast, commuted duplicates (a+b next to b+a), duplicate constants, constant
/// sub-graphs, Shape chains feeding Reshape, and dead nodes. Shape-inferred and verified.
std::unique_ptr<Graph> randomRewriteGraph(uint64_t seed);

} // namespace fb::test
