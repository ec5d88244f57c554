// The one registry of passes (from Passes.def) and the pipeline-string parser.
#pragma once

#include "passes/Pass.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fb {

/// A registered pass: its name and how to make one.
struct PassEntry {
  std::string name;
  std::function<std::unique_ptr<Pass>()> create;
};

/// Every registered pass, in the order of Passes.def.
const std::vector<PassEntry>& allPasses();
/// Creates a pass by name, or an error listing the close names.
Expected<std::unique_ptr<Pass>> createPass(const std::string& name);

/// One step of a pipeline: a pass name and its options.
struct PipelineStep {
  std::string passName;
  PassOptions options;
  /// "name" or "name{k=v,...}".
  std::string str() const;
};

/// Checks a step's options against its pass's declarations (Pass::options()): an undeclared
/// option or a value the declaration does not accept is an error naming the pass, the option
/// and everything the pass accepts.
Status validateStep(const PipelineStep& step, const Pass& pass);
/// `given` with every declared option that was not given set to its declared default.
PassOptions withDeclaredDefaults(const std::vector<PassOptionSpec>& specs, const PassOptions& given);

/// Parses "canonicalize,fold-constants,quantize{calibration=minmax,samples=8}". Every name must be
/// a registered pass and every option declared by it with a value it accepts, so a pipeline is
/// checked whole before anything runs; errors name the step.
Expected<std::vector<PipelineStep>> parsePipeline(const std::string& text);
/// The pipeline of a named level: "O0".."O3".
Expected<std::vector<PipelineStep>> namedPipeline(const std::string& level);
/// The pipeline string of a named level, for --list-passes.
std::string namedPipelineString(const std::string& level);

} // namespace fb
