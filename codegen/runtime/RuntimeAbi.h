// The C ABI between generated kernels and the host runtime: the kernel entry signature and the
// parallel-for that generated code calls.
#pragma once

#include <cstdint>

extern "C" {

/// Every generated kernel has this signature. `args` points to one pointer per kernel argument,
/// in the order of Kernel::args (inputs, outputs, packed weights, scratch).
using FbKernelFn = void (*)(void* const* args);

/// The body of a parallel loop: runs iterations [begin, end) with the closure `ctx`.
using FbParallelBody = void (*)(void* ctx, int64_t begin, int64_t end);

/// Runs body(ctx, b, e) over [0, n) split into contiguous chunks across the runtime's worker
/// threads (the caller participates) and returns when all are done. Generated code calls it by
/// this name; the JIT resolves it to the host's definition. Nested calls run serially.
void fb_parallel_for(FbParallelBody body, void* ctx, int64_t n);

/// Sets the number of threads fb_parallel_for uses (>= 1). Not thread-safe against running
/// kernels.
void fb_set_num_threads(int n);
int fb_get_num_threads();
}
