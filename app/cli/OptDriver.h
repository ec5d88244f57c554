// The fusebox-opt driver: load, (later: transform), inspect, run, write.
#pragma once

#include "app/cli/CliOptions.h"

#include <ostream>

namespace fb::cli {

/// Carries out the options; reports to `out`, errors (prefixed "error:") to `err`.
/// Returns the process exit code.
int runOptDriver(const CliOptions& options, std::ostream& out, std::ostream& err);

} // namespace fb::cli
