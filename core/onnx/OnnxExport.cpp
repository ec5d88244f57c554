// ONNX export: the core IR to a ModelProto at opset 17, fused groups inlined, control-flow
// bodies as graph attributes, ids kept in tags.
#include "core/onnx/OnnxExport.h"
#include "core/ControlFlow.h"
#include "core/onnx/OnnxNodeTag.h"
#include "core/onnx/OnnxTensorCodec.h"

#include <onnx/checker.h>

#include <climits>
#include <fstream>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace fb {

namespace {

using namespace onnxio;

constexpr int64_t kIrVersion = 8;
constexpr int64_t kOpset = 17;

void encodeType(const TensorType& type, onnx::TypeProto& proto) {
  auto* tt = proto.mutable_tensor_type();
  tt->set_elem_type(dtypeToOnnx(type.dtype));
  auto* shape = tt->mutable_shape();
  for (const Dim& d : type.dims) {
    auto* dim = shape->add_dim();
    if (d.isStatic())
      dim->set_dim_value(d.size());
    else if (d.isSymbol())
      dim->set_dim_param(d.symbolName());
    // An unknown dim is a Dimension with neither field set.
  }
}

void encodeAttr(const std::string& name, const AttrValue& value, onnx::AttributeProto& proto) {
  using A = onnx::AttributeProto;
  proto.set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          proto.set_type(A::INT);
          proto.set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          proto.set_type(A::FLOAT);
          proto.set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          proto.set_type(A::STRING);
          proto.set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          proto.set_type(A::INTS);
          for (int64_t x : v)
            proto.add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          proto.set_type(A::FLOATS);
          for (float x : v)
            proto.add_floats(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          proto.set_type(A::STRINGS);
          for (const auto& x : v)
            proto.add_strings(x);
        } else {
          static_assert(std::is_same_v<T, Tensor>, "unhandled attribute kind");
          proto.set_type(A::TENSOR);
          encodeTensor(v, "", *proto.mutable_t());
        }
      },
      value);
}

/// Names given out anywhere in the file so far. ONNX wants value names unique across a graph and
/// every body nested in it (a body may read any outer name), and ONNX Runtime wants unique node
/// names, so every graph's exporter draws from one set.
struct ExportNames {
  std::unordered_set<std::string> values;
  std::unordered_set<std::string> nodes;
};

/// Writes one graph (and the bodies of its fused groups, inlined) into a GraphProto; the bodies
/// of If, Loop and Scan become graph attributes written by exporters of their own.
class OnnxExporter {
public:
  OnnxExporter(onnx::GraphProto& proto, ExportNames& names)
      : m_proto(proto), m_used(names.values), m_nodeNames(names.nodes), m_shared(names) {}

  Status run(const Graph& graph) {
    m_proto.set_name(graph.name());
    // Top-level names are kept as they are; inlined body values get fresh names around them.
    for (Value* v : graph.inputs())
      claim(v, v->name());
    for (Value* v : graph.constants())
      claim(v, v->name());
    for (const auto& n : graph.nodes())
      for (Value* v : n->outputs())
        claim(v, v->name());
    for (Value* v : graph.outputs())
      m_outputNames.insert(v->name());

    for (Value* v : graph.inputs()) {
      auto* info = m_proto.add_input();
      info->set_name(v->name());
      encodeType(v->type(), *info->mutable_type());
    }
    for (Value* v : graph.constants())
      emitConstant(v);
    for (const auto& n : graph.nodes())
      FB_TRY(emitNode(*n));
    for (Value* v : graph.outputs()) {
      auto* info = m_proto.add_output();
      info->set_name(v->name());
      encodeType(v->type(), *info->mutable_type());
    }
    return Status::success();
  }

