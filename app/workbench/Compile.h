// Compiling a snapshot for a backend and target: the typed settings both front ends fill in
// (the CLI from its flags, the GUI from its forms) and the one call that compiles.
#pragma once

#include "app/workbench/Job.h"
#include "codegen/exec/CompiledModel.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/Graph.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// Where a snapshot runs.
enum class Backend {
  Interpreter, ///< the reference interpreter in core (the oracle)
  Cpu,         ///< kernels compiled by LLVM for this CPU (codegen)
  Gpu,         ///< kernels compiled to PTX for an NVIDIA GPU, run through the CUDA driver
};

/// "interp", "cpu", "gpu": the names --backend takes.
const char* backendName(Backend backend);
/// The backend a name stands for, or nullopt.
std::optional<Backend> backendFromName(const std::string& name);
/// Success when this build and machine can run `backend`; otherwise an Unsupported error
/// saying why (the GUI shows it on the disabled choice).
Status backendAvailable(Backend backend);

/// How a snapshot is compiled: typed values, never command-line text.
struct CompileSettings {
  /// The CPU to generate code for: empty for the host, or an LLVM CPU name ("znver2",
  /// "haswell", "x86-64-v3"). Code for a CPU the host cannot run can be read, not run.
  std::string cpu;
  /// Compile for an NVIDIA GPU instead of the CPU (the gpu backend, PTX), for `gpu`.
  bool forGpu = false;
  /// The GPU's compute capability ("sm_90"); empty: this machine's GPU, else sm_80.
  std::string gpu;
  int threads = 0;                                ///< worker threads; 0 leaves the default
  /// Each kernel on the pool or alone, whichever is measured faster (cg::KernelThreading);
  /// schedule trials and tuning turn it off so that a kernel's samples all use the pool.
  bool adaptiveThreads = true;
  int llvmOptLevel = 3;                           ///< LLVM pipeline level 0..3
  bool useGemm = true;                            ///< GEMM / depthwise generators (else loops)
  std::vector<cg::ScheduleOverride> schedule;     ///< per-kernel overrides
  std::map<std::string, int64_t> dims;            ///< sizes of symbolic dims (N=4)
  bool useCache = true;                           ///< the compiled-kernel cache (memory + disk)
  /// The tuning log (app/workbench/TuningLog.h) whose entries for this CPU set the schedule of
  /// the kernels they match; an entry of `schedule` for the same kernel wins. Empty: the
  /// default log (defaultTuningLogPath()); "off": none.
  std::string tuningLog;
};

/// The target `settings.cpu` names (the host when empty), or an error for an unknown CPU; with
/// settings.forGpu, the GPU `settings.gpu` names (defaultGpuArch() when empty).
Expected<cg::TargetInfo> targetFor(const CompileSettings& settings);

/// The compute capability of this machine's first CUDA device when LLVM can generate code for
/// it (a newer one gets sm_90, whose PTX the driver compiles for it), else "sm_80".
std::string defaultGpuArch();

/// The codegen options for `settings`, compiled for the sizes of `inputs` (when given; else
/// every symbolic dim takes its size from settings.dims). Small integer inputs that determine
/// shapes are compiled in as constants (CompileOptions::specializeInputs).
Expected<cg::CompileOptions> compileOptionsFor(const CompileSettings& settings,
                                                const std::vector<Tensor>& inputs);

/// Compiles `graph` for the CPU: the codegen entry point (cg::CompiledModel::compile) with the
/// kernel cache on disk, progress and cancellation through `job`. The result's kernels carry
/// their code (CompiledModel::kernelCode) and the nodes they cover.
Expected<std::shared_ptr<cg::CompiledModel>> compileGraph(const Graph& graph,
                                                          const CompileSettings& settings,
                                                          const std::vector<Tensor>& inputs,
                                                          const JobControl* job = nullptr);

/// One line for a log: kernels, GEMM kernels, cache hits, the time of each stage, the arena,
/// then a `note:` line per fallback taken.
std::string compileSummary(const cg::CompileStats& stats);

} // namespace fb::workbench
