// canonicalize: removes operations that do nothing and simplifies algebraic identities.
#include "core/Faults.h"
#include "core/ShapeInference.h"
#include "passes/ConvTaps.h"
#include "passes/PadFolding.h"
#include "passes/Passes.h"
#include "passes/RewriteUtil.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace fb {

namespace {

/// One rewrite attempt on a node; returns true when it rewrote (and possibly erased) the node.
using Pattern = bool (*)(Graph&, Node*, PassContext&);

bool forwardInput(Graph& g, Node* n, size_t input, PassContext& ctx, const char* why) {
  Value* src = n->input(input);
  Value* out = n->output(0);
  if (!src || !sameType(src->type(), out->type()) || !canReplaceKeepingName(g, out, src))
    return false;
  for (size_t i = 1; i < n->numOutputs(); ++i)
    if (n->output(i)->hasUses() || n->output(i)->isGraphOutput())
      return false;
  if (!ctx.mayRewrite())
    return false;
  replaceValue(g, out, src);
  ctx.logDeleted(n->id(), why);
  ctx.addStatistic(why);
  g.eraseNode(n);
  return true;
}

/// True when every element of the constant `v` is 0 (an absent `v` counts as all zero).
bool isAbsentOrZero(const Value* v) {
  if (!v)
    return true;
  const Tensor* t = constantOf(v);
  if (!t)
    return false;
  for (int64_t i = 0; i < t->numElements(); ++i)
    if (t->getAsDouble(i) != 0)
      return false;
  return true;
}

/// True when a Slice selects every element, decided from its constant starts/ends/axes/steps
/// (not from the inferred output type alone: a shifted window has the input's type too when a
/// dim is symbolic, and a reversed one with step -1 always does).
bool sliceSelectsAll(const Node& n) {
  const Tensor* starts = constantOf(n.input(1));
  const Tensor* ends = constantOf(n.input(2));
  if (!starts || !ends || starts->numElements() != ends->numElements())
    return false;
  if (n.input(4) && !isConstantSplat(n.input(4), 1))
    return false;
  const TensorType& t = n.input(0)->type();
  const int64_t rank = int64_t(t.rank());
  std::vector<int64_t> axes;
  if (n.input(3)) {
    const Tensor* a = constantOf(n.input(3));
    if (!a || a->numElements() != starts->numElements())
      return false;
    axes = a->toInt64Vector();
  } else {
    axes.resize(size_t(starts->numElements()));
    std::iota(axes.begin(), axes.end(), 0);
  }
  const std::vector<int64_t> s = starts->toInt64Vector(), e = ends->toInt64Vector();
  // Exporters write "to the end" as INT64_MAX or INT32_MAX.
  const int64_t toEnd = std::numeric_limits<int32_t>::max();
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank)
      return false;
    const Dim& d = t.dims[size_t(axis)];
    if (d.isStatic()) {
      const int64_t size = d.size();
      auto clampIndex = [&](int64_t i) {
        if (i < 0)
          i += size;
        return std::clamp<int64_t>(i, 0, size);
      };
      if (clampIndex(s[k]) != 0 || clampIndex(e[k]) != size)
        return false;
    } else if (!(s[k] == 0 || s[k] <= -toEnd) || e[k] < toEnd) {
      return false;
    }
  }
  return true;
}

/// Identity, inference-mode Dropout, and data-movement ops whose output equals their input.
bool removeNop(Graph& g, Node* n, PassContext& ctx) {
  switch (n->op()) {
  case OpKind::Identity: return forwardInput(g, n, 0, ctx, "Identity removed");
  case OpKind::Dropout: {
    if (n->input(2)) {
      // Training mode with ratio 0 drops nothing either (Swin exports write it so).
      const Tensor* training = constantOf(n->input(2));
      const Tensor* ratio = n->input(1) ? constantOf(n->input(1)) : nullptr;
      bool inference = training && training->numElements() == 1 && training->getAsDouble(0) == 0;
      bool keepsAll = ratio && ratio->numElements() == 1 && ratio->getAsDouble(0) == 0;
      if (!inference && !keepsAll)
        return false;
    }
    return forwardInput(g, n, 0, ctx, "Dropout removed");
  }
  case OpKind::Concat:
    // What remains after empty operands were dropped.
    if (n->numInputs() != 1)
      return false;
    return forwardInput(g, n, 0, ctx, "single-operand Concat removed");
  case OpKind::Pad:
    // Same-shaped is not enough: pads [1, -1] shift the data by one.
    if (!isAbsentOrZero(n->input(1)))
      return false;
    return forwardInput(g, n, 0, ctx, "zero Pad removed");
  // Row-major data does not move when the shape stays, and a same-dtype Cast copies.
  case OpKind::Cast:
  case OpKind::Reshape:
  case OpKind::Expand:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
    return forwardInput(g, n, 0, ctx, "no-op reshape/cast/pad removed");
  case OpKind::Transpose: {
    auto perm = n->attrs().getInts("perm", {});
    if (!perm.ok() || perm->empty())
      return false;
    // The fault decides by the type alone, which forwardInput checks: a square transpose
    // has the type of its input.
    if (!faultEnabled(Fault::CanonicalizeDropsTranspose))
      for (size_t i = 0; i < perm->size(); ++i)
        if ((*perm)[i] != int64_t(i))
          return false;
    return forwardInput(g, n, 0, ctx, "identity Transpose removed");
  }
  case OpKind::Slice: {
    if (!sliceSelectsAll(*n))
      return false;
    return forwardInput(g, n, 0, ctx, "full Slice removed");
  }
  default: return false;
  }
}

