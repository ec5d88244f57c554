// Formatting of bytes, FLOPs, counts and times.
#include "core/Format.h"

#include <cmath>
#include <cstdio>

namespace fb {

namespace {

/// `x` divided by `base` until it is below it (or the prefixes run out), printed with
/// `digits` and the prefix; values below `base` print as integers with no prefix.
std::string formatScaled(double x, const char* const* prefixes, int numPrefixes, double base,
                         const char* separator, const char* unit, Digits digits) {
  char buf[64];
  if (std::fabs(x) < base) {
    std::snprintf(buf, sizeof buf, "%.0f%s%s", x, *unit ? " " : "", unit);
    return buf;
  }
  int p = 0;
  while (p + 1 < numPrefixes && std::fabs(x) >= base) {
    x /= base;
    ++p;
  }
  const bool significant = digits.kind == Digits::Kind::Significant;
  const int n = digits.kind == Digits::Kind::DecimalsBelow100 && std::fabs(x) >= 100 ? 0 : digits.n;
  std::snprintf(buf, sizeof buf, significant ? "%.*g%s%s%s" : "%.*f%s%s%s", n, x, separator,
                prefixes[p], unit);
  return buf;
}

} // namespace

std::string formatBytes(double bytes, Digits digits) {
  static const char* const prefixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  return formatScaled(bytes, prefixes, 6, 1024.0, " ", "B", digits);
}

std::string formatFlops(double flops, Digits digits) {
  static const char* const prefixes[] = {"", "K", "M", "G", "T", "P"};
  return formatScaled(flops, prefixes, 6, 1000.0, " ", "FLOP", digits);
}

std::string formatCount(double count, Digits digits, const char* separator) {
  static const char* const prefixes[] = {"", "K", "M", "G", "T"};
  return formatScaled(count, prefixes, 5, 1000.0, separator, "", digits);
}

std::string formatMilliseconds(double ms) {
  char buf[64];
  if (std::fabs(ms) < 1.0)
    std::snprintf(buf, sizeof buf, "%.0f µs", ms * 1000.0);
  else if (std::fabs(ms) < 1000.0)
    std::snprintf(buf, sizeof buf, "%.2f ms", ms);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", ms / 1000.0);
  return buf;
}

} // namespace fb
