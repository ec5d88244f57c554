// Output comparison for the conformance runner, with numpy.testing.assert_allclose semantics.
#pragma once

#include "core/Tensor.h"

#include <optional>
#include <string>

namespace fb::conformance {

/// Tolerances of the ONNX backend tests: |actual - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// Compares an output with its expected value. dtype and shape must match exactly; floats are
/// compared like numpy.testing.assert_allclose (NaN equals NaN, infinities must match exactly);
/// integers and bools must be equal. Returns nothing on a match, else a description of the first
/// mismatch with the number of mismatching elements and the largest absolute difference.
std::optional<std::string> compareTensors(const Tensor& actual, const Tensor& expected,
                                          const Tolerance& tolerance = {});

} // namespace fb::conformance
