// Node inspection: ports with producers and consumers, cost, provenance and constant statistics.
#include "app/workbench/NodeInspection.h"

#include "app/workbench/Session.h"
#include "core/ControlFlow.h"
#include "core/Cost.h"
#include "core/ops/RecurrentSpec.h"
#include "core/text/TextSyntax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace fb::workbench {

namespace {

template <typename T> std::string joinList(const std::vector<T>& items, auto format) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ", ";
    out += format(items[i]);
  }
  return out + "]";
}

PortInfo describePort(const Value* v) {
  PortInfo p;
  if (!v) {
    p.kind = "absent";
    return p;
  }
  p.value = v->name();
  p.type = v->type().str();
  p.graphOutput = v->isGraphOutput();
  switch (v->kind()) {
  case ValueKind::Input:
    p.kind = "input";
    p.producerText = "graph input";
    break;
  case ValueKind::Constant:
    p.kind = "constant";
    p.producerText = "constant";
    break;
  case ValueKind::NodeOutput:
    p.kind = "node output";
    p.producer = v->producer()->id();
    p.producerText = nodeLabel(*v->producer());
    break;
  }
  for (const Use& u : v->uses())
    if (std::find(p.consumers.begin(), p.consumers.end(), u.user->id()) == p.consumers.end())
      p.consumers.push_back(u.user->id());
  return p;
}

} // namespace

std::string nodeLabel(const Node& node) {
  std::string s = "#" + std::to_string(node.id()) + " " + opName(node.op());
  if (!node.name().empty())
    s += " \"" + node.name() + "\"";
  return s;
}

std::string formatAttribute(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, float>)
          return text::formatFloat(v);
        else if constexpr (std::is_same_v<T, std::string>)
          return text::quoteString(v);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return joinList(v, [](int64_t x) { return std::to_string(x); });
        else if constexpr (std::is_same_v<T, std::vector<float>>)
          return joinList(v, [](float x) { return text::formatFloat(x); });
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          return joinList(v, [](const std::string& x) { return text::quoteString(x); });
        else
          return "tensor " + v.type().str();
      },
      value);
}

ConstantStats constantStats(const Value& constant, size_t bins, size_t previewCount) {
  ConstantStats s;
  s.name = constant.name();
  s.type = constant.type().str();
  const Tensor& t = constant.constantData();
  if (!t.valid() || t.numElements() == 0)
    return s;
  const int64_t n = t.numElements();
  s.elements = n;
  double mn = std::numeric_limits<double>::infinity();
  double mx = -mn;
  double sum = 0;
  int64_t zeros = 0, finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = t.getAsDouble(i);
    if (x == 0)
      ++zeros;
    if (!std::isfinite(x))
      continue;
    ++finite;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    sum += x;
  }
  s.sparsity = double(zeros) / double(n);
  if (finite == 0)
    return s;
  s.min = mn;
  s.max = mx;
  s.mean = sum / double(finite);
  // Second pass for the variance: numerically safer than sum of squares.
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = t.getAsDouble(i);
    if (std::isfinite(x))
      sq += (x - s.mean) * (x - s.mean);
  }
  s.stddev = std::sqrt(sq / double(finite));
  s.histogram.assign(std::max<size_t>(bins, 1), 0);
  const double width = mx - mn;
  for (int64_t i = 0; i < n; ++i) {
    double x = t.getAsDouble(i);
    if (!std::isfinite(x))
      continue;
    size_t b = width > 0 ? size_t((x - mn) / width * double(s.histogram.size())) : 0;
    s.histogram[std::min(b, s.histogram.size() - 1)] += 1;
  }
  for (int64_t i = 0; i < std::min<int64_t>(n, int64_t(previewCount)); ++i)
    s.preview.push_back(t.getAsDouble(i));
  return s;
}

