// Deterministic random inputs for a graph, from a seed (--seed, numeric checks, fuzzing).
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fb {

/// A small, portable generator (SplitMix64): the same seed gives the same tensors everywhere.
class SeededRandom {
public:
  explicit SeededRandom(uint64_t seed) : m_state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1).
  double uniform();
  /// Standard normal (Box-Muller).
  double normal();

private:
  uint64_t m_state;
};

/// Resolves a type's symbolic dims with `bindings` (unbound symbols and unknown dims become 1).
std::vector<int64_t> resolveSizes(const TensorType& type,
                                  const std::map<std::string, int64_t>& bindings);

/// A tensor of `sizes` with values drawn for its dtype: floats uniform in [-1, 1), integers in
/// [0, 8) (u8/i8 in their quantized ranges), bools fair coin.
Tensor randomTensor(DType dtype, const std::vector<int64_t>& sizes, SeededRandom& rng);

/// One random tensor per graph input, in order. Input k uses seed (seed, k) so adding an input
/// does not change the others.
Expected<std::vector<Tensor>> makeRandomInputs(const Graph& graph, uint64_t seed,
                                               const std::map<std::string, int64_t>& bindings = {});

} // namespace fb