  /// Writes a control-flow body. Its first `numFormal` inputs become the GraphProto's inputs;
  /// the others are captures, which ONNX spells as reads of the outer names `captureNames`.
  Status runBody(const Graph& body, size_t numFormal, const std::vector<std::string>& captureNames) {
    m_proto.set_name(body.name());
    for (size_t i = 0; i < body.inputs().size(); ++i) {
      const Value* v = body.inputs()[i];
      if (i >= numFormal) {
        m_names[v] = captureNames[i - numFormal];
        continue;
      }
      m_names[v] = freshName(v->name());
      auto* info = m_proto.add_input();
      info->set_name(m_names[v]);
      encodeType(v->type(), *info->mutable_type());
    }
    for (const Value* c : body.constants()) {
      m_names[c] = freshName(c->name());
      emitConstant(c);
    }
    for (const auto& n : body.nodes())
      for (const Value* out : n->outputs())
        m_names[out] = freshName(out->name());
    // A body result must be a value the body computes, once: copy out anything else.
    std::vector<std::string> resultNames;
    std::unordered_set<const Value*> yielded;
    std::vector<std::pair<const Value*, std::string>> copies;
    for (const Value* v : body.outputs()) {
      if (v->producer() && yielded.insert(v).second) {
        resultNames.push_back(m_names.at(v));
      } else {
        resultNames.push_back(freshName(v->name() + "_out"));
        copies.emplace_back(v, resultNames.back());
      }
      m_outputNames.insert(resultNames.back());
    }
    for (const auto& n : body.nodes())
      FB_TRY(emitNode(*n));
    for (const auto& [from, to] : copies) {
      auto* proto = m_proto.add_node();
      proto->set_op_type("Identity");
      proto->set_name(freshNodeName(body.name() + "/copy_" + to));
      proto->add_input(m_names.at(from));
      proto->add_output(to);
    }
    for (size_t i = 0; i < body.outputs().size(); ++i) {
      auto* info = m_proto.add_output();
      info->set_name(resultNames[i]);
      encodeType(body.outputs()[i]->type(), *info->mutable_type());
    }
    return Status::success();
  }

private:
  /// Writes an If's, Loop's or Scan's bodies as graph attributes, and its operands without the
  /// captures (which the bodies read by their outer names).
  Status emitControlFlowNode(const Node& node, onnx::NodeProto& proto) {
    FB_ASSIGN_OR_RETURN(ControlFlowLayout l, controlFlowLayout(node));
    size_t numInputs = l.firstCapture;
    while (numInputs > 0 && !node.input(numInputs - 1))
      --numInputs;
    for (size_t i = 0; i < numInputs; ++i) {
      if (const Value* in = node.input(i)) {
        FB_ASSIGN_OR_RETURN(std::string name, nameOf(in, node));
        proto.add_input(name);
      } else {
        proto.add_input("");
      }
    }
    std::vector<std::string> captureNames;
    for (size_t i = 0; i < l.numCaptures; ++i) {
      FB_ASSIGN_OR_RETURN(std::string name, nameOf(node.input(l.firstCapture + i), node));
      captureNames.push_back(name);
    }
    for (const NodeBody& b : node.bodies()) {
      auto* attr = proto.add_attribute();
      attr->set_name(b.role);
      attr->set_type(onnx::AttributeProto::GRAPH);
      OnnxExporter sub(*attr->mutable_g(), m_shared);
      Status st = sub.runBody(*b.graph, l.bodyInputsBeforeCaptures, captureNames);
      if (!st.ok())
        return st.error().withContext("in body '" + b.role + "' of " + node.describe());
    }
    return Status::success();
  }

  void claim(const Value* v, const std::string& name) {
    m_names[v] = name;
    m_used.insert(name);
  }

  std::string freshName(const std::string& base) {
    std::string candidate = base;
    for (uint64_t i = 1; m_used.count(candidate); ++i)
      candidate = base + "_" + std::to_string(i);
    m_used.insert(candidate);
    return candidate;
  }

  /// A node name no earlier node of the file has (ONNX Runtime refuses duplicates; the bodies
  /// of fused groups are inlined next to other nodes). Empty names stay empty.
  std::string freshNodeName(const std::string& base) {
    if (base.empty())
      return base;
    std::string candidate = base;
    for (uint64_t i = 1; m_nodeNames.count(candidate); ++i)
      candidate = base + "_" + std::to_string(i);
    m_nodeNames.insert(candidate);
    return candidate;
  }

