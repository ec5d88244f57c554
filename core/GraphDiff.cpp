// Structural diff by node id and provenance.
#include "core/GraphDiff.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>
#include <unordered_map>

namespace fb {

namespace {

/// Floats print in their shortest round-trip form, so two different values never look equal.
std::string floatStr(float f) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}

std::string attrStr(const AttrValue& v) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, int64_t>)
          os << x;
        else if constexpr (std::is_same_v<X, float>)
          os << floatStr(x);
        else if constexpr (std::is_same_v<X, std::string>)
          os << '"' << x << '"';
        else if constexpr (std::is_same_v<X, Tensor>)
          os << "tensor " << x.type().str();
        else {
          os << "[";
          for (size_t i = 0; i < x.size(); ++i) {
            os << (i ? ", " : "");
            if constexpr (std::is_same_v<X, std::vector<float>>)
              os << floatStr(x[i]);
            else if constexpr (std::is_same_v<X, std::vector<std::string>>)
              os << '"' << x[i] << '"';
            else
              os << x[i];
          }
          os << "]";
        }
      },
      v);
  return os.str();
}

std::string idList(const std::vector<NodeId>& ids) {
  std::string s = "(";
  for (size_t i = 0; i < ids.size(); ++i)
    s += (i ? ", #" : "#") + std::to_string(ids[i]);
  return s + ")";
}

/// How an operand is referred to across snapshots: the producing node's id and output index, or
/// the name of an input or constant.
std::string operandKey(const Value* v) {
  if (!v)
    return "_";
  if (const Node* p = v->producer())
    return "#" + std::to_string(p->id()) + ":" + std::to_string(v->resultIndex());
  return "%" + v->name();
}

/// Summarizes how two fused-group bodies differ, as details of the group node.
void compareBodies(const Graph& x, const Graph& y, std::vector<std::string>& out,
                   const std::string& label = "body") {
  GraphDiff d = diffGraphs(x, y);
  for (NodeId id : d.removed)
    out.push_back(label + ": removed #" + std::to_string(id));
  for (NodeId id : d.added)
    out.push_back(label + ": added #" + std::to_string(id));
  for (const NodeChange& c : d.changed)
    for (const std::string& detail : c.details)
      out.push_back(label + ": #" + std::to_string(c.id) + " " + detail);
  size_t nout = std::max(x.outputs().size(), y.outputs().size());
  for (size_t i = 0; i < nout; ++i) {
    const Value* a = i < x.outputs().size() ? x.outputs()[i] : nullptr;
    const Value* b = i < y.outputs().size() ? y.outputs()[i] : nullptr;
    std::string ka = operandKey(a), kb = operandKey(b);
    if (ka != kb)
      out.push_back(label + ": output " + std::to_string(i) + ": " + ka + " -> " + kb);
  }
}

