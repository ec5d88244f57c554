// Tensor comparison for --compare, numeric checks and tests.
#include "core/TensorCompare.h"

#include <cmath>
#include <limits>

namespace fb {

Tolerance defaultTolerance(DType dtype) {
  switch (dtype) {
  case DType::F32: return {1e-4, 1e-3, 1e-5};
  case DType::F16:
  case DType::BF16: return {1e-2, 1e-2, 1e-3};
  case DType::I8:
  case DType::U8:
  case DType::I32:
  case DType::I64:
  case DType::Bool: return {0, 0};
  }
  assert(false && "unknown dtype");
  return {};
}

TensorComparison compareTensors(const Tensor& ref, const Tensor& got, const Tolerance& tol) {
  TensorComparison c;
  const double inf = std::numeric_limits<double>::infinity();
  if (ref.dtype() != got.dtype() || ref.sizes() != got.sizes()) {
    c.sameShape = ref.sizes() == got.sizes();
    c.ok = false;
    c.maxAbs = c.maxRel = inf;
    c.cosine = 0;
    c.reason = "expected " + ref.type().str() + ", got " + got.type().str();
    return c;
  }
  double scale = 0;
  if (tol.stol > 0)
    for (int64_t i = 0; i < ref.numElements(); ++i)
      if (double r = std::fabs(ref.getAsDouble(i)); std::isfinite(r))
        scale = std::max(scale, r);
  const double scaleAllowance = tol.stol * scale;
  double dot = 0, nr = 0, ng = 0;
  for (int64_t i = 0; i < ref.numElements(); ++i) {
    double r = ref.getAsDouble(i), g = got.getAsDouble(i);
    double d;
    if (std::isnan(r) || std::isnan(g))
      d = (std::isnan(r) && std::isnan(g)) ? 0 : inf;
    else if (std::isinf(r) || std::isinf(g))
      d = (r == g) ? 0 : inf;
    else
      d = std::fabs(r - g);
    double rel = d / std::max(std::fabs(r), 1e-12);
    if (d > c.maxAbs)
      c.maxAbs = d;
    if (std::isfinite(r) && rel > c.maxRel)
      c.maxRel = rel;
    // Written so that a NaN tolerance accepts nothing; NaN and inf references (whose match
    // gave d = 0 above) add no relative allowance.
    const double magnitude = std::isfinite(r) ? std::fabs(r) : 0.0;
    if (!(d <= tol.atol + tol.rtol * magnitude + scaleAllowance) && c.firstBad < 0)
      c.firstBad = i;
    if (std::isfinite(r) && std::isfinite(g)) {
      dot += r * g;
      nr += r * r;
      ng += g * g;
    }
  }
  if (nr == 0 && ng == 0)
    c.cosine = 1;
  else if (nr == 0 || ng == 0)
    c.cosine = 0;
  else
    c.cosine = dot / std::sqrt(nr * ng);
  c.ok = c.firstBad < 0;
  if (!c.ok)
    c.reason = "element " + std::to_string(c.firstBad) + " differs: expected " +
               std::to_string(ref.getAsDouble(c.firstBad)) + ", got " +
               std::to_string(got.getAsDouble(c.firstBad));
  return c;
}

} // namespace fb
