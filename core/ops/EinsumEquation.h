// Einsum equations ("bhid,bhjd->bhij", "ii->i", "...ij,...jk"): parsing into labels per operand
// dim, shared by shape inference, the interpreter and the CPU backend's lowering.
#pragma once

#include "core/Error.h"

#include <string>
#include <vector>

namespace fb {

/// A parsed equation. Labels are numbered 0..numLabels-1: the letters first, then one label per
/// dim that an ellipsis stands for (broadcast across operands, right-aligned).
struct EinsumEquation {
  std::vector<std::vector<int>> inputs; ///< per operand, the label of each of its dims
  std::vector<int> output;              ///< the label of each output dim (each at most once)
  int numLabels = 0;
  std::vector<bool> isEllipsis; ///< per label: stands for an ellipsis dim
};

/// Parses `equation` for operands of the given ranks. Without "->" the output is the ellipsis
/// dims followed by the letters that occur exactly once, in alphabetical order (NumPy's rule).
/// Errors name the equation and what is wrong with it.
Expected<EinsumEquation> parseEinsumEquation(const std::string& equation,
                                             const std::vector<size_t>& ranks);

/// The size of every label given the operands' sizes: a label's dims must agree, except that an
/// ellipsis dim of size 1 broadcasts.
Expected<std::vector<int64_t>> einsumLabelSizes(const EinsumEquation& eq,
                                                const std::vector<std::vector<int64_t>>& sizes);

} // namespace fb
