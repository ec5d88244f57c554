// The code-generation target (triple, CPU, features) and the LLVM objects made from it.
#pragma once

#include "core/Error.h"

#include <memory>
#include <string>

namespace llvm {
class Function;
class Module;
class TargetMachine;
} // namespace llvm

namespace fb::cg {

/// What machine code is generated for: an LLVM triple, CPU name and feature string.
struct TargetInfo {
  std::string triple;
  std::string cpu;
  std::string features; ///< "+avx2,+fma,-avx512f,..."

  /// The machine this process runs on, with every feature it has.
  static TargetInfo host();
  /// The host's triple with a named CPU ("x86-64-v3", "skylake", "znver3") and that CPU's
  /// default features, for object files meant for other machines; an error for an unknown name.
  static Expected<TargetInfo> forCpu(const std::string& cpu);
  /// An NVIDIA GPU of compute capability `arch` ("sm_80", "sm_90"): nvptx64-nvidia-cuda with
  /// that CPU, PTX from LLVM's NVPTX backend. An error names the valid choices for anything
  /// else. Needs no CUDA toolkit.
  static Expected<TargetInfo> forGpu(const std::string& arch);
  /// True for an NVPTX target (forGpu).
  bool isGpu() const { return triple.rfind("nvptx", 0) == 0; }
  /// A stable string naming the target, part of the kernel cache key.
  std::string key() const { return triple + "|" + cpu + "|" + features; }
  /// True when the target can execute AVX2 + FMA code (the micro-kernels' baseline).
  bool hasAvx2Fma() const;
  /// True when the target's CPU and feature string enable the x86 feature `name` ("avx2",
  /// "avx512vnni", "avxvnni"); false for a name LLVM does not know.
  bool hasFeature(const std::string& name) const;
  /// True when code for this target runs on the host: every feature the target's CPU and
  /// feature string enable, the host has (znver2 code runs on a Zen 4; x86-64-v4 code does
  /// not run on an AVX2-only EPYC).
  bool runsOnHost() const;
  /// The vector registers the micro-kernels may plan for: 32 when the target has AVX-512 with
  /// VL (ymm0-31 through EVEX), else 16. Code for another CPU is planned for that CPU, not for
  /// the host that compiles it.
  int vectorRegisters() const;
};

/// Registers LLVM's native target, asm printer and parser, and the NVPTX target, once
/// (thread-safe, idempotent).
void initializeNativeTarget();

/// A TargetMachine for `target` at code-generation level `optLevel` (0..3). Each thread that
/// generates code needs its own.
Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const TargetInfo& target,
                                                                   int optLevel);

/// Sets the module's triple and data layout for `target` and tags every function definition
/// with the target's CPU and features (so the optimizer and an object file agree with the JIT).
/// Emitters call it on a new module before creating functions; calling it again is harmless.
Status configureModule(llvm::Module& module, const TargetInfo& target);

/// Tags one function with the target's "target-cpu" / "target-features" attributes.
void setTargetAttributes(llvm::Function& fn, const TargetInfo& target);

} // namespace fb::cg
