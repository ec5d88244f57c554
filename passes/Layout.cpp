// layout: moves Conv/pool/BatchNorm/elementwise regions from NCHW to NHWC or blocked NCHW8c,
// re-packing weights at compile time and converting activations only at region boundaries.
#include "core/Faults.h"
#include "core/ShapeInference.h"
#include "core/ops/LayoutTransform.h"
#include "passes/LayoutRegions.h"
#include "passes/Passes.h"
#include "passes/RewriteUtil.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace fb {

namespace {

/// "nchw8c": the suffix of value names in a layout.
std::string layoutSuffix(DataLayout layout) {
  std::string s = ".";
  for (const char* p = layoutName(layout); *p; ++p)
    s += char(std::tolower(static_cast<unsigned char>(*p)));
  return s;
}

/// `t` ([a, C, s...]) with its channels permuted as the layout-constant-channels fault lays
/// them: channel c goes where channel (c % blocks) * 8 + c / blocks belongs, as if block and
/// lane indices had been swapped.
Tensor swapBlockAndLane(const Tensor& t) {
  const auto& sizes = t.sizes();
  const int64_t channels = sizes[1], blocks = channels / kChannelBlock;
  const int64_t inner = t.numElements() / (sizes[0] * channels);
  Tensor out(t.dtype(), sizes);
  for (int64_t a = 0; a < sizes[0]; ++a)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t to = (c % blocks) * kChannelBlock + c / blocks;
      for (int64_t i = 0; i < inner; ++i)
        out.setFromDouble((a * channels + to) * inner + i,
                          t.getAsDouble((a * channels + c) * inner + i));
    }
  return out;
}

/// A constant operand of an elementwise op (left-padded to the activation's rank `rank`, with
/// dim 1 either 1 or `channels`) re-laid so that it broadcasts against activations in `to`
/// exactly as it did in NCHW. In NCHW8c a per-tensor constant is spread over the channels first
/// when C is not a multiple of 8, so that the padding lanes see zero.
Expected<Tensor> relayConstant(const Tensor& k, size_t rank, int64_t channels, DataLayout to) {
  std::vector<int64_t> sizes(rank - k.rank(), 1);
  sizes.insert(sizes.end(), k.sizes().begin(), k.sizes().end());
  Tensor t = k.reshaped(sizes);
  const bool perTensor = sizes[1] == 1 && channels != 1;
  if (perTensor && (to != DataLayout::NCHW8c || channels % kChannelBlock == 0)) {
    // Broadcast over channels: [a, 1, s...] is [a, s..., 1] in NHWC and [a, 1, s..., 1] in
    // NCHW8c.
    std::vector<int64_t> out = sizes;
    if (to == DataLayout::NHWC)
      out.erase(out.begin() + 1);
    out.push_back(1);
    return t.reshaped(out);
  }
  if (perTensor) {
    std::vector<int64_t> spread = sizes;
    spread[1] = channels;
    Tensor e(t.dtype(), spread);
    const int64_t inner = t.numElements() / sizes[0];
    for (int64_t a = 0; a < sizes[0]; ++a)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t i = 0; i < inner; ++i)
          e.setFromDouble((a * channels + c) * inner + i, t.getAsDouble(a * inner + i));
    t = e;
  } else if (faultEnabled(Fault::LayoutConstantChannels) && to == DataLayout::NCHW8c &&
             channels > kChannelBlock && channels % kChannelBlock == 0) {
    t = swapBlockAndLane(t);
  }
  return tensorToLayout(t, to);
}

/// Rewrites the converted regions of a graph into layout `to`.
class LayoutRewriter {
public:
  LayoutRewriter(Graph& graph, DataLayout to, const LayoutRegions& regions,
                 const std::vector<int64_t>& regionRewrite, PassContext& ctx)
      : m_graph(graph), m_to(to), m_regions(regions), m_regionRewrite(regionRewrite),
        m_ctx(ctx) {}

