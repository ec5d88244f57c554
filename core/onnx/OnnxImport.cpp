// ONNX import: parses a ModelProto, validates it, and builds the core IR at opset-17 semantics.
#include "core/onnx/OnnxImport.h"
#include "core/ControlFlow.h"
#include "core/FileRead.h"
#include "core/ShapeInference.h"
#include "core/onnx/OnnxNodeTag.h"
#include "core/onnx/OnnxTensorCodec.h"
#include "core/onnx/OnnxUpgrade.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace fb {

namespace {

using namespace onnxio;

constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kMaxIrVersion = 8; // what ONNX 1.12 writes
constexpr int64_t kMinOpset = 11;
/// Models older than kMinOpset are read when each op they use has the same schema at their opset
/// as at opset 17 (nothing to upgrade); see checkSchemaUnchanged.
constexpr int64_t kOldestOpset = 1;
Status checkSchemaUnchanged(const std::string& opType, int64_t opset, const std::string& where);
/// The newest opset read (opset-18 nodes through readOpset18Node); the IR keeps opset-17
/// semantics, so an imported graph says 17.
constexpr int64_t kMaxOpset = 18;
constexpr int64_t kIrOpset = 17;

bool isDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

/// Converts one AttributeProto to an AttrValue. `where` names the node and attribute.
Expected<AttrValue> attrFromProto(const onnx::AttributeProto& a, const std::string& where,
                                  const ExternalDataPolicy& external) {
  using A = onnx::AttributeProto;
  if (!a.ref_attr_name().empty())
    return makeUnsupported(where, ": references a function attribute ('", a.ref_attr_name(),
                           "')");
  A::AttributeType type = a.type();
  if (type == A::UNDEFINED) {
    // IR version 1 files may leave the type out; the populated field says what it is.
    if (a.has_f()) type = A::FLOAT;
    else if (a.has_i()) type = A::INT;
    else if (a.has_s()) type = A::STRING;
    else if (a.has_t()) type = A::TENSOR;
    else if (a.has_g()) type = A::GRAPH;
    else if (a.floats_size()) type = A::FLOATS;
    else if (a.ints_size()) type = A::INTS;
    else if (a.strings_size()) type = A::STRINGS;
    else return makeError(where, ": has no type and no value");
  }
  switch (type) {
  case A::INT: return AttrValue(int64_t(a.i()));
  case A::FLOAT: return AttrValue(a.f());
  case A::STRING: return AttrValue(a.s());
  case A::INTS: return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  case A::FLOATS: return AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
  case A::STRINGS:
    return AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
  case A::TENSOR: {
    auto t = decodeTensor(a.t(), where, external);
    if (!t.ok())
      return t.error();
    return AttrValue(std::move(t).value());
  }
  default:
    return makeUnsupported(where, ": attribute type ",
                           A::AttributeType_IsValid(type) ? A::AttributeType_Name(type)
                                                          : std::to_string(int(type)),
                           " is not supported");
  }
}

/// Sets `out` to the declared tensor type of a ValueInfoProto, or nullopt when it declares none.
/// `requireShape` refuses a missing shape (graph inputs need a rank). (An out-parameter rather
/// than Expected<optional<...>>, which trips GCC 12's -Wmaybe-uninitialized.)
Status typeFromProto(const onnx::ValueInfoProto& info, const std::string& what, bool requireShape,
                     std::optional<TensorType>& out) {
  out.reset();
  if (!info.has_type()) {
    if (requireShape)
      return makeError(what, " has no type");
    return Status::success();
  }
  const onnx::TypeProto& type = info.type();
  if (type.value_case() != onnx::TypeProto::kTensorType)
    return makeUnsupported(what, " is not a tensor (sequence, map, optional and sparse values "
                                 "are not supported)");
  const auto& tt = type.tensor_type();
  TensorType result;
  if (tt.elem_type() == onnx::TensorProto::UNDEFINED) {
    if (requireShape)
      return makeError(what, " has no element type");
  } else {
    std::optional<DType> dtype = dtypeFromOnnx(tt.elem_type());
    if (!dtype)
      return makeUnsupported(what, " has element type ", onnxElemTypeName(tt.elem_type()),
                             ", which Fusebox does not support");
    result.dtype = *dtype;
  }
  if (!tt.has_shape()) {
    if (requireShape)
      return makeUnsupported(what, " has no shape (values of unknown rank are not supported)");
    return Status::success();
  }
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return makeError(what, " has negative dimension ", d.dim_value(), " at index ", i);
      result.dims.emplace_back(int64_t(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      result.dims.push_back(Dim::symbol(d.dim_param()));
    } else {
      result.dims.push_back(Dim::unknown());
    }
  }
  if (!hasCountableSize(result))
    return makeError(what, " is declared ", result.str(),
                     ", a size that overflows 64 bits");
  out = std::move(result);
  return Status::success();
}

/// True when a declared type does not contradict an inferred one: same dtype (when declared),
/// same rank (when a shape is declared), equal sizes where both are numbers.
bool compatible(const onnx::ValueInfoProto& info, const TensorType& declared,
                const TensorType& inferred) {
  if (info.type().tensor_type().elem_type() != onnx::TensorProto::UNDEFINED &&
      declared.dtype != inferred.dtype)
    return false;
  if (declared.rank() != inferred.rank())
    return false;
  for (size_t i = 0; i < declared.rank(); ++i)
    if (declared.dims[i].isStatic() && inferred.dims[i].isStatic() &&
        declared.dims[i].size() != inferred.dims[i].size())
      return false;
  return true;
}

/// What every graph of one model shares while it is imported: the opset, external data, every
/// name the file mentions (in any graph), and the exporter tags whose ids are kept.
struct ModelImportState {
  int64_t opset = 17;
  ExternalDataPolicy external;
  std::unordered_set<std::string> fileNames;
  std::unordered_set<NodeId> taggedIds;
};

/// The values that the bodies of one control-flow node read from enclosing scopes, in order of
/// first use: they become the node's trailing operands and every body's trailing inputs.
struct CaptureSet {
  std::vector<Value*> outer; // values of the node's graph
};

/// Builds one Graph (a model's graph or a body) from a GraphProto. Errors are returned without
/// the file name; the caller adds it as context.
class GraphImporter {
public:
  /// `parent` is the importer of the enclosing graph (nullptr for the model's graph) and
  /// `captures` the capture set of the node that owns this body.
  GraphImporter(const onnx::GraphProto& proto, Graph& graph, ModelImportState& model,
                GraphImporter* parent = nullptr, CaptureSet* captures = nullptr)
      : m_graphProto(proto), m_graph(graph), m_model(model), m_opset(model.opset),
        m_names(model.fileNames, graph), m_parent(parent), m_captures(captures) {}

