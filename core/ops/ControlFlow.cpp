// If, Loop and Scan: shape inference, reference evaluation and cost by recursing into bodies.
//
// Operand and body layouts are described in core/ControlFlow.h. Every body is closed (its
// captures are explicit operands), so a body is inferred and interpreted exactly like a fused
// group's body: set its input types (or values) from the node's operands and run it.
#include "core/ControlFlow.h"
#include "core/Cost.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

#include <cstring>

namespace fb {

namespace {

// ---------------------------------------------------------------------------------------------
// Shared helpers

/// Infers a body after setting the types of its first inputs.
Status inferBody(const Node& node, Graph& body, const std::string& role,
                 const std::vector<TensorType>& inputTypes) {
  for (size_t i = 0; i < inputTypes.size(); ++i)
    body.inputs()[i]->setType(inputTypes[i]);
  Status st = inferShapes(body);
  if (!st.ok())
    return st.error().withContext("in body '" + role + "' of " + node.describe());
  return Status::success();
}

/// Infers a loop body to a fixed point of its loop-carried types: a carried value enters with
/// the join of its initial type and what the body yields for it, until nothing changes. Each
/// round that changes something turns at least one dim unknown, so this ends. `carriedIn` and
/// `carriedOut` are the body input and output positions of the first carried value; `types`
/// holds every body input type and comes back with the carried entries at the fixed point.
Status inferLoopBody(const Node& node, Graph& body, std::vector<TensorType>& types,
                     size_t carriedIn, size_t carriedOut, size_t numCarried) {
  for (;;) {
    FB_TRY(inferBody(node, body, "body", types));
    bool changed = false;
    for (size_t i = 0; i < numCarried; ++i) {
      const TensorType& in = types[carriedIn + i];
      const TensorType& out = body.outputs()[carriedOut + i]->type();
      std::optional<TensorType> joined = joinTypes(in, out);
      if (!joined)
        return makeUnsupported(node.describe(), ": loop-carried value ", i, " enters as ",
                               in.str(), " but the body yields ", out.str(),
                               " (a carried value must keep its dtype and rank)");
      if (!(*joined == in)) {
        types[carriedIn + i] = std::move(*joined);
        changed = true;
      }
    }
    if (!changed)
      return Status::success();
  }
}

Status checkScalarOperand(const InferContext& ctx, size_t i, DType want, const char* what) {
  if (!ctx.hasInput(i))
    return Status::success();
  const TensorType& t = ctx.inputType(i);
  auto n = staticProduct(t.dims);
  if (t.dtype != want || t.rank() > 1 || (n && *n != 1))
    return ctx.error(what, " must be a single ", dtypeName(want), " element, not ", t.str());
  return Status::success();
}

/// The single bool of a condition tensor; an error names the node when it is not one element.
Expected<bool> conditionValue(const EvalContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() != DType::Bool || t.numElements() != 1)
    return ctx.error(what, " must be a single bool, not ", t.type().str());
  return t.rawData()[0] != std::byte{0};
}

/// Copies slice `index` along `axis` out of `t` (the axis is removed).
Tensor sliceAlong(const Tensor& t, size_t axis, int64_t index) {
  std::vector<int64_t> sizes = t.sizes();
  int64_t len = sizes[axis];
  sizes.erase(sizes.begin() + std::ptrdiff_t(axis));
  Tensor out(t.dtype(), sizes);
  int64_t outer = 1, inner = int64_t(dtypeSize(t.dtype()));
  for (size_t d = 0; d < axis; ++d)
    outer *= t.sizes()[d];
  for (size_t d = axis + 1; d < t.rank(); ++d)
    inner *= t.sizes()[d];
  if (inner == 0 || outer == 0)
    return out;
  std::byte* dst = out.mutableRawData();
  const std::byte* src = t.rawData();
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + o * inner, src + (o * len + index) * inner, size_t(inner));
  return out;
}

