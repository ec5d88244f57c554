// Random valid graphs for differential fuzzing: seeded, typed and shaped by construction.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fb {

/// How big the generated graphs are.
struct GraphFuzzOptions {
  int minNodes = 3;        ///< nodes to add at least (guard nodes that keep values sane count)
  int maxNodes = 20;       ///< nodes to add at most (one op may add a few more)
  int64_t maxElements = 4096; ///< largest tensor a generator may create
  int maxAttempts = 8;     ///< draws per seed before giving up (each failed draw is a discard)
};

/// One generated graph and how it came to be.
struct GeneratedGraph {
  std::unique_ptr<Graph> graph;  ///< owned; verified, with inferred types
  uint64_t seed = 0;             ///< the seed it was drawn from
  int discards = 0;              ///< draws of this seed rejected before it (generator bugs)
  std::vector<std::string> discardReasons; ///< why each was rejected
  std::map<std::string, int64_t> opCounts; ///< op name -> nodes of that op
};

/// Draws a random valid graph from `seed`, in the manner of NNSmith: a DAG grown op by op, each
/// op from a table of generators that pick legal attributes and operand shapes from the values
/// made so far (or make a fresh input or constant of a fitting shape). Float values stay in a
/// sane range (Exp reads a Tanh, Log and Sqrt read |x| + 1, divisors are kept away from zero),
/// so a comparison with the interpreter is meaningful. The result is shape-inferred and
/// verified; a draw that fails either is discarded, counted, and redrawn. The same seed gives
/// the same graph on every machine. Fails only when every attempt was discarded.
Expected<GeneratedGraph> generateRandomGraph(uint64_t seed, const GraphFuzzOptions& options = {});

} // namespace fb