  Status importModelGraph() {
    FB_TRY(importInitializers());
    FB_TRY(importInputs());
    FB_TRY(createAndConnectNodes());
    FB_TRY(inferAll());
    FB_TRY(importOutputs());
    FB_TRY(checkValueInfo());
    m_graph.setOpset(kIrOpset);
    return Status::success();
  }

  /// Imports a body whose formal inputs (before any captures) must number `formalTypes.size()`;
  /// an input the file gives no type takes the one from `formalTypes` (shape inference sets
  /// them all from the node's operands anyway).
  Status importBody(const std::vector<TensorType>& formalTypes, const std::string& where) {
    if (m_graphProto.input_size() != int(formalTypes.size()))
      return makeError(where, " has ", m_graphProto.input_size(), " inputs; it needs ",
                       formalTypes.size());
    FB_TRY(importInitializers());
    for (int i = 0; i < m_graphProto.input_size(); ++i) {
      const auto& info = m_graphProto.input(i);
      const std::string what = where + " input '" + info.name() + "'";
      FB_TRY(checkNewName(info.name(), what));
      std::optional<TensorType> type;
      FB_TRY(typeFromProto(info, what, /*requireShape=*/false, type));
      m_graph.addInput(info.name(), type && type->dtype == formalTypes[size_t(i)].dtype
                                         ? *type
                                         : formalTypes[size_t(i)]);
    }
    m_numFormalInputs = m_graph.inputs().size();
    FB_TRY(createAndConnectNodes());
    if (m_graphProto.output_size() == 0)
      return makeError(where, " has no outputs");
    for (const auto& info : m_graphProto.output()) {
      FB_ASSIGN_OR_RETURN(Value * v, resolve(info.name(), where + " output"));
      m_graph.addOutput(v);
    }
    for (const auto& n : m_graph.nodes())
      if (needsSoftmaxUpgrade(*n, m_opset))
        return makeUnsupported(n->describe(), " in ", where, ": a Softmax of opset ", m_opset,
                               " inside a body (upgrade the model to opset 13)");
    return Status::success();
  }