/// Stacks equally shaped slices along a new `axis` (slice k at position order[k]).
/// `empty` gives the slice shape when there are no slices.
Expected<Tensor> stackAlong(const std::vector<Tensor>& slices, size_t axis, bool reverse,
                            const TensorType& emptyType, const std::string& what) {
  std::vector<int64_t> sliceSizes;
  DType dtype = emptyType.dtype;
  if (slices.empty()) {
    for (const Dim& d : emptyType.dims)
      sliceSizes.push_back(d.isStatic() ? d.size() : 0);
  } else {
    sliceSizes = slices[0].sizes();
    dtype = slices[0].dtype();
  }
  if (axis > sliceSizes.size())
    return makeError(what, ": axis ", axis, " is out of range for rank ", sliceSizes.size() + 1);
  for (size_t k = 1; k < slices.size(); ++k)
    if (slices[k].sizes() != slices[0].sizes() || slices[k].dtype() != dtype)
      return makeError(what, " is ", slices[0].type().str(), " in iteration 0 but ",
                       slices[k].type().str(), " in iteration ", k,
                       " (scan outputs must keep their shape)");
  const int64_t len = int64_t(slices.size());
  std::vector<int64_t> sizes = sliceSizes;
  sizes.insert(sizes.begin() + std::ptrdiff_t(axis), len);
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(dtype, sizes));
  int64_t outer = 1, inner = int64_t(dtypeSize(dtype));
  for (size_t d = 0; d < axis; ++d)
    outer *= sliceSizes[d];
  for (size_t d = axis; d < sliceSizes.size(); ++d)
    inner *= sliceSizes[d];
  if (inner == 0 || outer == 0 || len == 0)
    return out;
  std::byte* dst = out.mutableRawData();
  for (int64_t k = 0; k < len; ++k) {
    const std::byte* src = slices[size_t(reverse ? len - 1 - k : k)].rawData();
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * len + k) * inner, src + o * inner, size_t(inner));
  }
  return out;
}

/// Runs a body on `inputs`, naming the node and the iteration in errors.
Expected<std::vector<Tensor>> runBody(const EvalContext& ctx, const Graph& body,
                                      const std::string& role, std::vector<Tensor> inputs,
                                      std::optional<int64_t> iteration) {
  auto r = interpret(body, inputs);
  if (!r.ok()) {
    std::string where = "in body '" + role + "' of " + ctx.node().describe();
    if (iteration)
      where += ", iteration " + std::to_string(*iteration);
    return r.error().withContext(where);
  }
  return std::move(r->outputs);
}

// ---------------------------------------------------------------------------------------------
// If

Status inferIf(InferContext& ctx) {
  const Node& node = ctx.node();
  FB_ASSIGN_OR_RETURN(ControlFlowLayout l, controlFlowLayout(node));
  FB_TRY(checkScalarOperand(ctx, 0, DType::Bool, "the condition"));
  std::vector<TensorType> captures;
  for (size_t i = 0; i < l.numCaptures; ++i) {
    if (!ctx.hasInput(l.firstCapture + i))
      return ctx.error("captured operand ", l.firstCapture + i, " is absent");
    captures.push_back(ctx.inputType(l.firstCapture + i));
  }
  Graph* thenBody = node.bodyNamed("then_branch");
  Graph* elseBody = node.bodyNamed("else_branch");
  FB_TRY(inferBody(node, *thenBody, "then_branch", captures));
  FB_TRY(inferBody(node, *elseBody, "else_branch", captures));
  // A constant condition picks one branch, whose types are then exact.
  std::optional<bool> known;
  if (const Tensor* c = ctx.inputConstant(0); c && c->numElements() == 1)
    known = c->rawData()[0] != std::byte{0};
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    const TensorType& a = thenBody->outputs()[i]->type();
    const TensorType& b = elseBody->outputs()[i]->type();
    std::optional<TensorType> joined = joinTypes(a, b);
    if (!joined) {
      if (a.dtype != b.dtype)
        return ctx.error("result ", i, " is ", a.str(), " in then_branch but ", b.str(),
                         " in else_branch");
      return ctx.unsupported("result ", i, " is ", a.str(), " in then_branch but ", b.str(),
                             " in else_branch (results whose rank depends on the condition "
                             "are not supported)");
    }
    ctx.setOutputType(i, known ? (*known ? a : b) : *joined);
  }
  return Status::success();
}

