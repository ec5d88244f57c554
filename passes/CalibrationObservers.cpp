// Calibration observers: the zero-anchored histogram, percentile and entropy (KL) thresholds,
// and the per-activation observer that turns them into a range.
#include "passes/Calibration.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace fb {

namespace {

/// floor(a / 2) for any sign (bin k of width w lies in bin floor(k/2) of width 2w).
int64_t floorHalf(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

/// MXNet's smoothing: empty bins get eps, taken evenly from the non-empty ones, so that KL is
/// finite. Fails (returns false) when every bin is empty.
bool smooth(std::vector<double>& p) {
  constexpr double eps = 1e-4;
  size_t zeros = size_t(std::count(p.begin(), p.end(), 0.0));
  if (zeros == p.size())
    return false;
  const double take = eps * double(zeros) / double(p.size() - zeros);
  for (double& x : p)
    x = x == 0.0 ? eps : x - take;
  return true;
}

/// KL(p‖q) of two count vectors, each normalized to sum 1.
double klDivergence(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0, sq = 0;
  for (size_t j = 0; j < p.size(); ++j) {
    sp += p[j];
    sq += q[j];
  }
  double kl = 0;
  for (size_t j = 0; j < p.size(); ++j) {
    const double pj = p[j] / sp, qj = q[j] / sq;
    if (pj > 0)
      kl += pj * std::log(pj / qj);
  }
  return kl;
}

} // namespace

const char* calibrationMethodName(CalibrationMethod method) {
  switch (method) {
  case CalibrationMethod::MinMax: return "minmax";
  case CalibrationMethod::Percentile: return "percentile";
  case CalibrationMethod::Entropy: return "entropy";
  }
  __builtin_unreachable();
}

Histogram::Histogram(int64_t maxBins) : m_maxBins(std::max<int64_t>(maxBins, 16)) {}

void Histogram::doubleWidth() {
  m_width *= 2;
  if (m_counts.empty())
    return;
  const int64_t last = m_first + int64_t(m_counts.size()) - 1;
  const int64_t first = floorHalf(m_first);
  std::vector<double> merged(size_t(floorHalf(last) - first + 1), 0.0);
  for (size_t j = 0; j < m_counts.size(); ++j)
    merged[size_t(floorHalf(m_first + int64_t(j)) - first)] += m_counts[j];
  m_first = first;
  m_counts = std::move(merged);
}

void Histogram::add(std::span<const float> values) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  double n = 0;
  for (float v : values)
    if (std::isfinite(v)) {
      lo = std::min(lo, double(v));
      hi = std::max(hi, double(v));
      n += 1;
    }
  if (n == 0)
    return;
  if (m_width == 0) {
    // Aim at half the bin limit over [-a, a]; all-zero data takes the smallest normal float's
    // width, which doubles away as soon as real values arrive.
    const double a = std::max(std::fabs(lo), std::fabs(hi));
    m_width = a > 0 ? std::exp2(std::ceil(std::log2(4.0 * a / double(m_maxBins))))
                    : double(std::numeric_limits<float>::min());
  }
  // Double the width until the old bins and [lo, hi] fit in the limit (computed in double, so
  // a tiny width and a huge value cannot overflow the bin index).
  while (true) {
    double first = std::floor(lo / m_width), last = std::floor(hi / m_width);
    if (!m_counts.empty()) {
      first = std::min(first, double(m_first));
      last = std::max(last, double(m_first) + double(m_counts.size()) - 1);
    }
    if (last - first + 1 <= double(m_maxBins)) {
      const int64_t f = int64_t(first), l = int64_t(last);
      if (m_counts.empty()) {
        m_first = f;
        m_counts.assign(size_t(l - f + 1), 0.0);
      } else if (f < m_first || l >= m_first + int64_t(m_counts.size())) {
        std::vector<double> grown(size_t(l - f + 1), 0.0);
        std::copy(m_counts.begin(), m_counts.end(), grown.begin() + (m_first - f));
        m_first = f;
        m_counts = std::move(grown);
      }
      break;
    }
    doubleWidth();
  }
  const double inv = 1.0 / m_width;
  const int64_t last = m_first + int64_t(m_counts.size()) - 1;
  for (float v : values)
    if (std::isfinite(v)) {
      int64_t k = int64_t(std::floor(double(v) * inv));
      k = std::clamp(k, m_first, last); // guards rounding of v·(1/w) at a bin edge
      m_counts[size_t(k - m_first)] += 1;
    }
  m_total += n;
}

double Histogram::quantile(double q) const {
  if (m_counts.empty())
    return 0;
  const double target = std::clamp(q, 0.0, 1.0) * m_total;
  double cum = 0;
  for (size_t j = 0; j < m_counts.size(); ++j) {
    const double c = m_counts[j];
    if (c > 0 && cum + c >= target) {
      const double frac = std::clamp((target - cum) / c, 0.0, 1.0);
      return (double(m_first + int64_t(j)) + frac) * m_width;
    }
    cum += c;
  }
  return double(m_first + int64_t(m_counts.size())) * m_width;
}

