// Per kernel: the thread pool or the calling thread, by measured time.
#include "codegen/exec/KernelThreading.h"

#include <algorithm>

namespace fb::cg {

void KernelThreading::Samples::add(double v) {
  us[size_t(next)] = v;
  next = (next + 1) % int(us.size());
  count = std::min(count + 1, int(us.size()));
}

double KernelThreading::Samples::median() const {
  static_assert(std::tuple_size_v<decltype(us)> == 3);
  if (count < 3)
    return count == 1 ? us[0] : std::min(us[0], us[1]); // the lower middle of two
  return std::max(std::min(us[0], us[1]), std::min(std::max(us[0], us[1]), us[2]));
}

void KernelThreading::reset(size_t kernels) {
  m_kernels.assign(kernels, State{});
  m_run = -1;
  m_phase = Phase::Default;
}

void KernelThreading::beginRun() {
  ++m_run;
  if (m_run == kCalibrationEnd)
    decideAfterCalibration();
  if (m_run < kWarmRuns) {
    m_phase = Phase::Default; // cold caches, the arena's first touch, a sleeping worker
  } else if (m_run < kCalibrationEnd) {
    const int64_t c = (m_run - kWarmRuns) % 4;
    m_phase = c == 0 ? Phase::AllPool : c == 1 ? Phase::AllSerial : Phase::HalfSerial;
    m_half = int(c) - 2;
  } else if (int64_t r = (m_run - kCalibrationEnd) % kProbeEvery; r >= kProbeEvery - 2) {
    m_phase = r == kProbeEvery - 2 ? Phase::ProbePool : Phase::ProbeSerial;
    m_half = int(((m_run - kCalibrationEnd) / kProbeEvery) % 2); // alternate pair by pair
  } else {
    m_phase = Phase::Default;
  }
}

bool KernelThreading::serial(size_t k) const {
  if (k >= m_kernels.size())
    return false;
  const State& s = m_kernels[k];
  switch (m_phase) {
  case Phase::AllPool:
    return false;
  case Phase::AllSerial:
    return true;
  case Phase::HalfSerial:
    return inHalf(k);
  case Phase::ProbePool:
    return s.settled || !inHalf(k) ? s.serial : false;
  case Phase::ProbeSerial:
    return s.settled || !inHalf(k) ? s.serial : true;
  case Phase::Default:
    break;
  }
  return s.serial;
}

bool KernelThreading::timed(size_t k) const {
  if (k >= m_kernels.size())
    return false;
  switch (m_phase) {
  case Phase::AllPool:
  case Phase::AllSerial:
    return true;
  case Phase::HalfSerial:
    return inHalf(k);
  case Phase::ProbePool:
  case Phase::ProbeSerial:
    return !m_kernels[k].settled && inHalf(k);
  case Phase::Default:
    break;
  }
  return false;
}

void KernelThreading::record(size_t k, double us) {
  if (!timed(k))
    return;
  State& s = m_kernels[k];
  (m_phase == Phase::AllSerial ? s.aloneInChain : serial(k) ? s.alone : s.pool).add(us);
  if (m_phase == Phase::ProbeSerial && !s.pool.empty())
    decide(s);
}

void KernelThreading::decideAfterCalibration() {
  // Alone in a chain: faster alone when the kernel before it ran alone too (its input then in
  // the calling core's cache).
  auto chains = [&](size_t k) {
    const State& s = m_kernels[k];
    return !s.pool.empty() && !s.aloneInChain.empty() &&
           s.aloneInChain.median() * kLeavePoolGain < s.pool.median();
  };
  for (size_t k = 0; k < m_kernels.size(); ++k) {
    State& s = m_kernels[k];
    if (s.pool.empty() || s.alone.empty())
      continue; // never ran (elided, interpreted): stays on the pool
    s.serial = false;
    decide(s); // alone beside neighbours on the pool
    if (!s.serial && k > 0 && chains(k) && chains(k - 1)) {
      s.serial = true; // a link of a chain of kernels that run alone together
      s.alone = s.aloneInChain;
    }
    s.settled = !s.serial && s.pool.median() * kSettledSpeedup < s.alone.median();
  }
}

void KernelThreading::decide(State& s) {
  // Hysteresis: leaving the pool takes a clear gain (a few noisy samples of a kernel of
  // microseconds must not move a large one off the pool), coming back only a tie.
  s.serial = s.serial ? s.alone.median() <= s.pool.median()
                      : s.alone.median() * kLeavePoolGain < s.pool.median();
}

} // namespace fb::cg
