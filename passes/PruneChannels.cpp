// Structured pruning: removes Conv output channels of lowest norm and shrinks their consumers.
#include "passes/PruneChannels.h"

#include "passes/RewriteUtil.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fb {

namespace {

/// One rewrite that removing channels of a Conv's output forces on the graph.
struct Shrink {
  enum class Kind {
    OwnOutput,      ///< the pruned Conv itself: W rows and bias
    BatchNorm,      ///< a BatchNormalization's four parameter vectors
    ChannelConst,   ///< a per-channel constant operand of an elementwise op, along `axis`
    ConvInput,      ///< a dense Conv reading the channels: W[:, kept]
    Depthwise,      ///< a depthwise Conv: W rows, bias and group
    GemmInput,      ///< a Gemm after GlobalAveragePool→Flatten: B's input features
  } kind;
  Node* node;
  unsigned operand = 0;
  size_t axis = 0;
};

/// True when dim `i` of `t` is statically `size`.
bool dimIs(const TensorType& t, size_t i, int64_t size) {
  return i < t.rank() && t.dims[i].isStatic() && t.dims[i].size() == size;
}

/// The constant f32 data of `v`, looking through Identity (exporters alias one shared
/// initializer through Identity nodes), or nullptr.
const Tensor* f32Constant(const Value* v) {
  while (v && v->producer() && v->producer()->op() == OpKind::Identity)
    v = v->producer()->input(0);
  const Tensor* t = constantOf(v);
  return t && t->dtype() == DType::F32 ? t : nullptr;
}

/// The group attribute, or 0 when it is malformed.
int64_t groupOf(const Node& conv) {
  auto g = conv.attrs().getInt("group", 1);
  return g.ok() ? *g : 0;
}

/// Ops that keep each channel separate and the layout NC...: channels pass straight through.
bool isChannelwise(OpKind op) {
  switch (op) {
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::Sigmoid:
  case OpKind::HardSigmoid:
  case OpKind::HardSwish:
  case OpKind::Tanh:
  case OpKind::Elu:
  case OpKind::Selu:
  case OpKind::Celu:
  case OpKind::Softplus:
  case OpKind::Softsign:
  case OpKind::Mish:
  case OpKind::ThresholdedRelu:
  case OpKind::Clip:
  case OpKind::Identity:
  case OpKind::MaxPool:
  case OpKind::AveragePool:
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool: return true;
  default: return false;
  }
}

/// Adds to `plan` the rewrites that removing channels of `v` (an NCHW value with `c` channels)
/// needs along every consumer path; false when some path cannot be shrunk (the channels are tied
/// to something else: a residual Add, a Concat, a graph output, an unknown op).
bool planConsumers(const Value* v, int64_t c, std::vector<Shrink>& plan) {
  if (v->isGraphOutput() || v->type().rank() < 2 || !dimIs(v->type(), 1, c))
    return false;
  for (const Use& use : v->uses()) {
    Node* user = use.user;
    const OpKind op = user->op();
    if (isChannelwise(op)) {
      // Clip's min/max and the like must be the scalars, not the channels.
      if (use.operand != 0 || user->numOutputs() != 1 || !planConsumers(user->output(0), c, plan))
        return false;
    } else if (op == OpKind::BatchNormalization) {
      if (use.operand != 0 || user->numOutputs() != 1)
        return false;
      for (size_t i = 1; i <= 4; ++i) {
        const Tensor* p = f32Constant(user->input(i));
        if (!p || p->rank() != 1 || p->numElements() != c)
          return false;
      }
      plan.push_back({Shrink::Kind::BatchNorm, user});
      if (!planConsumers(user->output(0), c, plan))
        return false;
    } else if (op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul ||
               op == OpKind::Div) {
      // The other operand must be a constant that is per-channel ([C,1,1]) or shared by all.
      const unsigned other = 1 - use.operand;
      const Tensor* k = f32Constant(user->input(other));
      if (!k || k->rank() > v->type().rank())
        return false;
      const size_t outRank = v->type().rank();
      if (k->rank() + 1 >= outRank) { // the constant reaches the channel dimension
        size_t axis = k->rank() - (outRank - 1);
        if (k->sizes()[axis] == c)
          plan.push_back({Shrink::Kind::ChannelConst, user, other, axis});
        else if (k->sizes()[axis] != 1)
          return false;
      }
      if (!planConsumers(user->output(0), c, plan))
        return false;
    } else if (op == OpKind::Conv) {
      const Tensor* w = f32Constant(user->input(1));
      if (use.operand != 0 || !w || w->rank() != 4)
        return false;
      const int64_t group = groupOf(*user);
      if (group == 1 && w->sizes()[1] == c) {
        plan.push_back({Shrink::Kind::ConvInput, user});
      } else if (group == c && w->sizes()[0] == c && w->sizes()[1] == 1) {
        const Tensor* b = user->input(2) ? f32Constant(user->input(2)) : nullptr;
        if (user->input(2) && !b)
          return false;
        plan.push_back({Shrink::Kind::Depthwise, user});
        if (!planConsumers(user->output(0), c, plan))
          return false;
      } else {
        return false;
      }
    } else if (op == OpKind::Flatten) {
      // Flatten of [N, C, 1, 1] gives [N, C]: the channels become a Gemm's input features.
      auto axis = user->attrs().getInt("axis", 1);
      const TensorType& t = v->type();
      if (!axis.ok() || *axis != 1 || t.rank() != 4 || !dimIs(t, 2, 1) || !dimIs(t, 3, 1))
        return false;
      const Value* flat = user->output(0);
      if (flat->isGraphOutput())
        return false;
      for (const Use& fu : flat->uses()) {
        Node* gemm = fu.user;
        const Tensor* b = f32Constant(gemm->input(1));
        auto transA = gemm->attrs().getInt("transA", 0);
        auto transB = gemm->attrs().getInt("transB", 0);
        if (gemm->op() != OpKind::Gemm || fu.operand != 0 || !b || b->rank() != 2 ||
            !transA.ok() || *transA != 0 || !transB.ok() || b->sizes()[*transB ? 1 : 0] != c)
          return false;
        plan.push_back({Shrink::Kind::GemmInput, gemm, 0, size_t(*transB ? 1 : 0)});
      }
    } else {
      return false;
    }
  }
  return true;
}

/// `t` with only the slices `keep` (ascending) along `axis`.
Tensor gatherAxis(const Tensor& t, size_t axis, const std::vector<int64_t>& keep) {
  const auto& sizes = t.sizes();
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i)
    outer *= sizes[i];
  for (size_t i = axis + 1; i < sizes.size(); ++i)
    inner *= sizes[i];
  std::vector<int64_t> outSizes = sizes;
  outSizes[axis] = int64_t(keep.size());
  Tensor out(DType::F32, outSizes);
  auto src = t.data<float>();
  auto dst = out.mutableData<float>();
  size_t o = 0;
  for (int64_t i = 0; i < outer; ++i)
    for (int64_t k : keep) {
      const float* from = src.data() + (i * sizes[axis] + k) * inner;
      std::copy(from, from + inner, dst.data() + o);
      o += size_t(inner);
    }
  return out;
}