  /// Converts every node of every converted region, adds the conversions back to NCHW where a
  /// region value leaves its region, and erases the NCHW originals and their dead constants.
  Status run() {
    std::vector<const LayoutCandidate*> order;
    for (const LayoutCandidate& c : m_regions.candidates)
      if (m_regions.convertedCandidate(c.node))
        order.push_back(&c);
    for (const LayoutCandidate* c : order) {
      m_ctx.attributeToRewrite(m_regionRewrite[size_t(c->region)]);
      FB_TRY(convert(*c));
    }
    for (const LayoutCandidate* c : order) {
      m_ctx.attributeToRewrite(m_regionRewrite[size_t(c->region)]);
      FB_TRY(convertBackWhereNeeded(c->node));
    }
    std::vector<Value*> oldConstants;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* old = (*it)->node;
      for (Value* in : old->inputs())
        if (in && in->isConstant())
          oldConstants.push_back(in);
      m_graph.eraseNode(old);
    }
    std::sort(oldConstants.begin(), oldConstants.end());
    oldConstants.erase(std::unique(oldConstants.begin(), oldConstants.end()), oldConstants.end());
    for (Value* v : oldConstants)
      if (!v->hasUses() && !v->isGraphOutput())
        m_graph.eraseValue(v);
    m_converted = int64_t(order.size());
    return Status::success();
  }

  int64_t conversionsInserted() const { return m_inserted; }
  int64_t masksInserted() const { return m_masksInserted; }
  int64_t opsConverted() const { return m_converted; }

