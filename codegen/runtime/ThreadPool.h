// The worker-thread pool behind fb_parallel_for: persistent workers that spin briefly, then sleep.
#pragma once

#include "codegen/runtime/RuntimeAbi.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace fb::cg {

/// A fixed set of worker threads that run the chunks of one parallel loop at a time.
///
/// Kernels call it many times per inference, often for loops of a few microseconds, so the
/// hand-off must be cheap: a job is published by bumping one 64-bit ticket (generation, chunk
/// count, next chunk) that workers claim chunks from with a compare-and-swap; idle workers spin
/// for a short while before they sleep on a futex. The calling thread runs chunks too. A call
/// made from inside a running chunk (a nested parallel loop), or while another thread holds the
/// pool, runs serially on the calling thread.
class ThreadPool {
public:
  /// The process-wide pool used by fb_parallel_for (hardware concurrency threads by default).
  static ThreadPool& global();

  explicit ThreadPool(int numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Total threads a parallel loop uses, the caller included (>= 1).
  int numThreads() const { return m_numThreads; }
  /// Restarts the workers with `n` threads in all (clamped to [1, 256]). Must not be called
  /// while a loop runs.
  void setNumThreads(int n);

  /// Runs body(ctx, b, e) over [0, n) in contiguous chunks, one per thread, and returns when
  /// all chunks are done.
  void parallelFor(FbParallelBody body, void* ctx, int64_t n);

private:
  void startWorkers();
  void stopWorkers();
  void workerLoop(int index);
  /// Claims and runs chunks of the current job until none is left. Returns after the last one
  /// this thread could claim.
  void runChunks(uint32_t generation);

  int m_numThreads = 1;
  std::vector<std::thread> m_workers; // owned; m_numThreads - 1 of them

  /// (generation << 32) | (numChunks << 16) | nextChunk: what workers claim chunks from.
  std::atomic<uint64_t> m_ticket{0};
  /// The generation alone, for sleeping workers to wait on (a futex word).
  std::atomic<uint32_t> m_wake{0};
  /// Chunks of the current job not finished yet.
  std::atomic<int64_t> m_pending{0};
  std::atomic<bool> m_stop{false};
  // The current job; written before the ticket is published, read after a chunk is claimed.
  std::atomic<FbParallelBody> m_body{nullptr};
  std::atomic<void*> m_ctx{nullptr};
  std::atomic<int64_t> m_n{0};
  uint32_t m_generation = 0;   // guarded by m_callerMutex
  std::mutex m_callerMutex;    // one parallel loop at a time
};

/// While one is alive on a thread, parallel loops started from that thread run serially on it
/// (the compiled model's runner uses it for kernels measured to be faster without the pool).
class SerialScope {
public:
  explicit SerialScope(bool active);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

private:
  bool m_previous;
};

} // namespace fb::cg