Status evalIf(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(ControlFlowLayout l, controlFlowLayout(ctx.node()));
  FB_ASSIGN_OR_RETURN(bool cond, conditionValue(ctx, ctx.input(0), "the condition"));
  const char* role = cond ? "then_branch" : "else_branch";
  std::vector<Tensor> ins(l.numCaptures);
  for (size_t i = 0; i < l.numCaptures; ++i)
    ins[i] = ctx.input(l.firstCapture + i);
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                      runBody(ctx, *ctx.node().bodyNamed(role), role, std::move(ins), {}));
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutput(i, std::move(outs[i]));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Loop

/// The number of iterations when it is known at compile time: a constant trip count and either
/// no condition, or a constant true condition that the body passes through unchanged.
std::optional<int64_t> staticTripCount(const InferContext& ctx, const Graph& body) {
  const Tensor* m = ctx.inputConstant(0);
  if (!m || m->numElements() != 1)
    return std::nullopt;
  if (ctx.hasInput(1)) {
    const Tensor* c = ctx.inputConstant(1);
    if (!c || c->numElements() != 1 || c->rawData()[0] == std::byte{0})
      return std::nullopt;
    const Value* condOut = body.outputs()[0];
    const Value* condIn = body.inputs()[1];
    bool passThrough = condOut == condIn;
    if (const Node* p = condOut->producer(); p && p->op() == OpKind::Identity)
      passThrough = p->input(0) == condIn;
    bool constTrue = condOut->isConstant() && condOut->constantData().numElements() == 1 &&
                     condOut->constantData().rawData()[0] != std::byte{0};
    if (!passThrough && !constTrue)
      return std::nullopt;
  }
  return std::max<int64_t>(0, m->getAsInt64(0));
}

Status inferLoop(InferContext& ctx) {
  const Node& node = ctx.node();
  FB_ASSIGN_OR_RETURN(ControlFlowLayout l, controlFlowLayout(node));
  FB_TRY(checkScalarOperand(ctx, 0, DType::I64, "the trip count"));
  FB_TRY(checkScalarOperand(ctx, 1, DType::Bool, "the condition"));
  std::vector<TensorType> types{TensorType(DType::I64, {}), TensorType(DType::Bool, {})};
  for (size_t i = 0; i < l.numCarried + l.numCaptures; ++i) {
    if (!ctx.hasInput(2 + i))
      return ctx.error("operand ", 2 + i, " is absent (only the trip count and the condition "
                       "are optional)");
    types.push_back(ctx.inputType(2 + i));
  }
  Graph& body = *node.bodyNamed("body");
  FB_TRY(inferLoopBody(node, body, types, 2, 1, l.numCarried));
  const TensorType& condOut = body.outputs()[0]->type();
  if (condOut.dtype != DType::Bool || staticProduct(condOut.dims).value_or(1) != 1)
    return ctx.error("the body's condition result must be a single bool, not ", condOut.str());
  for (size_t i = 0; i < l.numCarried; ++i)
    ctx.setOutputType(i, types[2 + i]);
  std::optional<int64_t> trips = staticTripCount(ctx, body);
  for (size_t k = 0; k < l.numScanOutputs; ++k) {
    TensorType t = body.outputs()[1 + l.numCarried + k]->type();
    t.dims.insert(t.dims.begin(), trips ? Dim(*trips) : Dim::unknown());
    ctx.setOutputType(l.numCarried + k, std::move(t));
  }
  return Status::success();
}