private:
  /// The channel count of an NCHW activation value.
  static int64_t channelsOf(const Value* v) { return v->type().dims[1].size(); }

  /// `v` in the target layout: the converted value of a region node, or a ReorderLayout made
  /// once per value at the region boundary, right before its first converted reader.
  Expected<Value*> activation(Value* v, Node* before) {
    if (auto it = m_inLayout.find(v); it != m_inLayout.end())
      return it->second;
    Node* r = m_graph.insertNodeBefore(before, OpKind::ReorderLayout, {v}, 1,
                                       {m_graph.uniqueValueName(v->name() + layoutSuffix(m_to))});
    r->attrs().set("from", std::string(layoutName(DataLayout::NCHW)));
    r->attrs().set("to", std::string(layoutName(m_to)));
    r->attrs().set("channels", channelsOf(v));
    FB_TRY(inferNodeShapes(*r));
    m_ctx.logCreated(r->id(), {before->id()}, std::string("conversion to ") + layoutName(m_to));
    ++m_inserted;
    m_inLayout[v] = r->output(0);
    return r->output(0);
  }

  /// A constant made from `data`, named after `base`.
  Value* addConstant(const std::string& base, Tensor data) {
    return m_graph.addConstant(m_graph.uniqueValueName(base + layoutSuffix(m_to)),
                               std::move(data));
  }

  /// An elementwise op's constant operand re-laid for the target layout (made once per value
  /// and shape).
  Expected<Value*> relaidConstant(Value* v, size_t rank, int64_t channels) {
    auto key = std::make_pair(v, std::make_pair(rank, channels));
    if (auto it = m_constants.find(key); it != m_constants.end())
      return it->second;
    FB_ASSIGN_OR_RETURN(Tensor t, relayConstant(v->constantData(), rank, channels, m_to));
    Value* c = addConstant(v->name(), std::move(t));
    m_constants[key] = c;
    return c;
  }

  /// Types the new node, records provenance and maps the old output to the new one.
  Status finish(Node* old, const std::vector<Node*>& made) {
    for (Node* n : made) {
      FB_TRY(inferNodeShapes(*n));
      n->addProvenanceFrom(*old);
    }
    std::vector<NodeId> ids;
    for (Node* n : made)
      ids.push_back(n->id());
    m_ctx.logReplaced(old->id(), ids, std::string("moved to ") + layoutName(m_to));
    m_inLayout[old->output(0)] = made.back()->output(0);
    return Status::success();
  }

  std::string outputName(const Node* old) {
    return m_graph.uniqueValueName(old->output(0)->name() + layoutSuffix(m_to));
  }

  Status convert(const LayoutCandidate& c) {
    Node* old = c.node;
    switch (c.role) {
    case LayoutRole::Conv: return convertConv(old);
    case LayoutRole::Pool: return convertPool(old);
    case LayoutRole::BatchNorm: return convertBatchNorm(old);
    case LayoutRole::Elementwise: return convertElementwise(c);
    case LayoutRole::Concat: return convertConcat(old);
    }
    assert(false && "unknown layout role");
    return Status::success();
  }

  Status convertConv(Node* old) {
    Value* x = old->input(0);
    const Tensor& w = old->input(1)->constantData();
    FB_ASSIGN_OR_RETURN(int64_t group, old->attrs().getInt("group", 1));
    // Like ONNX Runtime, a Conv on few channels (an RGB image) reads its NCHW input directly
    // rather than from a copy padded to 8 channels, unless that copy exists anyway.
    const bool readsNchw = m_to == DataLayout::NCHW8c && group == 1 &&
                           channelsOf(x) % kChannelBlock != 0 && !m_inLayout.count(x);
    Value* xl = x;
    if (!readsNchw) {
      FB_ASSIGN_OR_RETURN(xl, activation(x, old));
    }
    FB_ASSIGN_OR_RETURN(Value * packed, packedWeight(old->input(1), group, !readsNchw));
    std::vector<Value*> ins = {xl, packed};
    if (Value* b = old->input(2)) {
      auto [it, fresh] = m_packed.try_emplace(std::make_tuple(b, int64_t(0), true), nullptr);
      if (fresh)
        it->second = addConstant(b->name(), packConvBias(b->constantData(), m_to));
      ins.push_back(it->second);
    }
    Node* n = m_graph.insertNodeBefore(old, OpKind::LayoutConv, ins, 1, {outputName(old)},
                                       old->name());
    n->attrs() = old->attrs();
    n->attrs().set("layout", std::string(layoutName(m_to)));
    if (readsNchw)
      n->attrs().set("input_layout", std::string(layoutName(DataLayout::NCHW)));
    n->attrs().set("in_channels", channelsOf(x));
    n->attrs().set("out_channels", w.sizes()[0]);
    if (!n->attrs().has("kernel_shape"))
      n->attrs().set("kernel_shape", std::vector<int64_t>(w.sizes().begin() + 2, w.sizes().end()));
    return finish(old, {n});
  }

  /// Conv weight `w` packed for the target layout, once per weight, group and input layout
  /// (Convs that share a weight share its packed form too).
  Expected<Value*> packedWeight(Value* w, int64_t group, bool inputBlocked) {
    auto key = std::make_tuple(w, group, inputBlocked);
    if (auto it = m_packed.find(key); it != m_packed.end())
      return it->second;
    FB_ASSIGN_OR_RETURN(Tensor packed,
                        packConvWeight(w->constantData(), group, m_to, inputBlocked));
    Value* v = addConstant(w->name(), std::move(packed));
    m_packed[key] = v;
    return v;
  }

  Status convertPool(Node* old) {
    OpKind op = OpKind::LayoutMaxPool;
    switch (old->op()) {
    case OpKind::MaxPool: op = OpKind::LayoutMaxPool; break;
    case OpKind::AveragePool: op = OpKind::LayoutAveragePool; break;
    case OpKind::GlobalAveragePool: op = OpKind::LayoutGlobalAveragePool; break;
    case OpKind::GlobalMaxPool: op = OpKind::LayoutGlobalMaxPool; break;
    default: assert(false && "not a pool"); break;
    }
    FB_ASSIGN_OR_RETURN(Value * xl, activation(old->input(0), old));
    Node* n = m_graph.insertNodeBefore(old, op, {xl}, 1, {outputName(old)}, old->name());
    n->attrs() = old->attrs();
    n->attrs().set("layout", std::string(layoutName(m_to)));
    n->attrs().set("channels", channelsOf(old->input(0)));
    return finish(old, {n});
  }

  Status convertConcat(Node* old) {
    const size_t rank = old->output(0)->type().rank();
    FB_ASSIGN_OR_RETURN(int64_t axis, old->attrs().getInt("axis", 0));
    if (axis < 0)
      axis += int64_t(rank);
    std::vector<Value*> ins;
    for (Value* in : old->inputs()) {
      FB_ASSIGN_OR_RETURN(Value * v, activation(in, old));
      ins.push_back(v);
    }
    Node* n = m_graph.insertNodeBefore(old, OpKind::Concat, ins, 1, {outputName(old)},
                                       old->name());
    n->attrs() = old->attrs();
    n->attrs().set("axis", layoutAxis(axis, rank, m_to));
    return finish(old, {n});
  }

  /// y = x·scale + shift per channel with scale = γ/sqrt(var + ε) and shift = β − μ·scale
  /// (computed in double, as fold-batchnorm does), as Mul and Add by re-laid constants.
  Status convertBatchNorm(Node* old) {
    Value* x = old->input(0);
    const int64_t channels = channelsOf(x);
    FB_ASSIGN_OR_RETURN(float epsilon, old->attrs().getFloat("epsilon", 1e-5f));
    Tensor scale(DType::F32, {channels}), shift(DType::F32, {channels});
    for (int64_t c = 0; c < channels; ++c) {
      double gamma = old->input(1)->constantData().getAsDouble(c);
      double beta = old->input(2)->constantData().getAsDouble(c);
      double mean = old->input(3)->constantData().getAsDouble(c);
      double var = old->input(4)->constantData().getAsDouble(c);
      double s = gamma / std::sqrt(var + double(epsilon));
      scale.setFromDouble(c, s);
      shift.setFromDouble(c, beta - mean * s);
    }
    // [C, 1, ..., 1] broadcasts per channel over [N, C, S...].
    const size_t rank = x->type().rank();
    std::vector<int64_t> perChannel(rank - 1, 1);
    perChannel[0] = channels;
    FB_ASSIGN_OR_RETURN(Tensor scaleL,
                        relayConstant(scale.reshaped(perChannel), rank, channels, m_to));
    FB_ASSIGN_OR_RETURN(Tensor shiftL,
                        relayConstant(shift.reshaped(perChannel), rank, channels, m_to));
    FB_ASSIGN_OR_RETURN(Value * xl, activation(x, old));
    const std::string base = old->output(0)->name();
    Node* mul = m_graph.insertNodeBefore(old, OpKind::Mul,
                                         {xl, addConstant(base + ".bn_scale", std::move(scaleL))}, 1,
                                         {m_graph.uniqueValueName(base + ".scaled")}, old->name());
    FB_TRY(inferNodeShapes(*mul));
    Node* add = m_graph.insertNodeBefore(
        old, OpKind::Add, {mul->output(0), addConstant(base + ".bn_shift", std::move(shiftL))}, 1,
        {outputName(old)}, old->name());
    return finish(old, {mul, add});
  }

  Status convertElementwise(const LayoutCandidate& c) {
    Node* old = c.node;
    const size_t rank = old->output(0)->type().rank();
    const int64_t channels = channelsOf(old->output(0));
    std::vector<Value*> ins = old->inputs();
    for (unsigned i : c.activationOperands) {
      FB_ASSIGN_OR_RETURN(Value * v, activation(old->input(i), old));
      ins[i] = v;
    }
    for (unsigned i : c.constantOperands) {
      FB_ASSIGN_OR_RETURN(Value * v, relaidConstant(old->input(i), rank, channels));
      ins[i] = v;
    }
    if (!c.maskPadding) {
      Node* n = m_graph.insertNodeBefore(old, old->op(), ins, 1, {outputName(old)}, old->name());
      n->attrs() = old->attrs();
      return finish(old, {n});
    }
    const std::string base = old->output(0)->name();
    Node* n = m_graph.insertNodeBefore(old, old->op(), ins, 1,
                                       {m_graph.uniqueValueName(base + ".unmasked")}, old->name());
    n->attrs() = old->attrs();
    FB_TRY(inferNodeShapes(*n));
    FB_ASSIGN_OR_RETURN(Value * mask, laneMask(old->output(0)->type().dtype, rank, channels));
    Node* masked = m_graph.insertNodeBefore(old, OpKind::Mul, {n->output(0), mask}, 1,
                                            {outputName(old)}, old->name());
    ++m_masksInserted;
    return finish(old, {n, masked});
  }

  /// [1, ceil(C/8), 1, ..., 1, 8] holding 1 in the lanes of real channels and 0 in the padding
  /// (made once per channel count and rank).
  Expected<Value*> laneMask(DType dtype, size_t rank, int64_t channels) {
    auto key = std::make_tuple(dtype, rank, channels);
    if (auto it = m_laneMasks.find(key); it != m_laneMasks.end())
      return it->second;
    std::vector<int64_t> sizes(rank, 1);
    sizes[1] = channels;
    Tensor ones(dtype, sizes);
    for (int64_t i = 0; i < ones.numElements(); ++i)
      ones.setFromDouble(i, 1.0);
    FB_ASSIGN_OR_RETURN(Tensor mask, tensorToLayout(ones, m_to));
    Value* v = m_graph.addConstant(
        m_graph.uniqueValueName("lane_mask" + std::to_string(channels) + layoutSuffix(m_to)),
        std::move(mask));
    m_laneMasks[key] = v;
    return v;
  }

  /// Where a region value is read outside its region (or is a graph output), converts it back
  /// to NCHW under its original name, so that readers and the model's interface see no change.
  Status convertBackWhereNeeded(Node* old) {
    Value* v = old->output(0);
    bool outside = v->isGraphOutput();
    for (const Use& u : v->uses())
      outside = outside || !m_regions.convertedCandidate(u.user);
    if (!outside)
      return Status::success();
    const std::string name = v->name();
    m_graph.renameValue(v, m_graph.uniqueValueName(name + ".nchw_old"));
    Node* r = m_graph.insertNodeBefore(old, OpKind::ReorderLayout, {m_inLayout.at(v)}, 1, {name});
    r->attrs().set("from", std::string(layoutName(m_to)));
    r->attrs().set("to", std::string(layoutName(DataLayout::NCHW)));
    r->attrs().set("channels", channelsOf(v));
    FB_TRY(inferNodeShapes(*r));
    m_ctx.logCreated(r->id(), {old->id()}, "conversion back to NCHW");
    ++m_inserted;
    v->replaceAllUsesWith(r->output(0));
    return Status::success();
  }

  Graph& m_graph;
  DataLayout m_to;
  const LayoutRegions& m_regions;
  const std::vector<int64_t>& m_regionRewrite; ///< per region: its rewrite's index
  PassContext& m_ctx;
  std::unordered_map<Value*, Value*> m_inLayout; ///< NCHW value → the same value in m_to
  std::map<std::pair<Value*, std::pair<size_t, int64_t>>, Value*> m_constants;
  std::map<std::tuple<DType, size_t, int64_t>, Value*> m_laneMasks;
  /// (weight, group, input blocked) → packed weight; (bias, 0, true) → packed bias.
  std::map<std::tuple<Value*, int64_t, bool>, Value*> m_packed;
  int64_t m_inserted = 0;
  int64_t m_converted = 0;
  int64_t m_masksInserted = 0;
};

