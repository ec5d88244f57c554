// Control-flow node layout: operand, body input and result positions of If, Loop and Scan.
#include "core/ControlFlow.h"

namespace fb {

bool isControlFlowOp(OpKind op) {
  return op == OpKind::If || op == OpKind::Loop || op == OpKind::Scan;
}

std::vector<const char*> controlFlowBodyRoles(OpKind op) {
  if (op == OpKind::If)
    return {"then_branch", "else_branch"};
  if (op == OpKind::Loop || op == OpKind::Scan)
    return {"body"};
  return {};
}

namespace {

Expected<size_t> captureCount(const Node& node) {
  FB_ASSIGN_OR_RETURN(int64_t c, node.attrs().getInt(kCapturesAttr, 0));
  if (c < 0 || size_t(c) > node.numInputs())
    return makeError(node.describe(), ": attribute '", kCapturesAttr, "' is ", c, " but the node has ",
                     node.numInputs(), " operands");
  return size_t(c);
}

/// Checks that every body the op needs exists, takes `inputs` and yields `outputs` values.
Status checkBodies(const Node& node, size_t inputs, size_t outputs) {
  std::vector<const char*> roles = controlFlowBodyRoles(node.op());
  if (node.bodies().size() != roles.size())
    return makeError(node.describe(), ": has ", node.bodies().size(), " bodies; ",
                     opName(node.op()), " needs ", roles.size());
  for (const char* role : roles) {
    const Graph* body = node.bodyNamed(role);
    if (!body)
      return makeError(node.describe(), ": has no body '", role, "'");
    if (body->inputs().size() != inputs)
      return makeError(node.describe(), ": body '", role, "' takes ", body->inputs().size(),
                       " inputs; the node's operands need ", inputs);
    if (body->outputs().size() != outputs)
      return makeError(node.describe(), ": body '", role, "' yields ", body->outputs().size(),
                       " outputs; the node's results need ", outputs);
  }
  return Status::success();
}

} // namespace

Expected<ControlFlowLayout> controlFlowLayout(const Node& node) {
  ControlFlowLayout l;
  switch (node.op()) {
  case OpKind::If: {
    if (node.attrs().has(kCapturesAttr))
      return makeError(node.describe(), ": If takes every operand after the condition as a "
                                        "capture and has no '", kCapturesAttr, "' attribute");
    l.firstCapture = 1;
    l.numCaptures = node.numInputs() - 1;
    FB_TRY(checkBodies(node, l.numCaptures, node.numOutputs()));
    return l;
  }
  case OpKind::Loop: {
    FB_ASSIGN_OR_RETURN(l.numCaptures, captureCount(node));
    if (node.numInputs() < 2 + l.numCaptures)
      return makeError(node.describe(), ": Loop needs the trip-count and condition slots before its ",
                       l.numCaptures, " captures, but has ", node.numInputs(), " operands");
    l.firstCarried = 2;
    l.numCarried = node.numInputs() - 2 - l.numCaptures;
    l.firstCapture = 2 + l.numCarried;
    if (node.numOutputs() < l.numCarried)
      return makeError(node.describe(), ": Loop carries ", l.numCarried, " values but has only ",
                       node.numOutputs(), " results");
    l.numScanOutputs = node.numOutputs() - l.numCarried;
    l.bodyInputsBeforeCaptures = 2 + l.numCarried;
    FB_TRY(checkBodies(node, 2 + l.numCarried + l.numCaptures, 1 + node.numOutputs()));
    return l;
  }
  case OpKind::Scan: {
    FB_ASSIGN_OR_RETURN(l.numCaptures, captureCount(node));
    FB_ASSIGN_OR_RETURN(int64_t m, node.attrs().getInt("num_scan_inputs", -1));
    if (m < 1 || size_t(m) + l.numCaptures > node.numInputs())
      return makeError(node.describe(), ": num_scan_inputs is ", m, " but the node has ",
                       node.numInputs(), " operands (", l.numCaptures, " of them captures)");
    l.numScanInputs = size_t(m);
    l.numCarried = node.numInputs() - l.numScanInputs - l.numCaptures;
    l.firstCapture = l.numCarried + l.numScanInputs;
    if (node.numOutputs() < l.numCarried)
      return makeError(node.describe(), ": Scan carries ", l.numCarried, " values but has only ",
                       node.numOutputs(), " results");
    l.numScanOutputs = node.numOutputs() - l.numCarried;
    l.bodyInputsBeforeCaptures = l.numCarried + l.numScanInputs;
    FB_TRY(checkBodies(node, node.numInputs(), node.numOutputs()));
    return l;
  }
  default: break;
  }
  return makeError(node.describe(), ": not a control-flow op");
}

std::optional<TensorType> joinTypes(const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype || a.rank() != b.rank())
    return std::nullopt;
  TensorType t = a;
  for (size_t i = 0; i < t.rank(); ++i)
    if (!(a.dims[i] == b.dims[i]))
      t.dims[i] = Dim::unknown();
  if (!(a.quant == b.quant))
    t.quant.reset();
  return t;
}

} // namespace fb
