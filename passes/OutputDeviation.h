// How far a transformed model's outputs are from the original's on seeded inputs: the report
// that lossy passes (quantize, prune) give about themselves.
#pragma once

#include "core/Graph.h"
#include "passes/Pass.h"

#include <string>

#include <cstdint>

namespace fb {

/// The outputs of a transformed model against the original's.
struct OutputDeviation {
  int64_t inputs = 0;                       ///< evaluation inputs run
  double cosineMean = 1, cosineMin = 1;     ///< over every f32 output of every input
  double maxAbs = 0;                        ///< largest |original - transformed|
  int64_t top1Agree = 0, top1Total = 0;     ///< rows of [N, C] outputs whose argmax agrees
};

/// Runs `original` and `transformed` on `count` seeded random inputs (seeds seed, seed+1, ...)
/// with the reference interpreter and compares every f32 output; outputs shaped [N, C] with
/// C > 1 (classifier logits) also count top-1 agreement per row. Fails when either graph fails
/// to run.
Expected<OutputDeviation> measureOutputDeviation(const Graph& original, const Graph& transformed,
                                                 int64_t count, uint64_t seed);

/// Adds the deviation to a pass's statistics ("eval inputs", "eval cosine mean", "eval cosine
/// min", "eval max abs", "eval top-1 agreement %") and returns the summary's tail:
/// "; eval on 8 inputs: cosine 0.9999 (min 0.9998), max abs 0.056, top-1 agreement 100.0%".
std::string recordOutputDeviation(const OutputDeviation& deviation, PassContext& ctx);

} // namespace fb