  Expected<std::string> nameOf(const Value* v, const Node& user) {
    auto it = m_names.find(v);
    if (it == m_names.end())
      return makeError(user.describe(), ": reads value '", v->name(),
                       "', which is not defined before it");
    return it->second;
  }

  void emitConstant(const Value* v) {
    encodeTensor(v->constantData(), m_names.at(v), *m_proto.add_initializer());
  }

  void addValueInfo(const std::string& name, const TensorType& type) {
    if (m_outputNames.count(name))
      return;
    auto* info = m_proto.add_value_info();
    info->set_name(name);
    encodeType(type, *info->mutable_type());
  }

  Status emitNode(const Node& node) {
    if (node.op() == OpKind::Fused)
      return inlineGroup(node);
    const OpInfo& info = node.info();
    if (!*info.onnxName)
      return makeUnsupported(node.describe(), ": op ", info.name, " has no ONNX equivalent");
    // Operand names first: converting an operand emits a node, which must come before this one.
    size_t numInputs = node.numInputs();
    while (numInputs > 0 && !node.input(numInputs - 1))
      --numInputs;
    std::vector<std::string> inputs;
    for (size_t i = 0; i < numInputs; ++i) {
      std::string name;
      if (const Value* in = node.input(i)) {
        FB_ASSIGN_OR_RETURN(name, nameOf(in, node));
        if (i == 0 && node.op() == OpKind::QuantizeLinear && in->type().dtype == DType::I32)
          name = castToFloat(name, node);
        if (i == 3 && (node.op() == OpKind::ConvInteger || node.op() == OpKind::MatMulInteger))
          name = uniformAsScalar(in, name);
      }
      inputs.push_back(std::move(name));
    }
    if (node.op() == OpKind::GroupNormalization)
      return emitGroupNormExpansion(node, inputs);
    AttrMap attrs = node.attrs();
    FB_TRY(writeOpset18FormsAt17(node, inputs, attrs));
    auto* proto = m_proto.add_node();
    proto->set_op_type(info.onnxName);
    proto->set_name(freshNodeName(node.name()));
    proto->set_doc_string(formatNodeTag(node));
    if (isControlFlowOp(node.op())) {
      FB_TRY(emitControlFlowNode(node, *proto)); // operands without captures, bodies
    } else {
      for (const std::string& name : inputs)
        proto->add_input(name);
    }
    for (Value* out : node.outputs()) {
      const std::string& name = m_names.at(out);
      proto->add_output(name);
      addValueInfo(name, out->type());
    }
    for (const auto& [name, value] : attrs)
      if (!(isControlFlowOp(node.op()) && name == kCapturesAttr))
        encodeAttr(name, value, *proto->add_attribute());
    return Status::success();
  }

  /// Nodes read from opset 18 keep two forms the IR shares with it but opset 17 lacks: a
  /// reduction's axes as input 1 (opset 17 has it only for ReduceSum) becomes the axes
  /// attribute, and Split's num_outputs becomes explicit split sizes.
  Status writeOpset18FormsAt17(const Node& node, std::vector<std::string>& inputs, AttrMap& attrs) {
    const OpKind op = node.op();
    const bool reduceWithAttrAxes = op == OpKind::ReduceMean || op == OpKind::ReduceMax ||
                                    op == OpKind::ReduceMin || op == OpKind::ReduceProd ||
                                    op == OpKind::ReduceL1 || op == OpKind::ReduceL2 ||
                                    op == OpKind::ReduceLogSumExp ||
                                    op == OpKind::ReduceSumSquare || op == OpKind::ReduceLogSum;
    if (reduceWithAttrAxes && inputs.size() > 1) {
      const Value* axes = node.input(1);
      if (!axes->isConstant())
        return makeUnsupported(node.describe(), ": axes computed at run time cannot be written "
                                                "at opset 17, where they are an attribute");
      attrs.set("axes", axes->constantData().toInt64Vector());
      inputs.resize(1);
    }
    if (op == OpKind::Split && attrs.has("num_outputs")) {
      attrs.erase("num_outputs");
      if (inputs.size() < 2) {
        FB_ASSIGN_OR_RETURN(int64_t rawAxis, attrs.getInt("axis", 0));
        std::vector<int64_t> sizes;
        for (const Value* out : node.outputs()) {
          const TensorType& t = out->type();
          const int64_t axis = rawAxis < 0 ? rawAxis + int64_t(t.rank()) : rawAxis;
          if (axis < 0 || axis >= int64_t(t.rank()) || !t.dims[size_t(axis)].isStatic())
            return makeUnsupported(node.describe(), ": a Split by num_outputs needs static "
                                                    "output sizes to be written at opset 17");
          sizes.push_back(t.dims[size_t(axis)].size());
        }
        inputs.resize(1);
        inputs.push_back(addInitializer(Tensor::fromVector<int64_t>({int64_t(sizes.size())}, sizes),
                                        (node.name().empty() ? "split" : node.name()) + "/split"));
      }
    }
    return Status::success();
  }

