// The CPU executor: a graph lowered, JIT-compiled and bound to one arena, run kernel by kernel.
#pragma once

#include "codegen/exec/KernelModules.h"
#include "codegen/exec/Profiler.h"
#include "codegen/llvm/Target.h"
#include "codegen/loops/Lower.h"
#include "core/Graph.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fb::cg {

/// How a graph is compiled for the CPU.
struct CompileOptions {
  /// The CPU code is generated for. Another CPU than the host's compiles (the code views,
  /// object files) and runs only when the host has every feature it uses (runsOnHost).
  TargetInfo target = TargetInfo::host();
  int llvmOptLevel = 3;          ///< LLVM pipeline level 0..3
  int threads = 0;               ///< threads of fb_parallel_for while running; 0 = leave as is
  /// With several threads, run each kernel on the pool or alone on the calling thread,
  /// whichever its measured times say is faster (KernelThreading); false: always the pool.
  bool adaptiveThreads = true;
  LowerOptions lower;            ///< schedules and overrides
  KernelEmitOptions emit;        ///< GEMM generator on/off, parallel loops on/off
  bool useMemoryPlan = true;     ///< one arena from planMemory(); false: a buffer per tensor
  bool useCache = true;          ///< the compiled-kernel cache
  /// Compile kernels whose code is identical (the same conv shape at several places) once,
  /// under a content-derived symbol (canonicalizeKernelModule); false keeps kernel names as
  /// symbols (for a profiler or debugger that reads them).
  bool shareIdenticalKernels = true;
  /// Static sizes per graph input (outer index = input), binding symbolic dims. Empty: every
  /// symbolic dim takes its size from `dims` (default 1).
  std::vector<std::vector<int64_t>> inputSizes;
  std::map<std::string, int64_t> dims;
  /// The inputs the model will run on, when known (one per graph input). Small integer inputs
  /// (i64/i32 with at most 64 elements: a Reshape's shape, a Resize's sizes, Slice's starts)
  /// are compiled as constants so that shapes computed from them become static, and when shapes
  /// stay dynamic even so, small f32 inputs (up to 8 elements: Resize's scales) too, as are
  /// bool masks of up to 64 elements that decide a shape (Compress's condition); run() then
  /// insists on the same values there. Empty: nothing is specialized.
  std::vector<Tensor> specializeInputs;
  /// Told each stage as it starts ("lower", "plan memory", "emit", "jit") with the fraction of
  /// the compilation done; called on the compiling thread.
  std::function<void(const std::string& stage, double fraction)> progress;
  /// Checked between stages and between kernels: when it becomes true the compilation stops
  /// with a "cancelled" error.
  const std::atomic<bool>* cancel = nullptr;
};

/// One kernel as every code view shows it. Computed on demand by CompiledModel::kernelCode,
/// with the same target, options and argument aliasing as the code the model runs.
struct KernelCode {
  std::string name;            ///< "k3_conv_relu"
  std::string opSummary;       ///< "Conv+Relu"
  std::vector<NodeId> nodes;   ///< the graph nodes it computes (provenance of its code)
  std::string generator;       ///< "loops", "gemm", "dwconv", "int8gemm" or "interpreted"
  std::string schedule;        ///< the override applied ("tile=32x64"); empty: the default
  std::string blocking;        ///< GEMM / depthwise / int8 blocking, empty for loop kernels
  std::string loops;           ///< the scheduled loop nest, as --emit loops prints it
  std::string llvmRaw;         ///< LLVM IR as emitted
  std::string llvmOptimized;   ///< LLVM IR after the optimization pipeline
  std::string assembly;        ///< the target's assembly of the optimized IR
  double flops = 0, bytes = 0;
};

