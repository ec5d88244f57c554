// The GPU executor: a lowered model scheduled for the GPU, compiled to one PTX module, loaded
// through the CUDA driver onto one device arena, and run launch by launch.
#pragma once

#include "codegen/exec/CompiledModel.h"
#include "codegen/gpu/GpuSchedule.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fb::cg {

/// Where one kernel argument lives, as the CPU executor bound it (CompiledModel::compile step
/// 3); the GPU executor gives each place device memory of its own.
struct GpuArgPlace {
  enum class Kind {
    Arena,     ///< the memory plan's arena, at `offset`
    Workspace, ///< the kernels' shared scratch space, at `offset`
    Host,      ///< data bound at compile time (weights, constants) or a buffer of its own:
               ///< one device copy per distinct `host` pointer, uploaded once
    Input,     ///< graph input `index`, uploaded each run
    Output,    ///< graph output `index`, downloaded each run
  } kind = Kind::Host;
  size_t index = 0;
  int64_t offset = 0;
  const void* host = nullptr;
  int64_t bytes = 0;
};

/// A model compiled for an NVIDIA GPU.
class GpuModel {
public:
  /// Schedules every kernel for the GPU (codegen/gpu/GpuSchedule.h), emits all launches into one
  /// NVPTX module, links libdevice where needed, optimizes at `optLevel` and generates PTX.
  /// Needs no GPU. `places` has one entry per kernel argument.
  static Expected<std::unique_ptr<GpuModel>> build(const std::vector<Kernel>& kernels,
                                                   std::vector<std::vector<GpuArgPlace>> places,
                                                   int64_t arenaBytes, int64_t workspaceBytes,
                                                   const TargetInfo& target, int optLevel);
  ~GpuModel();

  /// Loads the PTX onto device 0 (the driver JIT-compiles it), allocates the arena, the
  /// workspace and the graph inputs and outputs, and uploads the weights and every launch's
  /// argument table. Errors start with "no CUDA device: " when there is no driver or device.
  Status load(const std::vector<int64_t>& inputBytes, const std::vector<int64_t>& outputBytes);
  bool loaded() const;
  /// The device the model is loaded on ("NVIDIA H100 80GB HBM3, sm_90, 132 SMs"), or "".
  std::string deviceDescription() const;

  /// One run: uploads `inputs`, runs every launch in order, downloads the outputs that kernels
  /// write into `outputs` (allocated by the caller, one per graph output). With a profile,
  /// records each kernel's time on the device (CUDA events around its launches); `runStartUs`
  /// places the run on the profile's clock. Index checks run on host copies of the arguments
  /// they read. An interpreted kernel (control flow) runs on the host: its arguments are copied
  /// back, `interpret(k, hostArgs)` computes its results in place, and they are copied up again.
  using HostKernel = std::function<Status(size_t kernel, const std::vector<void*>& hostArgs)>;
  Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
             const std::vector<Kernel>& kernels, Profile* profile, int runIndex, double runStartUs,
             const HostKernel& interpret);

  const std::string& ptx() const { return m_ptx; }
  const std::vector<GpuLaunch>& launches() const { return m_launches; }
  /// Kernel k's GPU loops, its launches' LLVM IR as emitted and optimized, and their PTX.
  Expected<KernelCode> kernelCode(const std::vector<Kernel>& kernels, size_t k) const;

private:
  GpuModel() = default;
  struct Device;
  std::vector<GpuLaunch> m_launches;
  std::vector<bool> m_interpreted;                // per kernel: runs on the host
  std::vector<std::vector<GpuArgPlace>> m_places; // per kernel
  int64_t m_arenaBytes = 0, m_workspaceBytes = 0;
  TargetInfo m_target;
  int m_optLevel = 3;
  std::string m_ptx;
  std::unique_ptr<Device> m_device;
};

} // namespace fb::cg