  /// Adds a node of `op` reading `inputs` and returns its one output's name (fresh, from `out`).
  std::string addPlainNode(const char* op, const std::string& nodeName,
                           const std::vector<std::string>& inputs, const std::string& out) {
    auto* proto = m_proto.add_node();
    proto->set_op_type(op);
    proto->set_name(freshNodeName(nodeName));
    for (const std::string& in : inputs)
      proto->add_input(in);
    std::string name = freshName(out);
    proto->add_output(name);
    return name;
  }

  /// Adds an initializer and returns its (fresh) name.
  std::string addInitializer(const Tensor& t, const std::string& base) {
    std::string name = freshName(base);
    encodeTensor(t, name, *m_proto.add_initializer());
    return name;
  }

  /// GroupNormalization is opset 18; the export is opset 17, so it is written as the function
  /// body ONNX defines for it: Reshape X to [N, G, -1], InstanceNormalization with unit scale,
  /// Reshape back to X's shape, then scale and shift per channel. A per-group (opset 18)
  /// parameter is repeated C/G times, which needs a static channel count.
  Status emitGroupNormExpansion(const Node& node, const std::vector<std::string>& in) {
    const TensorType& xt = node.input(0)->type();
    auto groups = node.attrs().getInt("num_groups", 1);
    auto eps = node.attrs().getFloat("epsilon", 1e-5f);
    if (!groups.ok() || !eps.ok() || *groups < 1 || xt.rank() < 2 || in.size() < 3)
      return makeError(node.describe(), ": malformed GroupNormalization");
    const int64_t g = *groups;
    const std::string base =
        node.name().empty() ? "groupnorm" + std::to_string(node.id()) : node.name();
    const std::string& y = m_names.at(node.output(0));
    // Each parameter as a [C, 1, ..., 1] tensor that broadcasts against X.
    std::vector<int64_t> paramShape(xt.rank() - 1, 1);
    paramShape[0] = -1;
    std::string paramShapeName =
        addInitializer(Tensor::fromVector<int64_t>({int64_t(paramShape.size())}, paramShape),
                       base + "/param_shape");
    auto perChannel = [&](size_t i) -> Expected<std::string> {
      const Dim& p = node.input(i)->type().dims.at(0);
      const Dim& c = xt.dims[1];
      if (!p.isStatic())
        return makeUnsupported(node.describe(),
                               ": exporting GroupNormalization at opset 17 "
                               "needs the size of input ",
                               i, " to be known");
      std::string name = in[i];
      if (p.size() == g && !(c.isStatic() && c.size() == g)) {
        if (!c.isStatic())
          return makeUnsupported(node.describe(),
                                 ": exporting a per-group GroupNormalization "
                                 "parameter at opset 17 needs a static channel count");
        std::string gShape = addInitializer(Tensor::fromVector<int64_t>({2}, {g, 1}), base + "/g1");
        std::string rep =
            addInitializer(Tensor::fromVector<int64_t>({2}, {g, c.size() / g}), base + "/repeat");
        name = addPlainNode("Reshape", base + "/param_g1", {name, gShape}, base + "/param_g1");
        name = addPlainNode("Expand", base + "/param_repeat", {name, rep}, base + "/param_repeat");
      }
      return addPlainNode("Reshape", base + "/param_c", {name, paramShapeName}, base + "/param_c");
    };
    FB_ASSIGN_OR_RETURN(std::string scale, perChannel(1));
    FB_ASSIGN_OR_RETURN(std::string bias, perChannel(2));
    std::string shape = addPlainNode("Shape", base + "/shape", {in[0]}, base + "/shape");
    std::string groupShape =
        addInitializer(Tensor::fromVector<int64_t>({3}, {0, g, -1}), base + "/group_shape");
    std::string grouped =
        addPlainNode("Reshape", base + "/grouped", {in[0], groupShape}, base + "/grouped");
    FB_ASSIGN_OR_RETURN(Tensor ones, Tensor::create(xt.dtype, {g}));
    FB_ASSIGN_OR_RETURN(Tensor zeros, Tensor::create(xt.dtype, {g}));
    for (int64_t k = 0; k < g; ++k)
      ones.setFromDouble(k, 1.0);
    std::string onesName = addInitializer(ones, base + "/ones");
    std::string zerosName = addInitializer(zeros, base + "/zeros");
    std::string normed = addPlainNode("InstanceNormalization", base + "/normalize",
                                      {grouped, onesName, zerosName}, base + "/normalized");
    auto* epsAttr = m_proto.mutable_node(m_proto.node_size() - 1)->add_attribute();
    epsAttr->set_name("epsilon");
    epsAttr->set_type(onnx::AttributeProto::FLOAT);
    epsAttr->set_f(*eps);
    std::string back =
        addPlainNode("Reshape", base + "/ungrouped", {normed, shape}, base + "/ungrouped");
    std::string scaled = addPlainNode("Mul", base + "/scale", {back, scale}, base + "/scaled");
    auto* add = m_proto.add_node();
    add->set_op_type("Add");
    add->set_name(freshNodeName(base));
    add->set_doc_string(formatNodeTag(node));
    add->add_input(scaled);
    add->add_input(bias);
    add->add_output(y);
    addValueInfo(y, node.output(0)->type());
    return Status::success();
  }

