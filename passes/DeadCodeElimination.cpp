// dce: removes nodes and constants whose results nobody uses.
#include "core/ControlFlow.h"
#include "passes/Passes.h"

namespace fb {

namespace {

/// Dead-code elimination:
///   1. walk nodes in reverse execution order;
///   2. erase a node when none of its outputs is used or is a graph output (erasing it may make
///      its producers dead, which the reverse walk then sees);
///   3. erase constants that nothing reads;
///   4. do the same inside the bodies of If, Loop and Scan (a body's results count as used).
///      Uses of outer values inside a body are explicit operands of the node (closure
///      conversion), so the outer walk already sees them;
///   5. drop a capture that no body reads any more: the body inputs and the node's operand.
///      (Bodies are swept before their node is visited by the reverse walk of the next run; a
///      capture dropped here may leave its producer dead for that run.)
class DcePass : public Pass {
public:
  std::string name() const override { return "dce"; }
  std::string summary() const override { return "remove nodes and constants whose results are unused"; }
  std::string description() const override {
    return "Dead-code elimination deletes operations whose results are never used by anything "
           "that reaches a model output, and weights nobody reads. Exporters and earlier passes "
           "leave such leftovers behind (a shape computation that was folded away, the unused "
           "mask output of Dropout). Removing them saves compute and memory on every target.";
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    size_t nodes = 0, constants = 0;
    sweep(graph, ctx, nodes, constants);
    ctx.addStatistic("nodes removed", double(nodes));
    ctx.addStatistic("constants removed", double(constants));
    ctx.setSummary("removed " + std::to_string(nodes) + " dead nodes and " +
                   std::to_string(constants) + " unused constants");
    return nodes + constants > 0;
  }

private:
  static void sweep(Graph& graph, PassContext& ctx, size_t& nodes, size_t& constants) {
    std::vector<Node*> order;
    for (const auto& n : graph.nodes())
      order.push_back(n.get());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* n = *it;
      bool live = false;
      for (const Value* out : n->outputs())
        if (out->hasUses() || out->isGraphOutput())
          live = true;
      if (live || !ctx.mayRewrite())
        continue;
      ctx.logDeleted(n->id(), "unused");
      graph.eraseNode(n);
      ++nodes;
    }
    std::vector<Value*> deadConstants;
    for (Value* c : graph.constants())
      if (!c->hasUses() && !c->isGraphOutput() && ctx.mayRewrite())
        deadConstants.push_back(c);
    for (Value* c : deadConstants) {
      graph.eraseValue(c);
      ++constants;
    }
    for (const auto& n : graph.nodes()) {
      if (n->op() == OpKind::Fused || !n->hasBodies())
        continue;
      for (const NodeBody& b : n->bodies())
        sweep(*b.graph, ctx, nodes, constants);
      const size_t dropped = dropUnusedCaptures(*n, ctx);
      if (dropped)
        ctx.addStatistic("captures dropped", double(dropped));
    }
  }

  /// Removes the captures of a control-flow node that none of its bodies reads.
  static size_t dropUnusedCaptures(Node& n, PassContext& ctx) {
    auto layout = controlFlowLayout(n);
    if (!layout.ok())
      return 0;
    const ControlFlowLayout& l = *layout;
    std::vector<Value*> kept;
    std::vector<size_t> unused;
    for (size_t k = 0; k < l.numCaptures; ++k) {
      bool used = false;
      for (const NodeBody& b : n.bodies()) {
        const Value* in = b.graph->inputs()[l.bodyInputsBeforeCaptures + k];
        used = used || in->hasUses() || in->isGraphOutput();
      }
      if (used)
        kept.push_back(n.input(l.firstCapture + k));
      else
        unused.push_back(k);
    }
    if (unused.empty() || !ctx.mayRewrite())
      return 0;
    for (const NodeBody& b : n.bodies()) {
      std::vector<Value*> dead;
      for (size_t k : unused)
        dead.push_back(b.graph->inputs()[l.bodyInputsBeforeCaptures + k]);
      for (Value* v : dead)
        b.graph->eraseValue(v);
    }
    n.truncateInputs(l.firstCapture);
    for (Value* v : kept)
      n.addInput(v);
    if (n.op() != OpKind::If) {
      if (kept.empty())
        n.attrs().erase(kCapturesAttr);
      else
        n.attrs().set(kCapturesAttr, int64_t(kept.size()));
    }
    return unused.size();
  }
};

} // namespace

std::unique_ptr<Pass> createDcePass() { return std::make_unique<DcePass>(); }

} // namespace fb
