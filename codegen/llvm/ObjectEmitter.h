// Ahead-of-time output: relocatable object files of kernels and the C header that declares them.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace fb::cg {

/// Generates machine code for an (already optimized) module into an in-memory ELF object.
Expected<std::string> compileToObject(llvm::Module& module, llvm::TargetMachine& tm);

/// Generates the target's assembly text for an (already optimized) module: what the JIT
/// runs, as a person reads it (the GUI's assembly view).
Expected<std::string> compileToAssembly(llvm::Module& module, llvm::TargetMachine& tm);

/// Writes `object` (bytes) to `path`.
Status writeBinaryFile(const std::string& path, const std::string& bytes);

/// A C header for an object file holding `kernels`: one prototype per kernel with the
/// FbKernelFn ABI and a comment listing its arguments (role, name, dtype, sizes) in order, and
/// the runtime functions the object calls (fb_parallel_for), which the user links in from
/// codegen/runtime or defines. `guard` names the include guard and the weights symbol prefix.
std::string kernelHeaderText(const std::vector<Kernel>& kernels, const std::string& guard);

/// The data of every Weight argument (constants, packed panels, tables) of `kernels` in one
/// blob, each at a 64-byte-aligned offset, for ahead-of-time use with the object file.
struct WeightBlob {
  std::string bytes;
  /// Per kernel, per argument: the offset in `bytes`, or -1 for arguments without data.
  std::vector<std::vector<int64_t>> offsets;
};
WeightBlob packWeights(const std::vector<Kernel>& kernels);

/// kernelHeaderText with each weight argument's offset in the blob written to `weightsFile`.
std::string kernelHeaderText(const std::vector<Kernel>& kernels, const std::string& guard,
                             const WeightBlob& weights, const std::string& weightsFile);

} // namespace fb::cg
