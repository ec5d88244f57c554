// Candidates and regions of the `layout` pass.
#include "passes/LayoutRegions.h"

#include "core/ops/DenseKernels.h"
#include "passes/RewriteUtil.h"

#include <numeric>

namespace fb {

namespace {

/// What an op makes of NCHW8c padding lanes that hold zero.
enum class AtZero : uint8_t {
  Zero,   ///< f(0, ..., 0) = 0: the lanes stay zero
  Finite, ///< a finite non-zero value: a 0/1 lane mask restores the zeros
  Unsafe, ///< possibly Inf or NaN (0/0, log 0), which no mask can clear
};

/// Elementwise ops that run unchanged on activations in any layout.
struct ElementwiseRule {
  bool unary; ///< only operand 0 is data (Clip's bounds are scalars)
  AtZero atZero;
};

std::optional<ElementwiseRule> elementwiseRule(OpKind op) {
  switch (op) {
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Sqrt:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::HardSwish:
  case OpKind::Identity:
  case OpKind::Sign:
  case OpKind::Round:
  case OpKind::Sin:
  case OpKind::Tan:
  case OpKind::Asin:
  case OpKind::Atan:
  case OpKind::Sinh:
  case OpKind::Asinh:
  case OpKind::Atanh:
  case OpKind::Elu:
  case OpKind::Selu:
  case OpKind::Celu:
  case OpKind::Softsign:
  case OpKind::Mish:
  case OpKind::ThresholdedRelu: // x > alpha ? x : 0 is 0 at 0 for every alpha
  case OpKind::Clip: // checked against its bounds below
    return ElementwiseRule{true, AtZero::Zero};
  case OpKind::Sigmoid:
  case OpKind::HardSigmoid:
  case OpKind::Exp:
  case OpKind::Cos:
  case OpKind::Acos:
  case OpKind::Cosh:
  case OpKind::Softplus: return ElementwiseRule{true, AtZero::Finite};
  case OpKind::Log:
  case OpKind::Acosh: // acosh(0) is NaN
  case OpKind::Reciprocal: return ElementwiseRule{true, AtZero::Unsafe};
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::PRelu:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Sum:
  case OpKind::Mean: return ElementwiseRule{false, AtZero::Zero};
  case OpKind::Div: return ElementwiseRule{false, AtZero::Unsafe};
  default: return std::nullopt;
  }
}

/// The static channel count of an activation type [N, C, S...], or -1.
int64_t staticChannels(const TensorType& t) {
  if (t.rank() < 3 || !t.dims[1].isStatic() || !isComputeFloat(t.dtype))
    return -1;
  return t.dims[1].size();
}

/// True when Clip's bounds are constant scalars (or absent) with min <= 0 <= max.
bool clipKeepsZero(const Node& n) {
  for (unsigned i = 1; i < 3; ++i) {
    if (!n.input(i))
      continue;
    const Tensor* t = constantOf(n.input(i));
    if (!t || t->numElements() != 1)
      return false;
    double v = t->getAsDouble(0);
    if ((i == 1 && v > 0) || (i == 2 && v < 0))
      return false;
  }
  auto lo = n.attrs().getFloat("min", -1.f), hi = n.attrs().getFloat("max", 1.f);
  return lo.ok() && hi.ok() && *lo <= 0 && *hi >= 0;
}

/// Fills `c` for an elementwise node with output channels `channels`; false when it does not
/// qualify.
bool classifyElementwise(const Node& n, DataLayout to, int64_t channels, LayoutCandidate& c) {
  auto rule = elementwiseRule(n.op());
  if (!rule)
    return false;
  const size_t rank = n.output(0)->type().rank();
  const bool padded = to == DataLayout::NCHW8c && channels % kChannelBlock != 0;
  AtZero atZero = rule->atZero;
  if (n.op() == OpKind::Clip && !clipKeepsZero(n))
    atZero = AtZero::Finite;
  if (padded && atZero == AtZero::Unsafe)
    return false;
  c.maskPadding = padded && atZero == AtZero::Finite;
  const size_t dataOperands = rule->unary ? 1 : n.numInputs();
  for (unsigned i = 0; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    if (!v)
      continue;
    if (i >= dataOperands) {
      // Clip's bounds: scalars read as they are.
      if (!constantOf(v) || constantOf(v)->numElements() != 1)
        return false;
      continue;
    }
    if (const Tensor* t = constantOf(v)) {
      if (t->rank() > rank || t->dtype() != n.output(0)->type().dtype)
        return false;
      // Left-padded to the activation's rank, dim 1 must be per channel or broadcast.
      const size_t tr = t->rank();
      const int64_t perChannel = tr + 1 >= rank ? t->sizes()[tr + 1 - rank] : 1;
      if (perChannel != 1 && perChannel != channels)
        return false;
      c.constantOperands.push_back(i);
      continue;
    }
    const TensorType& t = v->type();
    if (t.rank() != rank || staticChannels(t) != channels)
      return false;
    c.activationOperands.push_back(i);
  }
  return !c.activationOperands.empty();
}

/// Fills `c` for a Conv; false when it does not qualify.
bool classifyConv(const Node& n, DataLayout to, LayoutCandidate& c) {
  const Value* x = n.input(0);
  const Tensor* w = constantOf(n.input(1));
  if (!x || !w || w->rank() != x->type().rank() || w->dtype() != x->type().dtype)
    return false;
  if (n.input(2)) {
    const Tensor* b = constantOf(n.input(2));
    if (!b || b->rank() != 1 || b->dtype() != w->dtype())
      return false;
  }
  const int64_t inChannels = staticChannels(x->type());
  auto group = n.attrs().getInt("group", 1);
  if (inChannels < 0 || !group.ok() || *group < 1)
    return false;
  const int64_t outChannels = w->sizes()[0];
  if (to == DataLayout::NCHW8c && *group != 1 &&
      !(*group == inChannels && outChannels == inChannels && w->sizes()[1] == 1))
    return false;
  c.role = LayoutRole::Conv;
  c.activationOperands = {0};
  return true;
}

/// Fills `c` for a BatchNormalization; false when it does not qualify.
bool classifyBatchNorm(const Node& n, int64_t channels, LayoutCandidate& c) {
  auto training = n.attrs().getInt("training_mode", 0);
  if (!training.ok() || *training != 0 || n.input(0)->type().dtype != DType::F32)
    return false;
  for (unsigned i = 1; i < 5; ++i) {
    const Tensor* t = constantOf(n.input(i));
    if (!t || t->dtype() != DType::F32 || t->rank() != 1 || t->numElements() != channels)
      return false;
  }
  c.role = LayoutRole::BatchNorm;
  c.activationOperands = {0};
  return true;
}

/// Fills `c` for a Concat of activations; false when it does not qualify.
bool classifyConcat(const Node& n, DataLayout to, int64_t channels, LayoutCandidate& c) {
  const size_t rank = n.output(0)->type().rank();
  auto axis = n.attrs().getInt("axis", 0);
  if (!axis.ok() || *axis < -int64_t(rank) || *axis >= int64_t(rank))
    return false;
  const int64_t a = *axis < 0 ? *axis + int64_t(rank) : *axis;
  for (unsigned i = 0; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    if (!v || constantOf(v) || v->type().rank() != rank)
      return false;
    const int64_t ci = staticChannels(v->type());
    if (ci < 0 || (a != 1 && ci != channels))
      return false;
    // Blocks of the inputs line up with the result's only when no padding sits in between.
    if (a == 1 && to == DataLayout::NCHW8c && i + 1 < n.numInputs() && ci % kChannelBlock != 0)
      return false;
    c.activationOperands.push_back(i);
  }
  c.role = LayoutRole::Concat;
  return !c.activationOperands.empty();
}

std::optional<LayoutCandidate> classify(Node& n, DataLayout to) {
  if (n.numOutputs() != 1 || n.body())
    return std::nullopt;
  const int64_t channels = staticChannels(n.output(0)->type());
  if (channels < 0)
    return std::nullopt;
  LayoutCandidate c;
  c.node = &n;
  bool ok = false;
  switch (n.op()) {
  case OpKind::Conv: ok = classifyConv(n, to, c); break;
  case OpKind::MaxPool:
  case OpKind::AveragePool:
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool:
    ok = n.input(0) && staticChannels(n.input(0)->type()) == channels;
    c.role = LayoutRole::Pool;
    c.activationOperands = {0};
    break;
  case OpKind::BatchNormalization: ok = classifyBatchNorm(n, channels, c); break;
  case OpKind::Concat: ok = classifyConcat(n, to, channels, c); break;
  default: ok = classifyElementwise(n, to, channels, c); break;
  }
  if (!ok)
    return std::nullopt;
  return c;
}

/// Union-find over candidate positions.
struct DisjointSets {
  std::vector<size_t> parent;
  explicit DisjointSets(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t i) {
    while (parent[i] != i)
      i = parent[i] = parent[parent[i]];
    return i;
  }
  void unite(size_t a, size_t b) { parent[find(a)] = find(b); }
};

} // namespace

int64_t layoutAxis(int64_t axis, size_t rank, DataLayout to) {
  if (to != DataLayout::NHWC || axis == 0)
    return axis; // NCHW8c keeps N, C/8 and the spatial dims in place
  return axis == 1 ? int64_t(rank) - 1 : axis - 1;
}

const LayoutCandidate* LayoutRegions::convertedCandidate(const Node* n) const {
  auto it = index.find(n);
  if (it == index.end())
    return nullptr;
  const LayoutCandidate& c = candidates[it->second];
  return converted[size_t(c.region)] ? &c : nullptr;
}

LayoutRegions findLayoutRegions(const Graph& graph, DataLayout to) {
  LayoutRegions r;
  for (const auto& n : graph.nodes())
    if (auto c = classify(*n, to)) {
      r.index[n.get()] = r.candidates.size();
      r.candidates.push_back(std::move(*c));
    }
  DisjointSets sets(r.candidates.size());
  for (size_t i = 0; i < r.candidates.size(); ++i)
    for (unsigned operand : r.candidates[i].activationOperands) {
      const Node* producer = r.candidates[i].node->input(operand)->producer();
      if (auto it = r.index.find(producer); producer && it != r.index.end())
        sets.unite(it->second, i);
    }
  std::unordered_map<size_t, int> regionOfRoot;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    auto [it, inserted] = regionOfRoot.emplace(sets.find(i), int(r.regions.size()));
    if (inserted) {
      r.regions.emplace_back();
      r.converted.push_back(false);
    }
    r.candidates[i].region = it->second;
    r.regions[size_t(it->second)].push_back(i);
    if (r.candidates[i].role == LayoutRole::Conv)
      r.converted[size_t(it->second)] = true;
  }
  return r;
}

} // namespace fb
