// GemmHarness: compiles single GEMM kernels through the project's JIT (codegen/llvm/Jit.h) so
// TestGemm and fusebox-bench can test and measure the generator without the executor.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "codegen/runtime/RuntimeAbi.h"
#include "core/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace fb::cg {

/// Compiles GEMM kernels one module each and keeps them alive while the harness lives.
class GemmHarness {
public:
  /// A harness on a host JIT, or an error when LLVM cannot target the host.
  static Expected<std::unique_ptr<GemmHarness>> create();
  ~GemmHarness();
  GemmHarness(const GemmHarness&) = delete;
  GemmHarness& operator=(const GemmHarness&) = delete;

  /// Packs the kernel's constant operands (appending Weight args to `kernel`), emits it,
  /// optimizes at O3 (or not at all when `optimize` is false) and returns its entry point. A
  /// convolution whose spec asks for Winograd (ConvAlgorithm::Winograd) is prepared as one,
  /// its chunks of tiles bounded by `winogradChunkBytes` (0: the generator's default); one that
  /// asks for the direct convolution (ConvAlgorithm::Direct) is prepared as that.
  Expected<FbKernelFn> compile(Kernel& kernel, bool optimize = true,
                               int64_t winogradChunkBytes = 0);

  /// The LLVM IR (before optimization) of the last compiled kernel, for debugging.
  const std::string& lastIr() const { return m_lastIr; }

  /// Sets the threads fb_parallel_for uses (1 = run on the caller only).
  static void setThreads(int threads);

  /// Calls a compiled kernel: argument i is buffers[i] where given, else a Scratch argument
  /// gets a buffer poisoned with NaN (so a kernel that reads scratch it did not write fails
  /// its comparison) and a Weight argument its bound data.
  static void run(FbKernelFn fn, const Kernel& kernel, std::vector<std::vector<float>>& buffers);

private:
  GemmHarness();
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  std::string m_lastIr;
};

} // namespace fb::cg
