// The LLVM optimization pipeline for generated kernels (new pass manager, host CPU features).
#pragma once

#include "core/Error.h"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace fb::cg {

/// Checks the module with LLVM's verifier; the error carries the verifier's report.
Status verifyModule(const llvm::Module& module);

/// Runs LLVM's default per-module pipeline at `level` (0..3) with the target machine's cost
/// model, so the vectorizers and unroller see the host's vector width and features. Level 0
/// runs the O0 pipeline (always-inline only). The module must already be configured for the
/// target (codegen/llvm/Target.h configureModule).
Status optimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int level);

} // namespace fb::cg
