// Numeric diff: both graphs run on the interpreter, values matched by output slot, name, id and
// provenance, compared elementwise.
#include "core/NumericDiff.h"
#include "core/Interpreter.h"

#include <algorithm>
#include <unordered_map>

namespace fb {

namespace {

/// Looks up what the interpreter computed for a value, or nullptr.
const Tensor* computedValue(const InterpretResult& r, const Value* v) {
  auto it = r.values.find(v->name());
  return it == r.values.end() ? nullptr : &it->second;
}

bool sameTypeAs(const Tensor& x, const Tensor& y) {
  return x.dtype() == y.dtype() && x.sizes() == y.sizes();
}

/// The reference graph's values indexed for matching.
class ReferenceIndex {
public:
  ReferenceIndex(const Graph& a, const InterpretResult& ra) : m_graph(a), m_result(ra) {
    for (size_t i = 0; i < a.nodes().size(); ++i) {
      m_nodes[a.nodes()[i]->id()] = a.nodes()[i].get();
      m_order[a.nodes()[i]->id()] = i;
    }
  }

  /// Rule 2: a value of the same name, dtype and shape.
  const Value* byName(const std::string& name, const Tensor& got) const {
    const Value* v = m_graph.findValue(name);
    if (!v)
      return nullptr;
    const Tensor* t = computedValue(m_result, v);
    return t && sameTypeAs(*t, got) ? v : nullptr;
  }

  /// Rule 3: output `index` of the top-level node with this id, when dtype and shape agree.
  const Value* byNodeId(NodeId id, unsigned index, const Tensor& got) const {
    auto it = m_nodes.find(id);
    if (it == m_nodes.end() || index >= it->second->numOutputs())
      return nullptr;
    const Value* v = it->second->output(index);
    const Tensor* t = computedValue(m_result, v);
    return t && sameTypeAs(*t, got) ? v : nullptr;
  }

  /// Rule 4: among the nodes of `ids` present in a, the latest in a's execution order whose
  /// output `index` agrees in dtype and shape: when several ops were merged into one, the last of
  /// them computes the merged op's result.
  const Value* byProvenance(const std::vector<NodeId>& ids, unsigned index,
                            const Tensor& got) const {
    const Value* best = nullptr;
    size_t bestOrder = 0;
    for (NodeId id : ids) {
      const Value* v = byNodeId(id, index, got);
      if (!v)
        continue;
      size_t order = m_order.at(id);
      if (!best || order > bestOrder) {
        best = v;
        bestOrder = order;
      }
    }
    return best;
  }

private:
  const Graph& m_graph;
  const InterpretResult& m_result;
  std::unordered_map<NodeId, const Node*> m_nodes;
  std::unordered_map<NodeId, size_t> m_order;
};

/// The ids a value of b may have come from (rule 4), and the output index to look at: for a
/// fused group, the body node that yields the output; otherwise the node's own provenance.
std::vector<NodeId> provenanceOf(const Node& n, unsigned output, unsigned& index) {
  index = output;
  if (n.op() == OpKind::Fused && n.body()) {
    if (output >= n.body()->outputs().size())
      return {};
    const Value* inner = n.body()->outputs()[output];
    const Node* p = inner->producer();
    if (!p)
      return {}; // the group passes an operand through
    index = inner->resultIndex();
    std::vector<NodeId> ids = p->provenance();
    ids.push_back(p->id());
    return ids;
  }
  return n.provenance();
}

} // namespace

const char* valueMatchName(ValueMatch match) {
  switch (match) {
  case ValueMatch::GraphOutput:
    return "output";
  case ValueMatch::Name:
    return "name";
  case ValueMatch::NodeId:
    return "node id";
  case ValueMatch::Provenance:
    return "provenance";
  default:
    assert(false && "unknown ValueMatch");
    return "?";
  }
}

std::vector<const ValueComparison*> NumericDiff::valuesOf(NodeId id) const {
  std::vector<const ValueComparison*> out;
  for (const ValueComparison& c : values)
    if (c.producer == id)
      out.push_back(&c);
  return out;
}

Expected<NumericDiff> numericDiff(const Graph& a, const Graph& b, const std::vector<Tensor>& inputs,
                                  double atol, double rtol) {
  InterpretOptions keep;
  keep.keepIntermediates = true;
  Expected<InterpretResult> ra = interpret(a, inputs, keep);
  if (!ra.ok())
    return ra.error().withContext("numeric diff: running the reference graph '" + a.name() + "'");
  Expected<InterpretResult> rb = interpret(b, inputs, keep);
  if (!rb.ok())
    return rb.error().withContext("numeric diff: running graph '" + b.name() + "'");

  ReferenceIndex index(a, *ra);
  std::unordered_map<const Value*, size_t> outputSlot;
  for (size_t i = 0; i < b.outputs().size(); ++i)
    outputSlot.emplace(b.outputs()[i], i); // the first slot of a value listed twice

  NumericDiff diff;
  const Tolerance tol{atol, rtol};
  for (const auto& n : b.nodes()) {
    bool diverged = false;
    for (unsigned i = 0; i < n->numOutputs(); ++i) {
      const Value* vb = n->output(i);
      const Tensor* got = computedValue(*rb, vb);
      assert(got && "keepIntermediates keeps every node output");
      if (!got)
        continue;
      const Value* va = nullptr;
      ValueMatch match = ValueMatch::GraphOutput;
      auto slot = outputSlot.find(vb);
      if (slot != outputSlot.end() && slot->second < a.outputs().size()) {
        va = a.outputs()[slot->second];
      } else if ((va = index.byName(vb->name(), *got))) {
        match = ValueMatch::Name;
      } else if ((va = index.byNodeId(n->id(), i, *got))) {
        match = ValueMatch::NodeId;
      } else {
        unsigned k = 0;
        std::vector<NodeId> ids = provenanceOf(*n, i, k);
        va = index.byProvenance(ids, k, *got);
        match = ValueMatch::Provenance;
      }
      if (!va) {
        diff.unmatched.push_back(vb->name());
        continue;
      }
      const Tensor* ref = computedValue(*ra, va);
      assert(ref && "keepIntermediates keeps every value of the reference");
      if (!ref)
        continue;
      TensorComparison c = compareTensors(*ref, *got, tol);
      ValueComparison vc;
      vc.value = vb->name();
      vc.reference = va->name();
      vc.producer = n->id();
      vc.resultIndex = i;
      vc.match = match;
      vc.maxAbs = c.maxAbs;
      vc.maxRel = c.maxRel;
      vc.cosine = c.cosine;
      vc.ok = c.ok;
      vc.reason = c.reason;
      diverged = diverged || !c.ok;
      diff.values.push_back(std::move(vc));
    }
    if (diverged && !diff.firstDivergent)
      diff.firstDivergent = n->id();
  }
  return diff;
}

} // namespace fb
