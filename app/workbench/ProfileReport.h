// A profile as the profile view shows it: per-kernel times and rates, each kernel's time share
// on the nodes of any snapshot (through provenance), and what fusion saved between two profiles.
#pragma once

#include "codegen/exec/Profiler.h"
#include "core/Graph.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace fb::workbench {

/// One kernel's numbers. The rates and shares use the median time over the runs, which a busy
/// machine's outliers do not move; meanUs is Profile::meanUs, what `fusebox-opt --profile`
/// prints.
struct KernelTiming {
  int kernel = 0;             ///< index into Profile::kernels (execution order)
  std::string name;           ///< "k3_conv_relu"
  std::string op;             ///< "Conv+Relu"
  std::string generator;      ///< "gemm", "dwconv" or "loops"
  std::string nodeNames;      ///< the model's names of the nodes it computes
  std::vector<NodeId> nodes;  ///< the graph nodes it computes (fused groups: body ids)
  double medianUs = 0;        ///< median over the runs of its time in one run
  double meanUs = 0;          ///< mean time per model run (Profile::meanUs)
  double percent = 0;         ///< share of the summed median kernel time, 0..100
  double flops = 0, bytes = 0;
  double gflops = 0;          ///< achieved GFLOP/s at medianUs
  double gbps = 0;            ///< achieved GB/s at medianUs
  /// FLOPs per byte moved: the kernel's x on a roofline (0 when it moves no bytes).
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
};

/// Every kernel of a profile, in execution order.
struct ProfileSummary {
  std::vector<KernelTiming> kernels;
  double totalUs = 0;     ///< summed median kernel time per run
  double totalMeanUs = 0; ///< summed mean kernel time per run
  int runs = 0;
  int threads = 1;
};

/// The per-kernel numbers of `profile` (medians and means over its runs).
ProfileSummary summarizeProfile(const cg::Profile& profile);

/// The original nodes `node` computes: its provenance, or its own id when it was never
/// rewritten; a fused group contributes its body's nodes.
std::set<NodeId> originalNodeIds(const Node& node);

/// The top-level nodes of `to` that compute what node `id` of `from` computes: the node with
/// the same id when `to` has it at top level, else every top-level node sharing an original
/// node with it (a fused group for one of its former ops, its ops for a fused group), in
/// execution order. `id` may name a node inside a fused group of `from`.
std::vector<NodeId> correspondingNodes(const Graph& from, NodeId id, const Graph& to);

/// Time share (0..1 of the total kernel time) of each node of `shown`, for colouring a graph:
/// a node gets the shares of every kernel of `summary` (profiled on `profiled`) that computes
/// one of the same original nodes. `shown` may be any snapshot of the same model: a fused
/// kernel's whole share lands on each original node it covers, and a fused group of `shown`
/// sums the kernels of its members. Fused groups' body nodes get entries too.
std::map<NodeId, double> timeShareByNode(const ProfileSummary& summary, const Graph& profiled,
                                         const Graph& shown);

/// The kernels of `summary` (profiled on `profiled`) that compute node `id` of `shown`, in
/// execution order (indices into summary.kernels).
std::vector<int> kernelsOfNode(const ProfileSummary& summary, const Graph& profiled,
                               const Graph& shown, NodeId id);

/// One group of kernels that compute the same original nodes before and after.
struct KernelSaving {
  std::vector<int> before;  ///< kernels of the "before" profile (indices into its kernels)
  std::vector<int> after;   ///< kernels of the "after" profile (empty: the work is gone)
  std::string beforeNames, afterNames; ///< kernel names, comma-separated
  std::string afterOp;      ///< the after kernels' ops ("Conv+Relu"), or the before ones'
  double beforeUs = 0, afterUs = 0; ///< summed median times
  double savedUs() const { return beforeUs - afterUs; }
};

/// What changed between two profiles of snapshots of one model.
struct ProfileComparison {
  std::vector<KernelSaving> rows; ///< sorted by saved time, largest first
  double beforeTotalUs = 0, afterTotalUs = 0;
  int beforeKernels = 0, afterKernels = 0;
};

/// Matches the kernels of `before` (profiled on `beforeGraph`) with those of `after` (on
/// `afterGraph`) through the original nodes they compute: kernels that share an original node
/// are one row (three unfused kernels against the fused one that replaced them).
ProfileComparison compareProfiles(const ProfileSummary& before, const Graph& beforeGraph,
                                  const ProfileSummary& after, const Graph& afterGraph);

} // namespace fb::workbench