/// Replaces operand `operand` of `node` by its constant gathered along `axis`; the old constant
/// is erased when nothing else reads it (constant data is shared, so it is never written).
void shrinkOperand(Graph& g, Node* node, size_t operand, size_t axis,
                   const std::vector<int64_t>& keep) {
  Value* old = node->input(operand);
  const Tensor* data = f32Constant(old);
  assert(data && "planned operand is an f32 constant");
  Value* fresh = g.addConstant(g.uniqueValueName(old->name() + ".pruned"),
                               gatherAxis(*data, axis, keep));
  node->setInput(operand, fresh);
  if (old->isConstant() && !old->hasUses() && !old->isGraphOutput())
    g.eraseValue(old);
}

/// Applies one planned rewrite for the kept channels.
void applyShrink(Graph& g, const Shrink& s, const std::vector<int64_t>& keep) {
  switch (s.kind) {
  case Shrink::Kind::OwnOutput:
  case Shrink::Kind::Depthwise:
    shrinkOperand(g, s.node, 1, 0, keep);
    if (s.node->input(2))
      shrinkOperand(g, s.node, 2, 0, keep);
    if (s.kind == Shrink::Kind::Depthwise)
      s.node->attrs().set("group", int64_t(keep.size()));
    break;
  case Shrink::Kind::BatchNorm:
    for (size_t i = 1; i <= 4; ++i)
      shrinkOperand(g, s.node, i, 0, keep);
    break;
  case Shrink::Kind::ChannelConst: shrinkOperand(g, s.node, s.operand, s.axis, keep); break;
  case Shrink::Kind::ConvInput: shrinkOperand(g, s.node, 1, 1, keep); break;
  case Shrink::Kind::GemmInput: shrinkOperand(g, s.node, 1, s.axis, keep); break;
  default: assert(false && "unhandled Shrink::Kind");
  }
}

