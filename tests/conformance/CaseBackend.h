// Where a conformance case runs: the reference interpreter, or the CPU backend after an optional
// pass pipeline. The same expected outputs (computed by ONNX's reference) judge both.
#pragma once

#include "core/Error.h"
#include "core/Graph.h"
#include "core/Tensor.h"

#include <string>
#include <vector>

namespace fb::conformance {

struct CaseBackend {
  bool cpu = false;      ///< compile with LLVM for this CPU instead of interpreting
  std::string pipeline;  ///< passes before running ("O3", "canonicalize,fuse"); empty: none
};

/// "interp", or "cpu" followed by " after PIPELINE" when one is set, for headers and reasons.
std::string describe(const CaseBackend& backend);

/// Runs `graph` on `inputs` where `backend` says and returns one tensor per graph output. The
/// CPU backend compiles for the sizes of `inputs` (shape-determining integer inputs become
/// constants, as fusebox-opt does). Errors keep their kind: Unsupported means the case is
/// skipped, anything else fails it.
Expected<std::vector<Tensor>> runOnBackend(const Graph& graph, const std::vector<Tensor>& inputs,
                                           const CaseBackend& backend);

} // namespace fb::conformance
