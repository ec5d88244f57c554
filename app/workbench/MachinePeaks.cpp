// The roofline micro-benchmark: FMA chains for the compute roof, a STREAM triad for the memory
// roof, and the small text cache that keeps their results per CPU and thread count.
#include "app/workbench/MachinePeaks.h"
#include "app/workbench/CachePaths.h"
#include "codegen/llvm/Target.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <time.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FB_PEAKS_X86 1
#endif

namespace fb::workbench {

namespace {

using Clock = std::chrono::steady_clock;

/// Independent accumulator chains per thread: enough to cover FMA latency (4 cycles) on two
/// FMA pipes, few enough to stay in registers (16 vector registers on AVX2). The loops over them
/// are unrolled by pragma: -O2 alone keeps the accumulators in memory, which measures store
/// forwarding instead of FMA throughput.
constexpr int kChains = 12;

/// One thread's FMA loop: `iterations` × kChains fused multiply-adds of `lanes` floats.
/// Returns a sum of the accumulators so the loop cannot be optimized away.
using FmaLoop = double (*)(int64_t iterations, float seed);

#ifdef FB_PEAKS_X86
__attribute__((target("avx512f"))) double fmaAvx512(int64_t iterations, float seed) {
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(seed);
  __m512 acc[kChains];
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm512_set1_ps(float(c));
  for (int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], a, b);
#pragma GCC unroll 16
  for (int c = 1; c < kChains; ++c)
    acc[0] = _mm512_add_ps(acc[0], acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc[0]);
  double sum = 0;
  for (float v : lanes)
    sum += v;
  return sum;
}

__attribute__((target("avx2,fma"))) double fmaAvx2(int64_t iterations, float seed) {
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(seed);
  __m256 acc[kChains];
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm256_set1_ps(float(c));
  for (int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], a, b);
#pragma GCC unroll 16
  for (int c = 1; c < kChains; ++c)
    acc[0] = _mm256_add_ps(acc[0], acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  double sum = 0;
  for (float v : lanes)
    sum += v;
  return sum;
}
#endif

/// Without AVX2 and FMA (or off x86): a multiply and an add per element, counted as two FLOPs
/// as an FMA is; the compiler vectorizes it as far as the baseline allows.
double fmaScalar(int64_t iterations, float seed) {
  float acc[kChains * 4];
  for (int c = 0; c < kChains * 4; ++c)
    acc[c] = float(c);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains * 4; ++c)
      acc[c] = acc[c] * 0.999999f + seed;
  double sum = 0;
  for (float v : acc)
    sum += v;
  return sum;
}

struct FmaVariant {
  const char* isa;
  FmaLoop loop;
  int lanes; ///< floats per accumulator chain (scalar: the kChains*4 scalars as 4 lanes)
};

std::vector<FmaVariant> fmaVariants() {
  std::vector<FmaVariant> v;
#ifdef FB_PEAKS_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    v.push_back({"avx512", fmaAvx512, 16});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    v.push_back({"avx2", fmaAvx2, 8});
#endif
  if (v.empty())
    v.push_back({"scalar", fmaScalar, 4});
  return v;
}

/// The CPU time of the calling thread, in seconds.
double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// Runs `body(t)` on `threads` threads released together; returns each thread's CPU seconds
/// in it. Rates are per CPU second: a thread the scheduler takes off its core (another
/// process, a build) is not charged for the time it waited, so a busy machine does not read as
/// a slow one. Threads that share a core still share its units while both run.
template <typename Body> std::vector<double> timeOnThreads(int threads, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> cpu(size_t(threads), 0.0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      const double c0 = threadCpuSeconds();
      body(t);
      cpu[size_t(t)] = std::max(threadCpuSeconds() - c0, 1e-9);
    });
  while (ready.load() < threads)
    std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (std::thread& th : pool)
    th.join();
  return cpu;
}

