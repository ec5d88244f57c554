// The graph fuzzer: the builder's value pool and node helpers, and the seeded draw of a graph.
#include "core/GraphFuzzer.h"
#include "core/GraphFuzzerBuilder.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"

#include <algorithm>

namespace fb {
namespace fuzz {

namespace {
/// Graph inputs a drawn graph has at most; fresh values beyond it are constants.
constexpr int kMaxInputs = 4;
} // namespace

namespace {
/// SplitMix64's finalizer: a bijection that scatters consecutive seeds. SplitMix64 started at
/// `seed * golden` would make seed s+1's stream seed s's shifted by one draw, and consecutive
/// graphs near copies of each other.
uint64_t scatterSeed(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
} // namespace

GraphBuilder::GraphBuilder(uint64_t seed, const GraphFuzzOptions& options)
    : m_options(options), m_rng(scatterSeed(seed)),
      m_graph(std::make_unique<Graph>("fuzz")) {}

int64_t GraphBuilder::randInt(int64_t lo, int64_t hi) {
  if (hi <= lo)
    return lo;
  return lo + int64_t(m_rng.next() % uint64_t(hi - lo + 1));
}

bool GraphBuilder::coin(double p) { return m_rng.uniform() < p; }

double GraphBuilder::uniform(double lo, double hi) { return lo + (hi - lo) * m_rng.uniform(); }

int64_t GraphBuilder::elements(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

Value* GraphBuilder::pick() {
  // Now and then the value picked last time again: sibling ops on one operand are what CSE and
  // fusion of multi-consumer values work on.
  if (m_pinned && m_pinCount > 0) {
    --m_pinCount;
    return m_pinned;
  }
  if (m_lastPick && coin(0.2))
    return m_lastPick;
  m_lastPick = m_pool.empty() ? nullptr : choose(m_pool);
  return m_lastPick;
}

std::vector<int64_t> GraphBuilder::randomShape(size_t rank) {
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < rank; ++i)
    sizes.push_back(randInt(1, rank >= 4 ? 6 : rank == 3 ? 8 : 12));
  if (rank == 4)
    sizes[0] = randInt(1, 2);
  while (elements(sizes) > m_options.maxElements) {
    auto big = std::max_element(sizes.begin(), sizes.end());
    *big = std::max<int64_t>(1, *big / 2);
  }
  return sizes;
}

Value* GraphBuilder::pickImage(int64_t minSpatial) {
  Value* v = pickWhere([&](Value* x) {
    auto s = sizesOf(x);
    return s.size() == 4 && s[2] >= minSpatial && s[3] >= minSpatial;
  });
  if (v && !coin(0.15))
    return v;
  std::vector<int64_t> s = {randInt(1, 2), randInt(1, 8), randInt(minSpatial, minSpatial + 7),
                            randInt(minSpatial, minSpatial + 7)};
  return freshFloat(s);
}

Value* GraphBuilder::freshInput(const std::vector<int64_t>& sizes) {
  ++m_inputs;
  Value* v = m_graph->addInput("in" + std::to_string(m_inputs - 1),
                               TensorType::of(DType::F32, sizes));
  return v;
}

Value* GraphBuilder::freshFloat(const std::vector<int64_t>& sizes, double scale) {
  if (m_inputs < kMaxInputs && coin(0.6))
    return freshInput(sizes);
  return constFloat(sizes, -scale, scale);
}

Value* GraphBuilder::constTensor(Tensor t) {
  return m_graph->addConstant("c" + std::to_string(m_constants++), std::move(t));
}

Value* GraphBuilder::constFloat(const std::vector<int64_t>& sizes, double lo, double hi) {
  Tensor t(DType::F32, sizes);
  auto d = t.mutableData<float>();
  for (auto& x : d)
    x = float(uniform(lo, hi));
  return constTensor(std::move(t));
}

Value* GraphBuilder::constScalar(float x) { return constTensor(Tensor::scalar<float>(x)); }

Value* GraphBuilder::constInts(const std::vector<int64_t>& xs, std::vector<int64_t> sizes) {
  if (sizes.empty() && !xs.empty())
    sizes = {int64_t(xs.size())};
  return constTensor(Tensor::fromVector<int64_t>(std::move(sizes), xs));
}

std::vector<int64_t> GraphBuilder::broadcastableShape(const std::vector<int64_t>& sizes) {
  size_t keep = size_t(randInt(0, int64_t(sizes.size())));
  if (keep == 0 && coin(0.5))
    keep = sizes.size();
  std::vector<int64_t> out(sizes.end() - int64_t(keep), sizes.end());
  for (auto& s : out)
    if (coin(0.3))
      s = 1;
  return out;
}

Node* GraphBuilder::addNode(OpKind op, const std::vector<Value*>& inputs, AttrMap attrs,
                            size_t numOutputs) {
  if (m_failed)
    return nullptr;
  Node* n = m_graph->addNode(op, inputs, numOutputs);
  n->attrs() = std::move(attrs);
  Status st = inferNodeShapes(*n);
  if (!st.ok()) {
    m_failed = st.error().withContext(std::string("generated ") + opName(op));
    return nullptr;
  }
  for (Value* out : n->outputs())
    if (!out->type().isStatic()) {
      m_failed = makeError("generated ", opName(op), ": inferred a non-static type ",
                           out->type().str());
      return nullptr;
    }
  return n;
}

Value* GraphBuilder::op(OpKind kind, const std::vector<Value*>& inputs, AttrMap attrs) {
  Node* n = addNode(kind, inputs, std::move(attrs));
  return n ? n->output(0) : nullptr;
}

void GraphBuilder::offer(Value* v) {
  // Scalars stay out: most generators pick an axis, and rank 0 has none.
  if (v && v->type().dtype == DType::F32 && v->type().isStatic() && v->type().rank() >= 1 &&
      v->type().numElements().value_or(0) > 0 &&
      v->type().numElements().value_or(0) <= m_options.maxElements * 4)
    m_pool.push_back(v);
}

Status GraphBuilder::build() {
  // 1. One or two inputs to start from.
  int first = int(randInt(1, 2));
  for (int i = 0; i < first; ++i)
    offer(freshInput(randomShape(size_t(coin(0.4) ? 4 : randInt(1, 4)))));
  // 2. Ops drawn by weight until the graph holds its drawn number of nodes.
  const auto& gens = opGenerators();
  int total = 0;
  for (const auto& g : gens)
    total += g.weight;
  size_t target = size_t(randInt(m_options.minNodes, m_options.maxNodes));
  int tries = 0;
  while (m_graph->numNodes() < target && tries++ < 400) {
    int r = int(randInt(0, total - 1));
    const OpGenerator* gen = &gens.front();
    for (const auto& g : gens) {
      if (r < g.weight) {
        gen = &g;
        break;
      }
      r -= g.weight;
    }
    gen->generate(*this);
    if (m_failed)
      return *m_failed;
  }
  // 3. Every pool value nobody reads is an output, and now and then an inner one too.
  std::vector<Value*> outputs;
  for (Value* v : m_pool)
    if (v->producer() && (!v->hasUses() || coin(0.1)))
      outputs.push_back(v);
  if (outputs.empty()) {
    Value* v = op(OpKind::Identity, {pick()});
    if (!v)
      return *m_failed;
    outputs.push_back(v);
  }
  m_graph->setOutputs(outputs);
  // Nodes whose outputs nobody reads (a Split's unused part) stay: dead code is part of the
  // input a compiler must handle.
  return Status::success();
}

} // namespace fuzz

Expected<GeneratedGraph> generateRandomGraph(uint64_t seed, const GraphFuzzOptions& options) {
  GeneratedGraph result;
  result.seed = seed;
  for (int attempt = 0; attempt < std::max(1, options.maxAttempts); ++attempt) {
    fuzz::GraphBuilder builder(seed + uint64_t(attempt) * 0x100000001B3ull, options);
    Status built = builder.build();
    std::unique_ptr<Graph> g = builder.take();
    if (built.ok())
      built = inferShapes(*g);
    if (built.ok())
      built = verify(*g);
    if (!built.ok()) {
      ++result.discards;
      result.discardReasons.push_back(built.error().message());
      continue;
    }
    for (const auto& n : g->nodes())
      ++result.opCounts[opName(n->op())];
    result.graph = std::move(g);
    return result;
  }
  return makeError("graph fuzzer: every one of ", result.discards, " draws of seed ", seed,
                   " was rejected; the last: ", result.discardReasons.back());
}

} // namespace fb