Status evalLoop(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(ControlFlowLayout l, controlFlowLayout(ctx.node()));
  const Graph& body = *ctx.node().bodyNamed("body");
  std::optional<int64_t> maxTrips;
  if (ctx.hasInput(0)) {
    const Tensor& m = ctx.input(0);
    if (m.dtype() != DType::I64 || m.numElements() != 1)
      return ctx.error("the trip count must be a single i64, not ", m.type().str());
    maxTrips = m.getAsInt64(0);
  }
  bool keepGoing = true;
  if (ctx.hasInput(1)) {
    FB_ASSIGN_OR_RETURN(keepGoing, conditionValue(ctx, ctx.input(1), "the condition"));
  }
  if (!maxTrips && !ctx.hasInput(1))
    return ctx.error("has neither a trip count nor a condition (it would never end)");
  std::vector<Tensor> carried;
  for (size_t i = 0; i < l.numCarried; ++i)
    carried.push_back(ctx.input(l.firstCarried + i));
  std::vector<std::vector<Tensor>> scans(l.numScanOutputs);
  for (int64_t it = 0; keepGoing && (!maxTrips || it < *maxTrips); ++it) {
    std::vector<Tensor> ins{Tensor::scalar<int64_t>(it), Tensor::scalar<bool>(keepGoing)};
    ins.insert(ins.end(), carried.begin(), carried.end());
    for (size_t c = 0; c < l.numCaptures; ++c)
      ins.push_back(ctx.input(l.firstCapture + c));
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> outs, runBody(ctx, body, "body", std::move(ins), it));
    if (ctx.hasInput(1)) { // without a condition operand the body's condition is ignored
      FB_ASSIGN_OR_RETURN(keepGoing, conditionValue(ctx, outs[0], "the body's condition"));
    }
    for (size_t i = 0; i < l.numCarried; ++i)
      carried[i] = std::move(outs[1 + i]);
    for (size_t k = 0; k < l.numScanOutputs; ++k)
      scans[k].push_back(std::move(outs[1 + l.numCarried + k]));
  }
  for (size_t i = 0; i < l.numCarried; ++i)
    ctx.setOutput(i, std::move(carried[i]));
  for (size_t k = 0; k < l.numScanOutputs; ++k) {
    const TensorType& sliceType = body.outputs()[1 + l.numCarried + k]->type();
    FB_ASSIGN_OR_RETURN(Tensor stacked,
                        stackAlong(scans[k], 0, /*reverse=*/false, sliceType,
                                   ctx.node().describe() + ": scan output " + std::to_string(k)));
    ctx.setOutput(l.numCarried + k, std::move(stacked));
  }
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Scan

/// Scan's per-input and per-output axes and directions, normalized and checked.
struct ScanAxes {
  std::vector<int64_t> inAxes, inReverse, outAxes, outReverse;
};

Expected<ScanAxes> scanAxes(const Node& node, const ControlFlowLayout& l,
                            const std::vector<size_t>& inRanks,
                            const std::vector<size_t>& outRanks) {
  ScanAxes a;
  const AttrMap& at = node.attrs();
  FB_ASSIGN_OR_RETURN(a.inAxes, at.getInts("scan_input_axes",
                                           std::vector<int64_t>(l.numScanInputs, 0)));
  FB_ASSIGN_OR_RETURN(a.inReverse, at.getInts("scan_input_directions",
                                              std::vector<int64_t>(l.numScanInputs, 0)));
  FB_ASSIGN_OR_RETURN(a.outAxes, at.getInts("scan_output_axes",
                                            std::vector<int64_t>(l.numScanOutputs, 0)));
  FB_ASSIGN_OR_RETURN(a.outReverse, at.getInts("scan_output_directions",
                                               std::vector<int64_t>(l.numScanOutputs, 0)));
  if (a.inAxes.size() != l.numScanInputs || a.inReverse.size() != l.numScanInputs ||
      a.outAxes.size() != l.numScanOutputs || a.outReverse.size() != l.numScanOutputs)
    return makeError(node.describe(), ": scan axes and directions must list one entry per "
                                      "scanned input and per scan output");
  for (size_t j = 0; j < l.numScanInputs; ++j) {
    auto ax = normalizeAxis(a.inAxes[j], int64_t(inRanks[j]));
    if (!ax.ok())
      return ax.error().withContext(node.describe() + ": scan input " + std::to_string(j));
    a.inAxes[j] = *ax;
  }
  for (size_t k = 0; k < l.numScanOutputs; ++k) {
    auto ax = normalizeAxis(a.outAxes[k], int64_t(outRanks[k]) + 1);
    if (!ax.ok())
      return ax.error().withContext(node.describe() + ": scan output " + std::to_string(k));
    a.outAxes[k] = *ax;
  }
  return a;
}