  /// Gives this body an input for every value of the capture set (unused ones included) and
  /// orders the capture inputs as the set does, after the formal inputs.
  void finishCaptures() {
    for (Value* outer : m_captures->outer)
      captureInput(outer);
    std::vector<Value*> order(m_graph.inputs().begin(),
                              m_graph.inputs().begin() + std::ptrdiff_t(m_numFormalInputs));
    for (Value* outer : m_captures->outer)
      order.push_back(m_captureInputs.at(outer));
    m_graph.setInputOrder(std::move(order));
  }

  /// The value `name` means in this graph: its own value, or a capture of an enclosing scope's
  /// value (made on first use). `what` names the user in errors.
  Expected<Value*> resolve(const std::string& name, const std::string& what) {
    if (Value* v = m_graph.findValue(name))
      return v;
    if (auto it = m_captureByName.find(name); it != m_captureByName.end())
      return it->second;
    if (!m_parent)
      return makeError(what, " '", name, "' is not defined (missing initializer?)");
    FB_ASSIGN_OR_RETURN(Value * outer, m_parent->resolve(name, what));
    auto& list = m_captures->outer;
    if (std::find(list.begin(), list.end(), outer) == list.end())
      list.push_back(outer);
    Value* in = captureInput(outer);
    m_captureByName[name] = in;
    return in;
  }

private:
  /// This body's input for the enclosing-scope value `outer` (made on first use).
  Value* captureInput(Value* outer) {
    auto it = m_captureInputs.find(outer);
    if (it != m_captureInputs.end())
      return it->second;
    Value* in = m_graph.addInput(outer->name(), outer->type());
    m_captureInputs[outer] = in;
    return in;
  }

  /// How errors name node `index` of the file: `node "/conv1/Conv"` or `node 3` when unnamed.
  std::string protoNodeName(int index) const {
    const auto& n = m_graphProto.node(index);
    std::string s = !n.name().empty() ? "node \"" + n.name() + "\"" : "node " + std::to_string(index);
    if (m_parent)
      s += " of graph '" + m_graph.name() + "'";
    return s;
  }
  std::string protoNodeWhere(int index) const {
    const auto& n = m_graphProto.node(index);
    return protoNodeName(index) + " (op " + n.op_type() + ", opset " + std::to_string(m_opset) +
           ")";
  }

  Status checkNewName(const std::string& name, const std::string& what) {
    if (name.empty())
      return makeError(what, " has an empty name");
    if (m_graph.findValue(name))
      return makeError(what, ": value '", name, "' is defined more than once");
    return Status::success();
  }

  Status importInitializers() {
    for (int i = 0; i < m_graphProto.initializer_size(); ++i) {
      const auto& proto = m_graphProto.initializer(i);
      const std::string what = "initializer '" + proto.name() + "'";
      FB_TRY(checkNewName(proto.name(), "initializer " + std::to_string(i)));
      FB_ASSIGN_OR_RETURN(Tensor t, decodeTensor(proto, what, m_model.external));
      m_graph.addConstant(proto.name(), std::move(t));
    }
    return Status::success();
  }

