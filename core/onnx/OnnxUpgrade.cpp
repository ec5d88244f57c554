// Opset upgrade of imported nodes to opset-17 semantics: legacy attributes become constant inputs,
// legacy Softmax/LogSoftmax/Hardmax (2-D coercion) becomes Flatten → Softmax → Reshape, and the
// deprecated Scatter and Upsample are read as ScatterElements and Resize.
#include "core/onnx/OnnxUpgrade.h"

#include <algorithm>

namespace fb::onnxio {

std::string NameAllocator::fresh(const std::string& base) {
  std::string stem = base.empty() ? "t" : base;
  std::string candidate = stem;
  while (m_fileNames.count(candidate) || m_graph.findValue(candidate))
    candidate = stem + "_" + std::to_string(++m_counter);
  return candidate;
}

namespace {

/// The name new values derived from `node` are based on.
std::string baseName(const Node& node) {
  return node.numOutputs() ? node.output(0)->name() : "n" + std::to_string(node.id());
}

/// Moves integer-list attribute `attr` into a new 1-D i64 constant appended as input `index`.
Status moveIntsToInput(Node& node, const std::string& attr, size_t index, Graph& graph,
                       NameAllocator& names, const std::string& where) {
  if (!node.attrs().has(attr))
    return Status::success();
  auto ints = node.attrs().getInts(attr, {});
  if (!ints.ok())
    return ints.error().withContext(where);
  if (node.numInputs() > index && node.input(index))
    return makeError(where, ": has both the legacy '", attr, "' attribute and input ", index);
  const std::vector<int64_t>& v = *ints;
  Value* c = graph.addConstant(names.fresh(baseName(node) + "_" + attr),
                               Tensor::fromVector<int64_t>({int64_t(v.size())}, v));
  node.attrs().erase(attr);
  while (node.numInputs() < index)
    node.addInput(nullptr);
  if (node.numInputs() == index)
    node.addInput(c);
  else
    node.setInput(index, c);
  return Status::success();
}

} // namespace

Status upgradeLegacyAttributes(Node& node, int64_t opset, Graph& graph, NameAllocator& names,
                               const std::string& where) {
  switch (node.op()) {
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::ReduceSum:
    if (opset < 13)
      return moveIntsToInput(node, "axes", 1, graph, names, where);
    return Status::success();
  case OpKind::Split:
    if (opset < 13)
      return moveIntsToInput(node, "split", 1, graph, names, where);
    return Status::success();
  case OpKind::Dropout: {
    if (opset >= 12 || !node.attrs().has("ratio"))
      return Status::success();
    auto ratio = node.attrs().getFloat("ratio", 0.5f);
    if (!ratio.ok())
      return ratio.error().withContext(where);
    if (node.numInputs() > 1)
      return makeError(where, ": has both the legacy 'ratio' attribute and a ratio input");
    Value* c = graph.addConstant(names.fresh(baseName(node) + "_ratio"), Tensor::scalar(*ratio));
    node.attrs().erase("ratio");
    node.addInput(c);
    return Status::success();
  }
  default: return Status::success();
  }
}

Status readOpset18Node(Node& node, int64_t opset, const std::string& where) {
  if (node.op() == OpKind::GroupNormalization && opset < 18)
    return makeError(where, ": GroupNormalization exists from opset 18; the model imports opset ",
                     opset);
  if (opset < 18)
    return Status::success();
  if (node.op() == OpKind::Pad && node.numInputs() > 3) {
    if (node.input(3))
      return makeUnsupported(where, ": Pad's axes input (opset 18) is not supported; give pads "
                                    "for every axis");
    node.truncateInputs(3);
  }
  if (node.op() != OpKind::Resize)
    return Status::success();
  auto antialias = node.attrs().getInt("antialias", 0);
  if (!antialias.ok())
    return antialias.error().withContext(where);
  if (*antialias != 0)
    return makeUnsupported(where, ": Resize with antialias=1 (opset 18) is not supported");
  auto policy = node.attrs().getString("keep_aspect_ratio_policy", "stretch");
  if (!policy.ok())
    return policy.error().withContext(where);
  if (*policy != "stretch")
    return makeUnsupported(where, ": Resize with keep_aspect_ratio_policy '", *policy,
                           "' (opset 18) is not supported");
  if (node.attrs().has("axes")) {
    auto axes = node.attrs().getInts("axes", {});
    if (!axes.ok())
      return axes.error().withContext(where);
    // Axes 0..k-1 in order mean every axis when the scales or sizes have one entry per axis,
    // which shape inference checks.
    bool everyAxis = true;
    for (size_t i = 0; everyAxis && i < axes->size(); ++i)
      everyAxis = (*axes)[i] == int64_t(i);
    if (!everyAxis)
      return makeUnsupported(where, ": Resize with an axes attribute (opset 18) that is not "
                                    "every axis in order is not supported");
  }
  node.attrs().erase("antialias");
  node.attrs().erase("keep_aspect_ratio_policy");
  node.attrs().erase("axes");
  return Status::success();
}

std::optional<OpKind> legacyOpKind(const std::string& onnxType) {
  if (onnxType == "Scatter")
    return OpKind::ScatterElements;
  if (onnxType == "Upsample")
    return OpKind::Resize;
  return std::nullopt;
}

Status upgradeLegacyOp(Node& node, const std::string& onnxType, Graph& graph, NameAllocator& names,
                       const std::string& where) {
  if (onnxType != "Upsample")
    return Status::success();
  Value* scales = node.numInputs() > 1 ? node.input(1) : nullptr;
  if (node.attrs().has("scales")) {
    if (scales)
      return makeError(where, ": has both the legacy 'scales' attribute and a scales input");
    auto fs = node.attrs().getFloats("scales", {});
    if (!fs.ok())
      return fs.error().withContext(where);
    scales = graph.addConstant(names.fresh(baseName(node) + "_scales"),
                               Tensor::fromVector<float>({int64_t(fs->size())}, *fs));
    node.attrs().erase("scales");
  }
  if (!scales)
    return makeError(where, ": Upsample needs scales (an input, or an attribute before opset 9)");
  while (node.numInputs() < 3)
    node.addInput(nullptr);
  node.setInput(1, nullptr);
  node.setInput(2, scales);
  node.attrs().set("coordinate_transformation_mode", std::string("asymmetric"));
  node.attrs().set("nearest_mode", std::string("floor"));
  return Status::success();
}

bool needsSoftmaxUpgrade(const Node& node, int64_t opset) {
  return opset < 13 && (node.op() == OpKind::Softmax || node.op() == OpKind::LogSoftmax ||
                        node.op() == OpKind::Hardmax);
}

Status upgradeLegacySoftmax(Node& node, Graph& graph, NameAllocator& names,
                            std::vector<Node*>& insertedBefore, std::vector<Node*>& insertedAfter) {
  Value* x = node.input(0);
  if (!x)
    return makeError(node.describe(), ": input 0 is missing");
  const TensorType inType = x->type();
  const int64_t rank = int64_t(inType.rank());
  auto axisAttr = node.attrs().getInt("axis", 1); // the default before opset 13
  if (!axisAttr.ok())
    return axisAttr.error().withContext(node.describe());
  int64_t axis = *axisAttr;
  if (rank == 0)
    return makeError(node.describe(), ": input is a scalar; needs rank >= 1");
  if (axis < -rank || axis >= rank)
    return makeError(node.describe(), ": axis ", axis, " is out of range for rank ", rank);
  if (axis < 0)
    axis += rank;
  if (axis == rank - 1) {
    // Coercing to 2-D at the last axis is a softmax over the last axis: the opset-17 op.
    node.attrs().set("axis", int64_t(-1));
    return Status::success();
  }

  const std::string outName = node.output(0)->name();
  Node* flat = graph.insertNodeBefore(&node, OpKind::Flatten, {x}, 1,
                                      {names.fresh(outName + "_flat")});
  flat->attrs().set("axis", axis);
  flat->setProvenance({node.id()});
  insertedBefore.push_back(flat);
  Value* shape = nullptr;
  if (inType.isStatic()) {
    shape = graph.addConstant(names.fresh(outName + "_shape"),
                              Tensor::fromVector<int64_t>({rank}, inType.staticSizes()));
  } else {
    Node* shapeNode = graph.insertNodeBefore(&node, OpKind::Shape, {x}, 1,
                                             {names.fresh(outName + "_shape")});
    shapeNode->setProvenance({node.id()});
    insertedBefore.push_back(shapeNode);
    shape = shapeNode->output(0);
  }
  node.setInput(0, flat->output(0));
  node.attrs().set("axis", int64_t(1));

  // The Reshape goes right after the node so the execution order stays valid.
  const auto& nodes = graph.nodes();
  auto it = std::find_if(nodes.begin(), nodes.end(),
                         [&](const std::unique_ptr<Node>& p) { return p.get() == &node; });
  assert(it != nodes.end() && "softmax node not in its graph");
  ++it;
  const std::string tmpName = names.fresh(outName + "_reshaped");
  Node* reshape = it == nodes.end()
                      ? graph.addNode(OpKind::Reshape, {nullptr, shape}, 1, {tmpName})
                      : graph.insertNodeBefore(it->get(), OpKind::Reshape, {nullptr, shape}, 1,
                                               {tmpName});
  reshape->setProvenance({node.id()});
  Value* out2d = node.output(0);
  out2d->replaceAllUsesWith(reshape->output(0));
  reshape->setInput(0, out2d);
  // The original name now belongs to the full-rank result, so declared value_info still applies.
  graph.renameValue(out2d, names.fresh(outName + "_2d"));
  graph.renameValue(reshape->output(0), outName);
  insertedAfter.push_back(reshape);
  return Status::success();
}

} // namespace fb::onnxio