Status inferScan(InferContext& ctx) {
  const Node& node = ctx.node();
  FB_ASSIGN_OR_RETURN(ControlFlowLayout l, controlFlowLayout(node));
  for (size_t i = 0; i < node.numInputs(); ++i)
    if (!ctx.hasInput(i))
      return ctx.error("operand ", i, " is absent");
  Graph& body = *node.bodyNamed("body");
  std::vector<size_t> inRanks;
  for (size_t j = 0; j < l.numScanInputs; ++j)
    inRanks.push_back(ctx.inputType(l.numCarried + j).rank());
  // Output ranks are known only after inference: output axes are normalized again below.
  const std::vector<size_t> anyOutRank(l.numScanOutputs, size_t(64));
  FB_ASSIGN_OR_RETURN(ScanAxes axes, scanAxes(node, l, inRanks, anyOutRank));
  std::vector<TensorType> types;
  for (size_t i = 0; i < l.numCarried; ++i)
    types.push_back(ctx.inputType(i));
  Dim length;
  for (size_t j = 0; j < l.numScanInputs; ++j) {
    TensorType t = ctx.inputType(l.numCarried + j);
    if (t.rank() == 0)
      return ctx.error("scan input ", j, " is a scalar; it needs an axis to scan");
    Dim d = t.dims[size_t(axes.inAxes[j])];
    if (j == 0)
      length = d;
    else if (dimsConflict(length, d))
      return ctx.error("scan input ", j, " has ", d.str(), " steps but scan input 0 has ",
                       length.str());
    else if (!(length == d))
      length = length.isStatic() ? length : d;
    t.dims.erase(t.dims.begin() + axes.inAxes[j]);
    types.push_back(std::move(t));
  }
  for (size_t c = 0; c < l.numCaptures; ++c)
    types.push_back(ctx.inputType(l.firstCapture + c));
  FB_TRY(inferLoopBody(node, body, types, 0, 0, l.numCarried));
  for (size_t i = 0; i < l.numCarried; ++i)
    ctx.setOutputType(i, types[i]);
  for (size_t k = 0; k < l.numScanOutputs; ++k) {
    TensorType t = body.outputs()[l.numCarried + k]->type();
    auto ax = normalizeAxis(axes.outAxes[k], int64_t(t.rank()) + 1);
    if (!ax.ok())
      return ax.error().withContext(node.describe() + ": scan output " + std::to_string(k));
    t.dims.insert(t.dims.begin() + *ax, length);
    ctx.setOutputType(l.numCarried + k, std::move(t));
  }
  return Status::success();
}

