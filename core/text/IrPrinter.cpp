// The text IR (.fbir) printer: one line per input, constant and node; bodies nested.
//
// The grammar is documented at the top of IrParser.cpp and in docs/text-ir.md. The printer is
// the canonical form: printGraph(parseGraph(text)) == text for every text it produced.
#include "core/text/IrPrinter.h"
#include "core/ControlFlow.h"
#include "core/text/TextSyntax.h"

#include <cassert>
#include <set>

namespace fb {

namespace {

using text::formatFloat;
using text::formatName;
using text::formatWord;
using text::quoteString;

/// The name a fused body gets when the text does not name it; it is Graph's default name.
constexpr const char* kDefaultBodyName = "main";

std::string dimText(const Dim& d) {
  if (d.isStatic())
    return std::to_string(d.size());
  if (d.isSymbol())
    return formatWord(d.symbolName());
  return "?";
}

std::string typeText(const TensorType& type) {
  std::string s = dtypeName(type.dtype);
  s += '[';
  for (size_t i = 0; i < type.dims.size(); ++i) {
    if (i)
      s += ", ";
    s += dimText(type.dims[i]);
  }
  s += ']';
  if (type.quant) {
    const QuantParams& q = *type.quant;
    s += "{scale = [";
    for (size_t i = 0; i < q.scales.size(); ++i)
      s += (i ? ", " : "") + formatFloat(q.scales[i]);
    s += "], zero_point = [";
    for (size_t i = 0; i < q.zeroPoints.size(); ++i)
      s += (i ? ", " : "") + std::to_string(q.zeroPoints[i]);
    s += "]";
    if (q.axis)
      s += ", axis = " + std::to_string(*q.axis);
    s += "}";
  }
  return s;
}

/// Element i of a tensor as the parser reads it back: exact for every dtype.
std::string elementText(const Tensor& t, int64_t i) {
  const std::byte* raw = t.rawData();
  switch (t.dtype()) {
  case DType::F32: return formatFloat(t.data<float>()[size_t(i)]);
  case DType::F16: return formatFloat(float(t.data<f16_t>()[size_t(i)]));
  case DType::BF16: return formatFloat(float(t.data<bf16_t>()[size_t(i)]));
  case DType::I8: return std::to_string(t.data<int8_t>()[size_t(i)]);
  case DType::U8: return std::to_string(t.data<uint8_t>()[size_t(i)]);
  case DType::I32: return std::to_string(t.data<int32_t>()[size_t(i)]);
  case DType::I64: return std::to_string(t.data<int64_t>()[size_t(i)]);
  // Read the byte, not a bool, so a stray byte value cannot be undefined behaviour.
  case DType::Bool: return raw[i] != std::byte{0} ? "true" : "false";
  default: break;
  }
  assert(false && "unknown dtype");
  return "?";
}

template <typename T, typename Fn> std::string listText(const std::vector<T>& v, Fn&& fn) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + fn(v[i]);
  return s + "]";
}

class Printer {
public:
  explicit Printer(const PrintOptions& options) : m_options(options) {}

  std::string run(const Graph& graph) {
    m_out += "graph " + formatName('@', graph.name()) + " opset " +
             std::to_string(graph.opset()) + " {\n";
    printBody(graph, 1);
    m_out += "}\n";
    if (m_options.withResourceData && !m_resources.empty()) {
      m_out += "resources {\n";
      for (const auto& [key, tensor] : m_resources)
        m_out += "  " + formatWord(key) + ": \"" +
                 text::encodeBase64(tensor.rawData(), tensor.byteSize()) + "\"\n";
      m_out += "}\n";
    }
    return std::move(m_out);
  }

private:
  static std::string indent(int depth) { return std::string(size_t(depth) * 2, ' '); }

  static std::string valueRef(const Value* v) { return v ? formatName('%', v->name()) : "_"; }

  /// A resource key that no earlier constant took, derived from `base`.
  std::string uniqueKey(const std::string& base) {
    std::string key = base;
    for (int n = 1; m_keys.count(key); ++n)
      key = base + "." + std::to_string(n);
    m_keys.insert(key);
    return key;
  }

  /// dense<[...]> for small tensors, resource<key> for large ones (data kept for the trailer).
  std::string tensorText(const Tensor& t, const std::string& keyBase) {
    if (!t.valid())
      return "dense<[]>";
    if (size_t(t.numElements()) <= m_options.inlineElementLimit) {
      std::string s = "dense<[";
      for (int64_t i = 0; i < t.numElements(); ++i)
        s += (i ? ", " : "") + elementText(t, i);
      return s + "]>";
    }
    std::string key = uniqueKey(keyBase);
    m_resources.emplace_back(key, t);
    return "resource<" + formatWord(key) + ">";
  }

