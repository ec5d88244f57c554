// The worker-thread pool and the C runtime entry points that generated kernels call.
#include "codegen/runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>

namespace fb::cg {

namespace {

/// True on a thread while it runs a chunk: a parallel loop started from there runs serially.
thread_local bool t_inParallelChunk = false;
/// True on a thread inside a SerialScope: its parallel loops run serially.
thread_local bool t_serial = false;

/// How long an idle worker spins before it sleeps. Kernels of one inference follow each other
/// within microseconds, and a stretch of kernels that KernelThreading runs on the caller alone
/// lasts up to a few hundred; a worker woken from sleep on a busy host costs tens of
/// microseconds, so a 1 ms spin keeps it hot across a whole model run without burning a core
/// for long between runs (200 µs: SqueezeNet 64x64 on a busy 2-core host 0.70 ms, 1 ms: 0.61).
constexpr auto kSpinTime = std::chrono::microseconds(1000);

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Chunk c of `count` contiguous chunks of [0, n), sizes differing by at most one.
inline std::pair<int64_t, int64_t> chunkRange(int64_t n, int64_t count, int64_t c) {
  int64_t base = n / count, extra = n % count;
  int64_t begin = c * base + std::min(c, extra);
  return {begin, begin + base + (c < extra ? 1 : 0)};
}

} // namespace

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(int(std::max(1u, std::thread::hardware_concurrency())));
  return pool;
}

ThreadPool::ThreadPool(int numThreads) : m_numThreads(std::clamp(numThreads, 1, 256)) {
  startWorkers();
}

ThreadPool::~ThreadPool() { stopWorkers(); }

void ThreadPool::setNumThreads(int n) {
  n = std::clamp(n, 1, 256);
  std::lock_guard<std::mutex> lock(m_callerMutex);
  if (n == m_numThreads)
    return;
  stopWorkers();
  m_numThreads = n;
  startWorkers();
}

void ThreadPool::startWorkers() {
  m_stop.store(false);
  m_wake.store(m_generation);
  for (int i = 1; i < m_numThreads; ++i)
    m_workers.emplace_back([this, i] { workerLoop(i); });
}

void ThreadPool::stopWorkers() {
  m_stop.store(true);
  m_wake.fetch_add(1, std::memory_order_release);
  m_wake.notify_all();
  for (std::thread& t : m_workers)
    t.join();
  m_workers.clear();
}

void ThreadPool::workerLoop(int /*index*/) {
  uint32_t seen = m_wake.load(std::memory_order_acquire);
  for (;;) {
    uint32_t gen = seen;
    auto spinUntil = std::chrono::steady_clock::now() + kSpinTime;
    for (unsigned i = 0;; ++i) {
      gen = uint32_t(m_ticket.load(std::memory_order_acquire) >> 32);
      if (gen != seen || m_stop.load(std::memory_order_relaxed))
        break;
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > spinUntil) {
        m_wake.wait(seen, std::memory_order_acquire);
        if (m_stop.load(std::memory_order_relaxed))
          return;
        spinUntil = std::chrono::steady_clock::now() + kSpinTime;
      }
      cpuRelax();
    }
    if (m_stop.load(std::memory_order_relaxed))
      return;
    seen = gen;
    runChunks(gen);
  }
}

void ThreadPool::runChunks(uint32_t generation) {
  uint64_t t = m_ticket.load(std::memory_order_acquire);
  for (;;) {
    if (uint32_t(t >> 32) != generation)
      return;
    uint32_t count = uint32_t(t >> 16) & 0xffff, next = uint32_t(t) & 0xffff;
    if (next >= count)
      return;
    if (!m_ticket.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                        std::memory_order_acquire))
      continue;
    // The claimed chunk keeps the job alive (m_pending > 0), so its fields are stable here.
    FbParallelBody body = m_body.load(std::memory_order_relaxed);
    void* ctx = m_ctx.load(std::memory_order_relaxed);
    auto [begin, end] = chunkRange(m_n.load(std::memory_order_relaxed), count, next);
    bool wasInChunk = t_inParallelChunk;
    t_inParallelChunk = true;
    if (begin < end)
      body(ctx, begin, end);
    t_inParallelChunk = wasInChunk;
    m_pending.fetch_sub(1, std::memory_order_acq_rel);
    t = m_ticket.load(std::memory_order_acquire);
  }
}

void ThreadPool::parallelFor(FbParallelBody body, void* ctx, int64_t n) {
  if (n <= 0)
    return;
  if (t_inParallelChunk || t_serial || m_numThreads == 1 || n == 1) {
    body(ctx, 0, n);
    return;
  }
  std::unique_lock<std::mutex> lock(m_callerMutex, std::try_to_lock);
  if (!lock.owns_lock()) {
    body(ctx, 0, n); // another thread runs a loop on the pool: do this one alone
    return;
  }
  int64_t chunks = std::min<int64_t>(n, m_numThreads);
  m_body.store(body, std::memory_order_relaxed);
  m_ctx.store(ctx, std::memory_order_relaxed);
  m_n.store(n, std::memory_order_relaxed);
  m_pending.store(chunks, std::memory_order_relaxed);
  if (++m_generation == 0)
    ++m_generation;
  uint32_t gen = m_generation;
  m_ticket.store((uint64_t(gen) << 32) | (uint64_t(chunks) << 16), std::memory_order_release);
  m_wake.store(gen, std::memory_order_release);
  m_wake.notify_all();
  runChunks(gen);
  // Wait for the workers' chunks; yield now and then so that a preempted worker on a busy
  // machine gets the core back instead of the caller spinning through its time slice.
  for (unsigned spins = 0; m_pending.load(std::memory_order_acquire) != 0; ++spins) {
    cpuRelax();
    if ((spins & 1023) == 1023)
      std::this_thread::yield();
  }
}

SerialScope::SerialScope(bool active) : m_previous(t_serial) {
  t_serial = m_previous || active;
}

SerialScope::~SerialScope() {
  t_serial = m_previous;
}

} // namespace fb::cg

extern "C" {

void fb_parallel_for(FbParallelBody body, void* ctx, int64_t n) {
  fb::cg::ThreadPool::global().parallelFor(body, ctx, n);
}

void fb_set_num_threads(int n) { fb::cg::ThreadPool::global().setNumThreads(n); }

int fb_get_num_threads() { return fb::cg::ThreadPool::global().numThreads(); }
}
