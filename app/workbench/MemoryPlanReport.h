// A snapshot's memory plan as the memory view shows it: every buffer with its producer and
// consumers, the bytes live at each step, and the totals of the plan itself.
#pragma once

#include "passes/MemoryPlan.h"
#include "passes/PassManager.h"

#include <string>
#include <vector>

namespace fb::workbench {

/// A node as a plan row names it.
struct PlanNodeRef {
  NodeId id = 0;
  std::string name; ///< the model's name for it, possibly empty
  std::string op;   ///< "Conv", or "Fused(Conv+Relu)" for a fused group
  OpKind kind = OpKind::Identity;
};

/// One buffer of the plan and the nodes around it.
struct PlannedBuffer {
  BufferAssignment buffer;              ///< offset, size, first and last step, in-place source
  std::string type;                     ///< "f32[1,64,56,56]"
  PlanNodeRef producer;                 ///< the node of step buffer.first
  std::vector<PlanNodeRef> consumers;   ///< top-level nodes that read it, in execution order
};

/// What the memory view draws. The totals are the plan's own (plan.naiveBytes, arenaBytes,
/// lowerBoundBytes, efficiency()), so the view and `fusebox-opt --memory-plan` agree.
struct MemoryPlanReport {
  MemoryPlan plan;
  std::vector<PlannedBuffer> buffers; ///< one per plan.buffers entry, in the same order
  std::vector<PlanNodeRef> steps;     ///< the node of each step (top-level execution order)
  /// Bytes of the arena in use at each step: every buffer live then, an in-place pair counted
  /// once at the step where one takes over the other. Its maximum is plan.lowerBoundBytes.
  std::vector<int64_t> liveBytes;
  /// Empty on success; otherwise why there is no plan (symbolic shapes), and the rest is empty.
  std::string error;
};

/// The plan of `snapshot`'s graph (cached on the snapshot: snapshotMemoryPlan) with producers,
/// consumers and live bytes per step. Thread-safe: a worker thread may call it while the GUI
/// holds the same snapshot.
MemoryPlanReport describeMemoryPlan(const Snapshot& snapshot);

/// "Conv" for a node, "Fused(Conv+Relu)" for a fused group (its body's ops in order).
std::string nodeOpLabel(const Node& node);

} // namespace fb::workbench
