// Graph verifier.
#include "core/Verifier.h"
#include "core/ControlFlow.h"
#include "core/ShapeInference.h"

#include <algorithm>
#include <unordered_set>

namespace fb {

namespace {

class Verifier {
public:

  Status verifyGraph(const Graph& g) {
    std::unordered_set<const Value*> defined;
    for (const Value* v : g.inputs()) {
      if (v->graph() != &g || !v->isInput())
        return makeError("graph input '", v->name(), "' is not an input of this graph");
      FB_TRY(checkType(v->type(), "input '" + v->name() + "'"));
      defined.insert(v);
    }
    for (const Value* c : g.constants()) {
      if (c->graph() != &g || !c->isConstant())
        return makeError("constant '", c->name(), "' is not a constant of this graph");
      const Tensor& t = c->constantData();
      if (!t.valid())
        return makeError("constant '", c->name(), "' has no data");
      if (t.dtype() != c->type().dtype || TensorType::of(t.dtype(), t.sizes()).dims != c->type().dims)
        return makeError("constant '", c->name(), "' is declared ", c->type().str(),
                         " but holds ", t.type().str());
      defined.insert(c);
    }
    for (const auto& np : g.nodes()) {
      const Node& n = *np;
      if (n.graph() != &g)
        return makeError(n.describe(), ": node is listed in a graph that does not own it");
      if (!m_ids.insert(n.id()).second)
        return makeError(n.describe(), ": node id #", n.id(), " is used twice");
      const OpInfo& info = n.info();
      int nin = int(n.numInputs());
      if (nin < info.minInputs || (info.maxInputs >= 0 && nin > info.maxInputs))
        return makeError(n.describe(), ": has ", nin, " inputs; ", info.name, " takes ",
                         arity(info.minInputs, info.maxInputs));
      int nout = int(n.numOutputs());
      if (nout < info.minOutputs || (info.maxOutputs >= 0 && nout > info.maxOutputs))
        return makeError(n.describe(), ": has ", nout, " outputs; ", info.name, " gives ",
                         arity(info.minOutputs, info.maxOutputs));
      for (size_t i = 0; i < n.numInputs(); ++i) {
        const Value* in = n.input(i);
        if (!in) {
          if (int(i) < info.minInputs)
            return makeError(n.describe(), ": required input ", i, " is missing");
          continue;
        }
        if (in->graph() != &g)
          return makeError(n.describe(), ": input ", i, " '", in->name(),
                           "' belongs to another graph");
        if (!defined.count(in))
          return makeError(n.describe(), ": input ", i, " '", in->name(),
                           "' is used before it is defined (or the graph has a cycle)");
        const auto& uses = in->uses();
        if (std::find(uses.begin(), uses.end(), Use{const_cast<Node*>(&n), unsigned(i)}) ==
            uses.end())
          return makeError(n.describe(), ": use list of '", in->name(), "' is out of sync");
      }
      for (size_t i = 0; i < n.numOutputs(); ++i) {
        const Value* out = n.output(i);
        if (out->producer() != &n || out->resultIndex() != i || out->graph() != &g)
          return makeError(n.describe(), ": output ", i, " does not point back to its node");
        if (!defined.insert(out).second)
          return makeError(n.describe(), ": output '", out->name(), "' is defined twice");
        FB_TRY(checkType(out->type(), n.describe() + " output '" + out->name() + "'"));
      }
      if (n.op() == OpKind::Fused)
        FB_TRY(verifyFused(n));
      else if (isControlFlowOp(n.op()))
        FB_TRY(verifyControlFlow(n));
      else if (n.hasBodies())
        return makeError(n.describe(), ": only fused groups, If, Loop and Scan have bodies");
    }
    for (const Value* out : g.outputs()) {
      if (!out)
        return makeError("graph '", g.name(), "' has an empty output slot");
      if (!defined.count(out))
        return makeError("graph output '", out->name(), "' is not defined in graph '", g.name(),
                         "'");
    }
    if (g.outputs().empty())
      return makeError("graph '", g.name(), "' has no outputs");
    return Status::success();
  }

  Status verifyTypes(const Graph& g) {
    auto copy = g.clone();
    FB_TRY(inferShapes(*copy));
    return compareTypes(g, *copy);
  }

private:
  /// Stored types of `g` (and its bodies) against those of its re-inferred copy.
  static Status compareTypes(const Graph& g, const Graph& copy) {
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      const Node& n = *g.nodes()[i];
      const Node& c = *copy.nodes()[i];
      for (size_t k = 0; k < n.numOutputs(); ++k) {
        const TensorType& have = n.output(k)->type();
        const TensorType& want = c.output(k)->type();
        if (have.dtype != want.dtype || have.dims != want.dims)
          return makeError(n.describe(), ": output '", n.output(k)->name(), "' is typed ",
                           have.str(), " but the op table infers ", want.str());
      }
      for (size_t b = 0; b < n.bodies().size(); ++b) {
        Status st = compareTypes(*n.bodies()[b].graph, *c.bodies()[b].graph);
        if (!st.ok())
          return st.error().withContext("in body '" + n.bodies()[b].role + "' of " +
                                        n.describe());
      }
    }
    return Status::success();
  }

  static std::string arity(int lo, int hi) {
    if (hi < 0)
      return std::to_string(lo) + " or more";
    if (lo == hi)
      return std::to_string(lo);
    return std::to_string(lo) + " to " + std::to_string(hi);
  }

  static Status checkType(const TensorType& t, const std::string& what) {
    for (const Dim& d : t.dims)
      if (d.isStatic() && d.size() < 0)
        return makeError(what, " has a negative dimension in ", t.str());
    return Status::success();
  }

  Status verifyControlFlow(const Node& n) {
    FB_ASSIGN_OR_RETURN(ControlFlowLayout l, controlFlowLayout(n));
    for (size_t i = 0; i < l.numCaptures; ++i)
      if (!n.input(l.firstCapture + i))
        return makeError(n.describe(), ": captured operand ", l.firstCapture + i, " is absent");
    for (const NodeBody& b : n.bodies()) {
      Status st = verifyGraph(*b.graph);
      if (!st.ok())
        return st.error().withContext("in body '" + b.role + "' of " + n.describe());
    }
    return Status::success();
  }

  Status verifyFused(const Node& n) {
    const Graph* body = n.body();
    if (!body || n.bodies().size() != 1)
      return makeError(n.describe(), ": fused group must have exactly one body");
    if (body->inputs().size() != n.numInputs())
      return makeError(n.describe(), ": body takes ", body->inputs().size(),
                       " inputs but the group has ", n.numInputs());
    if (body->outputs().size() != n.numOutputs())
      return makeError(n.describe(), ": body yields ", body->outputs().size(),
                       " outputs but the group has ", n.numOutputs());
    for (size_t i = 0; i < n.numInputs(); ++i)
      if (!n.input(i))
        return makeError(n.describe(), ": fused group input ", i, " is absent");
    Status st = verifyGraph(*body);
    if (!st.ok())
      return st.error().withContext("in the body of " + n.describe());
    return Status::success();
  }

  std::unordered_set<NodeId> m_ids;
};

} // namespace

Status verify(const Graph& graph, const VerifyOptions& options) {
  Verifier v;
  FB_TRY(v.verifyGraph(graph));
  if (options.checkTypes)
    FB_TRY(v.verifyTypes(graph));
  return Status::success();
}

} // namespace fb