std::vector<double> Histogram::absoluteCounts() const {
  std::vector<double> out;
  for (size_t j = 0; j < m_counts.size(); ++j) {
    const int64_t k = m_first + int64_t(j);
    const size_t a = size_t(k >= 0 ? k : -k - 1);
    if (out.size() <= a)
      out.resize(a + 1, 0.0);
    out[a] += m_counts[j];
  }
  return out;
}

double entropyThreshold(const std::vector<double>& absCounts, double binWidth, int levels) {
  const int64_t n = int64_t(absCounts.size());
  assert(levels > 0 && "entropyThreshold needs at least one level");
  if (n <= levels)
    return double(n) * binWidth;
  // tail[i] = sum of bins i.. : the mass a threshold after i bins clips.
  std::vector<double> tail(size_t(n + 1), 0.0);
  for (int64_t j = n - 1; j >= 0; --j)
    tail[size_t(j)] = tail[size_t(j + 1)] + absCounts[size_t(j)];
  double best = std::numeric_limits<double>::infinity();
  int64_t bestBins = n;
  std::vector<double> p, q;
  for (int64_t i = levels; i <= n; ++i) {
    p.assign(absCounts.begin(), absCounts.begin() + i);
    p[size_t(i - 1)] += tail[size_t(i)];
    // Merge the unclipped bins into `levels` groups; the last group takes the remainder.
    q.assign(size_t(i), 0.0);
    const int64_t perGroup = i / levels;
    for (int64_t g = 0; g < levels; ++g) {
      const int64_t start = g * perGroup;
      const int64_t stop = g == levels - 1 ? i : start + perGroup;
      double sum = 0;
      int64_t nonEmpty = 0;
      for (int64_t j = start; j < stop; ++j) {
        sum += absCounts[size_t(j)];
        nonEmpty += p[size_t(j)] != 0.0;
      }
      if (nonEmpty == 0)
        continue;
      for (int64_t j = start; j < stop; ++j)
        q[size_t(j)] = p[size_t(j)] != 0.0 ? sum / double(nonEmpty) : 0.0;
    }
    if (!smooth(p) || !smooth(q))
      continue;
    const double kl = klDivergence(p, q);
    if (kl < best) {
      best = kl;
      bestBins = i;
    }
  }
  return double(bestBins) * binWidth;
}

void ActivationObserver::observe(const Tensor& t) {
  if (t.dtype() != DType::F32 || t.numElements() == 0)
    return;
  auto d = t.data<float>();
  for (float v : d) {
    if (!std::isfinite(v))
      continue;
    if (!m_seen) {
      m_min = m_max = v;
      m_seen = true;
    }
    m_min = std::min(m_min, double(v));
    m_max = std::max(m_max, double(v));
  }
  m_histogram.add(d);
}

Range ActivationObserver::range(const CalibrationSettings& settings) const {
  const double lo0 = std::min(m_min, 0.0), hi0 = std::max(m_max, 0.0);
  const double absMax = std::max(-lo0, hi0);
  Range r{lo0, hi0};
  switch (settings.method) {
  case CalibrationMethod::MinMax:
    if (settings.symmetric)
      r = {-absMax, absMax};
    break;
  case CalibrationMethod::Percentile: {
    const double keep = std::clamp(settings.percentile / 100.0, 0.0, 1.0);
    if (settings.symmetric) {
      // The percentile of |x|: fold the histogram and read the same kind of quantile.
      std::vector<double> abs = m_histogram.absoluteCounts();
      double target = keep * m_histogram.total(), cum = 0, t = absMax;
      for (size_t j = 0; j < abs.size(); ++j) {
        if (abs[j] > 0 && cum + abs[j] >= target) {
          t = (double(j) + std::clamp((target - cum) / abs[j], 0.0, 1.0)) *
              m_histogram.binWidth();
          break;
        }
        cum += abs[j];
      }
      t = std::min(t, absMax);
      r = {-t, t};
    } else {
      r = {std::max(lo0, std::min(m_histogram.quantile(1.0 - keep), 0.0)),
           std::min(hi0, std::max(m_histogram.quantile(keep), 0.0))};
    }
    break;
  }
  case CalibrationMethod::Entropy: {
    std::vector<double> abs = m_histogram.absoluteCounts();
    double width = m_histogram.binWidth();
    // At most 2048 bins keep the quadratic search fast; merging pairs is exact.
    while (abs.size() > 2048) {
      std::vector<double> merged((abs.size() + 1) / 2, 0.0);
      for (size_t j = 0; j < abs.size(); ++j)
        merged[j / 2] += abs[j];
      abs = std::move(merged);
      width *= 2;
    }
    // A signed range spends half the 256 levels on each side; a non-negative one all of them.
    const int levels = settings.symmetric || m_min < 0 ? 128 : 256;
    const double t = std::min(entropyThreshold(abs, width, levels), absMax);
    r = settings.symmetric ? Range{-t, t} : Range{std::max(lo0, -t), std::min(hi0, t)};
    break;
  }
  }
  return r;
}

} // namespace fb
