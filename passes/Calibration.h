// Calibration for post-training quantization: activation observers (min/max, percentile,
// histogram entropy) and the driver that runs the fp32 model on calibration inputs.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace fb {

/// How an observed activation distribution becomes the range that int8 covers.
enum class CalibrationMethod : uint8_t {
  MinMax,     ///< the smallest and largest value seen: nothing clips, outliers cost resolution
  Percentile, ///< clip the tails beyond a percentile (99.99% by default)
  Entropy,    ///< the clipping threshold whose int8 histogram diverges least (KL) from fp32's
};

/// "minmax", "percentile" or "entropy".
const char* calibrationMethodName(CalibrationMethod method);

/// A closed real interval [lo, hi].
struct Range {
  double lo = 0;
  double hi = 0;
};

/// A histogram whose bins are anchored at zero: bin k covers [k·w, (k+1)·w) for a power-of-two
/// width w. Values outside the covered bins add bins; when that would exceed the bin limit the
/// width doubles and pairs of bins merge (2k and 2k+1 into k). Both steps are exact, so no
/// re-binning guesswork enters the counts, whatever order the batches arrive in.
class Histogram {
public:
  /// `maxBins` bounds the number of bins (at least 16); a fresh histogram aims at half of it.
  explicit Histogram(int64_t maxBins = 4096);

  /// Adds finite values (NaN and infinities are skipped).
  void add(std::span<const float> values);
  /// Bin width (0 before the first value).
  double binWidth() const { return m_width; }
  /// Index k of counts()[0]: the first bin covers [k·w, (k+1)·w).
  int64_t firstBin() const { return m_first; }
  const std::vector<double>& counts() const { return m_counts; }
  /// Number of values added.
  double total() const { return m_total; }
  /// The value below which a fraction q of the values lie, linear within a bin.
  double quantile(double q) const;
  /// The histogram of |x| over bins [j·w, (j+1)·w), j = 0, 1, ...: negative bin k folds into
  /// bin -k-1, exactly, because bins are anchored at zero.
  std::vector<double> absoluteCounts() const;

private:
  /// Doubles the width, merging bin pairs.
  void doubleWidth();

  int64_t m_maxBins;
  double m_width = 0;
  int64_t m_first = 0;
  std::vector<double> m_counts;
  double m_total = 0;
};

/// The smallest clipping threshold T (a multiple of the bin width) of an |x| histogram such that
/// quantizing [0, T] to `levels` levels loses least information: for every candidate number of
/// bins i ≥ levels, the reference P is the first i bins with the clipped tail added to bin i-1,
/// Q is P's first i bins merged into `levels` groups and spread back over the non-empty bins;
/// both are smoothed (1e-4 for empty bins) and the i with the smallest KL(P‖Q) wins (the method
/// of TensorRT's and MXNet's entropy calibration). Returns counts.size()·w when there are no
/// more bins than levels.
double entropyThreshold(const std::vector<double>& absCounts, double binWidth, int levels);

/// The settings that turn an observation into a range.
struct CalibrationSettings {
  CalibrationMethod method = CalibrationMethod::Percentile;
  double percentile = 99.99; ///< for Percentile: the kept share of values, in percent
  bool symmetric = false;    ///< ranges symmetric around zero (|x| statistics)
};

/// Observes one activation over every calibration batch: exact min/max and a histogram.
class ActivationObserver {
public:
  /// Records a tensor's values; f32 only (other dtypes are not quantized).
  void observe(const Tensor& t);
  double min() const { return m_min; }
  double max() const { return m_max; }
  bool empty() const { return m_histogram.total() == 0; }
  const Histogram& histogram() const { return m_histogram; }
  /// The range to quantize by `settings`; always contains 0 (so zero is exact) and lies within
  /// [min, max] widened to 0.
  Range range(const CalibrationSettings& settings) const;

private:
  double m_min = 0;
  double m_max = 0;
  bool m_seen = false;
  Histogram m_histogram;
};

/// Where calibration inputs come from.
struct CalibrationInputs {
  /// .npy files, consumed in groups of one file per graph input (one group per sample). When
  /// empty, `samples` seeded random inputs are used instead.
  std::vector<std::string> files;
  int64_t samples = 16;
  uint64_t seed = 0; ///< random sample i uses seed + i
};

/// Lists a directory's .npy files in name order, or fails naming the directory.
Expected<std::vector<std::string>> npyFilesIn(const std::string& dir);

/// The input tensors of every calibration sample (files grouped per sample, or random).
Expected<std::vector<std::vector<Tensor>>> loadCalibrationSamples(const Graph& graph,
                                                                  const CalibrationInputs& in);

/// Runs `graph` on every sample and observes the named values (f32 values only).
Expected<std::map<std::string, ActivationObserver>>
calibrate(const Graph& graph, const std::vector<std::vector<Tensor>>& samples,
          const std::vector<const Value*>& values);

} // namespace fb