/// What a conversion node does: a ReorderLayout, or a Transpose (whose NCHW↔NHWC
/// permutations also count as layout conversions).
struct ConversionView {
  std::vector<int64_t> perm; ///< Transpose only
  std::optional<DataLayout> from, to;
  int64_t channels = -1; ///< -1: not known
};

std::optional<ConversionView> conversionView(const Node& n) {
  if (!n.input(0))
    return std::nullopt;
  ConversionView v;
  const TensorType& in = n.input(0)->type();
  if (n.op() == OpKind::ReorderLayout) {
    auto fromName = n.attrs().getString("from", ""), toName = n.attrs().getString("to", "");
    if (!fromName.ok() || !toName.ok())
      return std::nullopt;
    auto from = parseLayout(*fromName), to = parseLayout(*toName);
    if (!from.ok() || !to.ok())
      return std::nullopt;
    v.from = *from;
    v.to = *to;
    auto channels = n.attrs().getInt("channels", -1);
    Dim shown = visibleChannels(in.dims, *from);
    v.channels = channels.ok() && *channels > 0 ? *channels
                 : shown.isStatic()             ? shown.size()
                                                : -1;
    return v;
  }
  if (n.op() != OpKind::Transpose)
    return std::nullopt;
  const int64_t rank = int64_t(in.rank());
  std::vector<int64_t> reversed(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < rank; ++i)
    reversed[size_t(i)] = rank - 1 - i;
  auto perm = n.attrs().getInts("perm", reversed);
  if (!perm.ok() || int64_t(perm->size()) != rank)
    return std::nullopt;
  v.perm = *perm;
  if (rank >= 3) {
    std::vector<int64_t> toNhwc = {0}, toNchw = {0, rank - 1};
    for (int64_t i = 2; i < rank; ++i)
      toNhwc.push_back(i);
    toNhwc.push_back(1);
    for (int64_t i = 1; i < rank - 1; ++i)
      toNchw.push_back(i);
    if (v.perm == toNhwc)
      v.from = DataLayout::NCHW, v.to = DataLayout::NHWC;
    else if (v.perm == toNchw)
      v.from = DataLayout::NHWC, v.to = DataLayout::NCHW;
  }
  return v;
}

