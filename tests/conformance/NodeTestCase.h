// One ONNX backend node test case (model.onnx + test_data_set_*), found on disk and run in isolation.
#pragma once

#include "tests/conformance/CaseBackend.h"

#include <filesystem>
#include <string>
#include <vector>

namespace fb::conformance {

/// How a case ended. Skipped means Fusebox reported the model or an input as Unsupported.
enum class Outcome : char { Passed = 'P', Failed = 'F', Skipped = 'S' };

/// The outcome of a case, with why it failed or was skipped (empty when it passed).
struct CaseResult {
  Outcome outcome = Outcome::Failed;
  std::string reason;
};

/// A case folder: test_<name>/model.onnx with test_data_set_<k>/{input,output}_<i>.pb.
struct NodeTestCase {
  std::string name;
  std::filesystem::path dir;
  /// The op the case tests, from the model ("Add", or "Softmax (expanded)" for a function body
  /// expanded into several nodes), for per-op summaries.
  std::string opLabel;
};

/// Lists the case folders under `root` (those holding model.onnx), sorted by name. Returns an
/// empty list and sets `error` when `root` cannot be read.
std::vector<NodeTestCase> discoverCases(const std::filesystem::path& root, std::string& error);

/// Imports, runs on `backend` and checks every data set of one case in this process.
CaseResult runCase(const NodeTestCase& testCase, const CaseBackend& backend);

/// Runs runCase in a forked child so that a crash, an assertion or a hang in one case is reported
/// as that case's failure instead of ending the run. Kills the child after `timeoutSeconds`.
CaseResult runCaseIsolated(const NodeTestCase& testCase, const CaseBackend& backend,
                           int timeoutSeconds);

} // namespace fb::conformance
