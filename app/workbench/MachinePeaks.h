// This machine's roofs for a roofline: peak FP32 FLOP/s and memory bandwidth, measured once by
// a short micro-benchmark (in the manner of the Empirical Roofline Toolkit) and cached on disk.
#pragma once

#include "app/workbench/Job.h"

#include <optional>
#include <string>

namespace fb::workbench {

/// The measured roofs at one thread count. Rates are per thread CPU second, summed over the
/// threads: what the cores do while they run, not how often a busy machine lets them.
struct MachinePeaks {
  double gflops = 0;      ///< FP32 GFLOP/s: independent FMA chains in registers on every thread
  double gbps = 0;        ///< GB/s: a STREAM triad (a = b + s·c, 12 bytes per element) over
                          ///< arrays far larger than the caches (DRAM)
  double cacheGbps = 0;   ///< GB/s: the same triad on 144 KiB per thread, inside the L2 cache
  int threads = 1;        ///< threads that ran them (the profile's thread count)
  std::string cpu;        ///< the host CPU as LLVM names it; part of the cache key
  std::string isa;        ///< the vector instructions of the FMA loop: "avx512", "avx2", "sse"
  /// How the DRAM roof was found: "triad" (measured) or "device attributes" (a GPU's memory
  /// clock and bus width, app/workbench/GpuPeaks.h).
  std::string memoryMethod = "triad";
  std::string measuredAt; ///< UTC date and time of the measurement, "2025-01-31 14:02"
  bool fromCache = false; ///< read from the cache file rather than measured now
  std::string cachePath;  ///< the cache file
};

/// The cache file: $XDG_CACHE_HOME/fusebox/machine-peaks.txt, else
/// $HOME/.cache/fusebox/machine-peaks.txt, next to the kernel cache ("" without either).
std::string defaultMachinePeaksPath();

/// Runs the micro-benchmark on `threads` threads (about a second in all; more threads than the
/// machine has cores are refused, as their CPU times would not overlap). Cancellable between
/// its trials through `job`.
Expected<MachinePeaks> measureMachinePeaks(int threads, const JobControl* job = nullptr);

/// The peaks for `threads` on this CPU from the cache at `cachePath`, or nullopt.
std::optional<MachinePeaks> cachedMachinePeaks(int threads, const std::string& cachePath);

/// The cached peaks for `threads`, or measures them and adds them to the cache (an unwritable
/// cache is not an error: the peaks are measured again next time). `remeasure` measures even
/// when the cache has them (a measurement taken while the machine was busy reads low); the new
/// line replaces the old one for every later read.
Expected<MachinePeaks> machinePeaks(int threads, const std::string& cachePath,
                                    const JobControl* job = nullptr, bool remeasure = false);

/// "peaks measured on znver4 with 2 threads (avx512 FMA chains, STREAM triad in DRAM and in
/// L2; per CPU second) on 2025-01-31 14:02 UTC, cached in ~/.cache/fusebox/machine-peaks.txt":
/// what a roofline says about its roofs.
std::string describeMachinePeaks(const MachinePeaks& peaks);

} // namespace fb::workbench
