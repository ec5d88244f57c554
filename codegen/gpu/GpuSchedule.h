// GPU schedules of lowered kernels: every top-level nest of a kernel becomes one launch, whose
// outer independent loops are fused into one loop spread over the GPU's threads.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "codegen/loops/LoopIR.h"
#include "core/Error.h"

#include <vector>

namespace fb::cg {

/// The most threads per block a launch uses (and kernels are annotated with, maxntid).
inline constexpr int kGpuMaxBlockSize = 256;

/// How kernels are scheduled for a GPU. A kernel's schedule override (`block=`, `regtile=`,
/// codegen/loops/ScheduleOverride.h) takes precedence.
struct GpuScheduleOptions {
  int blockSize = kGpuMaxBlockSize; ///< threads per block of each launch (at most the maximum)
  int64_t maxBlocks = 65535;        ///< the grid is capped; a grid-stride loop covers the rest
  /// The largest register tile side (1: one output per thread). An override's regtile also
  /// drops the rule that enough threads must remain to fill a GPU.
  int64_t registerTile = 4;
  bool registerTileForced = false;
};

/// One launch of a GPU kernel: the nests of a kernel run one launch after another (a launch
/// boundary is the only barrier between all threads of a grid).
struct GpuLaunch {
  /// The kernel this launch belongs to (its index in the model's kernels).
  size_t kernel = 0;
  /// The launch's code: a copy of the kernel named "<kernel>" (one launch) or "<kernel>_sN",
  /// with the same arguments, whose body is one ForKind::GpuThreads loop.
  Kernel code;
  /// Iterations of that loop (the threads it can use; 1 for a nest that runs on one thread).
  int64_t threads = 1;
  /// The grid and block it is launched with.
  unsigned blocks = 1, blockSize = 1;
};

/// The GPU schedule of one nest (a top-level statement of a kernel body): the outer loops
/// whose iterations write distinct elements (each through an index that is exactly its
/// variable, for all but the outermost) and read no element another iteration writes are fused into
/// one ForKind::GpuThreads loop, and the reductions inside it accumulate in a per-thread local. A
/// nest with no such loop (a reduction to one element, a scan) runs in one thread: a GpuThreads
/// loop of extent 1 around it.
StmtPtr scheduleNestForGpu(const StmtPtr& nest, const GpuScheduleOptions& options = {});

/// Splits a kernel (lowered without CPU schedules: LowerOptions::defaultSchedules off and no
/// GEMM specs) into its launches, scheduled by scheduleNestForGpu, in order. A kernel the
/// reference interpreter runs (control flow) is an Unsupported error naming it.
Expected<std::vector<GpuLaunch>> gpuLaunchesOf(const Kernel& kernel, size_t kernelIndex,
                                               const GpuScheduleOptions& options = {});

/// The comment on the GpuBlocks loop of a shared-memory tile program (GpuSharedTiling.cpp) and
/// the variable of its loop over reduction rounds, by which gpuMinBlocksPerMultiprocessor
/// recognises one.
inline constexpr const char* kSharedTileComment = "a 64x64 tile of outputs per block";
inline constexpr const char* kSharedTileRoundVar = "gpu_k0";

/// The thread blocks per multiprocessor a launch's code is compiled for (ptxas's .minnctapersm),
/// or 0 to leave the register budget to ptxas. A shared-memory tile program with more than two
/// reduction rounds asks for 3 blocks (768 threads, 24 KiB of shared memory): up to 80
/// registers a thread. Left to itself ptxas gave such programs 48 or 64 registers and a 4-8 byte
/// spill (ResNet-18's 3x3 layers). With two rounds or fewer LLVM unrolls the reduction into
/// straight-line code that ptxas schedules without spilling only when left alone (any register
/// bound made MobileNet-v2's 1x1 expansions spill 32-88 bytes).
int gpuMinBlocksPerMultiprocessor(const Kernel& launchCode);

/// The scheduled loops of all launches of a model as `--emit loops --target sm_NN` prints them:
/// per kernel a header, then each launch with its grid and block.
std::string gpuLoopsText(const std::vector<Kernel>& kernels,
                         const std::vector<GpuLaunch>& launches);

} // namespace fb::cg
