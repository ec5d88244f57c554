// Kernel signatures: a node's computation printed without names or ids.
#include "app/workbench/KernelSignature.h"
#include "core/OpTable.h"

#include <map>
#include <sstream>
#include <type_traits>

namespace fb::workbench {

namespace {

template <typename T> void printList(std::ostream& os, const std::vector<T>& values) {
  os << '[';
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? "," : "") << values[i];
  os << ']';
}

/// FNV-1a of a tensor attribute's bytes: its data decides what the kernel computes, but does
/// not belong in a readable key.
uint64_t hashBytes(const Tensor& t) {
  uint64_t h = 1469598103934665603ull;
  const std::byte* data = t.rawData();
  for (size_t i = 0; data && i < t.byteSize(); ++i)
    h = (h ^ uint64_t(data[i])) * 1099511628211ull;
  return h;
}

void printAttribute(std::ostream& os, const AttrValue& value) {
  std::visit(
      [&os](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          os << "tensor<" << dtypeName(v.dtype());
          printList(os, v.sizes());
          os << ",#" << std::hex << hashBytes(v) << std::dec << '>';
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                             std::is_same_v<T, std::vector<float>> ||
                             std::is_same_v<T, std::vector<std::string>>) {
          printList(os, v);
        } else {
          os << v;
        }
      },
      value);
}

void printNode(std::ostream& os, const Node& node,
               const std::map<const Value*, std::string>& operandNames);

/// A fused group's body: each node with its operands named by position ("i0" a body input,
/// "n2.0" output 0 of body node 2), so two bodies match when they compute the same thing.
void printBody(std::ostream& os, const Graph& body) {
  std::map<const Value*, std::string> names;
  for (size_t i = 0; i < body.inputs().size(); ++i)
    names[body.inputs()[i]] = "i" + std::to_string(i);
  os << '{';
  for (size_t n = 0; n < body.nodes().size(); ++n) {
    const Node& node = *body.nodes()[n];
    os << (n ? ";" : "");
    printNode(os, node, names);
    for (const Value* out : node.outputs())
      names[out] = "n" + std::to_string(n) + "." + std::to_string(out->resultIndex());
  }
  os << "}->";
  for (size_t o = 0; o < body.outputs().size(); ++o) {
    auto it = names.find(body.outputs()[o]);
    os << (o ? "," : "") << (it == names.end() ? "i?" : it->second);
  }
}

void printNode(std::ostream& os, const Node& node,
               const std::map<const Value*, std::string>& operandNames) {
  os << opName(node.op());
  if (!node.attrs().empty()) {
    os << '<';
    bool first = true;
    for (const auto& [name, value] : node.attrs()) {
      os << (first ? "" : ",") << name << '=';
      printAttribute(os, value);
      first = false;
    }
    os << '>';
  }
  os << '(';
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    const Value* in = node.inputs()[i];
    os << (i ? "," : "");
    if (!in) {
      os << "none";
      continue;
    }
    if (auto it = operandNames.find(in); it != operandNames.end())
      os << it->second << ':';
    os << (in->isConstant() ? "const " : "") << in->type().str();
  }
  os << ")->";
  for (size_t o = 0; o < node.outputs().size(); ++o)
    os << (o ? "," : "") << node.outputs()[o]->type().str();
  for (const NodeBody& body : node.bodies()) {
    os << ' ' << body.role;
    printBody(os, *body.graph);
  }
}

} // namespace

std::string kernelSignature(const Node& node) {
  std::ostringstream os;
  printNode(os, node, {});
  return os.str();
}

std::string targetIsa(const cg::TargetInfo& target) {
  if (target.features.empty())
    return "default";
  const std::string features = "," + target.features + ",";
  if (features.find(",+avx512f,") != std::string::npos)
    return "avx512";
  if (target.hasAvx2Fma())
    return "avx2";
  return "sse";
}

} // namespace fb::workbench
