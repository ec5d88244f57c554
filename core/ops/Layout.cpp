// The layout ops the `layout` pass makes: ReorderLayout, LayoutConv and the Layout* pools, whose
// activations are NHWC or NCHW8c. Shape inference and kernels convert to NCHW, run the standard
// op's own inference and kernel through the op table, and convert back, so a transformed graph
// computes exactly (bit for bit) what the original did.
#include "core/ShapeInference.h"
#include "core/ops/DenseKernels.h"
#include "core/ops/LayoutTransform.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

#include <optional>

namespace fb {

namespace {

/// The standard NCHW op a layout op computes.
OpKind standardOpOf(OpKind op) {
  switch (op) {
  case OpKind::LayoutConv: return OpKind::Conv;
  case OpKind::LayoutMaxPool: return OpKind::MaxPool;
  case OpKind::LayoutAveragePool: return OpKind::AveragePool;
  case OpKind::LayoutGlobalAveragePool: return OpKind::GlobalAveragePool;
  case OpKind::LayoutGlobalMaxPool: return OpKind::GlobalMaxPool;
  default: break;
  }
  assert(false && "not a layout op with a standard counterpart");
  return OpKind::Identity;
}

/// The attributes of the standard op: the layout op's without those only layout ops have.
AttrMap standardAttrs(const AttrMap& attrs) {
  AttrMap out = attrs;
  for (const char* name : {"layout", "input_layout", "channels", "in_channels", "out_channels"})
    out.erase(name);
  return out;
}

/// A one-node graph of the standard op over inputs of the given types (absent: nullopt), with
/// shapes inferred: lets a layout op reuse the standard op's inference and kernel unchanged.
struct StandardNode {
  std::unique_ptr<Graph> graph;
  Node* node = nullptr;
};

/// Builds the standard counterpart of `layoutNode` over NCHW operand types; an error when the
/// standard op's inference rejects them.
Expected<StandardNode> makeStandardNode(const Node& layoutNode,
                                        const std::vector<std::optional<TensorType>>& inputs) {
  StandardNode s;
  s.graph = std::make_unique<Graph>("layout_scratch");
  const Graph* top = layoutNode.graph();
  while (top && top->parent())
    top = top->parent();
  if (top)
    s.graph->setOpset(top->opset());
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(inputs[i] ? s.graph->addInput("in" + std::to_string(i), *inputs[i]) : nullptr);
  const OpKind op = standardOpOf(layoutNode.op());
  s.node = s.graph->addNode(op, ins, 1, {}, layoutNode.name());
  s.node->attrs() = standardAttrs(layoutNode.attrs());
  Status st = inferNodeShapes(*s.node);
  if (!st.ok())
    return st.error().withContext(layoutNode.describe() + " as " + opName(op));
  return s;
}

/// A required layout attribute ("NCHW", "NHWC" or "NCHW8c").
Expected<DataLayout> layoutAttr(const AttrMap& attrs, const char* name) {
  if (!attrs.has(name))
    return makeError("attribute '", name, "' is required");
  FB_ASSIGN_OR_RETURN(std::string s, attrs.getString(name, ""));
  return parseLayout(s);
}

/// A required positive channel-count attribute.
Expected<int64_t> channelsAttr(const AttrMap& attrs, const char* name) {
  if (!attrs.has(name))
    return makeError("attribute '", name, "' is required");
  FB_ASSIGN_OR_RETURN(int64_t c, attrs.getInt(name, 0));
  if (c < 1)
    return makeError("attribute '", name, "' = ", c, " must be positive");
  return c;
}

/// `st`, its error prefixed with the node's description.
template <typename Ctx> Status withNode(const Ctx& ctx, Status st) {
  if (st.ok())
    return st;
  return st.error().withContext(ctx.node().describe());
}

// -- ReorderLayout(X) {from, to, channels}: X stored in `from` becomes the same logical tensor
// stored in `to`. `channels` is the true channel count (NCHW8c's padding hides it).

/// The channel count of a ReorderLayout: the attribute, or what the input shows.
Expected<int64_t> reorderChannels(const AttrMap& attrs, const TensorType& x, DataLayout from) {
  const size_t minRank = from == DataLayout::NCHW8c ? 4 : 3;
  if (x.rank() < minRank)
    return makeError("a ", layoutName(from), " activation needs rank ", minRank, " or more, got ",
                     x.str());
  Dim shown = visibleChannels(x.dims, from);
  if (!attrs.has("channels")) {
    if (!shown.isStatic())
      return makeError("attribute 'channels' is required when the input (", x.str(),
                       ") does not show a static channel count");
    return shown.size();
  }
  FB_ASSIGN_OR_RETURN(int64_t c, channelsAttr(attrs, "channels"));
  if (shown.isStatic() && shown.size() != c)
    return makeError("attribute 'channels' = ", c, " but the ", layoutName(from), " input ",
                     x.str(), " has ", shown.size());
  return c;
}

Status inferReorder(InferContext& ctx) {
  auto run = [&]() -> Status {
    FB_ASSIGN_OR_RETURN(DataLayout from, layoutAttr(ctx.attrs(), "from"));
    FB_ASSIGN_OR_RETURN(DataLayout to, layoutAttr(ctx.attrs(), "to"));
    if (from == to)
      return makeError("'from' and 'to' are both ", layoutName(from));
    const TensorType& x = ctx.inputType(0);
    FB_ASSIGN_OR_RETURN(int64_t channels, reorderChannels(ctx.attrs(), x, from));
    FB_ASSIGN_OR_RETURN(std::vector<Dim> nchw, dimsFromLayout(x.dims, from, channels));
    FB_ASSIGN_OR_RETURN(std::vector<Dim> out, dimsToLayout(nchw, to));
    ctx.setOutputType(0, TensorType(x.dtype, out));
    return Status::success();
  };
  return withNode(ctx, run());
}

Status evalReorder(EvalContext& ctx) {
  auto run = [&]() -> Status {
    FB_ASSIGN_OR_RETURN(DataLayout from, layoutAttr(ctx.attrs(), "from"));
    FB_ASSIGN_OR_RETURN(DataLayout to, layoutAttr(ctx.attrs(), "to"));
    const Tensor& x = ctx.input(0);
    FB_ASSIGN_OR_RETURN(int64_t channels, reorderChannels(ctx.attrs(), x.type(), from));
    FB_ASSIGN_OR_RETURN(Tensor nchw, tensorFromLayout(x, from, channels));
    FB_ASSIGN_OR_RETURN(Tensor out, tensorToLayout(nchw, to));
    ctx.setOutput(0, std::move(out));
    return Status::success();
  };
  return withNode(ctx, run());
}

OpCost costReorder(const CostContext&) { return {0, 0}; }

// -- LayoutConv(X, W, B) {layout, input_layout, in_channels, out_channels, group, kernel_shape,
// strides, pads, dilations, auto_pad}: Conv on X stored in `input_layout` (`layout` when absent;
// otherwise only NCHW) giving Y in `layout`, with W and B packed by packConvWeight and
// packConvBias.

/// Where a LayoutConv's X is stored.
Expected<DataLayout> convInputLayout(const AttrMap& attrs, DataLayout layout) {
  if (!attrs.has("input_layout"))
    return layout;
  FB_ASSIGN_OR_RETURN(DataLayout in, layoutAttr(attrs, "input_layout"));
  if (in != layout && in != DataLayout::NCHW)
    return makeError("input_layout ", layoutName(in), " must be NCHW or the layout ",
                     layoutName(layout));
  return in;
}

/// The logical NCHW types of a LayoutConv's operands.
Expected<std::vector<std::optional<TensorType>>> convStandardTypes(const InferContext& ctx,
                                                                   DataLayout layout) {
  FB_ASSIGN_OR_RETURN(int64_t inChannels, channelsAttr(ctx.attrs(), "in_channels"));
  FB_ASSIGN_OR_RETURN(int64_t outChannels, channelsAttr(ctx.attrs(), "out_channels"));
  FB_ASSIGN_OR_RETURN(int64_t group, ctx.attrs().getInt("group", 1));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, ctx.attrs().getInts("kernel_shape", {}));
  if (kernel.empty())
    return makeError("attribute 'kernel_shape' is required (W is packed)");
  const TensorType& x = ctx.inputType(0);
  const TensorType& w = ctx.inputType(1);
  if (!isComputeFloat(x.dtype) || w.dtype != x.dtype)
    return makeError("X ", x.str(), " and W ", w.str(), " must share a dtype of f32, f16, bf16");
  FB_ASSIGN_OR_RETURN(DataLayout inputLayout, convInputLayout(ctx.attrs(), layout));
  FB_ASSIGN_OR_RETURN(std::vector<Dim> xDims, dimsFromLayout(x.dims, inputLayout, inChannels));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> wSizes,
                      packedWeightSizes(outChannels, inChannels, group, kernel, layout,
                                        /*inputBlocked=*/inputLayout == layout));
  if (TensorType::of(w.dtype, wSizes).dims != w.dims)
    return makeError("packed ", layoutName(layout), " weight W is ", w.str(), "; expected ",
                     TensorType::of(w.dtype, wSizes).str());
  std::vector<int64_t> stdW = {outChannels, inChannels / group};
  stdW.insert(stdW.end(), kernel.begin(), kernel.end());
  std::vector<std::optional<TensorType>> types = {TensorType(x.dtype, xDims),
                                                  TensorType::of(w.dtype, stdW)};
  if (ctx.hasInput(2)) {
    const TensorType& b = ctx.inputType(2);
    std::vector<int64_t> want = layout == DataLayout::NCHW8c
                                    ? std::vector<int64_t>{channelBlocks(outChannels), kChannelBlock}
                                    : std::vector<int64_t>{outChannels};
    if (b.dtype != x.dtype || TensorType::of(b.dtype, want).dims != b.dims)
      return makeError("packed bias B is ", b.str(), "; expected ",
                       TensorType::of(x.dtype, want).str());
    types.push_back(TensorType::of(b.dtype, {outChannels}));
  }
  return types;
}

