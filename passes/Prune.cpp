// prune: magnitude pruning of Conv/ConvTranspose/Gemm/MatMul weights, unstructured (zeroing the
// smallest weights) or structured (removing whole Conv output channels).
#include "core/Cost.h"
#include "core/Format.h"
#include "core/ShapeInference.h"
#include "passes/OutputDeviation.h"
#include "passes/Passes.h"
#include "passes/PruneChannels.h"
#include "passes/RewriteUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace fb {

namespace {

/// The pass's options, validated.
struct PruneOptions {
  double sparsity = 0.5;
  bool structured = false;
  ChannelScore score = ChannelScore::L1;
  bool global = true;
  int64_t eval = 4; ///< seeded inputs for the output-deviation report (0: none)
};

/// Reads and checks the options; errors name the option and the accepted values.
/// The options prune declares; readOptions reads them after the pass manager has checked them
/// and filled in the defaults.
std::vector<PassOptionSpec> pruneOptionSpecs() {
  return {
      PassOptionSpec::number("sparsity", 0.5, 0.0, 1.0, "fraction of weights (or channels) removed"),
      PassOptionSpec::boolean("structured", false, "remove whole Conv output channels"),
      PassOptionSpec::oneOf("score", {"l1", "l2"}, "l1", "norm that ranks a channel's filter"),
      PassOptionSpec::oneOf("scope", {"global", "layer"}, "global",
                            "one threshold for the model, or one per layer"),
      PassOptionSpec::integer("eval", 4, 0, 4096,
                              "seeded inputs the output deviation is measured on (0: none)"),
  };
}

Expected<PruneOptions> readOptions(const PassOptions& o) {
  PruneOptions p;
  FB_ASSIGN_OR_RETURN(p.sparsity, o.getDouble("sparsity"));
  FB_ASSIGN_OR_RETURN(p.structured, o.getBool("structured"));
  p.score = o.declared("score") == "l1" ? ChannelScore::L1 : ChannelScore::L2;
  p.global = o.declared("scope") == "global";
  FB_ASSIGN_OR_RETURN(p.eval, o.getInt("eval"));
  return p;
}

/// "812", "74.2K", "116M", "1.5G": counts for the summary line.
std::string humanCount(double x) { return formatCount(x, Digits::decimalsBelow100(1)); }

/// The distinct constant f32 weights of Conv, ConvTranspose, Gemm and MatMul (operand 1),
/// in graph order. Biases (operand 2) are not weights here: they are few and matter a lot.
std::vector<Value*> prunableWeights(const Graph& g) {
  std::vector<Value*> weights;
  for (const auto& n : g.nodes()) {
    const OpKind op = n->op();
    if (op != OpKind::Conv && op != OpKind::ConvTranspose && op != OpKind::Gemm &&
        op != OpKind::MatMul)
      continue;
    Value* w = n->input(1);
    const Tensor* t = constantOf(w);
    if (t && t->dtype() == DType::F32 && t->numElements() > 0 &&
        std::find(weights.begin(), weights.end(), w) == weights.end())
      weights.push_back(w);
  }
  return weights;
}

/// One weight element: which tensor, which element, and its magnitude.
struct WeightRef {
  float magnitude;
  uint32_t tensor;
  int64_t index;
  bool operator<(const WeightRef& o) const {
    if (magnitude != o.magnitude)
      return magnitude < o.magnitude;
    return tensor != o.tensor ? tensor < o.tensor : index < o.index;
  }
};

/// How many of `n` elements a sparsity asks to zero, rounded to nearest.
int64_t zeroCount(double sparsity, int64_t n) {
  return std::min(n, int64_t(std::llround(sparsity * double(n))));
}

/// Marks in `zero` the `count` smallest entries of `refs` (ties broken by position).
void markSmallest(std::vector<WeightRef>& refs, int64_t count,
                  std::vector<std::vector<bool>>& zero) {
  if (count <= 0)
    return;
  std::nth_element(refs.begin(), refs.begin() + (count - 1), refs.end());
  for (int64_t i = 0; i < count; ++i)
    zero[refs[size_t(i)].tensor][size_t(refs[size_t(i)].index)] = true;
}

/// Zeroes the smallest-magnitude weights, one threshold over all weights (global) or one per
/// tensor (layer). Returns the number of weights zeroed and considered.
std::pair<int64_t, int64_t> pruneUnstructured(Graph& g, double sparsity, bool global,
                                               PassContext& ctx) {
  std::vector<Value*> weights = prunableWeights(g);
  std::vector<std::vector<bool>> zero(weights.size());
  std::vector<WeightRef> all;
  int64_t total = 0;
  for (uint32_t t = 0; t < weights.size(); ++t) {
    auto d = weights[t]->constantData().data<float>();
    zero[t].assign(d.size(), false);
    std::vector<WeightRef> refs;
    for (size_t i = 0; i < d.size(); ++i)
      refs.push_back({std::fabs(d[i]), t, int64_t(i)});
    total += int64_t(d.size());
    if (global)
      all.insert(all.end(), refs.begin(), refs.end());
    else
      markSmallest(refs, zeroCount(sparsity, int64_t(refs.size())), zero);
  }
  if (global)
    markSmallest(all, zeroCount(sparsity, total), zero);

  int64_t zeroed = 0;
  for (uint32_t t = 0; t < weights.size(); ++t) {
    const int64_t n = std::count(zero[t].begin(), zero[t].end(), true);
    if (n == 0 || !ctx.mayRewrite()) // one weight tensor is one rewrite
      continue;
    Value* old = weights[t];
    Tensor fresh(DType::F32, old->constantData().sizes());
    auto src = old->constantData().data<float>();
    auto dst = fresh.mutableData<float>();
    for (size_t i = 0; i < src.size(); ++i)
      dst[i] = zero[t][i] ? 0.0f : src[i];
    Value* nv = g.addConstant(g.uniqueValueName(old->name() + ".pruned"), std::move(fresh));
    // Every reader of a shared weight sees the pruned one, as a trained sparse model would.
    std::vector<Use> uses = old->uses();
    for (const Use& u : uses)
      u.user->setInput(u.operand, nv);
    if (!old->hasUses() && !old->isGraphOutput())
      g.eraseValue(old);
    zeroed += n;
  }
  return {zeroed, total};
}

/// Prune, with options sparsity (fraction in [0, 1]), structured, score (l1|l2) and scope
/// (global|layer):
///   1. validate the options; an out-of-range value fails naming the option;
///   2. unstructured: gather every constant f32 weight (operand 1) of Conv, ConvTranspose, Gemm
///      and MatMul; with scope=global rank all their elements by |w| together, with scope=layer
///      each tensor alone; zero the round(sparsity·n) smallest (ties: earlier tensor and element
///      first) into new constants; biases are never touched;
///   2'. structured: for each dense Conv, walk every consumer path of its output through
///      channel-wise ops (BatchNormalization, activations, pooling, elementwise ops with
///      per-channel or shared constants, depthwise Convs) to the ops that read the channels
///      (the next Conv's input channels, a Gemm after GlobalAveragePool→Flatten); if any path
///      ends elsewhere (a residual Add, a Concat, a graph output) the Conv is left alone;
///      otherwise drop its floor(sparsity·C) output channels of lowest L1/L2 filter norm (at
///      least one channel stays) and shrink every constant on those paths to the kept channels;
///   3. re-infer shapes and report parameters and FLOPs before and after, and (eval=N, default
///      4) the output deviation from the unpruned model on N seeded inputs.
/// Nodes keep their ids (no node is created or removed), so provenance is unchanged.
class PrunePass : public Pass {
public:
  std::string name() const override { return "prune"; }
  std::string summary() const override {
    return "magnitude pruning: zero small weights or remove whole low-norm Conv channels";
  }
  std::string description() const override {
    return "Pruning removes the weights a trained network needs least, judged here by their "
           "magnitude. Unstructured pruning (structured=false) sets the smallest |w| of every "
           "Conv, Gemm and MatMul weight to zero, either with one threshold across the model "
           "(scope=global) or per layer (scope=layer). The tensors keep their shape, so dense "
           "hardware does exactly the same multiplications as before: the zeros only pay off "
           "with sparse kernels, sparse tensor cores (2:4 patterns) or compression. Structured "
           "pruning (structured=true) removes whole output channels of a Conv, those whose "
           "filter has the lowest L1 or L2 norm, and shrinks everything that reads them: the "
           "bias, a following BatchNormalization, per-channel constants, depthwise Convs and "
           "the next Conv's or Gemm's input. The tensors really get smaller, so every CPU and "
           "GPU does less work. A Conv whose channels must match another branch (a residual "
           "Add, a Concat, a model output) is left alone. Pruning changes the outputs: real "
           "flows fine-tune the network afterwards to win the accuracy back.";
  }

