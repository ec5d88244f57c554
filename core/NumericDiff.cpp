// Numeric diff: both graphs run on the interpreter, values matched by output slot and by what
// they mean (through provenance), compared elementwise.
#include "core/NumericDiff.h"
#include "core/Interpreter.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

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

/// What a value means: the original op it stands for (the last one, in the original order, of
/// those its producer was made from) and that op's output index. Original ids are handed out in
/// file order, which ONNX requires to be topological, so the largest id is the last op.
struct Meaning {
  NodeId op = 0;
  unsigned index = 0;
  bool operator==(const Meaning&) const = default;
};

struct MeaningHash {
  size_t operator()(const Meaning& m) const { return std::hash<uint64_t>()((uint64_t(m.op) << 8) ^ m.index); }
};

/// The meaning of output `output` of `n`: for a fused group, that of the body node yielding it;
/// for a node made from others (a Conv that absorbed a BatchNormalization), the last of them;
/// for an original node, itself. nullopt when a group passes an operand straight through.
std::optional<Meaning> meaningOf(const Node& n, unsigned output) {
  const Node* p = &n;
  unsigned index = output;
  if (n.op() == OpKind::Fused && n.body()) {
    if (output >= n.body()->outputs().size())
      return std::nullopt;
    const Value* inner = n.body()->outputs()[output];
    p = inner->producer();
    if (!p)
      return std::nullopt;
    index = inner->resultIndex();
  }
  NodeId last = p->id();
  if (!p->provenance().empty())
    last = *std::max_element(p->provenance().begin(), p->provenance().end());
  return Meaning{last, index};
}

/// True when `n` writes its result in a layout other than NCHW: a ReorderLayout to NHWC or a
/// blocked layout, or a layout op (LayoutConv, LayoutMaxPool, ...) computing in one.
bool isLayoutOp(OpKind op) {
  return op == OpKind::LayoutConv || op == OpKind::LayoutMaxPool ||
         op == OpKind::LayoutAveragePool || op == OpKind::LayoutGlobalAveragePool ||
         op == OpKind::LayoutGlobalMaxPool;
}

bool writesRelaid(const Node& n) {
  auto layout = n.attrs().getString(n.op() == OpKind::ReorderLayout ? "to" : "layout", "nchw");
  return !layout.ok() || *layout != "nchw";
}

/// Adds to `relaid` the values of `g` that hold their data in another layout than the original
/// model's NCHW: what a relaying node writes, and what any other node computes from such a value
/// (a Relu inside a layout region). Their shapes may happen to equal the NCHW ones, so they are
/// never compared. A ReorderLayout back to NCHW ends the region; fused bodies are followed.
void collectRelaid(const Graph& g, std::unordered_set<const Value*>& relaid) {
  for (const auto& n : g.nodes()) {
    bool out = false;
    if (n->op() == OpKind::ReorderLayout || isLayoutOp(n->op())) {
      out = writesRelaid(*n);
    } else {
      for (const Value* in : n->inputs())
        out = out || (in && relaid.count(in));
    }
    if (n->op() == OpKind::Fused && n->body()) {
      const Graph& body = *n->body();
      for (size_t i = 0; i < body.inputs().size() && i < n->numInputs(); ++i)
        if (n->input(i) && relaid.count(n->input(i)))
          relaid.insert(body.inputs()[i]);
      collectRelaid(body, relaid);
      for (size_t i = 0; i < n->numOutputs() && i < body.outputs().size(); ++i)
        if (relaid.count(body.outputs()[i]))
          relaid.insert(n->output(i));
      continue;
    }
    if (out)
      for (const Value* v : n->outputs())
        relaid.insert(v);
  }
}

/// For each meaning, the value of `g` that carries it: the last in execution order, since a
/// rewrite that splits one op into several (Gemm into MatMul and Add) gives them all its
/// provenance and only the last computes the op's result.
std::unordered_map<Meaning, const Value*, MeaningHash>
valuesByMeaning(const Graph& g, const std::unordered_set<const Value*>& relaid) {
  std::unordered_map<Meaning, const Value*, MeaningHash> out;
  for (const auto& n : g.nodes())
    for (unsigned i = 0; i < n->numOutputs(); ++i)
      if (std::optional<Meaning> m = meaningOf(*n, i))
        out[*m] = relaid.count(n->output(i)) ? nullptr : n->output(i);
  return out;
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

  // Values are matched by what they mean, never by name: after fold-batchnorm the Conv's
  // output keeps its name but holds the BatchNormalization's result.
  std::unordered_set<const Value*> relaid;
  collectRelaid(a, relaid);
  collectRelaid(b, relaid);
  const auto refByMeaning = valuesByMeaning(a, relaid);
  const auto carrierInB = valuesByMeaning(b, relaid);
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
      } else if (std::optional<Meaning> m = meaningOf(*n, i)) {
        auto carrier = carrierInB.find(*m);
        auto ref = refByMeaning.find(*m);
        // Only the value that completes the meaning is compared, and only with a reference of
        // the same dtype and shape (a blocked layout is not the same tensor).
        if (carrier != carrierInB.end() && carrier->second == vb && ref != refByMeaning.end() &&
            ref->second) {
          const Tensor* t = computedValue(*ra, ref->second);
          if (t && sameTypeAs(*t, *got)) {
            va = ref->second;
            match = m->op == n->id() && n->provenance().empty() ? ValueMatch::NodeId
                                                                : ValueMatch::Provenance;
          }
        }
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