/// Shape inference of every layout op but ReorderLayout: the standard op's, on NCHW types.
Status inferLayoutOp(InferContext& ctx) {
  auto run = [&]() -> Status {
    FB_ASSIGN_OR_RETURN(DataLayout layout, layoutAttr(ctx.attrs(), "layout"));
    if (layout == DataLayout::NCHW)
      return makeError("layout NCHW is the standard op's; use ", opName(standardOpOf(ctx.node().op())));
    std::vector<std::optional<TensorType>> types;
    if (ctx.node().op() == OpKind::LayoutConv) {
      FB_ASSIGN_OR_RETURN(types, convStandardTypes(ctx, layout));
    } else {
      FB_ASSIGN_OR_RETURN(int64_t channels, channelsAttr(ctx.attrs(), "channels"));
      const TensorType& x = ctx.inputType(0);
      FB_ASSIGN_OR_RETURN(std::vector<Dim> xDims, dimsFromLayout(x.dims, layout, channels));
      types.push_back(TensorType(x.dtype, xDims));
    }
    auto s = makeStandardNode(ctx.node(), types);
    if (!s.ok())
      return s.error();
    const TensorType& y = s->node->output(0)->type();
    FB_ASSIGN_OR_RETURN(std::vector<Dim> out, dimsToLayout(y.dims, layout));
    ctx.setOutputType(0, TensorType(y.dtype, out));
    return Status::success();
  };
  Status st = run();
  // Errors from the standard node already name this node.
  if (!st.ok() && st.error().message().rfind(ctx.node().describe(), 0) == 0)
    return st;
  return withNode(ctx, st);
}

