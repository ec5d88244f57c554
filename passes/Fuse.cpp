// fuse: operator fusion in the manner of TVM's FuseOps, materializing each group as a fused node.
#include "core/Cost.h"
#include "core/ShapeInference.h"
#include "passes/FusePartition.h"
#include "passes/Passes.h"

#include <cassert>
#include <cctype>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace fb {

namespace {

/// "4.2 MiB": binary units, one decimal.
std::string formatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t u = 0;
  while (bytes >= 1024 && u + 1 < std::size(units)) {
    bytes /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

std::string lowercase(std::string s) {
  for (char& c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// TVM-style function name from the member ops: "fused_conv_add_relu".
std::string bodyName(const FusionGroup& group) {
  std::string name = "fused";
  size_t listed = 0;
  for (const Node* m : group.members) {
    std::string part = "_" + lowercase(opName(m->op()));
    if (name.size() + part.size() > 48)
      break;
    name += part;
    ++listed;
  }
  if (listed < group.members.size())
    name += "_and_" + std::to_string(group.members.size() - listed) + "_more";
  return name;
}

/// "fused:/conv1/Conv+/relu1/Relu": the members' model names, anchor first, so a user finds
/// the original ops; long groups name the anchor and a count.
std::string nodeName(const FusionGroup& group) {
  auto label = [](const Node* n) {
    return n->name().empty() ? std::string(opName(n->op())) + "#" + std::to_string(n->id())
                             : n->name();
  };
  std::string name = "fused:" + label(group.anchor);
  for (const Node* m : group.members)
    if (m != group.anchor)
      name += "+" + label(m);
  if (name.size() <= 120)
    return name;
  return "fused:" + label(group.anchor) + "+" + std::to_string(group.members.size() - 1) +
         " more";
}

/// What materializing the groups saved, for the statistics.
struct FuseTotals {
  size_t groups = 0;
  size_t opsFused = 0;
  size_t intermediates = 0;
  double bytesSaved = 0;
};

/// Replaces the members of `group` by one fused node whose body holds copies of them with their
/// original ids. Operands are the values flowing in (constants included, so the body is a pure
/// function of its inputs), except constants that shape inference reads (Reshape's target),
/// which the body keeps as its own constants. Results are the values used outside the group or
/// listed as graph outputs, and keep their names.
Status materializeGroup(Graph& graph, const FusionGroup& group, PassContext& ctx,
                        FuseTotals& totals) {
  std::unordered_set<const Node*> members(group.members.begin(), group.members.end());
  // Values some member reads as a shape parameter: the body needs their data, not just a type.
  std::unordered_set<const Value*> parameters;
  for (const Node* m : group.members) {
    OperandRoles roles = classifyOperands(*m);
    assert(roles.fusible && "the partitioner grouped a node that cannot be fused");
    for (size_t i = 0; i < m->numInputs(); ++i)
      if (roles.shapeParameter[i])
        parameters.insert(m->input(i));
  }

  auto body = std::make_unique<Graph>(bodyName(group));
  const Graph* root = &graph;
  while (root->parent())
    root = root->parent();
  body->setOpset(root->opset());
  std::unordered_map<const Value*, Value*> inBody;
  std::vector<Value*> operands;
  auto bodyValueOf = [&](Value* v) -> Value* {
    if (auto it = inBody.find(v); it != inBody.end())
      return it->second;
    Value* b = nullptr;
    if (parameters.count(v)) {
      const Tensor* data = knownOperandData(v);
      assert(data && "a shape parameter without data was classified as fusible");
      b = body->addConstant(v->name(), *data); // shares the data
      TensorType t = b->type();
      t.quant = v->type().quant;
      b->setType(t);
    } else {
      b = body->addInput(v->name(), v->type());
      operands.push_back(v);
    }
    inBody[v] = b;
    return b;
  };

  std::vector<Value*> results; // member outputs that leave the group
  for (Node* m : group.members) {
    std::vector<Value*> ins;
    for (Value* v : m->inputs())
      ins.push_back(!v ? nullptr
                       : (v->producer() && members.count(v->producer())) ? inBody.at(v)
                                                                         : bodyValueOf(v));
    std::vector<std::string> outNames;
    for (const Value* out : m->outputs())
      outNames.push_back(out->name());
    Node* copy =
        body->addNodeWithId(m->id(), m->op(), ins, m->numOutputs(), outNames, m->name());
    copy->attrs() = m->attrs();
    copy->setProvenance(m->provenance());
    for (size_t k = 0; k < m->numOutputs(); ++k) {
      Value* out = m->output(k);
      copy->output(k)->setType(out->type());
      copy->output(k)->setShapeValue(out->shapeValue());
      inBody[out] = copy->output(k);
      bool escapes = out->isGraphOutput();
      for (const Use& u : out->uses())
        escapes = escapes || !members.count(u.user);
      if (escapes)
        results.push_back(out);
      else if (out->hasUses()) {
        // Written and read back inside one kernel now: never materialized in memory.
        ++totals.intermediates;
        totals.bytesSaved += typeBytes(out->type()) * double(1 + out->uses().size());
      }
    }
  }
  if (results.empty()) // a dead group still needs a result to be a valid node
    results.assign(group.members.back()->outputs().begin(),
                   group.members.back()->outputs().end());
  std::vector<Value*> bodyOutputs;
  for (Value* r : results)
    bodyOutputs.push_back(inBody.at(r));
  body->setOutputs(bodyOutputs);

  std::vector<std::string> tmpNames;
  for (Value* r : results)
    tmpNames.push_back(graph.uniqueValueName(r->name() + ".fused"));
  Node* fused = graph.insertNodeBefore(group.members.front(), OpKind::Fused, operands,
                                       results.size(), tmpNames, nodeName(group));
  fused->setBody(std::move(body));
  // The group is a new node made from its members: its provenance is the union of theirs (a
  // member with empty provenance is an original and stands for itself).
  std::vector<NodeId> from, provenance;
  for (const Node* m : group.members) {
    from.push_back(m->id());
    if (m->provenance().empty())
      provenance.push_back(m->id());
    else
      provenance.insert(provenance.end(), m->provenance().begin(), m->provenance().end());
  }
  fused->setProvenance(std::move(provenance));
  for (size_t k = 0; k < results.size(); ++k) {
    Value* out = fused->output(k);
    out->setType(results[k]->type());
    out->setShapeValue(results[k]->shapeValue());
    std::vector<Use> uses = results[k]->uses();
    for (const Use& u : uses)
      if (!members.count(u.user))
        u.user->setInput(u.operand, out);
    for (size_t i = 0; i < graph.outputs().size(); ++i)
      if (graph.outputs()[i] == results[k])
        graph.setOutput(i, out);
  }
  std::vector<std::string> names;
  for (Value* r : results)
    names.push_back(r->name());
  for (auto it = group.members.rbegin(); it != group.members.rend(); ++it)
    graph.eraseNode(*it);
  // The original names are free again: the group's results take them over.
  for (size_t k = 0; k < results.size(); ++k)
    graph.renameValue(fused->output(k), names[k]);

  ctx.logCreated(fused->id(), from,
                 fused->body()->name() + ": " + std::to_string(group.members.size()) + " ops");
  ++totals.groups;
  totals.opsFused += group.members.size();
  return Status::success();
}

/// Operator fusion, after TVM's FuseOps:
///   1. build the dataflow graph of the top-level nodes (constants and graph inputs are not
///      nodes); each op has a fusion category from the op table, and nodes whose shapes depend
///      on a run-time shape tensor are treated as opaque;
///   2. compute the post-dominator tree (immediate post-dominator = least common ancestor of
///      the consumers; graph outputs hang off a virtual sink);
///   3. partition with union-find in three phases: complex ops (Conv, MatMul, Gemm, pooling)
///      absorb their elementwise epilogue; elementwise/broadcast chains join reductions and other
///      fusible post-dominators; injective chains fuse together. Opaque ops never fuse; a group
///      holds at most max-group-size ops (default 16) and one anchor, and no path may leave a
///      group and come back;
///   4. replace each group of two or more ops by a fused node whose body holds the original
///      nodes with their original ids; the group's provenance is the union of its members;
///   5. restore a topological order and re-infer shapes.
class FusePass : public Pass {
public:
  std::string name() const override { return "fuse"; }
  std::string summary() const override {
    return "group ops into fused kernels (conv/matmul + epilogue, elementwise and injective "
           "chains), after TVM's FuseOps";
  }
  std::string description() const override {
    return "Operator fusion merges several operations into one kernel, so the tensors passed "
           "between them never go to memory. An elementwise op such as Relu or Add does one "
           "arithmetic operation per element but reads and writes every element, so on CPUs and "
           "GPUs alike its time is spent moving data, not computing; applied to a convolution's "
           "output inside the convolution's kernel it is almost free. The pass works like TVM's "
           "FuseOps: it gives every op a category (elementwise, broadcast, injective, reduction, "
           "complex such as Conv or MatMul, opaque), finds for every node the point that all its "
           "consumers eventually flow into (its post-dominator), and merges a node with that "
           "point when every op in between is simple enough: a Conv or MatMul absorbs its "
           "elementwise epilogue (bias, batch-norm scale, residual Add, Relu, Clip), elementwise "
           "chains join the reduction they feed, and reshapes and transposes fuse with each "
           "other. Ops such as Softmax or LayerNormalization stay alone. Each group becomes one "
           "'fused' node whose body still holds the original ops, so you can see exactly what "
           "was merged and how many bytes of intermediate tensors no longer travel to memory.";
  }
  std::vector<PassOptionSpec> options() const override {
    return {PassOptionSpec::integer("max-group-size", 16, 1, 100000,
                                    "most ops one fused group may hold"),
            PassOptionSpec::boolean("verify-convexity", false,
                                    "check the bounded cycle search against the exhaustive "
                                    "one on every union (slow: for debugging)")};
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    FB_ASSIGN_OR_RETURN(int64_t limit, ctx.options().getInt("max-group-size"));
    FusionOptions options;
    options.maxGroupSize = size_t(limit);
    FB_ASSIGN_OR_RETURN(options.verifyConvexity, ctx.options().getBool("verify-convexity"));
    // One union is one rewrite: stopping after N leaves the groups the first N unions made.
    options.mayUnite = [&ctx]() -> int64_t { return ctx.mayRewrite() ? ctx.rewrites() : 0; };
    FusionPlan plan = planFusion(graph, options);
    if (plan.convexityMismatches || plan.orderViolations)
      return makeError("fuse: partitioner bug (verify-convexity): ", plan.convexityMismatches,
                       " unions where the bounded cycle search disagreed with the exhaustive one, ",
                       plan.orderViolations, " where the order of the groups broke");
    FuseTotals totals;
    for (const FusionGroup& group : plan.groups) {
      ctx.attributeToRewrite(group.lastUnion);
      FB_TRY(materializeGroup(graph, group, ctx, totals));
    }
    ctx.attributeToRewrite(0);
    if (totals.groups) {
      FB_TRY(graph.topologicalSort());
      FB_TRY(inferShapes(graph));
    }
    ctx.addStatistic("groups formed", double(totals.groups));
    ctx.addStatistic("ops fused", double(totals.opsFused));
    ctx.addStatistic("intermediate tensors eliminated", double(totals.intermediates));
    ctx.addStatistic("bytes of memory traffic saved", totals.bytesSaved);
    if (plan.refusedForSize)
      ctx.addStatistic("fusions refused: group size limit", double(plan.refusedForSize));
    if (plan.refusedForCycle)
      ctx.addStatistic("fusions refused: would create a cycle", double(plan.refusedForCycle));
    if (plan.refusedForAnchors)
      ctx.addStatistic("fusions refused: two anchors", double(plan.refusedForAnchors));
    std::string summary = "formed " + std::to_string(totals.groups) +
                          (totals.groups == 1 ? " group" : " groups") + " from " +
                          std::to_string(totals.opsFused) + " ops; " +
                          std::to_string(totals.intermediates) +
                          (totals.intermediates == 1 ? " intermediate tensor (" :
                                                       " intermediate tensors (") +
                          formatBytes(totals.bytesSaved) + " of traffic) eliminated";
    ctx.setSummary(summary);
    return totals.groups > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createFusePass() { return std::make_unique<FusePass>(); }

} // namespace fb