  Status importInputs() {
    for (const auto& info : m_graphProto.input()) {
      const std::string what = "graph input '" + info.name() + "'";
      if (Value* existing = m_graph.findValue(info.name())) {
        // An input with an initializer is a constant with a default; Fusebox treats it as a
        // constant, but a declared type must still agree with the data.
        if (!existing->isConstant())
          return makeError(what, " is declared more than once");
        std::optional<TensorType> declared;
        FB_TRY(typeFromProto(info, what, /*requireShape=*/false, declared));
        if (declared && !compatible(info, *declared, existing->type()))
          return makeError("shape mismatch: ", what, " is declared ", declared->str(),
                           " but its initializer is ", existing->type().str());
        continue;
      }
      FB_TRY(checkNewName(info.name(), "graph input"));
      std::optional<TensorType> type;
      FB_TRY(typeFromProto(info, what, /*requireShape=*/true, type));
      assert(type && "typeFromProto with requireShape yields a type or an error");
      m_graph.addInput(info.name(), std::move(*type));
    }
    return Status::success();
  }

  Status createAndConnectNodes() {
    for (int i = 0; i < m_graphProto.node_size(); ++i)
      FB_TRY(createNode(i));
    for (auto& [node, index] : m_created)
      FB_TRY(connectNode(*node, index));
    return m_graph.topologicalSort();
  }

  Status createNode(int index) {
    const onnx::NodeProto& proto = m_graphProto.node(index);
    const std::string where = protoNodeWhere(index);
    if (!isDefaultDomain(proto.domain()))
      return makeUnsupported(protoNodeName(index), " (op ", proto.op_type(), ", domain '",
                             proto.domain(), "'): unsupported domain '", proto.domain(), "'");
    if (proto.op_type().empty())
      return makeError(protoNodeName(index), " has no op_type");
    if (proto.op_type() == "Constant")
      return createConstant(proto, where);
    std::optional<OpKind> op = opKindFromOnnx(proto.op_type());
    if (!op)
      op = legacyOpKind(proto.op_type());
    if (!op || *op == OpKind::Fused)
      return makeUnsupported(where, ": unsupported op");

    // Trailing empty output names are omitted optional outputs.
    int numOutputs = proto.output_size();
    while (numOutputs > 0 && proto.output(numOutputs - 1).empty())
      --numOutputs;
    if (numOutputs == 0)
      return makeError(where, ": has no outputs");
    std::vector<std::string> outNames;
    for (int i = 0; i < numOutputs; ++i) {
      std::string name = proto.output(i);
      if (name.empty())
        name = m_names.fresh(proto.output(0) + "_unused" + std::to_string(i));
      else
        FB_TRY(checkNewName(name, where + ": output " + std::to_string(i)));
      outNames.push_back(std::move(name));
    }
    for (int i = 0; i < numOutputs; ++i)
      for (int j = 0; j < i; ++j)
        if (outNames[i] == outNames[j])
          return makeError(where, ": value '", outNames[i], "' is defined more than once");

    AttrMap attrs;
    for (const auto& a : proto.attribute()) {
      const std::string attrWhere = where + ": attribute '" + a.name() + "'";
      if (a.name().empty())
        return makeError(where, ": an attribute has no name");
      if (attrs.has(a.name()))
        return makeError(attrWhere, " is given twice");
      if (isControlFlowOp(*op) && a.type() == onnx::AttributeProto::GRAPH)
        continue; // a body: imported with the node's inputs (connectNode)
      if (a.name() == kCapturesAttr)
        return makeError(attrWhere, ": '", kCapturesAttr, "' is Fusebox's own attribute");
      FB_ASSIGN_OR_RETURN(AttrValue v, attrFromProto(a, attrWhere, m_model.external));
      attrs.set(a.name(), std::move(v));
    }

    std::optional<NodeTag> tag = parseNodeTag(proto.doc_string());
    if (tag && !m_model.taggedIds.count(tag->id))
      tag.reset();
    const NodeId id = tag ? tag->id : m_graph.allocateNodeId();
    int numInputs = proto.input_size();
    while (numInputs > 0 && proto.input(numInputs - 1).empty())
      --numInputs;
    if (*op == OpKind::Loop)
      numInputs = std::max(numInputs, 2); // the trip-count and condition slots always exist
    Node* node = m_graph.addNodeWithId(id, *op, std::vector<Value*>(size_t(numInputs), nullptr),
                                       size_t(numOutputs), outNames, proto.name());
    node->attrs() = std::move(attrs);
    if (tag)
      node->setProvenance(tag->provenance);
    m_created.emplace_back(node, index);
    return Status::success();
  }

