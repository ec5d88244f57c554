// Per-kernel timing of compiled-model runs: Chrome trace JSON and a per-kernel table.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::cg {

/// What the profiler reports about one kernel (fixed at compile time).
struct KernelProfileInfo {
  std::string name;          ///< kernel (function) name
  std::string op;            ///< "Conv+Add+Relu"
  std::vector<NodeId> nodes; ///< graph nodes it computes
  std::string nodeNames;     ///< their names from the model, comma-separated
  std::string inputShapes;   ///< "f32[1,64,56,56], f32[64,64,3,3]"
  std::string outputShapes;
  std::string generator;     ///< "gemm", "dwconv" or "loops" (kernelGeneratorName)
  double flops = 0;
  double bytes = 0;
};

/// One timed kernel execution.
struct KernelEvent {
  int kernel = 0;        ///< index into Profile::kernels
  int run = 0;           ///< which run of the model
  double startUs = 0;    ///< from the profile's time origin
  double durationUs = 0;
  bool serial = false; ///< ran on the calling thread alone (KernelThreading chose it)
};

/// The timings of one or more runs of a compiled model.
struct Profile {
  std::vector<KernelProfileInfo> kernels;
  std::vector<KernelEvent> events;
  std::vector<std::pair<double, double>> runs; ///< (start, duration) in µs per model run
  int threads = 1;

  /// Chrome trace JSON (opens in Perfetto and chrome://tracing): one "X" event per model run
  /// (cat "Session") and per kernel execution (cat "Kernel") whose args carry op_name, nodes,
  /// node names, shapes, FLOPs, bytes, generator and the achieved GFLOP/s — in the manner of
  /// ONNX Runtime's profiler.
  std::string chromeTraceJson() const;

  /// Per kernel: mean time per run, share of the total, GFLOP/s, GB/s, sorted by time.
  std::string tableText() const;
  /// The same numbers as a JSON array of objects (for --json).
  std::string tableJson() const;

  /// Mean microseconds per run of kernel k.
  double meanUs(int k) const;
};

} // namespace fb::cg
