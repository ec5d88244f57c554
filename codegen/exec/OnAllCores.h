// Compile-time work spread over the host's cores: items claimed one at a time from a shared
// counter by min(count, cores) threads, the caller's among them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace fb::cg {

/// Calls body(i) once for every i in [0, count), on up to hardware_concurrency() threads
/// (the calling thread included); returns when all have run. `body` must be safe to call
/// concurrently for different i.
template <typename Body> void forEachOnAllCores(size_t count, const Body& body) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < count;)
      body(i);
  };
  const size_t threads = std::min<size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
}

} // namespace fb::cg
