// Comparing results: a snapshot's outputs against the imported model's on the interpreter
// (--compare, the run panel), and two snapshots value by value (the numeric diff).
#pragma once

#include "app/workbench/Run.h"
#include "core/NumericDiff.h"
#include "core/TensorCompare.h"

#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// One compared output.
struct OutputComparison {
  std::string name;
  TensorComparison result;
};

/// Every output of a comparison, and whether all are within tolerance.
struct OutputComparisons {
  std::vector<OutputComparison> outputs;
  bool ok = true;
};

/// Compares `got` with `reference` output by output (names from `graph`'s outputs), each at
/// `tolerance` or, when none is given, at the default tolerance of its dtype.
Expected<OutputComparisons> compareOutputs(const Graph& graph,
                                           const std::vector<Tensor>& reference,
                                           const std::vector<Tensor>& got,
                                           const std::optional<Tolerance>& tolerance);

/// Runs `reference` on the interpreter on `inputs` and compares its outputs with `got`.
Expected<OutputComparisons> compareWithReference(const Graph& reference, const Graph& result,
                                                 const std::vector<Tensor>& inputs,
                                                 const std::vector<Tensor>& got,
                                                 const std::optional<Tolerance>& tolerance,
                                                 const JobControl* job = nullptr);

/// Runs snapshots `a` and `b` on the same inputs on the interpreter and compares every value
/// they share by meaning, localizing the first divergent node (core/NumericDiff.h). Without
/// a tolerance, the f32 default.
Expected<NumericDiff> numericDiffGraphs(const Graph& a, const Graph& b,
                                        const std::vector<Tensor>& inputs,
                                        const std::optional<Tolerance>& tolerance,
                                        const JobControl* job = nullptr);

} // namespace fb::workbench