/// Indices of the channels (rows of W) to keep: all but the `drop` of lowest score, ascending.
/// Ties drop the lower index first, so the choice is deterministic.
std::vector<int64_t> channelsToKeep(const Tensor& w, int64_t drop, ChannelScore score) {
  const int64_t rows = w.sizes()[0];
  const int64_t per = w.numElements() / rows;
  auto d = w.data<float>();
  std::vector<double> norm(size_t(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (int64_t i = 0; i < per; ++i) {
      double x = double(d[size_t(r * per + i)]);
      acc += score == ChannelScore::L1 ? std::fabs(x) : x * x;
    }
    norm[size_t(r)] = score == ChannelScore::L1 ? acc : std::sqrt(acc);
  }
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return norm[size_t(a)] < norm[size_t(b)]; });
  std::vector<int64_t> keep(order.begin() + drop, order.end());
  std::sort(keep.begin(), keep.end());
  return keep;
}

} // namespace

ChannelPruneResult pruneConvChannels(Graph& graph, double ratio, ChannelScore score,
                                     const std::function<bool()>& mayRewrite) {
  ChannelPruneResult result;
  // 1. Choose every Conv's channels on the original weights, before any rewrite changes them.
  struct Candidate {
    Node* conv;
    std::vector<int64_t> keep;
  };
  std::vector<Candidate> chosen;
  for (const auto& n : graph.nodes()) {
    Node* conv = n.get();
    const Tensor* w = conv->op() == OpKind::Conv ? f32Constant(conv->input(1)) : nullptr;
    if (!w || w->rank() != 4 || groupOf(*conv) != 1 || conv->numOutputs() != 1 ||
        (conv->input(2) && !f32Constant(conv->input(2))))
      continue;
    const int64_t channels = w->sizes()[0];
    result.channelsConsidered += channels;
    std::vector<Shrink> probe;
    if (!planConsumers(conv->output(0), channels, probe)) {
      result.convsTied++;
      continue;
    }
    const int64_t drop = std::min(channels - 1, int64_t(std::floor(ratio * double(channels))));
    if (drop <= 0)
      continue;
    chosen.push_back({conv, channelsToKeep(*w, drop, score)});
  }
  // 2. Rewrite one Conv at a time, re-planning on the current graph: an earlier rewrite may have
  //    replaced a constant this plan touches (conv2's W after conv1 shrank its input channels).
  for (const Candidate& cand : chosen) {
    if (mayRewrite && !mayRewrite())
      continue;
    const int64_t channels = f32Constant(cand.conv->input(1))->sizes()[0];
    std::vector<Shrink> plan = {{Shrink::Kind::OwnOutput, cand.conv}};
    [[maybe_unused]] bool ok = planConsumers(cand.conv->output(0), channels, plan);
    assert(ok && "a rewrite never ties channels that were free");
    for (const Shrink& s : plan)
      applyShrink(graph, s, cand.keep);
    result.convsPruned++;
    result.channelsRemoved += channels - int64_t(cand.keep.size());
  }
  return result;
}

} // namespace fb
