// Comparing a computed tensor with a reference: max abs / max rel error, cosine similarity.
#pragma once

#include "core/Tensor.h"

#include <string>

namespace fb {

/// Absolute, relative and scale tolerance: for every element
///   |got - ref| <= atol + rtol * |ref| + stol * scale,   scale = max |ref| over the tensor.
/// The scale term accepts the rounding a float computation makes relative to the magnitude of
/// the whole tensor (a sum of values near 1e13 that ends near 0 carries an error near 1e13·ε),
/// which neither a per-element relative nor a fixed absolute tolerance can, in the manner of
/// Polygraphy's per-tensor error statistics. stol = 0 is the plain atol/rtol rule.
struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-3;
  double stol = 0;
};

/// The documented default tolerance for a dtype: f32 1e-4 + 1e-3·|ref| + 1e-5·scale; f16 and
/// bf16 1e-2 + 1e-2·|ref| + 1e-3·scale; integers and bool exact.
Tolerance defaultTolerance(DType dtype);

/// How far `got` is from `ref`.
struct TensorComparison {
  double maxAbs = 0;   ///< largest |got - ref| (inf when shapes differ or a NaN appears in one)
  double maxRel = 0;   ///< largest |got - ref| / max(|ref|, tiny)
  double cosine = 1;   ///< cosine similarity of the flattened tensors (1 when both are zero)
  int64_t firstBad = -1; ///< index of the first element outside tolerance, or -1
  bool sameShape = true;
  bool ok = true;      ///< every element within tolerance, and dtype and shape equal
  std::string reason;  ///< why not ok, for messages
};

/// Compares elementwise. NaN equals NaN; inf equals inf of the same sign.
TensorComparison compareTensors(const Tensor& ref, const Tensor& got, const Tolerance& tol);

} // namespace fb