  Status createConstant(const onnx::NodeProto& proto, const std::string& where) {
    if (proto.output_size() != 1 || proto.output(0).empty())
      return makeError(where, ": needs exactly one output");
    if (proto.input_size() != 0)
      return makeError(where, ": takes no inputs");
    if (proto.attribute_size() != 1)
      return makeError(where, ": needs exactly one value attribute");
    const auto& a = proto.attribute(0);
    const std::string attrWhere = where + ": attribute '" + a.name() + "'";
    FB_ASSIGN_OR_RETURN(AttrValue v, attrFromProto(a, attrWhere, m_model.external));
    Tensor t;
    if (a.name() == "value" && std::holds_alternative<Tensor>(v)) {
      t = std::get<Tensor>(v);
    } else if (a.name() == "value_float" && std::holds_alternative<float>(v)) {
      t = Tensor::scalar(std::get<float>(v));
    } else if (a.name() == "value_int" && std::holds_alternative<int64_t>(v)) {
      t = Tensor::scalar(std::get<int64_t>(v));
    } else if (a.name() == "value_floats" && std::holds_alternative<std::vector<float>>(v)) {
      const auto& fs = std::get<std::vector<float>>(v);
      t = Tensor::fromVector<float>({int64_t(fs.size())}, fs);
    } else if (a.name() == "value_ints" && std::holds_alternative<std::vector<int64_t>>(v)) {
      const auto& is = std::get<std::vector<int64_t>>(v);
      t = Tensor::fromVector<int64_t>({int64_t(is.size())}, is);
    } else if (a.name() == "value_string" || a.name() == "value_strings" ||
               a.name() == "sparse_value") {
      return makeUnsupported(attrWhere, ": string and sparse constants are not supported");
    } else {
      return makeError(attrWhere, ": not a valid Constant value attribute");
    }
    FB_TRY(checkNewName(proto.output(0), where + ": output 0"));
    m_graph.addConstant(proto.output(0), std::move(t));
    return Status::success();
  }

  Status connectNode(Node& node, int index) {
    const onnx::NodeProto& proto = m_graphProto.node(index);
    const std::string where = protoNodeWhere(index);
    for (size_t i = 0; i < node.numInputs() && int(i) < proto.input_size(); ++i) {
      const std::string& name = proto.input(int(i));
      if (name.empty())
        continue;
      FB_ASSIGN_OR_RETURN(Value * v, resolve(name, where + " input " + std::to_string(i)));
      node.setInput(i, v);
    }
    if (legacyOpKind(proto.op_type()))
      FB_TRY(upgradeLegacyOp(node, proto.op_type(), m_graph, m_names, where));
    else if (m_opset < kMinOpset)
      FB_TRY(checkSchemaUnchanged(proto.op_type(), m_opset, where));
    FB_TRY(upgradeLegacyAttributes(node, m_opset, m_graph, m_names, where));
    FB_TRY(readOpset18Node(node, m_opset, where));
    if (isControlFlowOp(node.op()))
      FB_TRY(importBodies(node, proto, where));
    const OpInfo& info = node.info();
    const int nIn = int(node.numInputs()), nOut = int(node.numOutputs());
    if (nIn < info.minInputs || (info.maxInputs >= 0 && nIn > info.maxInputs))
      return makeError(where, ": has ", nIn, " inputs; ", info.name, " takes ", info.minInputs,
                       info.maxInputs < 0 ? " or more" : " to " + std::to_string(info.maxInputs));
    if (nOut < info.minOutputs || (info.maxOutputs >= 0 && nOut > info.maxOutputs))
      return makeError(where, ": has ", nOut, " outputs; ", info.name, " yields ",
                       info.minOutputs,
                       info.maxOutputs < 0 ? " or more" : " to " + std::to_string(info.maxOutputs));
    for (int i = 0; i < info.minInputs; ++i)
      if (!node.input(size_t(i)))
        return makeError(where, ": required input ", i, " is missing");
    return Status::success();
  }