/// The best GFLOP/s of `variant` on `threads` threads over a few trials of about 60 ms.
Expected<double> measureFma(const FmaVariant& variant, int threads, const JobControl* job) {
  std::atomic<double> sink{0};
  // Calibrate: iterations for about 60 ms on one thread.
  int64_t iterations = 1 << 16;
  for (;;) {
    auto t0 = Clock::now();
    sink = sink + variant.loop(iterations, 1e-7f);
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > 0.01 || iterations > (int64_t(1) << 34)) {
      iterations = std::max<int64_t>(1, int64_t(double(iterations) * 0.06 / std::max(s, 1e-9)));
      break;
    }
    iterations *= 4;
  }
  double best = 0;
  for (int trial = 0; trial < 3; ++trial) {
    FB_TRY(checkCancelled(job, "measuring the machine's peaks"));
    const std::vector<double> cpu = timeOnThreads(threads, [&](int t) {
      sink = sink + variant.loop(iterations, 1e-7f * float(t + 1));
    });
    const double flopsPerThread = 2.0 * double(iterations) * kChains * variant.lanes;
    double rate = 0;
    for (double seconds : cpu)
      rate += flopsPerThread / seconds;
    best = std::max(best, rate * 1e-9);
  }
  return best;
}

#ifdef FB_PEAKS_X86
/// a = b + s·c over [begin, end), in the widest vectors the CPU has: an L2 cache delivers a
/// line per cycle only to loads that wide.
__attribute__((target("avx512f"))) void triadAvx512(float* __restrict a, const float* __restrict b,
                                                    const float* __restrict c, float s,
                                                    size_t begin, size_t end) {
  const __m512 sv = _mm512_set1_ps(s);
  size_t i = begin;
  for (; i + 16 <= end; i += 16)
    _mm512_storeu_ps(a + i, _mm512_fmadd_ps(sv, _mm512_loadu_ps(c + i), _mm512_loadu_ps(b + i)));
  for (; i < end; ++i)
    a[i] = b[i] + s * c[i];
}

__attribute__((target("avx2,fma"))) void triadAvx2(float* __restrict a, const float* __restrict b,
                                                   const float* __restrict c, float s,
                                                   size_t begin, size_t end) {
  const __m256 sv = _mm256_set1_ps(s);
  size_t i = begin;
  for (; i + 8 <= end; i += 8)
    _mm256_storeu_ps(a + i, _mm256_fmadd_ps(sv, _mm256_loadu_ps(c + i), _mm256_loadu_ps(b + i)));
  for (; i < end; ++i)
    a[i] = b[i] + s * c[i];
}

void triadSse(float* __restrict a, const float* __restrict b, const float* __restrict c, float s,
              size_t begin, size_t end) {
  const __m128 sv = _mm_set1_ps(s);
  size_t i = begin;
  for (; i + 4 <= end; i += 4)
    _mm_storeu_ps(a + i, _mm_add_ps(_mm_loadu_ps(b + i), _mm_mul_ps(sv, _mm_loadu_ps(c + i))));
  for (; i < end; ++i)
    a[i] = b[i] + s * c[i];
}

using TriadFn = void (*)(float* __restrict, const float* __restrict, const float* __restrict,
                         float, size_t, size_t);

void triad(float* __restrict a, const float* __restrict b, const float* __restrict c, float s,
           size_t begin, size_t end) {
  static const TriadFn widest = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      return TriadFn(triadAvx512);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return TriadFn(triadAvx2);
    return TriadFn(triadSse);
  }();
  widest(a, b, c, s, begin, end);
}
#else
void triad(float* __restrict a, const float* __restrict b, const float* __restrict c, float s,
           size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i)
    a[i] = b[i] + s * c[i];
}
#endif