/// x*1, 1*x, x+0, 0+x, x-0, x/1 where the constant does not broadcast x to a larger shape.
bool removeAlgebraicIdentity(Graph& g, Node* n, PassContext& ctx) {
  auto isIdentityOperand = [&](size_t i) {
    switch (n->op()) {
    case OpKind::Mul: return isConstantSplat(n->input(i), 1);
    case OpKind::Add: return isConstantSplat(n->input(i), 0);
    case OpKind::Sub: return i == 1 && isConstantSplat(n->input(i), 0);
    case OpKind::Div: return i == 1 && isConstantSplat(n->input(i), 1);
    default: return false;
    }
  };
  if (n->numInputs() != 2)
    return false;
  for (size_t i = 0; i < 2; ++i)
    if (isIdentityOperand(i))
      return forwardInput(g, n, 1 - i, ctx, "algebraic identity removed");
  return false;
}

/// neg(neg(x)) -> x.
bool removeDoubleNegation(Graph& g, Node* n, PassContext& ctx) {
  if (n->op() != OpKind::Neg)
    return false;
  Node* inner = n->input(0)->producer();
  if (!inner || inner->op() != OpKind::Neg)
    return false;
  Value* x = inner->input(0);
  if (!sameType(x->type(), n->output(0)->type()) || !canReplaceKeepingName(g, n->output(0), x))
    return false;
  if (!ctx.mayRewrite())
    return false;
  replaceValue(g, n->output(0), x);
  ctx.logDeleted(n->id(), "neg(neg(x))");
  ctx.addStatistic("double negation removed");
  g.eraseNode(n);
  if (!inner->output(0)->hasUses() && !inner->output(0)->isGraphOutput())
    g.eraseNode(inner);
  return true;
}

/// transpose(transpose(x, p), q) -> transpose(x, p∘q), or x when the composition is identity.
bool composeTransposes(Graph& g, Node* n, PassContext& ctx) {
  if (n->op() != OpKind::Transpose)
    return false;
  Node* inner = n->input(0)->producer();
  if (!inner || inner->op() != OpKind::Transpose)
    return false;
  auto p = inner->attrs().getInts("perm", {});
  auto q = n->attrs().getInts("perm", {});
  size_t rank = inner->input(0)->type().rank();
  if (!p.ok() || !q.ok())
    return false;
  std::vector<int64_t> pv = *p, qv = *q;
  if (pv.empty()) { // default: reverse
    pv.resize(rank);
    std::iota(pv.rbegin(), pv.rend(), 0);
  }
  if (qv.empty()) {
    qv.resize(rank);
    std::iota(qv.rbegin(), qv.rend(), 0);
  }
  if (pv.size() != rank || qv.size() != rank)
    return false;
  std::vector<int64_t> composed(rank);
  for (size_t i = 0; i < rank; ++i)
    composed[i] = pv[size_t(qv[i])];
  if (!ctx.mayRewrite())
    return false;
  n->setInput(0, inner->input(0));
  n->attrs().set("perm", composed);
  n->absorbProvenanceOf(*inner);
  ctx.logReplaced(inner->id(), {n->id()}, "transpose of transpose");
  ctx.addStatistic("transposes composed");
  if (!inner->output(0)->hasUses() && !inner->output(0)->isGraphOutput())
    g.eraseNode(inner);
  return true;
}

/// reshape(reshape(x, s1), s2) -> reshape(x, s2) when s2 is a constant without 0 entries
/// (a 0 would copy a dim of the intermediate, which x may not have).
bool composeReshapes(Graph& g, Node* n, PassContext& ctx) {
  if (n->op() != OpKind::Reshape)
    return false;
  Node* inner = n->input(0)->producer();
  if (!inner || inner->op() != OpKind::Reshape)
    return false;
  const Tensor* shape = constantOf(n->input(1));
  if (!shape)
    return false;
  for (int64_t v : shape->toInt64Vector())
    if (v == 0)
      return false;
  if (!ctx.mayRewrite())
    return false;
  n->setInput(0, inner->input(0));
  n->absorbProvenanceOf(*inner);
  ctx.logReplaced(inner->id(), {n->id()}, "reshape of reshape");
  ctx.addStatistic("reshapes composed");
  if (!inner->output(0)->hasUses() && !inner->output(0)->isGraphOutput())
    g.eraseNode(inner);
  return true;
}