void compareNodes(const Node& x, const Node& y, std::vector<std::string>& out) {
  if (x.op() != y.op())
    out.push_back(std::string("op: ") + opName(x.op()) + " -> " + opName(y.op()));
  if (x.name() != y.name())
    out.push_back("name: \"" + x.name() + "\" -> \"" + y.name() + "\"");
  std::set<std::string> names;
  for (const auto& [k, v] : x.attrs())
    names.insert(k);
  for (const auto& [k, v] : y.attrs())
    names.insert(k);
  for (const std::string& k : names) {
    const AttrValue* a = x.attrs().find(k);
    const AttrValue* b = y.attrs().find(k);
    if (a && b && attrEquals(*a, *b))
      continue;
    out.push_back("attribute " + k + ": " + (a ? attrStr(*a) : "(none)") + " -> " +
                  (b ? attrStr(*b) : "(none)"));
  }
  size_t nin = std::max(x.numInputs(), y.numInputs());
  for (size_t i = 0; i < nin; ++i) {
    const Value* a = x.input(i);
    const Value* b = y.input(i);
    std::string ka = operandKey(a), kb = operandKey(b);
    if (ka != kb) {
      out.push_back("operand " + std::to_string(i) + ": " + ka + " -> " + kb);
    } else if (a && b && a->isConstant() && b->isConstant() &&
               !a->constantData().identical(b->constantData())) {
      out.push_back("operand " + std::to_string(i) + ": data of " + ka + " changed");
    }
  }
  size_t nout = std::max(x.numOutputs(), y.numOutputs());
  for (size_t i = 0; i < nout; ++i) {
    if (i >= x.numOutputs() || i >= y.numOutputs()) {
      out.push_back("output count: " + std::to_string(x.numOutputs()) + " -> " +
                    std::to_string(y.numOutputs()));
      break;
    }
    const TensorType& ta = x.output(i)->type();
    const TensorType& tb = y.output(i)->type();
    if (!(ta == tb))
      out.push_back("type of output " + std::to_string(i) + ": " + ta.str() + " -> " + tb.str());
  }
  if (x.provenance() != y.provenance())
    out.push_back("provenance: from" + idList(x.provenance()) + " -> from" +
                  idList(y.provenance()));
  if (x.body() && y.body())
    compareBodies(*x.body(), *y.body(), out);
  else
    for (const NodeBody& bx : x.bodies()) // an If's branches, a Loop's body: matched by role
      if (const Graph* by = y.bodyNamed(bx.role))
        compareBodies(*bx.graph, *by, out, bx.role);
      else
        out.push_back("body " + bx.role + ": removed");
}

/// Every id a node stands for: itself and what it was made from, and its body's nodes.
void collectOrigins(const Node& n, std::vector<NodeId>& out) {
  out.insert(out.end(), n.provenance().begin(), n.provenance().end());
  if (n.body())
    for (const auto& inner : n.body()->nodes()) {
      out.push_back(inner->id());
      collectOrigins(*inner, out);
    }
}

} // namespace

GraphDiff diffGraphs(const Graph& a, const Graph& b) {
  GraphDiff d;
  std::unordered_map<NodeId, const Node*> inA, inB;
  for (const auto& n : a.nodes())
    inA[n->id()] = n.get();
  for (const auto& n : b.nodes())
    inB[n->id()] = n.get();
  for (const auto& n : a.nodes()) {
    auto it = inB.find(n->id());
    if (it == inB.end()) {
      d.removed.push_back(n->id());
      continue;
    }
    std::vector<std::string> details;
    compareNodes(*n, *it->second, details);
    if (details.empty())
      d.unchanged.push_back(n->id());
    else
      d.changed.push_back(NodeChange{n->id(), std::move(details)});
  }
  // Provenance links both ways: an added node to the nodes of a it was made from, and a removed
  // node to every node of b made from it, including a kept node that absorbed it (a Transpose
  // that swallowed the Transpose feeding it keeps its id).
  std::set<NodeId> removedSet(d.removed.begin(), d.removed.end());
  for (const auto& n : b.nodes()) {
    const bool added = !inA.count(n->id());
    if (added)
      d.added.push_back(n->id());
    std::vector<NodeId> origins;
    collectOrigins(*n, origins);
    std::sort(origins.begin(), origins.end());
    origins.erase(std::unique(origins.begin(), origins.end()), origins.end());
    std::vector<NodeId> from;
    for (NodeId o : origins)
      if (inA.count(o) && o != n->id())
        from.push_back(o);
    if (added && !from.empty())
      d.addedFrom[n->id()] = from;
    for (NodeId o : from)
      if (removedSet.count(o))
        d.removedInto[o].push_back(n->id());
  }
  return d;
}

std::vector<NodeId> changedNodeIds(const GraphDiff& diff) {
  std::vector<NodeId> ids = diff.added;
  for (const NodeChange& c : diff.changed)
    ids.push_back(c.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

} // namespace fb