  /// Requantizing an int32 accumulator is QuantizeLinear with an int32 input: valid ONNX, but
  /// ONNX Runtime implements QuantizeLinear for float inputs only. The export converts the
  /// accumulator first (what the int32 form computes anyway: float(x) / scale, rounded) and
  /// returns the converted value's name.
  std::string castToFloat(const std::string& input, const Node& node) {
    auto* cast = m_proto.add_node();
    cast->set_op_type("Cast");
    cast->set_name(freshNodeName(node.name() + "/to_float"));
    cast->add_input(input);
    std::string out = freshName(input + ".f32");
    cast->add_output(out);
    auto* to = cast->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::FLOAT);
    return out;
  }

  /// ONNX Runtime's ConvInteger takes per-tensor weight zero points only. Symmetric per-channel
  /// quantization writes a vector of zeros; when every entry is the same, the export writes that
  /// one value as a scalar (the same computation) and returns its name.
  std::string uniformAsScalar(const Value* zeroPoint, const std::string& name) {
    if (!zeroPoint->isConstant())
      return name;
    const Tensor& t = zeroPoint->constantData();
    if (t.numElements() <= 1)
      return name;
    for (int64_t k = 1; k < t.numElements(); ++k)
      if (t.getAsInt64(k) != t.getAsInt64(0))
        return name;
    auto scalar = Tensor::create(t.dtype(), {});
    if (!scalar)
      return name;
    std::memcpy(scalar->mutableRawData(), t.rawData(), dtypeSize(t.dtype()));
    std::string out = freshName(name + ".scalar");
    encodeTensor(*scalar, out, *m_proto.add_initializer());
    return out;
  }

  /// Emits a fused group's body in place: body inputs read the group's operands, body results are
  /// written under the group's output names.
  Status inlineGroup(const Node& group) {
    const Graph* body = group.body();
    if (!body)
      return makeError(group.describe(), ": fused group has no body");
    if (body->inputs().size() != group.numInputs())
      return makeError(group.describe(), ": body takes ", body->inputs().size(),
                       " inputs, group has ", group.numInputs());
    if (body->outputs().size() != group.numOutputs())
      return makeError(group.describe(), ": body yields ", body->outputs().size(),
                       " outputs, group has ", group.numOutputs());
    const std::string prefix =
        (group.name().empty() ? "fused" + std::to_string(group.id()) : group.name()) + "/";
    for (size_t i = 0; i < group.numInputs(); ++i) {
      const Value* operand = group.input(i);
      if (!operand)
        return makeError(group.describe(), ": operand ", i, " is absent");
      FB_ASSIGN_OR_RETURN(std::string name, nameOf(operand, group));
      m_names[body->inputs()[i]] = name;
    }
    for (const Value* c : body->constants()) {
      m_names[c] = freshName(prefix + c->name());
      emitConstant(c);
    }
    // A result produced by a body node takes the group output's name; any other result (a body
    // input, a constant, a value yielded twice) is copied out by an Identity after the body.
    std::vector<std::pair<const Value*, const Value*>> copies; // body value → group output
    for (size_t i = 0; i < body->outputs().size(); ++i) {
      const Value* result = body->outputs()[i];
      if (result->producer() && !m_names.count(result))
        m_names[result] = m_names.at(group.output(i));
      else
        copies.emplace_back(result, group.output(i));
    }
    for (const auto& n : body->nodes())
      for (Value* out : n->outputs())
        if (!m_names.count(out))
          m_names[out] = freshName(prefix + out->name());
    for (const auto& n : body->nodes())
      FB_TRY(emitNode(*n));
    for (const auto& [from, to] : copies) {
      auto* proto = m_proto.add_node();
      proto->set_op_type("Identity");
      proto->set_name(freshNodeName(prefix + "copy_" + to->name()));
      FB_ASSIGN_OR_RETURN(std::string fromName, nameOf(from, group));
      proto->add_input(fromName);
      proto->add_output(m_names.at(to));
      addValueInfo(m_names.at(to), to->type());
    }
    return Status::success();
  }

  onnx::GraphProto& m_proto;
  std::unordered_map<const Value*, std::string> m_names; // value → its name in the file
  std::unordered_set<std::string>& m_used;      // every value name given out so far (shared)
  std::unordered_set<std::string> m_outputNames; // this graph's outputs
  std::unordered_set<std::string>& m_nodeNames; // every node name given out so far (shared)
  ExportNames& m_shared;
};

} // namespace

