// The heat scale the graph is coloured by for numeric errors (quantization error, the error
// a miscompile introduces): errors grow through a network by orders of magnitude, so a log
// scale over four decades below the worst one shows where they start, not only where they end.
#pragma once

#include <algorithm>
#include <cmath>

namespace fb::workbench {

/// `error` (>= 0) on [0, 1]: 1 at `worst`, 0 at or below worst / 10^4 (and when worst is 0).
inline double errorHeat(double error, double worst) {
  const double floor = worst / 1e4;
  if (!(worst > 0) || !(error > floor))
    return 0.0;
  return std::min(1.0, std::log10(error / floor) / 4.0);
}

} // namespace fb::workbench
