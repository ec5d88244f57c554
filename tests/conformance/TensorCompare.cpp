// assert_allclose-style tensor comparison for the conformance runner.
#include "tests/conformance/TensorCompare.h"

#include <cmath>
#include <sstream>

namespace fb::conformance {

namespace {

std::string shapeString(const std::vector<int64_t>& sizes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    os << (i ? ", " : "") << sizes[i];
  os << "]";
  return os.str();
}

/// The multi-index of flat element `flat`, so a mismatch can be located in the tensor.
std::string indexString(const std::vector<int64_t>& sizes, int64_t flat) {
  std::vector<int64_t> index(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    index[d] = sizes[d] ? flat % sizes[d] : 0;
    flat = sizes[d] ? flat / sizes[d] : 0;
  }
  return shapeString(index);
}

/// numpy.isclose(actual, expected, rtol, atol, equal_nan=True) for one element.
bool floatsClose(double actual, double expected, const Tolerance& tol) {
  if (std::isnan(actual) || std::isnan(expected))
    return std::isnan(actual) && std::isnan(expected);
  if (std::isinf(actual) || std::isinf(expected))
    return actual == expected;
  return std::fabs(actual - expected) <= tol.atol + tol.rtol * std::fabs(expected);
}

} // namespace

std::optional<std::string> compareTensors(const Tensor& actual, const Tensor& expected,
                                          const Tolerance& tolerance) {
  if (!actual.valid())
    return std::string("the interpreter returned no tensor");
  if (actual.dtype() != expected.dtype())
    return std::string("dtype ") + dtypeName(actual.dtype()) + ", expected " +
           dtypeName(expected.dtype());
  if (actual.sizes() != expected.sizes())
    return "shape " + shapeString(actual.sizes()) + ", expected " + shapeString(expected.sizes());

  const bool floating = isFloat(expected.dtype());
  int64_t mismatches = 0;
  int64_t first = -1;
  double maxAbsDiff = 0.0;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    bool same;
    if (floating) {
      double a = actual.getAsDouble(i), e = expected.getAsDouble(i);
      same = floatsClose(a, e, tolerance);
      if (!same && std::isfinite(a) && std::isfinite(e))
        maxAbsDiff = std::max(maxAbsDiff, std::fabs(a - e));
    } else {
      // getAsInt64 is exact for every integer dtype and for bool.
      same = actual.getAsInt64(i) == expected.getAsInt64(i);
    }
    if (!same) {
      if (first < 0)
        first = i;
      ++mismatches;
    }
  }
  if (mismatches == 0)
    return std::nullopt;

  std::ostringstream os;
  os.precision(9);
  os << mismatches << " of " << expected.numElements() << " elements differ; first at "
     << indexString(expected.sizes(), first) << ": got ";
  if (floating)
    os << actual.getAsDouble(first) << ", expected " << expected.getAsDouble(first);
  else
    os << actual.getAsInt64(first) << ", expected " << expected.getAsInt64(first);
  if (floating) {
    os << " (rtol " << tolerance.rtol << ", atol " << tolerance.atol;
    if (maxAbsDiff > 0)
      os << ", max |diff| " << maxAbsDiff;
    os << ")";
  }
  return os.str();
}

} // namespace fb::conformance