namespace {

std::string valueText(const Value* v) {
  return v ? "%" + v->name() + " : " + v->type().str() : std::string("(absent)");
}
std::string refText(const Value* v) { return v ? "%" + v->name() : std::string("(absent)"); }

/// What feeds each input of a control-flow node's bodies and what each output becomes.
std::vector<BodyInspection> inspectBodies(const Node& node) {
  std::vector<BodyInspection> out;
  auto layout = controlFlowLayout(node);
  if (!layout.ok())
    return out;
  const ControlFlowLayout& l = *layout;
  const bool loop = node.op() == OpKind::Loop, scan = node.op() == OpKind::Scan;
  for (const NodeBody& b : node.bodies()) {
    BodyInspection bi;
    bi.role = b.role;
    bi.graph = b.graph->name();
    bi.nodes = b.graph->numNodes();
    const auto& ins = b.graph->inputs();
    for (size_t i = 0; i < ins.size(); ++i) {
      std::string source;
      if (i >= l.bodyInputsBeforeCaptures) {
        source = "capture of " + refText(node.input(l.firstCapture + i - l.bodyInputsBeforeCaptures));
      } else if (loop && i == 0) {
        source = "iteration number";
      } else if (loop && i == 1) {
        source = "condition (starts as " + refText(node.input(1)) + ")";
      } else if (loop) {
        source = "carried value " + std::to_string(i - 2) + " (starts as " +
                 refText(node.input(i)) + ")";
      } else if (scan && i < l.numCarried) {
        source = "carried value " + std::to_string(i) + " (starts as " + refText(node.input(i)) + ")";
      } else if (scan) {
        source = "slice of scanned input " + std::to_string(i - l.numCarried) + " (" +
                 refText(node.input(i)) + ")";
      }
      bi.inputs.emplace_back(valueText(ins[i]), source);
    }
    const auto& outs = b.graph->outputs();
    for (size_t i = 0; i < outs.size(); ++i) {
      std::string dest;
      size_t k = loop ? i - 1 : i; // a Loop body's first output is the condition
      if (loop && i == 0)
        dest = "condition of the next iteration";
      else if (node.op() == OpKind::If)
        dest = "result " + std::to_string(i) + " (" + refText(node.output(i)) + ")";
      else if (k < l.numCarried)
        dest = "carried value " + std::to_string(k) + ", finally " + refText(node.output(k));
      else
        dest = "scan output " + std::to_string(k - l.numCarried) + ", stacked into " +
               refText(node.output(k));
      bi.outputs.emplace_back(valueText(outs[i]), dest);
    }
    out.push_back(std::move(bi));
  }
  return out;
}

} // namespace

std::optional<NodeInspection> inspectNode(const Session& session, size_t snapshot, NodeId id) {
  if (snapshot >= session.snapshotCount())
    return std::nullopt;
  const Graph& g = *session.graph(snapshot);
  const Node* node = g.findNode(id);
  if (!node)
    return std::nullopt;
  NodeInspection r;
  r.id = id;
  r.name = node->name();
  r.op = opName(node->op());
  r.category = opCategoryName(node->info().category);
  for (const auto& [name, value] : node->attrs())
    r.attributes.emplace_back(name, formatAttribute(value));
  for (const Value* v : node->inputs()) {
    r.inputs.push_back(describePort(v));
    if (v && v->isConstant()) {
      bool seen = std::any_of(r.constants.begin(), r.constants.end(),
                              [&](const ConstantStats& c) { return c.name == v->name(); });
      if (!seen)
        r.constants.push_back(constantStats(*v));
    }
  }
  for (const Value* v : node->outputs())
    r.outputs.push_back(describePort(v));
  OpCost cost = nodeCost(*node);
  r.flops = cost.flops;
  r.bytes = cost.bytes;
  r.intensity = cost.bytes > 0 ? cost.flops / cost.bytes : 0;
  if (isRecurrentOp(node->op()))
    r.explanation = explainRecurrentNode(*node);
  if (const Graph* body = node->body()) {
    r.bodyNodes = body->numNodes();
    for (const auto& n : body->nodes())
      r.bodyOps.push_back(opName(n->op()));
  }
  if (isControlFlowOp(node->op()))
    r.bodies = inspectBodies(*node);
  for (NodeId from : node->provenance()) {
    ProvenanceLink link;
    link.id = from;
    // Where the original lived: the latest earlier snapshot that holds it as its own node (its own
    // id in a node that absorbed others lives on in the current snapshot too).
    size_t before = snapshot > 0 && from != id ? snapshot - 1 : snapshot;
    link.snapshot = session.snapshotWithNode(from, before);
    if (!link.snapshot && snapshot > 0)
      link.snapshot = session.snapshotWithNode(from, snapshot);
    if (link.snapshot) {
      const Node* orig = session.graph(*link.snapshot)->findNode(from);
      link.text = nodeLabel(*orig) + " (snapshot " + std::to_string(*link.snapshot) + ")";
    } else {
      link.text = "#" + std::to_string(from) + " (not in the history)";
    }
    r.provenance.push_back(std::move(link));
  }
  return r;
}

} // namespace fb::workbench
