// fold-constants: evaluates sub-graphs whose inputs are all known at compile time.
#include "core/ShapeInference.h"
#include "core/ops/OpContext.h"
#include "passes/InlineBranch.h"
#include "passes/Passes.h"

#include <algorithm>

namespace fb {

namespace {

/// Replaces every output of `n` with a constant holding `values[i]`, keeping the output names,
/// and erases `n`. Returns the new constants.
std::vector<Value*> replaceWithConstants(Graph& graph, Node* n, std::vector<Tensor> values) {
  std::vector<std::string> names;
  std::vector<Value*> constants;
  for (size_t i = 0; i < n->numOutputs(); ++i) {
    Value* out = n->output(i);
    names.push_back(out->name());
    Value* c = graph.addConstant(graph.uniqueValueName(out->name() + ".folded"), values[i]);
    TensorType t = c->type();
    t.quant = out->type().quant;
    c->setType(t);
    out->replaceAllUsesWith(c);
    constants.push_back(c);
  }
  graph.eraseNode(n);
  for (size_t i = 0; i < constants.size(); ++i)
    if (!graph.findValue(names[i]))
      graph.renameValue(constants[i], names[i]);
  return constants;
}

/// Constant folding:
///   1. infer shapes (and the known contents of shape tensors), then walk nodes in execution
///      order;
///   2. a node whose operands are all constants is evaluated with the reference interpreter's
///      kernel, unless one of its outputs would exceed the size cap (max-elements, default 2^20)
///      and be larger than the node's largest constant operand;
///   3. Shape and Size of a value whose type is static, and any shape tensor whose contents shape
///      inference already knows (Shape->Gather->Concat chains), become constants without running;
///   4. each folded node is erased and its outputs become named constants; later nodes then see
///      constant operands, so chains fold in one walk;
///   5. when a walk folded something, shapes are inferred again (a folded operand can make a type
///      downstream static, and a static type lets its Shape fold) and the walk repeats until a
///      walk folds nothing;
///   6. the intermediate constants this walk created and then consumed are erased, so a folded
///      chain leaves one constant. Constants the model had before are left to dce.
///   6. an If whose condition is constant is replaced by the branch it takes (inlined; its nodes
///      are then visited by the same walk). No other node with a body is evaluated: a Loop or
///      Scan may run for long, and folding never looks inside bodies.
/// A kernel that rejects its constant operands (or is not implemented) leaves the node as it is:
/// folding must not turn what fails at run time, if ever reached, into a compile-time error.
class FoldConstantsPass : public Pass {
public:
  std::string name() const override { return "fold-constants"; }
  std::string summary() const override {
    return "evaluate at compile time what depends only on constants";
  }
  std::string description() const override {
    return "Constant folding computes, once at compile time, every operation whose inputs are "
           "all known in advance, and replaces it by its result. Exporters emit long chains that "
           "compute a tensor's shape (Shape, Gather, Unsqueeze, Concat) only to feed a Reshape; "
           "when the shapes are static these chains collapse to one constant. Fewer operations "
           "run at inference time on any hardware, and later passes see plain constants they "
           "can reason about. A size cap keeps folding from materializing huge tensors.";
  }
  std::vector<PassOptionSpec> options() const override {
    return {PassOptionSpec::integer(
        "max-elements", int64_t(1) << 20, 0, int64_t(1) << 30,
        "largest result (in elements) folded into a constant, unless no larger than "
        "its largest constant operand")};
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    FB_ASSIGN_OR_RETURN(int64_t cap, ctx.options().getInt("max-elements"));
    // Shape contents are what lets Shape->Gather->Concat chains fold; a parsed or edited graph
    // may not carry them yet.
    size_t folded = 0, skipped = 0, rounds = 0;
    std::vector<Value*> created;
    // A folded operand can make types downstream static (a Range whose limit became a constant),
    // and a static type lets Shape/Size fold in turn: walk again after re-inferring, until a walk
    // folds nothing. Each round folds at least one node, so this ends.
    size_t inlinedIfs = 0;
    for (bool again = true; again; ++rounds) {
      FB_TRY(inferShapes(graph));
      size_t before = folded + inlinedIfs;
      skipped = 0;
      std::vector<Node*> order;
      for (const auto& n : graph.nodes())
        order.push_back(n.get());
      for (size_t k = 0; k < order.size(); ++k) {
        Node* n = order[k];
        if (n->op() == OpKind::If) {
          const NodeId id = n->id();
          // Only an If with a constant condition is inlined: ask the rewrite counter for those.
          const Value* cond = n->input(0);
          if (!cond || !cond->isConstant() || cond->constantData().numElements() != 1 ||
              cond->constantData().dtype() != DType::Bool || !ctx.mayRewrite())
            continue;
          std::vector<Node*> inlined = inlineConstantIf(graph, n);
          if (inlined.empty())
            continue;
          std::vector<NodeId> by;
          for (Node* m : inlined)
            by.push_back(m->id());
          ctx.logReplaced(id, by, "constant condition: the taken branch is inlined");
          order.insert(order.end(), inlined.begin(), inlined.end());
          ++inlinedIfs;
          continue;
        }
        if (n->hasBodies())
          continue;
        auto values = tryFold(*n, cap);
        if (!values.ok()) {
          ++skipped;
          continue;
        }
        if (values->empty() || !ctx.mayRewrite())
          continue;
        ctx.logDeleted(n->id(), "folded to a constant");
        for (Value* c : replaceWithConstants(graph, n, std::move(values).value()))
          created.push_back(c);
        ++folded;
      }
      again = folded + inlinedIfs > before;
    }
    for (Value* c : created)
      if (!c->hasUses() && !c->isGraphOutput())
        graph.eraseValue(c);
    ctx.addStatistic("nodes folded", double(folded));
    ctx.addStatistic("rounds", double(rounds));
    if (inlinedIfs)
      ctx.addStatistic("If branches inlined", double(inlinedIfs));
    if (skipped)
      ctx.addStatistic("kernels that rejected constant operands", double(skipped));
    ctx.setSummary("folded " + std::to_string(folded) + " nodes into constants" +
                   (inlinedIfs ? ", inlined " + std::to_string(inlinedIfs) + " If branches" : ""));
    return folded + inlinedIfs > 0;
  }

private:
  /// The folded outputs of `n`, or an empty vector when it cannot be folded.
  static Expected<std::vector<Tensor>> tryFold(const Node& n, int64_t cap) {
    // Above the cap only what does not grow: an output no larger than the node's largest
    // constant operand (a Transpose, Reshape or Cast of a weight) folds at any size, so no
    // weight is rearranged again on every run.
    int64_t largestConstant = 0;
    for (const Value* in : n.inputs())
      if (in && in->isConstant())
        largestConstant = std::max(largestConstant, in->constantData().numElements());
    for (const Value* out : n.outputs()) {
      auto count = out->type().numElements();
      if (!count || (*count > cap && *count > largestConstant))
        return std::vector<Tensor>{};
    }
    // Shape tensors whose contents inference already knows.
    if (n.numOutputs() == 1) {
      const Value* out = n.output(0);
      const auto& sv = out->shapeValue();
      if (sv && out->type().dtype == DType::I64 && out->type().rank() <= 1) {
        std::vector<int64_t> vals;
        bool known = true;
        for (const Dim& d : *sv) {
          if (!d.isStatic()) {
            known = false;
            break;
          }
          vals.push_back(d.size());
        }
        auto count = out->type().numElements();
        if (known && count && *count == int64_t(vals.size()))
          return std::vector<Tensor>{Tensor::fromVector<int64_t>(out->type().staticSizes(), vals)};
      }
    }
    if (n.op() == OpKind::Size && n.input(0) && n.input(0)->type().isStatic())
      return std::vector<Tensor>{Tensor::scalar<int64_t>(*n.input(0)->type().numElements())};
    std::vector<Tensor> ins;
    for (const Value* in : n.inputs()) {
      if (!in) {
        ins.emplace_back();
        continue;
      }
      if (!in->isConstant())
        return std::vector<Tensor>{};
      ins.push_back(in->constantData());
    }
    if (n.numInputs() == 0 && n.op() != OpKind::Constant)
      return std::vector<Tensor>{};
    const OpInfo& info = n.info();
    if (!info.eval)
      return std::vector<Tensor>{};
    EvalContext ctx(n, std::move(ins));
    Status st = info.eval(ctx);
    if (!st.ok())
      return st.error().withContext("fold-constants");
    return std::move(ctx.outputs());
  }
};

} // namespace

std::unique_ptr<Pass> createFoldConstantsPass() { return std::make_unique<FoldConstantsPass>(); }

} // namespace fb