/// True when `second` applied after `first` gives back `first`'s input.
bool composeToIdentity(const ConversionView& first, const ConversionView& second) {
  if (!first.perm.empty() && !second.perm.empty()) {
    if (first.perm.size() != second.perm.size())
      return false;
    for (size_t j = 0; j < second.perm.size(); ++j) {
      int64_t k = second.perm[j];
      if (k < 0 || size_t(k) >= first.perm.size() || first.perm[size_t(k)] != int64_t(j))
        return false;
    }
    return true;
  }
  if (!first.from || !second.from || *first.from != *second.to || *first.to != *second.from)
    return false;
  // Blocked layouts hide the channel count: both sides must agree on it.
  const bool blocked = *first.from == DataLayout::NCHW8c || *first.to == DataLayout::NCHW8c;
  return !blocked || (first.channels > 0 && first.channels == second.channels);
}

/// Removes every pair of adjacent conversions that undo each other (ReorderLayout a→b then
/// b→a, Transposes whose permutations compose to the identity, or a mix of NCHW↔NHWC
/// Transpose and ReorderLayout). Returns the number of conversion nodes removed.
int64_t cancelInverseConversions(Graph& g, PassContext& ctx) {
  int64_t removed = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& np : g.nodes()) {
      Node* second = np.get();
      auto v2 = conversionView(*second);
      if (!v2)
        continue;
      Value* mid = second->input(0);
      Node* first = mid->producer();
      auto v1 = first ? conversionView(*first) : std::nullopt;
      if (!v1 || !composeToIdentity(*v1, *v2))
        continue;
      Value* src = first->input(0);
      Value* out = second->output(0);
      if (!sameType(src->type(), out->type()) || !canReplaceKeepingName(g, out, src))
        continue;
      if (!ctx.mayRewrite())
        return removed; // every later cancellation would be refused too
      replaceValue(g, out, src);
      g.eraseNode(second);
      ++removed;
      if (!mid->hasUses() && !mid->isGraphOutput()) {
        g.eraseNode(first);
        ++removed;
      }
      changed = true;
      break; // the node list changed
    }
  }
  return removed;
}