Expected<std::string> exportOnnxBytes(const Graph& graph) {
  try {
    onnx::ModelProto model;
    model.set_ir_version(kIrVersion);
    model.set_producer_name("fusebox");
    model.set_producer_version("0.1");
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOpset);
    ExportNames names;
    OnnxExporter exporter(*model.mutable_graph(), names);
    FB_TRY(exporter.run(graph));
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception& e) {
      return makeError("exported model fails the ONNX checker: ", e.what());
    }
    if (model.ByteSizeLong() > size_t(INT_MAX))
      return makeUnsupported("the exported model is larger than 2 GB, the protobuf limit "
                             "(external data export is not implemented)");
    std::string bytes;
    if (!model.SerializeToString(&bytes))
      return makeError("serializing the ONNX model failed");
    return bytes;
  } catch (const std::exception& e) {
    return makeError("ONNX export failed: ", e.what());
  }
}

Status exportOnnxFile(const Graph& graph, const std::string& path) {
  auto bytes = exportOnnxBytes(graph);
  if (!bytes.ok())
    return bytes.error().withContext(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return makeError(path, ": cannot open for writing");
  out.write(bytes->data(), std::streamsize(bytes->size()));
  out.close();
  if (!out)
    return makeError(path, ": write failed");
  return Status::success();
}

} // namespace fb