  std::string attrText(const Node& node, const std::string& name, const AttrValue& value) {
    switch (value.index()) {
    case 0: return std::to_string(std::get<int64_t>(value));
    case 1: return formatFloat(std::get<float>(value));
    case 2: return quoteString(std::get<std::string>(value));
    case 3: {
      const auto& v = std::get<std::vector<int64_t>>(value);
      return v.empty() ? "[] : ints" : listText(v, [](int64_t x) { return std::to_string(x); });
    }
    case 4: {
      const auto& v = std::get<std::vector<float>>(value);
      return v.empty() ? "[] : floats" : listText(v, [](float x) { return formatFloat(x); });
    }
    case 5: {
      const auto& v = std::get<std::vector<std::string>>(value);
      return v.empty() ? "[] : strings"
                       : listText(v, [](const std::string& x) { return quoteString(x); });
    }
    case 6: {
      const Tensor& t = std::get<Tensor>(value);
      // An invalid tensor has no sizes to print; f32[0] is the empty tensor closest to it.
      TensorType type = t.valid() ? t.type() : TensorType::of(DType::F32, {0});
      return tensorText(t, "n" + std::to_string(node.id()) + "." + name) + " : " + typeText(type);
    }
    default: break;
    }
    assert(false && "unknown attribute kind");
    return "?";
  }

  void printNode(const Node& node, int depth) {
    std::string line = indent(depth);
    for (size_t i = 0; i < node.numOutputs(); ++i)
      line += (i ? ", " : "") + valueRef(node.output(i)) + " : " + typeText(node.output(i)->type());
    if (node.numOutputs())
      line += " = ";
    line += opName(node.op());
    line += '(';
    for (size_t i = 0; i < node.numInputs(); ++i)
      line += (i ? ", " : "") + valueRef(node.input(i));
    line += ')';
    if (!node.attrs().empty()) {
      line += " {";
      bool first = true;
      for (const auto& [name, value] : node.attrs()) {
        line += (first ? "" : ", ") + formatWord(name) + " = " + attrText(node, name, value);
        first = false;
      }
      line += '}';
    }
    line += "  #" + std::to_string(node.id());
    if (!node.name().empty())
      line += " " + quoteString(node.name());
    if (!node.provenance().empty()) {
      line += " from(";
      for (size_t i = 0; i < node.provenance().size(); ++i)
        line += (i ? ", #" : "#") + std::to_string(node.provenance()[i]);
      line += ')';
    }
    if (isControlFlowOp(node.op()) && node.hasBodies()) {
      m_out += line + " {\n";
      for (const NodeBody& b : node.bodies()) {
        std::string head = indent(depth + 1) + formatWord(b.role);
        if (b.graph->name() != kDefaultBodyName)
          head += " " + formatName('@', b.graph->name());
        m_out += head + " {\n";
        printBody(*b.graph, depth + 2);
        m_out += indent(depth + 1) + "}\n";
      }
      m_out += indent(depth) + "}\n";
      return;
    }
    if (const Graph* body = node.body()) {
      if (body->name() != kDefaultBodyName)
        line += " " + formatName('@', body->name());
      m_out += line + " {\n";
      printBody(*body, depth + 1);
      m_out += indent(depth) + "}\n";
      return;
    }
    m_out += line + "\n";
  }

  void printBody(const Graph& g, int depth) {
    for (const Value* in : g.inputs())
      m_out += indent(depth) + "input " + valueRef(in) + " : " + typeText(in->type()) + "\n";
    for (const Value* c : g.constants())
      m_out += indent(depth) + "const " + valueRef(c) + " : " + typeText(c->type()) + " = " +
               tensorText(c->constantData(), c->name()) + "\n";
    for (const auto& n : g.nodes())
      printNode(*n, depth);
    if (!g.outputs().empty()) {
      m_out += indent(depth) + "output ";
      for (size_t i = 0; i < g.outputs().size(); ++i)
        m_out += (i ? ", " : "") + valueRef(g.outputs()[i]);
      m_out += "\n";
    }
  }

  const PrintOptions& m_options;
  std::string m_out;
  std::set<std::string> m_keys;                           // resource keys handed out so far
  std::vector<std::pair<std::string, Tensor>> m_resources; // key and data, in print order
};

} // namespace

std::string printGraph(const Graph& graph, const PrintOptions& options) {
  return Printer(options).run(graph);
}

} // namespace fb