/// What a compilation did and cost.
struct CompileStats {
  double lowerMs = 0, emitMs = 0, jitMs = 0, totalMs = 0;
  double optimizeMs = 0, codegenMs = 0; ///< summed over compile threads (cache misses only)
  int kernels = 0, gemmKernels = 0, cacheHits = 0;
  int distinctKernels = 0;     ///< kernels after sharing identical code
  int interpretedKernels = 0;  ///< control-flow kernels the executor runs with the interpreter
  int64_t arenaBytes = 0;      ///< the activations arena (0 without a plan)
  int64_t separateBytes = 0;   ///< activations allocated one by one (no plan, or not in it)
  int64_t weightBytes = 0;     ///< constants and packed panels bound to kernels
  bool memoryPlanUsed = false;
  std::vector<std::string> notes; ///< fallbacks taken (a GEMM spec compiled as loops, no plan)
};

/// A graph compiled for this CPU. Weights are bound once; each run binds the inputs and fresh
/// output tensors and runs the kernels in order on the arena. run() may be called from any
/// thread; calls are serialized.
class CompiledModel {
public:
  /// 1. Clones the graph and binds its input sizes (bindStaticShapes: specialized inputs,
  ///    shape arithmetic folded when inference alone leaves a dynamic type).
  /// 2. Lowers it to kernels (codegen/loops lowerGraph) and packs GEMM constant operands.
  /// 3. Plans the activations into one arena (passes/MemoryPlan.h) and binds every kernel
  ///    argument to an input, an output, the arena, a constant or a scratch buffer; arguments
  ///    that overlap in memory (in-place reuse) lose their noalias.
  /// 4. Emits one LLVM module per kernel (GEMM generator or loop emitter), gives identical
  ///    kernels one content-named symbol, JIT-compiles the distinct ones in parallel through
  ///    the kernel cache, then looks up the entry points.
  static Expected<std::unique_ptr<CompiledModel>> compile(const Graph& graph,
                                                          const CompileOptions& options = {});
  ~CompiledModel();

  /// Runs on `inputs` (one per graph input, sizes as compiled) and returns the outputs. With
  /// a profile, appends one run's kernel timings to it.
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, Profile* profile = nullptr);

  /// Mixed execution, for kernel bisection: kernel k runs its node with the reference
  /// interpreter instead of its compiled code when `interpreted[k]` is true (empty: every
  /// kernel runs its code). Kernel k computes top-level node k of graph(). Set it between runs.
  void setInterpretedKernels(std::vector<bool> interpreted) {
    m_interpretedKernels = std::move(interpreted);
  }

  /// An empty profile with this model's kernel descriptions, ready for run().
  Profile newProfile() const;

  const std::vector<Kernel>& kernels() const { return m_kernels; }
  /// Kernel `index`'s loops, LLVM IR before and after optimization, assembly, schedule and
  /// the nodes it covers. Thread-safe; each call builds the kernel's module afresh (the JIT
  /// keeps only machine code).
  Expected<KernelCode> kernelCode(size_t index) const;
  /// The target the kernels were compiled for.
  const TargetInfo& target() const;
  /// False when the target is not the host's and the host lacks some of its features: the
  /// model then has code to show but run() refuses.
  bool runnable() const;
  const CompileStats& stats() const { return m_stats; }
  /// The graph as compiled (static shapes).
  const Graph& graph() const { return *m_graph; }

private:
  CompiledModel() = default;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  std::unique_ptr<Graph> m_graph;
  std::vector<Kernel> m_kernels;
  CompileStats m_stats;
  std::vector<bool> m_interpretedKernels; ///< setInterpretedKernels
  std::mutex m_runMutex;
};

/// Clones `graph` with input i's symbolic dims bound to `inputSizes[i]` (or, when empty, every
/// symbol to `dims`, default 1), the small integer inputs of `specialize` (see
/// CompileOptions::specializeInputs) replaced by constants, and shapes re-inferred; fails when
/// a type stays non-static. `specialized` (when given) receives, per input, the tensor it was
/// specialized on or an invalid tensor.
Expected<std::unique_ptr<Graph>> bindStaticShapes(
    const Graph& graph, const std::vector<std::vector<int64_t>>& inputSizes,
    const std::map<std::string, int64_t>& dims, const std::vector<Tensor>& specialize = {},
    std::vector<Tensor>* specialized = nullptr);

} // namespace fb::cg