  /// The formal inputs (before captures) a body of this node declares: none for If, the
  /// iteration number, condition and carried values for Loop, carried values and one slice per
  /// scanned input for Scan. Their types are placeholders that inference replaces.
  Expected<std::vector<TensorType>> formalBodyInputs(const Node& node, const std::string& where) {
    std::vector<TensorType> types;
    if (node.op() == OpKind::Loop) {
      types = {TensorType(DType::I64, {}), TensorType(DType::Bool, {})};
      for (size_t i = 2; i < node.numInputs(); ++i)
        types.push_back(node.input(i) ? node.input(i)->type() : TensorType());
    } else if (node.op() == OpKind::Scan) {
      FB_ASSIGN_OR_RETURN(int64_t m, node.attrs().getInt("num_scan_inputs", -1));
      if (m < 1 || size_t(m) > node.numInputs())
        return makeError(where, ": num_scan_inputs is ", m, " but the node has ",
                         node.numInputs(), " inputs");
      for (size_t i = 0; i < node.numInputs(); ++i)
        types.push_back(node.input(i) ? node.input(i)->type() : TensorType());
    }
    return types;
  }

  /// Imports the node's bodies (closure-converted: outer reads become captures) and appends the
  /// captures to its operands.
  Status importBodies(Node& node, const onnx::NodeProto& proto, const std::string& where) {
    FB_ASSIGN_OR_RETURN(std::vector<TensorType> formal, formalBodyInputs(node, where));
    CaptureSet captures;
    std::vector<std::unique_ptr<GraphImporter>> bodies;
    for (const char* role : controlFlowBodyRoles(node.op())) {
      const onnx::AttributeProto* attr = nullptr;
      for (const auto& a : proto.attribute())
        if (a.name() == role)
          attr = &a;
      if (!attr || attr->type() != onnx::AttributeProto::GRAPH || !attr->has_g())
        return makeError(where, ": has no graph attribute '", role, "'");
      const onnx::GraphProto& g = attr->g();
      Graph* body = node.addBody(role, std::make_unique<Graph>(g.name().empty() ? role : g.name()));
      body->setOpset(kIrOpset);
      auto importer = std::make_unique<GraphImporter>(g, *body, m_model, this, &captures);
      FB_TRY(importer->importBody(formal, where + ": body '" + std::string(role) + "'"));
      bodies.push_back(std::move(importer));
    }
    for (auto& b : bodies)
      b->finishCaptures();
    for (Value* outer : captures.outer)
      node.addInput(outer);
    if (node.op() != OpKind::If && !captures.outer.empty())
      node.attrs().set(kCapturesAttr, int64_t(captures.outer.size()));
    return Status::success();
  }

  Status inferAll() {
    std::vector<Node*> order;
    for (const auto& n : m_graph.nodes())
      order.push_back(n.get());
    for (Node* node : order) {
      std::vector<Node*> before, after;
      if (needsSoftmaxUpgrade(*node, m_opset)) {
        FB_TRY(upgradeLegacySoftmax(*node, m_graph, m_names, before, after));
      }
      for (Node* n : before)
        FB_TRY(inferNodeShapes(*n));
      FB_TRY(inferNodeShapes(*node));
      for (Node* n : after)
        FB_TRY(inferNodeShapes(*n));
    }
    return Status::success();
  }

  Status importOutputs() {
    if (m_graphProto.output_size() == 0)
      return makeError("the graph has no outputs");
    for (const auto& info : m_graphProto.output()) {
      Value* v = m_graph.findValue(info.name());
      if (!v)
        return makeError("graph output '", info.name(), "' is not defined");
      m_graph.addOutput(v);
      FB_TRY(checkDeclared(info, "graph output"));
    }
    return Status::success();
  }

  Status checkValueInfo() {
    for (const auto& info : m_graphProto.value_info())
      FB_TRY(checkDeclared(info, "value"));
    return Status::success();
  }

