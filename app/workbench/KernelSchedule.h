// What each kernel of a snapshot is compiled with, as a schedule form shows it: the loop nest
// (order, split, vectorized, unrolled and parallel loops), the GEMM blocking and packing for
// GEMM-class kernels, and the override applied on top of the default schedule.
#pragma once

#include "app/workbench/Compile.h"

#include <string>
#include <vector>

namespace fb::workbench {

/// One loop of a kernel's scheduled nest.
struct LoopDescription {
  std::string var;     ///< "oh_o"
  int64_t extent = -1; ///< iterations, or -1 when not a constant
  std::string kind;    ///< "serial", "parallel", "vectorized", "unrolled" (cg::forKindName)
  int depth = 0;       ///< 0 for an outermost loop
};

/// A kernel's schedule as compiled.
struct KernelSchedule {
  size_t index = 0;          ///< position in the model (the "k3" of "k3_conv_relu")
  std::string kernel;        ///< "k3_conv_relu": the name an override takes
  std::string opSummary;     ///< "Conv+Relu"
  NodeId node = 0;           ///< the snapshot's node (a fused group's id)
  std::vector<NodeId> nodes; ///< the nodes it computes (a fused group: its body's ids)
  std::vector<LoopDescription> loops; ///< the scheduled nest, in pre-order
  /// The GEMM generator compiles the kernel: the register tile (mr × nr) and the cache blocks
  /// (mc, kc, nc) below are what its code uses, and loop directives change only the nest that
  /// documents the computation.
  bool gemm = false;
  /// The direct depthwise generator compiles it: no blocking directive applies.
  bool depthwise = false;
  /// The int8 generator compiles it (QLinearConv / QLinearMatMul): no directive applies.
  bool int8 = false;
  int64_t mr = 0, nr = 0, mc = 0, kc = 0, nc = 0; ///< effective blocking (gemm)
  bool gemmParallel = false; ///< gemm: work items run on the thread pool
  bool columnTile = false;   ///< gemm: the register tile's vectors run along M (`vectors=m`)
  /// Convolutions: "im2col", "winograd" (F(2×2, 3×3)) or "winograd4" (F(4×4, 3×3); for both
  /// the blocking above is their GEMMs') or "direct" (no GEMM
  /// blocking), empty for other kernels; and whether Winograd and the direct convolution apply
  /// to it (a `conv=` directive may switch).
  std::string convAlgorithm;
  bool winogradApplies = false;
  bool directApplies = false;
  std::string blocking;      ///< gemm/depthwise/int8: blocking and packing in words
  std::string override;      ///< the directives applied ("tile=32x64"); empty: the default
  std::string loopsText;     ///< the kernel as --emit loops prints it
  bool interpreted = false;  ///< no code: the executor interprets it (nothing to schedule)
};

/// Lowers `graph` under `settings` (its schedule overrides included) and describes every
/// kernel's schedule, in the model's order (kernel i is node i of the graph).
Expected<std::vector<KernelSchedule>> describeSchedules(const Graph& graph,
                                                        const CompileSettings& settings,
                                                        const JobControl* job = nullptr);

/// The override list `current` with kernel `update.kernel`'s entry replaced by `update`, or
/// removed when `update` has no directives (back to the default schedule). Order is kept; a
/// new kernel's entry goes last.
std::vector<cg::ScheduleOverride> withOverride(std::vector<cg::ScheduleOverride> current,
                                               const cg::ScheduleOverride& update);

} // namespace fb::workbench
