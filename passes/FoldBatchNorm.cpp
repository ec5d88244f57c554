// fold-batchnorm: folds inference BatchNormalization into the Conv, ConvTranspose, Gemm or MatMul
// before it, or lowers a lone one to a per-channel Mul and Add.
#include "core/Faults.h"
#include "core/ShapeInference.h"
#include "passes/Passes.h"
#include "passes/RewriteUtil.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace fb {

namespace {

/// The per-channel affine map y = x * scale[c] + shift[c] an inference BatchNormalization
/// applies, computed in double: scale = γ/σ, shift = β − μ·γ/σ with σ = sqrt(var + ε).
struct ChannelAffine {
  std::vector<double> scale;
  std::vector<double> shift;
  size_t channels() const { return scale.size(); }
};

/// How each BatchNormalization was removed, for the statistics.
enum class FoldKind { Conv, ConvTranspose, Gemm, MatMul, Lowered };

/// True when `t` is an f32 tensor.
bool isF32(const Tensor* t) { return t && t->dtype() == DType::F32; }

/// The affine map of an inference-mode, f32 BatchNormalization whose four parameters are
/// constants; nullopt when the node does not qualify (it is then left alone).
std::optional<ChannelAffine> batchNormAffine(const Node& bn) {
  if (bn.numOutputs() != 1 || !bn.input(0) || bn.input(0)->type().dtype != DType::F32 ||
      bn.input(0)->type().rank() < 2)
    return std::nullopt;
  auto training = bn.attrs().getInt("training_mode", 0);
  auto epsilon = bn.attrs().getFloat("epsilon", 1e-5f);
  if (!training.ok() || *training != 0 || !epsilon.ok())
    return std::nullopt;
  const Tensor* params[4];
  for (size_t i = 0; i < 4; ++i) {
    params[i] = constantOf(bn.input(i + 1));
    if (!isF32(params[i]) || params[i]->rank() != 1 ||
        params[i]->numElements() != params[0]->numElements())
      return std::nullopt;
  }
  ChannelAffine a;
  const int64_t channels = params[0]->numElements();
  const double eps = faultEnabled(Fault::FoldBatchNormEpsilon) ? 0.0 : double(*epsilon);
  for (int64_t c = 0; c < channels; ++c) {
    double gamma = params[0]->getAsDouble(c), beta = params[1]->getAsDouble(c);
    double mean = params[2]->getAsDouble(c), var = params[3]->getAsDouble(c);
    double s = gamma / std::sqrt(var + eps);
    a.scale.push_back(s);
    a.shift.push_back(beta - mean * s);
  }
  return a;
}

/// True when `v` feeds only operand 0 of `user` and is not a graph output: folding may then
/// change what `v` holds without anyone else noticing.
bool onlyFeeds(const Value* v, const Node* user) {
  return v && !v->isGraphOutput() && v->uses().size() == 1 && v->uses()[0].user == user &&
         v->uses()[0].operand == 0;
}

/// An f32 tensor of `sizes` holding `values`.
Tensor makeF32(std::vector<int64_t> sizes, const std::vector<double>& values) {
  Tensor t(DType::F32, std::move(sizes));
  auto out = t.mutableData<float>();
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = float(values[i]);
  return t;
}

/// Adds a constant named after `base` (made unique).
Value* addNamedConstant(Graph& g, const std::string& base, Tensor data) {
  return g.addConstant(g.uniqueValueName(base), std::move(data));
}


/// Erases constants that a rewrite left without uses (old weights, BN parameters); a weight
/// still shared with another node stays.
void eraseIfDead(Graph& g, std::vector<Value*> values) {
  // One constant may fill several slots (γ passed as β too): erase it once.
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  for (Value* v : values)
    if (v && v->isConstant() && !v->hasUses() && !v->isGraphOutput())
      g.eraseValue(v);
}

/// Folds `a` into a Conv (W: [Cout, Cin/group, k...]) or ConvTranspose (W: [Cin, Cout/group,
/// k...]) in place: the node keeps its id and gets a new weight and bias.
bool foldIntoConv(Graph& g, Node* conv, const ChannelAffine& a) {
  const Tensor* w = constantOf(conv->input(1));
  if (!isF32(w) || w->rank() < 3)
    return false;
  const Tensor* bias = nullptr;
  if (conv->input(2)) {
    bias = constantOf(conv->input(2));
    if (!isF32(bias) || bias->rank() != 1)
      return false;
  }
  auto group = conv->attrs().getInt("group", 1);
  if (!group.ok() || *group < 1)
    return false;
  const auto& ws = w->sizes();
  const bool transposed = conv->op() == OpKind::ConvTranspose;
  const int64_t outChannels = transposed ? ws[1] * *group : ws[0];
  if (outChannels != int64_t(a.channels()) || (bias && bias->numElements() != outChannels))
    return false;
  if (transposed && ws[0] % *group != 0)
    return false;

  // Output channel of every weight element: dim 0 for Conv; for ConvTranspose input channel ci
  // belongs to group ci / (Cin/group), whose output channels start at group * (Cout/group).
  const int64_t spatial = w->numElements() / (ws[0] * ws[1]);
  std::vector<double> scaled(size_t(w->numElements()));
  auto src = w->data<float>();
  for (int64_t i0 = 0; i0 < ws[0]; ++i0)
    for (int64_t i1 = 0; i1 < ws[1]; ++i1) {
      int64_t oc = transposed ? (i0 / (ws[0] / *group)) * ws[1] + i1 : i0;
      for (int64_t k = 0; k < spatial; ++k) {
        int64_t idx = (i0 * ws[1] + i1) * spatial + k;
        scaled[size_t(idx)] = double(src[size_t(idx)]) * a.scale[size_t(oc)];
      }
    }
  std::vector<double> newBias(a.channels());
  for (size_t c = 0; c < a.channels(); ++c)
    newBias[c] = (bias ? bias->getAsDouble(int64_t(c)) : 0.0) * a.scale[c] + a.shift[c];

  Value* oldW = conv->input(1);
  Value* oldB = conv->input(2);
  conv->setInput(1, addNamedConstant(g, oldW->name() + ".bn", makeF32(ws, scaled)));
  Value* b = addNamedConstant(g, oldB ? oldB->name() + ".bn" : oldW->name() + ".bn_bias",
                              makeF32({outChannels}, newBias));
  if (conv->numInputs() > 2)
    conv->setInput(2, b);
  else
    conv->addInput(b);
  eraseIfDead(g, {oldW, oldB});
  return true;
}

/// The bias of Gemm after folding: beta·C·scale + shift, broadcast over the output columns.
/// C may be absent, a scalar, [N], [1, N], [M, 1] or [M, N]; the result is [N] unless C varies
/// over rows, then [M, N].
std::optional<Tensor> foldedGemmBias(const Tensor* c, double beta, const ChannelAffine& a) {
  const int64_t n = int64_t(a.channels());
  int64_t rows = 1, cols = 1;
  if (c) {
    if (!isF32(c) || c->rank() > 2)
      return std::nullopt;
    if (c->rank() >= 1)
      cols = c->sizes().back();
    if (c->rank() == 2)
      rows = c->sizes()[0];
    if (cols != 1 && cols != n)
      return std::nullopt;
  }
  std::vector<double> out(size_t(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double cv = c ? c->getAsDouble(r * cols + (cols == 1 ? 0 : j)) : 0.0;
      out[size_t(r * n + j)] = beta * cv * a.scale[size_t(j)] + a.shift[size_t(j)];
    }
  return rows == 1 ? makeF32({n}, out) : makeF32({rows, n}, out);
}

/// B scaled per output column: column j of op(B), which is row j of B when transB is set.
Tensor scaleGemmWeight(const Tensor& b, bool transB, const ChannelAffine& a) {
  const int64_t r = b.sizes()[0], c = b.sizes()[1];
  std::vector<double> out(size_t(b.numElements()));
  auto src = b.data<float>();
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      out[size_t(i * c + j)] = double(src[size_t(i * c + j)]) * a.scale[size_t(transB ? i : j)];
  return makeF32({r, c}, out);
}

/// Folds `a` into a Gemm in place (the node keeps its id): op(B) is scaled per column and C
/// becomes beta·C·scale + shift with beta = 1.
bool foldIntoGemm(Graph& g, Node* gemm, const ChannelAffine& a) {
  const Tensor* b = constantOf(gemm->input(1));
  if (!isF32(b) || b->rank() != 2 || gemm->output(0)->type().rank() != 2)
    return false;
  auto transB = gemm->attrs().getInt("transB", 0);
  auto beta = gemm->attrs().getFloat("beta", 1.0f);
  if (!transB.ok() || !beta.ok())
    return false;
  if (b->sizes()[*transB ? 0 : 1] != int64_t(a.channels()))
    return false;
  const Tensor* c = nullptr;
  if (gemm->input(2)) {
    c = constantOf(gemm->input(2));
    if (!c)
      return false;
  }
  auto bias = foldedGemmBias(c, double(*beta), a);
  if (!bias)
    return false;
  Value* oldB = gemm->input(1);
  Value* oldC = gemm->input(2);
  gemm->setInput(1, addNamedConstant(g, oldB->name() + ".bn", scaleGemmWeight(*b, *transB, a)));
  Value* newC =
      addNamedConstant(g, oldC ? oldC->name() + ".bn" : oldB->name() + ".bn_bias", *bias);
  if (gemm->numInputs() > 2)
    gemm->setInput(2, newC);
  else
    gemm->addInput(newC);
  gemm->attrs().set("beta", 1.0f);
  eraseIfDead(g, {oldB, oldC});
  return true;
}

/// Replaces MatMul(A[M, K], W[K, N]) by Gemm(A, W·diag(scale), shift): the BN channel of a 2-D
/// result is its column, so the scale lands on W's columns. (For a 3-D result [B, S, N] the BN
/// channel is S, a row index of A, which no weight can absorb: that BN is lowered instead.)
/// Returns the new Gemm or nullptr.
Node* foldIntoMatMul(Graph& g, Node* matmul, const ChannelAffine& a) {
  Value* x = matmul->input(0);
  const Tensor* w = constantOf(matmul->input(1));
  if (!x || x->type().rank() != 2 || x->type().dtype != DType::F32 || !isF32(w) ||
      w->rank() != 2 || w->sizes()[1] != int64_t(a.channels()))
    return nullptr;
  Value* out = matmul->output(0);
  Value* newW =
      addNamedConstant(g, matmul->input(1)->name() + ".bn", scaleGemmWeight(*w, false, a));
  Value* bias = addNamedConstant(g, matmul->input(1)->name() + ".bn_bias",
                                 makeF32({int64_t(a.channels())}, a.shift));
  // The Gemm replaces the MatMul, so it takes over the MatMul's output name.
  std::string name = out->name();
  g.renameValue(out, g.uniqueValueName(name + ".old"));
  Node* gemm = g.insertNodeBefore(matmul, OpKind::Gemm, {x, newW, bias}, 1, {name},
                                  matmul->name());
  gemm->attrs().set("alpha", 1.0f);
  gemm->attrs().set("beta", 1.0f);
  gemm->output(0)->setType(out->type());
  gemm->addProvenanceFrom(*matmul);
  return gemm;
}

/// Replaces a BatchNormalization by Mul(x, scale) and Add(·, shift) with constants shaped
/// [C, 1, ..., 1], which broadcast over (N, C, spatial...). Returns the Add.
Node* lowerToMulAdd(Graph& g, Node* bn, const ChannelAffine& a) {
  Value* x = bn->input(0);
  Value* out = bn->output(0);
  std::vector<int64_t> sizes(x->type().rank() - 1, 1);
  sizes[0] = int64_t(a.channels());
  std::string name = out->name();
  Value* scale = addNamedConstant(g, name + ".bn_scale", makeF32(sizes, a.scale));
  Value* shift = addNamedConstant(g, name + ".bn_shift", makeF32(sizes, a.shift));
  g.renameValue(out, g.uniqueValueName(name + ".old"));
  Node* mul = g.insertNodeBefore(bn, OpKind::Mul, {x, scale}, 1,
                                 {g.uniqueValueName(name + ".scaled")}, bn->name());
  Node* add = g.insertNodeBefore(bn, OpKind::Add, {mul->output(0), shift}, 1, {name}, bn->name());
  mul->output(0)->setType(out->type());
  add->output(0)->setType(out->type());
  mul->addProvenanceFrom(*bn);
  add->addProvenanceFrom(*bn);
  return add;
}

/// Fold-batchnorm, for every inference BatchNormalization in execution order:
///   1. read its four parameters (constants, f32) into a per-channel map y = x·scale + shift,
///      scale = γ/σ, shift = β − μ·γ/σ, σ = sqrt(var + ε); anything else is left alone;
///   2. when its input is produced by a Conv or ConvTranspose with constant weights, and nothing
///      else reads that output, scale the weights per output channel (dim 0 of W for Conv; dim 1
///      times group for ConvTranspose) and set bias' = bias·scale + shift (adding a bias when
///      there was none); the Conv keeps its id and absorbs the BN's provenance;
///   3. likewise for a Gemm with a constant B (column j of op(B), honouring transB) and
///      constant or absent C (C' = beta·C·scale + shift, beta becomes 1);
///   4. a MatMul of a 2-D input by a 2-D constant weight becomes Gemm(A, W·diag(scale), shift);
///   5. otherwise the BN becomes Mul(x, scale) and Add(·, shift) with constants shaped
///      [C, 1, ..., 1] that broadcast over NCHW;
///   6. the BN's uses move to the folded result (graph output names are kept), the BN and the
///      constants nobody reads any more are erased, and shapes are re-inferred.
class FoldBatchNormPass : public Pass {
public:
  std::string name() const override { return "fold-batchnorm"; }
  std::string summary() const override {
    return "fold inference BatchNormalization into the preceding Conv/Gemm/MatMul weights";
  }
  std::string description() const override {
    return "At inference time a BatchNormalization is just a fixed per-channel multiply and "
           "add: y = x·γ/σ + (β − μ·γ/σ). When it follows a Conv, ConvTranspose, Gemm or "
           "MatMul whose weights are constants, this pass multiplies those weights by γ/σ for "
           "each output channel and folds the shift into the bias, so the BatchNormalization "
           "disappears: one fewer pass over the whole activation tensor, which on CPUs and "
           "GPUs alike is pure memory traffic. A BatchNormalization that cannot be folded (its "
           "input is also used elsewhere, or comes from another op) is lowered to a Mul and an "
           "Add with precomputed constants, which later fusion can merge into neighbours.";
  }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    std::vector<Node*> bns;
    for (const auto& n : graph.nodes())
      if (n->op() == OpKind::BatchNormalization)
        bns.push_back(n.get());
    int64_t counts[5] = {0, 0, 0, 0, 0};
    for (Node* bn : bns) {
      auto affine = batchNormAffine(*bn);
      // Every qualifying BN is removed (folded or lowered): one rewrite each.
      if (!affine || !ctx.mayRewrite())
        continue;
      auto kind = foldOne(graph, bn, *affine, ctx);
      counts[int(kind)]++;
    }
    int64_t rewritten = counts[0] + counts[1] + counts[2] + counts[3] + counts[4];
    ctx.addStatistic("BatchNormalization folded into Conv", double(counts[0]));
    ctx.addStatistic("BatchNormalization folded into ConvTranspose", double(counts[1]));
    ctx.addStatistic("BatchNormalization folded into Gemm", double(counts[2]));
    ctx.addStatistic("BatchNormalization folded into MatMul (now Gemm)", double(counts[3]));
    ctx.addStatistic("BatchNormalization lowered to Mul+Add", double(counts[4]));
    std::string summary = "folded " + std::to_string(counts[0]) +
                          " BatchNormalization into Conv; " + std::to_string(counts[2]) +
                          " into Gemm; ";
    if (counts[1])
      summary += std::to_string(counts[1]) + " into ConvTranspose; ";
    if (counts[3])
      summary += std::to_string(counts[3]) + " into MatMul (now Gemm); ";
    summary += std::to_string(counts[4]) + " lowered to Mul+Add";
    ctx.setSummary(summary);
    if (rewritten)
      FB_TRY(inferShapes(graph));
    return rewritten > 0;
  }

private:
  /// Removes one BatchNormalization, folding it into its producer when possible.
  static FoldKind foldOne(Graph& g, Node* bn, const ChannelAffine& a, PassContext& ctx) {
    Value* x = bn->input(0);
    Value* out = bn->output(0);
    std::vector<Value*> params = {bn->input(1), bn->input(2), bn->input(3), bn->input(4)};
    Node* producer = x->producer();
    if (producer && onlyFeeds(x, bn) && x->resultIndex() == 0) {
      std::optional<FoldKind> kind;
      switch (producer->op()) {
      case OpKind::Conv:
      case OpKind::ConvTranspose:
        if (foldIntoConv(g, producer, a))
          kind = producer->op() == OpKind::Conv ? FoldKind::Conv : FoldKind::ConvTranspose;
        break;
      case OpKind::Gemm:
        if (foldIntoGemm(g, producer, a))
          kind = FoldKind::Gemm;
        break;
      case OpKind::MatMul:
        if (Node* gemm = foldIntoMatMul(g, producer, a)) {
          ctx.logCreated(gemm->id(), {producer->id(), bn->id()}, "MatMul with BN folded in");
          ctx.logReplaced(producer->id(), {gemm->id()}, "became Gemm with BN folded in");
          ctx.logReplaced(bn->id(), {gemm->id()}, "folded into Gemm");
          gemm->absorbProvenanceOf(*bn);
          replaceValue(g, out, gemm->output(0));
          g.eraseNode(bn);
          g.eraseNode(producer);
          eraseIfDead(g, params);
          return FoldKind::MatMul;
        }
        break;
      default: break;
      }
      if (kind) {
        producer->absorbProvenanceOf(*bn);
        ctx.logReplaced(bn->id(), {producer->id()},
                        std::string("folded into ") + opName(producer->op()));
        replaceValue(g, out, producer->output(0));
        g.eraseNode(bn);
        eraseIfDead(g, params);
        return *kind;
      }
    }
    Node* add = lowerToMulAdd(g, bn, a);
    Node* mul = add->input(0)->producer();
    ctx.logCreated(mul->id(), {bn->id()}, "BatchNormalization scale");
    ctx.logCreated(add->id(), {bn->id()}, "BatchNormalization shift");
    ctx.logReplaced(bn->id(), {mul->id(), add->id()}, "lowered to Mul+Add");
    out->replaceAllUsesWith(add->output(0));
    g.eraseNode(bn);
    eraseIfDead(g, params);
    return FoldKind::Lowered;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldBatchNormPass() { return std::make_unique<FoldBatchNormPass>(); }

} // namespace fb
