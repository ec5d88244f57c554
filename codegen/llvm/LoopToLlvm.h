// The LLVM IR emitter for loop-IR kernels: Kernel::body → `void name(void* const* args)`.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

#include <vector>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace fb::cg {

/// Options of the loop-IR emitter.
struct LoopEmitOptions {
  /// Per kernel argument: true when no other argument of this kernel overlaps it in memory, so
  /// its accesses get their own alias scope (LLVM's `noalias`). Empty means all true. The
  /// executor clears it for an argument bound in place over another (the memory plan).
  std::vector<bool> noAliasArgs;
  /// Emit ForKind::Parallel loops as closures run by fb_parallel_for; false runs them serially.
  bool parallel = true;
  /// Emit for an NVIDIA GPU (nvptx64): ForKind::GpuThreads loops become grid-stride loops over
  /// the launch's threads, parallel loops run serially in each thread, argument pointers are
  /// global memory (address space 1), and local buffers live in each thread's local memory.
  bool gpu = false;
};

/// Emits `kernel` as an external function `void <kernel.name>(ptr %args)` (the FbKernelFn
/// ABI of runtime/RuntimeAbi.h) into `module`, which must be configured for its target.
///
/// 1. Argument pointers are loaded once from `args`, named after the graph values; every load
///    and store of argument i carries alias-scope metadata that says it does not alias the
///    other noalias arguments (the effect of `noalias` parameters, also inside closures).
/// 2. Serial loops become canonical counted loops whose phi carries the loop variable's name
///    and whose blocks are named after the loop's comment ("n12.i"), so the IR points back to
///    the graph; constant bounds stay constants (known trip counts).
/// 3. Vectorized loops with a constant extent W are widened here: the body is emitted once
///    with the loop variable as a W-lane vector, index math is tracked as base + lane*stride so
///    contiguous accesses become vector loads/stores (gathers otherwise). A body that cannot be
///    widened (a store to a lane-invariant address, a lane-dependent branch or loop bound, a
///    local allocation) is emitted as a loop with llvm.loop.vectorize metadata instead.
/// 4. Parallel loops are outlined into an internal closure `void(ptr ctx, i64 begin, i64 end)`
///    that receives the values it uses through a context struct, and run by fb_parallel_for.
/// 5. Unrolled loops carry llvm.loop.unroll.full metadata.
/// 6. Local buffers (Alloc) live on the stack of the function that runs them (up to 256 KiB)
///    or on the heap.
/// Fails naming the kernel on IR the emitter does not understand (an unbound variable, an
/// unknown local buffer, a type mismatch).
Expected<llvm::Function*> emitLoopKernel(llvm::Module& module, const Kernel& kernel,
                                         const LoopEmitOptions& options = {});

/// A C identifier made from a graph value or node name ("/conv1/Conv_output_0" → "conv1_Conv_output_0").
std::string llvmSafeName(const std::string& name);

} // namespace fb::cg