  /// A declared type (graph output or value_info) must agree with the inferred one.
  Status checkDeclared(const onnx::ValueInfoProto& info, const char* kind) {
    const std::string what = std::string(kind) + " '" + info.name() + "'";
    std::optional<TensorType> declared;
    FB_TRY(typeFromProto(info, what, /*requireShape=*/false, declared));
    Value* v = m_graph.findValue(info.name());
    if (!declared || !v)
      return Status::success(); // value_info for a value the graph no longer has is harmless
    if (!compatible(info, *declared, v->type()))
      return makeError("shape mismatch: ", what, " is declared ", declared->str(),
                       " but inferred as ", v->type().str());
    return Status::success();
  }

  const onnx::GraphProto& m_graphProto;
  Graph& m_graph;
  ModelImportState& m_model;
  int64_t m_opset;
  NameAllocator m_names; // refers to m_model.fileNames and m_graph
  GraphImporter* m_parent;   // not owned; the enclosing graph's importer, or nullptr
  CaptureSet* m_captures;    // not owned; the owning node's captures (bodies only)
  size_t m_numFormalInputs = 0;
  std::unordered_map<const Value*, Value*> m_captureInputs;     // outer value → body input
  std::unordered_map<std::string, Value*> m_captureByName;      // outer name → body input
  std::vector<std::pair<Node*, int>> m_created; // node and its index in the file
};

/// Every name a graph and its bodies mention, and how often each exporter tag occurs.
void collectModelNames(const onnx::GraphProto& g, ModelImportState& state,
                       std::unordered_map<NodeId, int>& tagCount) {
  for (const auto& t : g.initializer())
    state.fileNames.insert(t.name());
  for (const auto& v : g.input())
    state.fileNames.insert(v.name());
  for (const auto& v : g.output())
    state.fileNames.insert(v.name());
  for (const auto& v : g.value_info())
    state.fileNames.insert(v.name());
  for (const auto& n : g.node()) {
    state.fileNames.insert(n.input().begin(), n.input().end());
    state.fileNames.insert(n.output().begin(), n.output().end());
    if (auto tag = parseNodeTag(n.doc_string()))
      ++tagCount[tag->id];
    for (const auto& a : n.attribute()) {
      if (a.has_g())
        collectModelNames(a.g(), state, tagCount);
      for (const auto& sub : a.graphs())
        collectModelNames(sub, state, tagCount);
    }
  }
}

/// Imports a ModelProto's graph and its bodies. Ids from exporter tags are kept when each is used
/// once in the whole model; other nodes get fresh ids after them.
Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto& model, int64_t opset,
                                             const std::string& baseDir) {
  ModelImportState state;
  state.opset = opset;
  state.external = ExternalDataPolicy{baseDir};
  std::unordered_map<NodeId, int> tagCount;
  collectModelNames(model.graph(), state, tagCount);
  auto graph = std::make_unique<Graph>(model.graph().name().empty() ? "main" : model.graph().name());
  for (auto [id, c] : tagCount)
    if (c == 1) {
      state.taggedIds.insert(id);
      graph->reserveNodeId(id);
    }
  GraphImporter importer(model.graph(), *graph, state);
  FB_TRY(importer.importModelGraph());
  return graph;
}

/// For a model older than opset 11: the op must mean at `opset` what it means at opset 17 (its
/// schema did not change in between), since only opsets 11-16 are upgraded.
Status checkSchemaUnchanged(const std::string& opType, int64_t opset, const std::string& where) {
  // Scan-9 means what Scan-17 means for tensors: 11 allowed negative axes, 16 added bfloat16.
  // (Scan-8 scanned a batch of sequences and is refused.)
  if (opType == "Scan" && opset >= 9)
    return Status::success();
  try {
    const onnx::OpSchema* old = onnx::OpSchemaRegistry::Schema(opType, int(opset), "");
    const onnx::OpSchema* now = onnx::OpSchemaRegistry::Schema(opType, int(kIrOpset), "");
    if (old && now && old->SinceVersion() == now->SinceVersion())
      return Status::success();
    // RNN, GRU and LSTM of opset 7 differ from opset 14's only by the `layout` attribute, whose
    // default (0) is the old behaviour.
    if (old && (opType == "RNN" || opType == "GRU" || opType == "LSTM") && old->SinceVersion() >= 7)
      return Status::success();
    return makeUnsupported(where, ": ", opType, " changed between opset ", opset,
                           " and 17; Fusebox upgrades models from opset ", kMinOpset, " on");
  } catch (const std::exception& e) {
    return makeError(where, ": ONNX schema lookup failed: ", e.what());
  }
}