  std::vector<PassOptionSpec> options() const override { return pruneOptionSpecs(); }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    FB_ASSIGN_OR_RETURN(PruneOptions opt, readOptions(ctx.options()));
    const ModelStats before = computeModelStats(graph);
    // The original, for the output-deviation report (constants are shared: the copy is cheap).
    std::unique_ptr<Graph> original = opt.eval > 0 ? graph.clone() : nullptr;
    char pct[16];
    std::snprintf(pct, sizeof pct, "%g%%", opt.sparsity * 100.0);
    bool changed = false;
    std::string summary;
    if (opt.structured) {
      ChannelPruneResult r =
          pruneConvChannels(graph, opt.sparsity, opt.score, [&ctx] { return ctx.mayRewrite(); });
      changed = r.convsPruned > 0;
      if (changed)
        FB_TRY(inferShapes(graph));
      ctx.addStatistic("channels removed", double(r.channelsRemoved));
      ctx.addStatistic("channels considered", double(r.channelsConsidered));
      ctx.addStatistic("Convs pruned", double(r.convsPruned));
      ctx.addStatistic("left alone: output channels are tied", double(r.convsTied));
      summary = std::string("structured ") + (opt.score == ChannelScore::L1 ? "L1" : "L2") +
                ", " + pct + ": removed " + std::to_string(r.channelsRemoved) + " of " +
                std::to_string(r.channelsConsidered) + " channels in " +
                std::to_string(r.convsPruned) + (r.convsPruned == 1 ? " Conv" : " Convs");
      if (r.convsTied)
        summary += " (" + std::to_string(r.convsTied) + " left alone: channels tied)";
    } else {
      auto [zeroed, total] = pruneUnstructured(graph, opt.sparsity, opt.global, ctx);
      changed = zeroed > 0;
      ctx.addStatistic("weights zeroed", double(zeroed));
      ctx.addStatistic("weights considered", double(total));
      summary = std::string("unstructured ") + (opt.global ? "global" : "per layer") + ", " +
                pct + ": zeroed " + std::to_string(zeroed) + " of " + std::to_string(total) +
                " weights";
    }
    const ModelStats after = computeModelStats(graph);
    ctx.addStatistic("params before", double(before.params));
    ctx.addStatistic("params after", double(after.params));
    ctx.addStatistic("FLOPs before", before.flops);
    ctx.addStatistic("FLOPs after", after.flops);
    summary += "; params " + humanCount(double(before.params)) + " -> " +
               humanCount(double(after.params)) + "; FLOPs " + humanCount(before.flops) +
               " -> " + humanCount(after.flops);
    if (changed && original) {
      FB_ASSIGN_OR_RETURN(OutputDeviation d,
                          measureOutputDeviation(*original, graph, opt.eval, /*seed=*/1000000));
      summary += recordOutputDeviation(d, ctx);
    }
    ctx.setSummary(summary);
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createPrunePass() { return std::make_unique<PrunePass>(); }

} // namespace fb
