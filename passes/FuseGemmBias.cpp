// fuse-gemm-bias: turns a 2-D MatMul followed by a bias Add into one Gemm.
#include "core/ShapeInference.h"
#include "passes/Passes.h"
#include "passes/RewriteUtil.h"

#include <map>

namespace fb {

namespace {

/// The float types Gemm accepts (as MatMul's shape inference and Gemm's kernel do).
bool isGemmFloat(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }

/// True when `bias` broadcasts one way to the 2-D type `target` (Gemm's rule for C): rank at
/// most 2, each dim 1 or the target's. Unknown dims are refused: they might be anything.
bool broadcastsTo(const TensorType& bias, const TensorType& target) {
  if (bias.rank() > 2 || target.rank() != 2 || bias.dtype != target.dtype)
    return false;
  for (size_t i = 0; i < bias.rank(); ++i) {
    const Dim& b = bias.dims[i];
    const Dim& t = target.dims[2 - bias.rank() + i];
    if (b.isUnknown() || !(b == Dim(1) || b == t))
      return false;
  }
  return true;
}

/// Why a MatMul+Add pair was not fused, for the statistics; empty when it can be.
std::string whyNotFusable(const Node& matmul, const Node& add, size_t biasOperand) {
  const Value* a = matmul.input(0);
  const Value* b = matmul.input(1);
  const Value* out = matmul.output(0);
  if (a->type().rank() != 2 || b->type().rank() != 2)
    return "not 2-D (Gemm is 2-D only)";
  if (!isGemmFloat(a->type().dtype) || b->type().dtype != a->type().dtype)
    return "not a float type Gemm supports";
  if (out->isGraphOutput() || out->uses().size() != 1)
    return "MatMul result used elsewhere";
  // The Add must not broadcast the product to a larger shape: Gemm's result is [M, N].
  if (!sameType(add.output(0)->type(), out->type()) ||
      !broadcastsTo(add.input(biasOperand)->type(), out->type()))
    return "bias does not broadcast to [M, N]";
  return {};
}

/// Fuse-gemm-bias, for every Add in execution order:
///   1. find an operand produced by a MatMul (the other operand is the bias);
///   2. require A and B 2-D of a float type (Gemm is 2-D only: the 3-D MatMuls of transformer
///      blocks are left alone), the MatMul's result read only by this Add, and a bias that
///      broadcasts to [M, N] without enlarging the result;
///   3. insert Gemm(A, B, bias) {alpha = 1, beta = 1} in the Add's place; it takes the Add's
///      output name and uses, and its provenance covers the MatMul and the Add;
///   4. erase the Add and the MatMul, and re-infer shapes.
class FuseGemmBiasPass : public Pass {
public:
  std::string name() const override { return "fuse-gemm-bias"; }
  std::string summary() const override {
    return "turn a 2-D MatMul followed by a bias Add into one Gemm";
  }
  std::string description() const override {
    return "A fully connected layer is often exported as a MatMul followed by an Add of the "
           "bias. Gemm computes A·B + C in one operation, so this pass replaces the pair by a "
           "single Gemm: the bias is added while each output element is still in a register, "
           "instead of writing the whole product to memory and reading it back for the Add. "
           "That saves a full round trip of the activation through memory on CPUs and GPUs, "
           "and BLAS libraries and tensor-core kernels take the bias as an epilogue for free. "
           "Gemm is defined for 2-D matrices only, so the batched 3-D MatMuls of transformer "
           "blocks ([batch, tokens, features]) are left alone.";
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    std::vector<Node*> adds;
    for (const auto& n : graph.nodes())
      if (n->op() == OpKind::Add)
        adds.push_back(n.get());
    int64_t fused = 0;
    std::map<std::string, int64_t> skipped; // reason -> count, for the summary
    for (Node* add : adds) {
      Node* matmul = nullptr;
      size_t biasOperand = 0;
      for (size_t i = 0; i < 2 && !matmul; ++i) {
        Node* p = add->input(i) ? add->input(i)->producer() : nullptr;
        if (p && p->op() == OpKind::MatMul && add->input(1 - i)) {
          matmul = p;
          biasOperand = 1 - i;
        }
      }
      if (!matmul)
        continue;
      std::string why = whyNotFusable(*matmul, *add, biasOperand);
      if (!why.empty()) {
        ctx.addStatistic("MatMul+Add left alone: " + why);
        ++skipped[why];
        continue;
      }
      if (!ctx.mayRewrite())
        continue;
      fuse(graph, matmul, add, biasOperand, ctx);
      ++fused;
    }
    ctx.addStatistic("MatMul+Add fused into Gemm", double(fused));
    std::string summary = "fused " + std::to_string(fused) + " MatMul+Add into Gemm";
    for (const auto& [why, count] : skipped)
      summary += "; " + std::to_string(count) + " left alone: " + why;
    ctx.setSummary(summary);
    if (fused)
      FB_TRY(inferShapes(graph));
    return fused > 0;
  }

private:
  static void fuse(Graph& g, Node* matmul, Node* add, size_t biasOperand, PassContext& ctx) {
    Value* out = add->output(0);
    // The Gemm replaces the Add, so it takes over the Add's output name (and its graph-output
    // slot, if any, through replaceAllUsesWith).
    std::string name = out->name();
    g.renameValue(out, g.uniqueValueName(name + ".old"));
    Node* gemm = g.insertNodeBefore(add, OpKind::Gemm,
                                    {matmul->input(0), matmul->input(1), add->input(biasOperand)},
                                    1, {name}, matmul->name());
    gemm->attrs().set("alpha", 1.0f);
    gemm->attrs().set("beta", 1.0f);
    gemm->output(0)->setType(out->type());
    gemm->addProvenanceFrom(*matmul);
    gemm->addProvenanceFrom(*add);
    ctx.logCreated(gemm->id(), {matmul->id(), add->id()}, "MatMul+Add");
    ctx.logReplaced(matmul->id(), {gemm->id()}, "fused into Gemm");
    ctx.logReplaced(add->id(), {gemm->id()}, "bias of Gemm");
    out->replaceAllUsesWith(gemm->output(0));
    g.eraseNode(add);
    g.eraseNode(matmul);
  }
};

} // namespace

std::unique_ptr<Pass> createFuseGemmBiasPass() { return std::make_unique<FuseGemmBiasPass>(); }

} // namespace fb