/// Layout, in the manner of ONNX Runtime's NCHWc transformer:
///   1. read the target (`to=nchw8c`, the default, or `to=nhwc`) and infer shapes;
///   2. find the candidates (Conv with constant weights, pools, inference BatchNormalization,
///      elementwise ops on per-channel or per-tensor operands, Concat) and group them into
///      regions, maximal sets connected through activations; only regions with a Conv are
///      converted (see LayoutRegions.h);
///   3. rewrite each converted node in execution order: Conv → LayoutConv with W and B packed
///      (OIHW8i8o, depthwise OIHW8o, or OHWI for NHWC), pools → Layout* pools, BatchNorm →
///      Mul and Add by re-laid constants, elementwise ops → the same op with constant operands
///      re-laid (and, in a padded NCHW8c region, a 0/1 lane mask after ops with f(0) != 0),
///      Concat → Concat along the moved axis; an operand from outside the region gets one
///      ReorderLayout (per value), except that a Conv on an unpadded-width input (C not a
///      multiple of 8, like an RGB image) reads it as NCHW with OIHW8o weights;
///   4. where a region value is read outside its region or is a graph output, convert it back
///      to NCHW under its original name; erase the NCHW originals and their dead weights;
///   5. cancel adjacent conversions that undo each other (ReorderLayout pairs, Transpose pairs,
///      NCHW↔NHWC Transposes against ReorderLayout) and re-infer shapes.
/// The graph then computes exactly what it did: the layout ops' kernels convert to NCHW and run
/// the standard kernels. Statistics: regions and ops converted, conversions inserted and
/// cancelled, padding masks.
class LayoutPass : public Pass {
public:
  std::string name() const override { return "layout"; }
  std::string summary() const override {
    return "move Conv/pool/elementwise regions to NHWC or blocked NCHW8c (layout{to=nchw8c})";
  }
  std::string description() const override {
    return "ONNX stores images as NCHW: each channel is a separate plane. A CPU convolution "
           "kernel would rather read the 8 channels of one pixel as one AVX2 vector, so "
           "compilers such as ONNX Runtime keep activations in a blocked layout, NCHW8c "
           "([N, C/8, H, W, 8], the channel tail padded with zeros), or in NHWC. This pass "
           "finds regions of Conv, pooling, BatchNormalization and elementwise ops, rewrites "
           "them to the chosen layout, re-packs the Conv weights once at compile time, and "
           "inserts ReorderLayout conversions only where a value enters or leaves a region; "
           "conversions that undo each other are cancelled. Reshape, Gemm, Softmax and the "
           "like stay NCHW and bound the regions. Options: to=nchw8c (default) or to=nhwc.";
  }