/// The best triad bandwidth over a few passes on arrays of 64 MiB each, every thread on its
/// own slice (first touched by that thread, as its pages will be on a NUMA machine).
Expected<double> measureTriad(int threads, const JobControl* job) {
  constexpr size_t kFloats = size_t(16) << 20; // 64 MiB per array, 192 MiB in all
  std::unique_ptr<float[]> a(new (std::nothrow) float[kFloats]);
  std::unique_ptr<float[]> b(new (std::nothrow) float[kFloats]);
  std::unique_ptr<float[]> c(new (std::nothrow) float[kFloats]);
  if (!a || !b || !c)
    return makeError("measuring the memory bandwidth needs 192 MiB, which this machine refused");
  auto slice = [&](int t) {
    size_t per = (kFloats + size_t(threads) - 1) / size_t(threads);
    return std::pair<size_t, size_t>(std::min(kFloats, per * size_t(t)),
                                     std::min(kFloats, per * size_t(t + 1)));
  };
  timeOnThreads(threads, [&](int t) {
    auto [begin, end] = slice(t);
    for (size_t i = begin; i < end; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  });
  double best = 0;
  for (int pass = 0; pass < 6; ++pass) {
    FB_TRY(checkCancelled(job, "measuring the machine's peaks"));
    const std::vector<double> cpu = timeOnThreads(threads, [&](int t) {
      auto [begin, end] = slice(t);
      triad(a.get(), b.get(), c.get(), 3.0f, begin, end);
    });
    double rate = 0;
    for (int t = 0; t < threads; ++t) {
      auto [begin, end] = slice(t);
      rate += 3.0 * sizeof(float) * double(end - begin) / cpu[size_t(t)];
    }
    best = std::max(best, rate * 1e-9);
  }
  return best;
}

/// The best triad bandwidth with each thread's three arrays of 48 KiB in its own L2 cache
/// (144 KiB: past a 32 KiB L1, inside every current x86 core's L2), repeated for about 20 ms.
/// A kernel whose tensors fit in cache may run above the DRAM roof; this roof bounds it.
Expected<double> measureCacheTriad(int threads, const JobControl* job) {
  constexpr size_t kFloats = size_t(12) << 10; // 48 KiB per array
  const size_t n = static_cast<size_t>(threads);
  std::vector<std::vector<float>> a(n), b(n), c(n);
  int repeats = 256;
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    FB_TRY(checkCancelled(job, "measuring the machine's peaks"));
    const std::vector<double> cpu = timeOnThreads(threads, [&](int t) {
      std::vector<float>& av = a[size_t(t)];
      std::vector<float>& bv = b[size_t(t)];
      std::vector<float>& cv = c[size_t(t)];
      if (av.empty()) { // first touch by the thread that uses them
        av.assign(kFloats, 0.0f);
        bv.assign(kFloats, 1.0f);
        cv.assign(kFloats, 2.0f);
      }
      for (int r = 0; r < repeats; ++r)
        triad(av.data(), bv.data(), cv.data(), 3.0f + float(r & 1), 0, kFloats);
    });
    double rate = 0;
    for (double seconds : cpu)
      rate += 3.0 * sizeof(float) * double(kFloats) * repeats / seconds;
    if (pass == 0) {
      // Calibrate the repeats for about 20 ms per pass (the first pass also touched the pages).
      const double seconds = *std::max_element(cpu.begin(), cpu.end());
      repeats = std::max(16, int(double(repeats) * 0.02 / std::max(seconds, 1e-6)));
      continue;
    }
    best = std::max(best, rate * 1e-9);
  }
  return best;
}

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

/// The first word of a cache line: names how the peaks were measured, so that lines written
/// by another version of the benchmark are measured again rather than trusted.
constexpr const char* kCacheTag = "fma12-triad64M-l2triad-wide-cpu";

/// One cache line: tag cpu threads gflops gbps cachegbps isa date time (the date has a space).
std::string cacheLine(const MachinePeaks& p) {
  std::ostringstream os;
  os.precision(12); // the cached numbers read back as measured
  os << kCacheTag << ' ' << p.cpu << ' ' << p.threads << ' ' << p.gflops << ' ' << p.gbps << ' ' << p.cacheGbps << ' ' << p.isa << ' '
     << p.measuredAt;
  return os.str();
}