/// Parses and validates the model envelope: IR version, graph, opsets. Returns the default-domain
/// opset version.
Expected<int64_t> checkEnvelope(const onnx::ModelProto& model) {
  if (model.ir_version() <= 0)
    return makeError("has no ir_version (not an ONNX model?)");
  if (model.ir_version() < kMinIrVersion || model.ir_version() > kMaxIrVersion)
    return makeUnsupported("IR version ", model.ir_version(),
                           " is not supported (Fusebox reads IR versions ", kMinIrVersion,
                           " to ", kMaxIrVersion, ")");
  if (!model.has_graph())
    return makeError("has no graph");
  std::optional<int64_t> opset;
  for (const auto& imp : model.opset_import()) {
    if (!isDefaultDomain(imp.domain()))
      continue; // only nodes that use another domain are an error
    if (opset && *opset != imp.version())
      return makeError("imports the default ONNX domain twice (opsets ", *opset, " and ",
                       imp.version(), ")");
    opset = imp.version();
  }
  if (!opset && model.opset_import_size() > 0)
    return makeUnsupported("imports only the domain '", model.opset_import(0).domain(),
                           "' and not the default ONNX domain, which is all Fusebox implements");
  if (!opset)
    return makeError("has no opset_import for the default ONNX domain");
  if (*opset < kOldestOpset || *opset > kMaxOpset)
    return makeUnsupported("opset ", *opset, " is not supported (Fusebox reads opsets ",
                           kOldestOpset, " to ", kMaxOpset, ")");
  return *opset;
}

} // namespace

namespace {

/// Parses `bytes` into `model`, or an error naming the file.
Status parseModel(std::string_view bytes, const std::string& displayName, onnx::ModelProto& model) {
  if (bytes.empty())
    return makeError(displayName, ": empty file (not an ONNX model)");
  if (bytes.size() > size_t(INT_MAX))
    return makeError(displayName, ": larger than 2 GB, the protobuf limit (store weights as "
                                  "external data)");
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            int(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return makeError(displayName, ": not a valid ONNX model (truncated file or not a protobuf)");
  return Status::success();
}

/// The graph of a parsed model.
Expected<std::unique_ptr<Graph>> importParsed(const onnx::ModelProto& model,
                                              const std::string& baseDir,
                                              const std::string& displayName) {
  auto opset = checkEnvelope(model);
  if (!opset.ok())
    return opset.error().withContext(displayName);
  auto g = importModel(model, *opset, baseDir);
  if (!g.ok())
    return g.error().withContext(displayName);
  return g;
}

} // namespace

Expected<std::unique_ptr<Graph>> importOnnxBytes(std::string_view bytes, const std::string& baseDir,
                                                 const std::string& displayName) {
  try {
    onnx::ModelProto model;
    FB_TRY(parseModel(bytes, displayName, model));
    return importParsed(model, baseDir, displayName);
  } catch (const std::exception& e) {
    // Allocation failure on a hostile file must not escape the library.
    return makeError(displayName, ": import failed: ", e.what());
  }
}

Expected<std::unique_ptr<Graph>> importOnnxFile(const std::string& path) {
  std::string baseDir = std::filesystem::path(path).parent_path().string();
  if (baseDir.empty())
    baseDir = ".";
  try {
    onnx::ModelProto model;
    {
      // The file's bytes go as soon as they are parsed: with the parsed message and the graph's
      // tensors, a third copy of the weights would set the peak memory of a whole run.
      FB_ASSIGN_OR_RETURN(std::string bytes, readRegularFile(path, "ONNX model"));
      FB_TRY(parseModel(bytes, path, model));
    }
    return importParsed(model, baseDir, path);
  } catch (const std::exception& e) {
    return makeError(path, ": import failed: ", e.what());
  }
}

} // namespace fb