Status evalScan(EvalContext& ctx) {
  const Node& node = ctx.node();
  FB_ASSIGN_OR_RETURN(ControlFlowLayout l, controlFlowLayout(node));
  const Graph& body = *node.bodyNamed("body");
  std::vector<size_t> inRanks, outRanks;
  for (size_t j = 0; j < l.numScanInputs; ++j)
    inRanks.push_back(ctx.input(l.numCarried + j).rank());
  for (size_t k = 0; k < l.numScanOutputs; ++k)
    outRanks.push_back(body.outputs()[l.numCarried + k]->type().rank());
  FB_ASSIGN_OR_RETURN(ScanAxes axes, scanAxes(node, l, inRanks, outRanks));
  int64_t length = -1;
  for (size_t j = 0; j < l.numScanInputs; ++j) {
    const Tensor& x = ctx.input(l.numCarried + j);
    int64_t len = x.sizes()[size_t(axes.inAxes[j])];
    if (length >= 0 && len != length)
      return ctx.error("scan input ", j, " has ", len, " steps but scan input 0 has ", length);
    length = len;
  }
  std::vector<Tensor> carried;
  for (size_t i = 0; i < l.numCarried; ++i)
    carried.push_back(ctx.input(i));
  std::vector<std::vector<Tensor>> scans(l.numScanOutputs);
  for (int64_t it = 0; it < length; ++it) {
    std::vector<Tensor> ins = carried;
    for (size_t j = 0; j < l.numScanInputs; ++j) {
      const Tensor& x = ctx.input(l.numCarried + j);
      int64_t pos = axes.inReverse[j] ? length - 1 - it : it;
      ins.push_back(sliceAlong(x, size_t(axes.inAxes[j]), pos));
    }
    for (size_t c = 0; c < l.numCaptures; ++c)
      ins.push_back(ctx.input(l.firstCapture + c));
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> outs, runBody(ctx, body, "body", std::move(ins), it));
    for (size_t i = 0; i < l.numCarried; ++i)
      carried[i] = std::move(outs[i]);
    for (size_t k = 0; k < l.numScanOutputs; ++k)
      scans[k].push_back(std::move(outs[l.numCarried + k]));
  }
  for (size_t i = 0; i < l.numCarried; ++i)
    ctx.setOutput(i, std::move(carried[i]));
  for (size_t k = 0; k < l.numScanOutputs; ++k) {
    const TensorType& sliceType = body.outputs()[l.numCarried + k]->type();
    FB_ASSIGN_OR_RETURN(Tensor stacked,
                        stackAlong(scans[k], size_t(axes.outAxes[k]), axes.outReverse[k] != 0,
                                   sliceType, node.describe() + ": scan output " +
                                                  std::to_string(k)));
    ctx.setOutput(l.numCarried + k, std::move(stacked));
  }
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// Cost

double bodyFlops(const Graph& body) {
  double f = 0;
  for (const auto& n : body.nodes())
    f += nodeCost(*n).flops;
  return f;
}

/// If: the dearer branch. Loop and Scan: one body run per iteration, with an unknown iteration
/// count taken as 1 (as symbolic dims are), so the estimate is per iteration.
OpCost controlFlowCost(const CostContext& ctx) {
  const Node& node = ctx.node();
  OpCost c;
  if (node.op() == OpKind::If) {
    for (const NodeBody& b : node.bodies())
      c.flops = std::max(c.flops, bodyFlops(*b.graph));
    return c;
  }
  const Graph* body = node.bodyNamed("body");
  if (!body)
    return c;
  double trips = 1;
  auto l = controlFlowLayout(node);
  if (l.ok() && l->numScanOutputs > 0) {
    // A stacked output's leading (Loop) or scan-axis size is the iteration count when known.
    const TensorType& t = node.output(l->numCarried)->type();
    if (node.op() == OpKind::Loop && t.rank() > 0 && t.dims[0].isStatic())
      trips = double(t.dims[0].size());
  }
  if (node.op() == OpKind::Scan && l.ok() && l->numScanInputs > 0) {
    const TensorType& x = node.input(l->numCarried)->type();
    auto ax = node.attrs().getInts("scan_input_axes", {0});
    if (ax.ok() && !ax->empty()) {
      auto a = normalizeAxis((*ax)[0], int64_t(x.rank()));
      if (a.ok() && x.dims[size_t(*a)].isStatic())
        trips = double(x.dims[size_t(*a)].size());
    }
  }
  c.flops = trips * bodyFlops(*body);
  return c;
}

} // namespace

void registerControlFlowOps(OpRegistry& r) {
  r.set(OpKind::If, inferIf, evalIf, controlFlowCost);
  r.set(OpKind::Loop, inferLoop, evalLoop, controlFlowCost);
  r.set(OpKind::Scan, inferScan, evalScan, controlFlowCost);
}

} // namespace fb