/// Operations that produce an empty tensor become empty constants; empty Concat operands drop.
bool eliminateZeroSize(Graph& g, Node* n, PassContext& ctx) {
  // Only when the result is not empty itself: then an empty operand is empty along the axis and
  // contributes nothing (an operand empty along another dim still adds to the axis size).
  auto outCount = n->numOutputs() == 1 ? n->output(0)->type().numElements() : std::nullopt;
  if (n->op() == OpKind::Concat && n->numInputs() > 1 && outCount && *outCount > 0) {
    for (size_t i = 0; i < n->numInputs(); ++i) {
      auto count = n->input(i)->type().numElements();
      if (count && *count == 0) {
        if (!ctx.mayRewrite())
          return false;
        std::vector<Value*> ins;
        for (size_t k = 0; k < n->numInputs(); ++k)
          if (k != i)
            ins.push_back(n->input(k));
        n->truncateInputs(0);
        for (Value* v : ins)
          n->addInput(v);
        ctx.addStatistic("empty Concat operands dropped");
        return true;
      }
    }
  }
  if (n->numOutputs() != 1 || n->op() == OpKind::Fused)
    return false;
  const TensorType& t = n->output(0)->type();
  auto count = t.numElements();
  if (!count || *count != 0 || n->output(0)->isGraphOutput())
    return false;
  if (!ctx.mayRewrite())
    return false;
  Value* empty = g.addConstant(g.uniqueValueName(n->output(0)->name() + ".empty"),
                               Tensor(t.dtype, t.staticSizes()));
  replaceValue(g, n->output(0), empty);
  ctx.logDeleted(n->id(), "produces an empty tensor");
  ctx.addStatistic("zero-size nodes removed");
  g.eraseNode(n);
  return true;
}

const Pattern kPatterns[] = {
    removeNop,       removeAlgebraicIdentity, removeDoubleNegation,    composeTransposes,
    composeReshapes, eliminateZeroSize,       dropPaddingOnlyConvTaps, foldPadIntoWindow};

/// Canonicalization, applied to a fixed point:
///   1. walk the nodes in execution order and try each pattern on each node;
///   2. nop elimination forwards an operand when an op provably returns it unchanged (Identity,
///      inference Dropout, same-typed Reshape/Cast/Expand/Squeeze/Unsqueeze, zero Pad, a Slice
///      that selects everything, identity Transpose, single-operand Concat);
///   3. algebraic identities x*1, x+0, x-0, x/1 and neg(neg(x)) drop the operation;
///   4. transpose∘transpose and reshape∘reshape collapse into one op;
///   5. operations producing empty tensors become empty constants;
///   6. a convolution's kernel taps that read only padding for every output are dropped
///      (passes/ConvTaps.h);
///   7. a zero Pad of the spatial dims before a Conv or AveragePool becomes its padding
///      (passes/PadFolding.h).
///   The pass manager re-runs it until nothing changes; dce removes what became unused.
class CanonicalizePass : public Pass {
public:
  std::string name() const override { return "canonicalize"; }
  std::string summary() const override {
    return "remove no-op ops and simplify algebraic identities, to a fixed point";
  }
  std::string description() const override {
    return "Canonicalization rewrites the graph into a simpler, standard form. It deletes "
           "operations that provably do nothing (Identity, Dropout at inference, a Reshape or "
           "Cast to the type the tensor already has), removes algebraic identities such as x*1, "
           "x+0 and -(-x), merges two Transposes or two Reshapes in a row into one, and drops "
           "the kernel taps of a convolution that only ever multiply padding (an atrous "
           "convolution on a small feature map), and folds a Pad by zeros into the padding of the "
           "Conv or AveragePool after it. Each "
           "removed op is one fewer kernel launch and one fewer tensor in memory, and later "
           "passes such as fusion find their patterns more easily in the simplified graph.";
  }
  bool runToFixedPoint() const override { return true; }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    bool changed = false;
    std::vector<NodeId> ids;
    std::unordered_map<NodeId, Node*> byId;
    auto index = [&] {
      byId.clear();
      for (const auto& n : graph.nodes())
        byId[n->id()] = n.get();
    };
    index();
    for (const auto& n : graph.nodes())
      ids.push_back(n->id());
    for (NodeId id : ids) {
      auto it = byId.find(id);
      if (it == byId.end())
        continue; // erased by an earlier rewrite
      for (Pattern p : kPatterns) {
        if (p(graph, it->second, ctx)) {
          changed = true;
          index(); // patterns may erase this node or its producer
          break;
        }
      }
    }
    if (changed)
      FB_TRY(inferShapes(graph));
    double total = 0;
    for (const auto& [k, v] : ctx.statistics())
      total += v;
    ctx.setSummary("applied " + std::to_string(int64_t(total)) + " simplifications");
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createCanonicalizePass() { return std::make_unique<CanonicalizePass>(); }

} // namespace fb
