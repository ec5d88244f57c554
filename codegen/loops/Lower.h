// Lowering of a graph (after any passes, with fused groups) to kernels in the loop IR.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/Error.h"
#include "core/Graph.h"

#include <string>
#include <vector>

namespace fb::cg {

/// How lowerGraph builds and schedules kernels.
struct LowerOptions {
  /// Apply the default schedule of each kernel's op class (tile, vectorize, parallel). Off:
  /// the plain textbook nests, as a student would write them.
  bool defaultSchedules = true;
  /// Schedule overrides by kernel name (parsed from "k3:tile=32x64,vectorize=8;k5:parallel=0"
  /// by parseScheduleOverrides, codegen/loops/ScheduleOverride.h). An override naming no
  /// kernel of the graph is an error.
  std::vector<ScheduleOverride> scheduleOverrides;
  /// Lanes of a vectorized loop (8 x f32 for AVX2).
  int vectorWidth = 8;
  /// Elements below which a kernel stays single-threaded (thread start-up costs more).
  int64_t parallelThreshold = 1 << 15;
  /// Fill Kernel::gemm for GEMM-class kernels (MatMul, Gemm, non-grouped Conv and groups
  /// anchored on them whose tail is expressible as EpilogueOps).
  bool gemmSpecs = true;
};

/// Lowers every node of `graph` (a fused group as one kernel) to a kernel, in the graph's
/// order. Requires static shapes (bind symbolic dims first). Each kernel's arguments are its
/// non-constant inputs (Role::Input, named by graph value), its outputs (Role::Output), its
/// constant operands (Role::Weight, with data), and scratch buffers for intermediate results
/// of a fused group that cannot be computed inline (Role::Scratch, named "<kernel>.scratchN").
/// An op that cannot be lowered is an Unsupported error naming the op and the node.
Expected<std::vector<Kernel>> lowerGraph(const Graph& graph, const LowerOptions& options = {});

/// True when lowerGraph gives `node` an interpreted kernel (Kernel::interpreted): an If, Loop or
/// Scan, or a node that reads a value whose
/// sizes are known only at run time because an interpreted node computed it (a control-flow
/// result that depends on the data). A QLinearConv or QLinearMatMul whose operands the int8
/// generator cannot take is interpreted too (see lower::int8SpecFor), which this does not tell.
bool runsInterpreted(const Node& node);

/// The kernel name lowerGraph gives the node at position `index`: "k3_conv_add_relu".
std::string kernelNameFor(const Node& node, size_t index);

} // namespace fb::cg