std::optional<MachinePeaks> parseCacheLine(const std::string& line) {
  std::istringstream is(line);
  MachinePeaks p;
  std::string tag, date, time;
  if (!(is >> tag >> p.cpu >> p.threads >> p.gflops >> p.gbps >> p.cacheGbps >> p.isa >> date >> time))
    return std::nullopt;
  if (tag != kCacheTag || p.threads < 1 || !(p.gflops > 0) || !(p.gbps > 0) || !(p.cacheGbps > 0))
    return std::nullopt;
  p.measuredAt = date + " " + time;
  return p;
}

} // namespace

std::string defaultMachinePeaksPath() {
  return fuseboxCacheFile("machine-peaks.txt");
}

Expected<MachinePeaks> measureMachinePeaks(int threads, const JobControl* job) {
  if (threads < 1)
    return makeError("the machine's peaks need at least one thread, got ", threads);
  if (const unsigned cores = std::thread::hardware_concurrency(); cores > 0 && unsigned(threads) > cores)
    return makeError("the machine's peaks on ", threads, " threads need as many cores; this machine has ",
                     cores);
  MachinePeaks p;
  p.threads = threads;
  p.cpu = cg::TargetInfo::host().cpu;
  reportProgress(job, 0.0, "measuring peak FLOP/s");
  // Every FMA width the CPU has: on some (Zen 4) 512-bit FMA is no faster than 256-bit.
  for (const FmaVariant& v : fmaVariants()) {
    FB_ASSIGN_OR_RETURN(double gflops, measureFma(v, threads, job));
    if (gflops > p.gflops) {
      p.gflops = gflops;
      p.isa = v.isa;
    }
  }
  reportProgress(job, 0.5, "measuring memory bandwidth");
  FB_ASSIGN_OR_RETURN(p.gbps, measureTriad(threads, job));
  reportProgress(job, 0.8, "measuring cache bandwidth");
  FB_ASSIGN_OR_RETURN(p.cacheGbps, measureCacheTriad(threads, job));
  p.measuredAt = nowUtc();
  reportProgress(job, 1.0, "peaks measured");
  return p;
}

std::optional<MachinePeaks> cachedMachinePeaks(int threads, const std::string& cachePath) {
  if (cachePath.empty())
    return std::nullopt;
  std::ifstream in(cachePath);
  const std::string cpu = cg::TargetInfo::host().cpu;
  std::optional<MachinePeaks> found;
  for (std::string line; std::getline(in, line);) {
    std::optional<MachinePeaks> p = parseCacheLine(line);
    if (p && p->cpu == cpu && p->threads == threads)
      found = p; // the last line for a key wins
  }
  if (found) {
    found->fromCache = true;
    found->cachePath = cachePath;
  }
  return found;
}

Expected<MachinePeaks> machinePeaks(int threads, const std::string& cachePath,
                                    const JobControl* job, bool remeasure) {
  if (!remeasure)
    if (std::optional<MachinePeaks> cached = cachedMachinePeaks(threads, cachePath))
      return *cached;
  FB_ASSIGN_OR_RETURN(MachinePeaks p, measureMachinePeaks(threads, job));
  if (!cachePath.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(cachePath).parent_path(), ec);
    std::ofstream out(cachePath, std::ios::app);
    if (out << cacheLine(p) << '\n')
      p.cachePath = cachePath;
  }
  return p;
}

std::string describeMachinePeaks(const MachinePeaks& p) {
  std::ostringstream os;
  os << "peaks measured on " << p.cpu << " with " << p.threads
     << (p.threads == 1 ? " thread" : " threads") << " (" << p.isa
     << " FMA chains, STREAM triad in DRAM and in L2; per CPU second) on "
     << p.measuredAt << " UTC";
  if (!p.cachePath.empty())
    os << (p.fromCache ? ", read from " : ", cached in ") << p.cachePath;
  else
    os << ", not cached";
  return os.str();
}

} // namespace fb::workbench