/// Kernel of every layout op but ReorderLayout: unpack to NCHW, the standard kernel, repack.
Status evalLayoutOp(EvalContext& ctx) {
  auto run = [&]() -> Status {
    FB_ASSIGN_OR_RETURN(DataLayout layout, layoutAttr(ctx.attrs(), "layout"));
    std::vector<Tensor> ins;
    if (ctx.node().op() == OpKind::LayoutConv) {
      FB_ASSIGN_OR_RETURN(int64_t inChannels, channelsAttr(ctx.attrs(), "in_channels"));
      FB_ASSIGN_OR_RETURN(int64_t outChannels, channelsAttr(ctx.attrs(), "out_channels"));
      FB_ASSIGN_OR_RETURN(int64_t group, ctx.attrs().getInt("group", 1));
      FB_ASSIGN_OR_RETURN(DataLayout inputLayout, convInputLayout(ctx.attrs(), layout));
      FB_ASSIGN_OR_RETURN(Tensor x, tensorFromLayout(ctx.input(0), inputLayout, inChannels));
      FB_ASSIGN_OR_RETURN(Tensor w, unpackConvWeight(ctx.input(1), group, layout, inChannels,
                                                     outChannels, inputLayout == layout));
      ins = {x, w};
      if (ctx.hasInput(2)) {
        FB_ASSIGN_OR_RETURN(Tensor b, unpackConvBias(ctx.input(2), layout, outChannels));
        ins.push_back(b);
      }
    } else {
      FB_ASSIGN_OR_RETURN(int64_t channels, channelsAttr(ctx.attrs(), "channels"));
      FB_ASSIGN_OR_RETURN(Tensor x, tensorFromLayout(ctx.input(0), layout, channels));
      ins = {x};
    }
    std::vector<std::optional<TensorType>> types;
    for (const Tensor& t : ins)
      types.push_back(t.type());
    FB_ASSIGN_OR_RETURN(StandardNode s, makeStandardNode(ctx.node(), types));
    EvalContext inner(*s.node, ins);
    FB_TRY(s.node->info().eval(inner));
    FB_ASSIGN_OR_RETURN(Tensor y, tensorToLayout(inner.outputs()[0], layout));
    ctx.setOutput(0, std::move(y));
    return Status::success();
  };
  Status st = run();
  if (!st.ok() && st.error().message().rfind(ctx.node().describe(), 0) == 0)
    return st;
  return withNode(ctx, st);
}

