// Per kernel of a compiled model: run its parallel loops on the thread pool or serially on the
// calling thread, whichever its measured times say is faster right now.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fb::cg {

/// Parallelize a kernel only when it pays, as measured.
///
/// A kernel of a few microseconds gains little from a second thread and pays a fork-join; on a
/// shared machine whose host takes a core away now and then, a worker that claimed part of the
/// kernel and then stalls makes the caller wait far longer than the whole kernel would have
/// taken it alone (SqueezeNet at 64x64 on a busy 2-core host: 0.91 ms on 2 threads, 0.67 ms on
/// 1, 0.57 ms when each kernel takes the faster of the two). The choice cannot be made once from
/// FLOP counts: it depends on the machine and on the load, which changes within minutes.
///
/// So each run of the model is planned here: runs 0..2 warm up (pool everywhere, untimed: the
/// first runs of a fresh model pay for caches, page faults and a worker woken from sleep, which
/// would count against the pool); runs 3..14 time every kernel on the pool and alone, in a cycle
/// of four runs: all kernels on the pool, all alone, the even-numbered kernels alone while the
/// odd ones keep the pool, then the odd ones alone. A memory-bound kernel timed alone right
/// after a producer that ran alone finds its input in the calling core's cache, where a
/// producer on the pool left half of it in the other core's: MobileNet-v2's depthwise layers at
/// 224x224 measured 40% faster alone in all-serial runs, and ran 40% slower alone inside the
/// model beside their pooled 1x1 producers. So a kernel goes alone when it is faster alone beside
/// neighbours on the pool, or when it and the kernel before it are both faster alone in the
/// all-serial runs (a chain of small kernels that run alone together, as MobileNet-v3's at
/// 64x64). Leaving the pool takes a 15% gain by the median of three samples; coming back a tie.
/// A kernel whose median pool time is under 1/1.5 of its serial one after the calibration is
/// settled (large kernels: nothing to learn); the others are probed again every 16 runs (one run
/// on the pool, one alone, half of them at a time, the other kernels in their chosen modes), so
/// that the choice follows the load. Serial and pooled runs compute bit-identical results:
/// parallel loops split only independent iterations and work items (never a reduction), so the
/// choice changes timing alone.
class KernelThreading {
public:
  explicit KernelThreading(size_t kernels = 0) { reset(kernels); }
  void reset(size_t kernels);

  /// Starts planning the next run of the model.
  void beginRun();
  /// Whether this run runs kernel k serially on the calling thread.
  bool serial(size_t k) const;
  /// Whether this run wants kernel k's time (then pass it to record()).
  bool timed(size_t k) const;
  /// Kernel k took `us` microseconds in the mode serial(k) said.
  void record(size_t k, double us);

  /// The mode kernel k runs in outside probes (false before the first decision).
  bool chosenSerial(size_t k) const { return k < m_kernels.size() && m_kernels[k].serial; }
  /// Runs planned so far.
  int64_t runs() const { return m_run; }

  static constexpr int kWarmRuns = 3;       ///< runs 0..2: the pool, untimed
  static constexpr int kCalibrationEnd = 15; ///< runs 3..14: pool, all, even, odd alone
  static constexpr int kProbeEvery = 16;    ///< unsettled kernels: a pool+serial probe pair
  static constexpr double kSettledSpeedup = 1.5;
  /// A kernel on the pool goes alone when its serial median is this much lower.
  static constexpr double kLeavePoolGain = 1.15;

private:
  /// The last few times of one mode (a ring).
  struct Samples {
    std::array<double, 3> us{};
    int count = 0, next = 0;
    void add(double v);
    double median() const;
    bool empty() const { return count == 0; }
  };
  struct State {
    Samples pool, alone;
    Samples aloneInChain; ///< calibration runs with every kernel alone
    bool serial = false;
    bool settled = false; ///< the pool wins by kSettledSpeedup or more: never probed again
  };
  enum class Phase { Default, AllPool, AllSerial, HalfSerial, ProbePool, ProbeSerial };

  static void decide(State& s);
  /// The first choice of every kernel, once the calibration's samples are in.
  void decideAfterCalibration();
  /// Whether this run's half-serial calibration or probe concerns kernel k (its parity).
  bool inHalf(size_t k) const { return int(k % 2) == m_half; }

  std::vector<State> m_kernels;
  int64_t m_run = -1;
  Phase m_phase = Phase::Default;
  int m_half = 0; ///< the parity of the kernels a HalfSerial run or a probe pair times
};

} // namespace fb::cg
