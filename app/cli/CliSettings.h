// The edge where fusebox-opt's flags become typed workbench values: pipelines, schedules,
// dims, backends, tolerances and snapshot indices are parsed and checked here, once, before
// the model is touched; the libraries below never see a command-line string.
#pragma once

#include "app/cli/CliOptions.h"
#include "app/workbench/Emit.h"
#include "app/workbench/Run.h"
#include "core/TensorCompare.h"
#include "passes/PassRegistry.h"

#include <optional>
#include <utility>
#include <vector>

namespace fb::cli {

/// -O level then -p lists, every step checked against its pass's declared options.
Expected<std::vector<PipelineStep>> pipelineFrom(const CliOptions& o);

/// --cpu / --target (a CPU name), --threads, --llvm-opt, --no-gemm, --schedule, --dim.
Expected<workbench::CompileSettings> compileSettingsFrom(const CliOptions& o);

/// --backend, --bench, --profile plus the compile settings.
Expected<workbench::RunSettings> runSettingsFrom(const CliOptions& o);

/// --emit KIND with -o's file name for the object's header and weights.
Expected<workbench::EmitRequest> emitRequestFrom(const CliOptions& o);

/// --tolerance A[,R]; nullopt when not given (each output's dtype default).
Expected<std::optional<Tolerance>> toleranceFrom(const CliOptions& o);

/// "I,J" of --diff / --numeric-diff (`flag` names which), checked against `count` snapshots.
Expected<std::pair<size_t, size_t>> snapshotPairFrom(const std::string& flag,
                                                     const std::string& spec, size_t count);

} // namespace fb::cli