double kernelProduct(const AttrMap& attrs) {
  double k = 1;
  if (auto kernel = attrs.getInts("kernel_shape", {}); kernel.ok())
    for (int64_t v : *kernel)
      k *= double(v);
  return k;
}

OpCost costLayoutConv(const CostContext& ctx) {
  // Padded lanes are computed too: that is the price of the blocked layout.
  auto inChannels = ctx.attrs().getInt("in_channels", 1);
  auto group = ctx.attrs().getInt("group", 1);
  double perGroup = inChannels.ok() && group.ok() && *group > 0 ? double(*inChannels / *group) : 1;
  double out = ctx.outputElements(0);
  return {2 * out * perGroup * kernelProduct(ctx.attrs()) + (ctx.hasInput(2) ? out : 0), 0};
}

OpCost costLayoutPool(const CostContext& ctx) {
  return {ctx.outputElements(0) * kernelProduct(ctx.attrs()), 0};
}

OpCost costLayoutGlobalPool(const CostContext& ctx) { return {ctx.inputElements(0), 0}; }

} // namespace

void registerLayoutOps(OpRegistry& r) {
  r.set(OpKind::ReorderLayout, inferReorder, evalReorder, costReorder);
  r.set(OpKind::LayoutConv, inferLayoutOp, evalLayoutOp, costLayoutConv);
  r.set(OpKind::LayoutMaxPool, inferLayoutOp, evalLayoutOp, costLayoutPool);
  r.set(OpKind::LayoutAveragePool, inferLayoutOp, evalLayoutOp, costLayoutPool);
  r.set(OpKind::LayoutGlobalAveragePool, inferLayoutOp, evalLayoutOp, costLayoutGlobalPool);
  r.set(OpKind::LayoutGlobalMaxPool, inferLayoutOp, evalLayoutOp, costLayoutGlobalPool);
}

} // namespace fb
