// The one place that turns byte counts, FLOP counts, plain counts and times into text, so the
// CLI's reports, the passes' summaries and the GUI's views agree on how a number reads.
#pragma once

#include <string>

namespace fb {

/// How many digits a formatted quantity keeps: a fixed number of decimals, significant
/// digits (as roofline plots label their axes), or decimals only below 100 ("74.2K", "116M").
struct Digits {
  enum class Kind { Fixed, Significant, DecimalsBelow100 } kind = Kind::Fixed;
  int n = 1;
  static Digits fixed(int decimals) { return {Kind::Fixed, decimals}; }
  static Digits significantDigits(int digits) { return {Kind::Significant, digits}; }
  static Digits decimalsBelow100(int decimals) { return {Kind::DecimalsBelow100, decimals}; }
};

/// Bytes with binary prefixes: "1023 B", "1.5 KiB", "111.7 MiB" (one decimal by default;
/// plain bytes never have decimals).
std::string formatBytes(double bytes, Digits digits = Digits::fixed(1));

/// FLOPs with decimal prefixes: "999 FLOP", "1.02 KFLOP", "3.64 GFLOP" (three significant
/// digits by default).
std::string formatFlops(double flops, Digits digits = Digits::significantDigits(3));

/// A count with a decimal suffix and no unit: "812", "74.2K", "3.64 G" (`separator` goes
/// between the number and the suffix).
std::string formatCount(double count, Digits digits, const char* separator = "");

/// A duration given in milliseconds: "850 µs", "12.35 ms", "1.52 s".
std::string formatMilliseconds(double ms);

} // namespace fb