  std::vector<PassOptionSpec> options() const override {
    return {PassOptionSpec::oneOf("to", {"nchw8c", "nhwc"}, "nchw8c",
                                  "the layout the convolution regions are rewritten to")};
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    const std::string& toName = ctx.options().declared("to");
    auto to = parseLayout(toName);
    if (!to.ok() || *to == DataLayout::NCHW)
      return makeError("option to expects nchw8c or nhwc, got '", toName, "'");
    FB_TRY(inferShapes(graph));
    LayoutRegions regions = findLayoutRegions(graph, *to);
    // One region is one rewrite (its nodes only convert together: a region value read by an
    // unconverted member would have no NCHW copy). A refused region stays NCHW.
    std::vector<int64_t> regionRewrite(regions.converted.size(), 0);
    int64_t converted = 0;
    for (size_t r = 0; r < regions.converted.size(); ++r) {
      if (regions.converted[r] && !ctx.mayRewrite())
        regions.converted[r] = false;
      if (regions.converted[r])
        regionRewrite[r] = ctx.rewrites();
      converted += regions.converted[r];
    }
    LayoutRewriter rewriter(graph, *to, regions, regionRewrite, ctx);
    FB_TRY(rewriter.run());
    ctx.attributeToRewrite(0);
    const int64_t cancelled = cancelInverseConversions(graph, ctx);
    FB_TRY(inferShapes(graph));
    ctx.addStatistic("regions converted", double(converted));
    ctx.addStatistic("ops converted", double(rewriter.opsConverted()));
    ctx.addStatistic("conversions inserted", double(rewriter.conversionsInserted()));
    ctx.addStatistic("conversions cancelled", double(cancelled));
    ctx.addStatistic("padding masks", double(rewriter.masksInserted()));
    ctx.setSummary("converted " + std::to_string(rewriter.opsConverted()) + " ops in " +
                   std::to_string(converted) + " regions to " + layoutName(*to) + "; inserted " +
                   std::to_string(rewriter.conversionsInserted()) + " conversions, cancelled " +
                   std::to_string(cancelled));
    return rewriter.opsConverted() > 0 || cancelled > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createLayoutPass() { return std::make_unique<LayoutPass>(); }

} // namespace fb
