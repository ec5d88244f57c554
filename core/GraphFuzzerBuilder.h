// The graph fuzzer's builder: the pool of values a random graph grows from, the helpers every
// op generator uses, and the table of op generators (core/GraphFuzzerOps.cpp).
#pragma once

#include "core/GraphFuzzer.h"
#include "core/RandomInputs.h"

#include <optional>
#include <string>
#include <vector>

namespace fb::fuzz {

/// Grows one random graph. Every value in the pool is f32 with a static shape; generators read
/// values from the pool (or make fresh inputs and constants of a fitting shape) and add their
/// f32 results back. Values outside the pool (indices, quantized tensors, guards' intermediates)
/// are only read by the node they were made for.
class GraphBuilder {
public:
  GraphBuilder(uint64_t seed, const GraphFuzzOptions& options);

  /// Grows the graph to its drawn size and marks the outputs. Fails (naming the op and the
  /// reason) when a node's shape inference rejects what a generator made: a generator bug.
  Status build();
  /// The graph built (valid after build()).
  std::unique_ptr<Graph> take() { return std::move(m_graph); }

  // -- randomness --
  int64_t randInt(int64_t lo, int64_t hi); ///< uniform in [lo, hi]
  bool coin(double p = 0.5);
  double uniform(double lo, double hi);
  template <typename T> const T& choose(const std::vector<T>& xs) {
    return xs[size_t(randInt(0, int64_t(xs.size()) - 1))];
  }

  // -- values --
  static std::vector<int64_t> sizesOf(const Value* v) { return v->type().staticSizes(); }
  static int64_t elements(const std::vector<int64_t>& sizes);
  int64_t maxElements() const { return m_options.maxElements; }
  /// A random pool value, or nullptr when the pool is empty.
  Value* pick();
  /// Makes the next `count` pick()s return `v` (sibling ops on one operand).
  void pin(Value* v, int count) {
    m_pinned = v;
    m_pinCount = count;
  }
  /// A random pool value satisfying `pred`, or nullptr.
  template <typename Pred> Value* pickWhere(Pred pred) {
    std::vector<Value*> ok;
    for (Value* v : m_pool)
      if (pred(v))
        ok.push_back(v);
    return ok.empty() ? nullptr : choose(ok);
  }
  /// A pool value of rank 4 with H, W >= minSpatial, or a fresh input of such a shape.
  Value* pickImage(int64_t minSpatial);
  /// A random static shape of `rank` with at most maxElements elements.
  std::vector<int64_t> randomShape(size_t rank);
  /// A fresh f32 value of `sizes`: a new graph input (while there are few) or a constant with
  /// elements uniform in [-scale, scale).
  Value* freshFloat(const std::vector<int64_t>& sizes, double scale = 1.0);
  Value* freshInput(const std::vector<int64_t>& sizes);
  Value* constFloat(const std::vector<int64_t>& sizes, double lo, double hi);
  Value* constScalar(float x);
  Value* constInts(const std::vector<int64_t>& xs, std::vector<int64_t> sizes = {});
  Value* constTensor(Tensor t);
  /// A shape `b` broadcasts into (unidirectionally): a suffix of `sizes` with some dims set to 1.
  std::vector<int64_t> broadcastableShape(const std::vector<int64_t>& sizes);

  // -- nodes --
  /// Adds a node, infers its types; nullptr (and the builder failed) when inference rejects it.
  Node* addNode(OpKind op, const std::vector<Value*>& inputs, AttrMap attrs = {},
                size_t numOutputs = 1);
  /// addNode for one output, returned.
  Value* op(OpKind op, const std::vector<Value*>& inputs, AttrMap attrs = {});
  /// Adds an f32 result to the pool.
  void offer(Value* v);
  bool failed() const { return m_failed.has_value(); }

private:
  GraphFuzzOptions m_options;
  SeededRandom m_rng;
  std::unique_ptr<Graph> m_graph;
  std::vector<Value*> m_pool;
  Value* m_lastPick = nullptr; // not owned
  Value* m_pinned = nullptr;   // not owned
  int m_pinCount = 0;
  int m_inputs = 0;
  int m_constants = 0;
  std::optional<Error> m_failed;
};

/// One op generator: adds an op (and its guards) from the pool; false when nothing in the pool
/// fits and it chose not to make a fitting value.
struct OpGenerator {
  const char* name;
  int weight;
  bool (*generate)(GraphBuilder& b);
};

/// Every op generator, in a fixed order (the draw depends on it).
const std::vector<OpGenerator>& opGenerators();

} // namespace fb::fuzz
