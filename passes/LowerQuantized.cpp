// lower-quantized: turns QDQ patterns around Conv, Gemm and MatMul into integer ops
// (QLinearConv, ConvInteger, MatMulInteger) that accumulate int8×int8 products in int32.
#include "core/ShapeInference.h"
#include "passes/Passes.h"
#include "passes/QuantizationParams.h"
#include "passes/RewriteUtil.h"

#include <cmath>
#include <map>
#include <set>

namespace fb {

namespace {

/// A DequantizeLinear that produces an operand: the quantized value and its constant parameters.
struct DqOperand {
  Node* dq = nullptr;
  Value* q = nullptr;             ///< the integer value it dequantizes
  Value* scale = nullptr;         ///< constant f32 scale (scalar or per axis)
  Value* zeroPoint = nullptr;     ///< constant zero point, or nullptr (0)
  int64_t axis = 1;               ///< axis of per-axis parameters
  std::vector<float> scales;      ///< the scale values
};

/// The DequantizeLinear producing `v` with constant parameters, or nullopt.
std::optional<DqOperand> dqOf(Value* v) {
  if (!v || !v->producer() || v->producer()->op() != OpKind::DequantizeLinear)
    return std::nullopt;
  DqOperand d;
  d.dq = v->producer();
  d.q = d.dq->input(0);
  d.scale = d.dq->input(1);
  d.zeroPoint = d.dq->input(2);
  const Tensor* s = constantOf(d.scale);
  if (!s || s->dtype() != DType::F32 || (d.zeroPoint && !constantOf(d.zeroPoint)))
    return std::nullopt;
  auto axis = d.dq->attrs().getInt("axis", 1);
  if (!axis.ok())
    return std::nullopt;
  d.axis = *axis < 0 ? *axis + int64_t(d.q->type().rank()) : *axis;
  auto sv = s->data<float>();
  d.scales.assign(sv.begin(), sv.end());
  return d;
}

bool isInt8(DType d) { return d == DType::I8 || d == DType::U8; }

/// A QuantizeLinear with constant per-tensor parameters.
struct OutputQuant {
  Node* q = nullptr;
  Node* act = nullptr; ///< an absorbed Relu/Clip between the op and q, or nullptr
  AffineParams params;
  DType dtype = DType::I8;
};

/// The QuantizeLinear that alone reads `y` (directly or through one absorbable activation).
std::optional<OutputQuant> outputQuantOf(Value* y) {
  OutputQuant o;
  Value* v = y;
  for (int step = 0; step < 2; ++step) {
    if (v->isGraphOutput() || v->uses().size() != 1)
      return std::nullopt;
    Node* user = v->uses()[0].user;
    if (user->op() == OpKind::QuantizeLinear && v->uses()[0].operand == 0) {
      const Tensor* s = constantOf(user->input(1));
      const Tensor* zp = constantOf(user->input(2));
      if (!s || !zp || s->numElements() != 1 || zp->numElements() != 1 ||
          s->dtype() != DType::F32 || !isInt8(zp->dtype()))
        return std::nullopt;
      o.q = user;
      o.params = {s->data<float>()[0], int32_t(zp->getAsInt64(0))};
      o.dtype = zp->dtype();
      return o;
    }
    if (step == 1 || !activationClamp(*user))
      return std::nullopt;
    o.act = user;
    v = user->output(0);
  }
  return std::nullopt;
}

/// One lowerable op: its operands as DQ patterns, and its quantized output when there is one.
struct Pattern {
  Node* op = nullptr;
  DqOperand x, w;
  std::optional<DqOperand> bias;
  std::optional<OutputQuant> out;
  int64_t channelAxis = 0; ///< the weight's output-channel axis
};

/// Checks that `n` reads DQ(x), DQ(w) and optionally DQ(bias) in the shape quantize makes.
std::optional<Pattern> matchPattern(Node& n, std::string& why) {
  Pattern p;
  p.op = &n;
  auto x = dqOf(n.input(0));
  auto w = dqOf(n.input(1));
  if (!x || !w) {
    why = "operands are not dequantized";
    return std::nullopt;
  }
  p.x = *x;
  p.w = *w;
  if (!isInt8(p.x.q->type().dtype) || p.x.scales.size() != 1) {
    why = "activation is not i8/u8 per tensor";
    return std::nullopt;
  }
  const Tensor* wq = constantOf(p.w.q);
  if (!wq || wq->dtype() != DType::I8) {
    why = "weight is not an i8 constant";
    return std::nullopt;
  }
  if (n.op() == OpKind::Conv) {
    p.channelAxis = 0;
  } else {
    if (wq->rank() != 2) {
      why = "weight is not 2-D";
      return std::nullopt;
    }
    p.channelAxis = 1;
    if (n.op() == OpKind::Gemm) {
      auto axis = plainGemmChannelAxis(n, /*betaMatters=*/true);
      if (!axis) {
        why = "Gemm with alpha, beta or transA other than 1, 1, 0";
        return std::nullopt;
      }
      p.channelAxis = *axis;
    }
  }
  const int64_t channels = wq->sizes()[size_t(p.channelAxis)];
  if (p.w.scales.size() != 1 &&
      (p.w.axis != p.channelAxis || int64_t(p.w.scales.size()) != channels)) {
    why = "weight is not quantized per output channel";
    return std::nullopt;
  }
  if (n.numInputs() > 2 && n.input(2)) {
    p.bias = dqOf(n.input(2));
    const Tensor* bq = p.bias ? constantOf(p.bias->q) : nullptr;
    if (!bq || bq->dtype() != DType::I32 || bq->rank() != 1 || bq->numElements() != channels ||
        (p.bias->zeroPoint && !isConstantSplat(p.bias->zeroPoint, 0.0))) {
      why = "bias is not an i32 constant with zero point 0";
      return std::nullopt;
    }
    // The integer bias adds to the accumulator only at the accumulator's scale s_x·s_w[c].
    for (int64_t c = 0; c < channels; ++c) {
      const double want = double(p.x.scales[0]) *
                          double(p.w.scales[p.w.scales.size() == 1 ? 0 : size_t(c)]);
      const double got = p.bias->scales[p.bias->scales.size() == 1 ? 0 : size_t(c)];
      if (std::fabs(got - want) > 1e-6 * std::fabs(want)) {
        why = "bias scale is not the accumulator scale";
        return std::nullopt;
      }
    }
  }
  p.out = outputQuantOf(n.output(0));
  return p;
}

Value* addConst(Graph& g, const std::string& base, Tensor t) {
  return g.addConstant(g.uniqueValueName(base), std::move(t));
}

/// A rank-0 (count 1) or 1-D constant of per-channel floats.
Tensor floatsTensor(const std::vector<float>& v) {
  return v.size() == 1 ? Tensor::scalar<float>(v[0])
                       : Tensor::fromVector<float>({int64_t(v.size())}, v);
}

/// The accumulator scales s_x·s_w[c] (one, or one per channel).
std::vector<float> accumulatorScales(const Pattern& p) {
  std::vector<float> s;
  for (float ws : p.w.scales)
    s.push_back(accumulatorScale(p.x.scales[0], ws));
  return s;
}

/// The zero point operand of a DQ, made explicit (QLinear ops require it).
Value* zeroPointOf(Graph& g, const DqOperand& d) {
  if (d.zeroPoint)
    return d.zeroPoint;
  const DType dt = d.q->type().dtype;
  const int64_t n = int64_t(d.scales.size());
  return addConst(g, d.q->name() + ".zero_point", n == 1 ? Tensor(dt, {}) : Tensor(dt, {n}));
}

/// Appends the integer clamp of an absorbed activation after `v` when it is not already implied
/// by saturation; returns the clamped value.
Value* applyClamp(Graph& g, Node* before, Value* v, const OutputQuant& o) {
  const Range r = *activationClamp(*o.act);
  const int32_t qmin = quantMin(o.dtype), qmax = quantMax(o.dtype);
  const int32_t lo = std::isfinite(r.lo) ? quantizeValue(float(r.lo), o.params, o.dtype) : qmin;
  const int32_t hi = std::isfinite(r.hi) ? quantizeValue(float(r.hi), o.params, o.dtype) : qmax;
  if (lo <= qmin && hi >= qmax)
    return v;
  auto bound = [&](int32_t b) {
    Tensor t(o.dtype, {});
    t.setFromDouble(0, double(b));
    return addConst(g, v->name() + (b == lo ? ".min" : ".max"), std::move(t));
  };
  Node* clip = g.insertNodeBefore(before, OpKind::Clip,
                                  {v, lo > qmin ? bound(lo) : nullptr,
                                   hi < qmax ? bound(hi) : nullptr},
                                  1, {v->name() + ".clamped"}, o.act->name());
  clip->addProvenanceFrom(*o.act);
  return clip->output(0);
}

/// Lowers one matched pattern; returns the nodes it created (typed, so that later patterns can
/// read their dtypes).
Expected<std::vector<Node*>> lower(Graph& g, const Pattern& p) {
  Node* n = p.op;
  std::vector<Node*> created;
  auto make = [&](OpKind op, const std::vector<Value*>& ins, const std::string& outName) {
    Node* m = g.insertNodeBefore(n, op, ins, 1, {outName}, n->name());
    created.push_back(m);
    m->addProvenanceFrom(*n);
    if (p.out) {
      m->addProvenanceFrom(*p.out->q);
      if (p.out->act)
        m->addProvenanceFrom(*p.out->act);
    }
    return m;
  };
  Value* xzp = zeroPointOf(g, p.x);
  Value* wzp = zeroPointOf(g, p.w);
  const std::string base = n->output(0)->name();
  Value* result = nullptr; // replaces the Q's output (quantized) or the op's output (f32)

  if (n->op() == OpKind::Conv && p.out) {
    // QLinearConv requantizes in-kernel: y = sat(round((acc + b)·s_x·s_w[c]/s_y) + zp_y).
    Value* ys = p.out->q->input(1);
    Value* yzp = p.out->q->input(2);
    std::vector<Value*> ins = {p.x.q, p.x.scale, xzp, p.w.q, p.w.scale, wzp, ys, yzp};
    if (p.bias)
      ins.push_back(p.bias->q);
    Node* qc = make(OpKind::QLinearConv, ins, base + ".qlinear");
    for (const auto& [k, v] : n->attrs())
      qc->attrs().set(k, v);
    result = qc->output(0);
  } else {
    Node* acc;
    if (n->op() == OpKind::Conv) {
      acc = make(OpKind::ConvInteger, {p.x.q, p.w.q, xzp, wzp}, base + ".acc");
      for (const auto& [k, v] : n->attrs())
        acc->attrs().set(k, v);
    } else {
      Value* b = p.w.q;
      Value* bzp = wzp;
      if (p.channelAxis == 0) { // Gemm transB: store B as [K, N] for MatMulInteger
        const Tensor& t = p.w.q->constantData();
        const int64_t rows = t.sizes()[0], cols = t.sizes()[1];
        Tensor tt(DType::I8, {cols, rows});
        auto src = t.data<int8_t>();
        auto dst = tt.mutableData<int8_t>();
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            dst[size_t(c * rows + r)] = src[size_t(r * cols + c)];
        b = addConst(g, p.w.q->name() + ".t", std::move(tt));
        if (p.w.scales.size() != 1) // per column of [K, N] now
          annotateQuant(b, p.w.scales, std::vector<int64_t>(p.w.scales.size(), 0), 1);
      }
      acc = make(OpKind::MatMulInteger, {p.x.q, b, xzp, bzp}, base + ".acc");
    }
    const size_t outRank = n->output(0)->type().rank();
    const int64_t chanAxis = n->op() == OpKind::Conv ? 1 : int64_t(outRank) - 1;
    Value* sum = acc->output(0);
    if (p.bias) {
      // Broadcast the i32 bias along the channel axis: [C, 1, ...] for Conv, [N] for MatMul.
      const Tensor& bt = p.bias->q->constantData();
      std::vector<int64_t> shape = {bt.numElements()};
      for (int64_t d = chanAxis + 1; d < int64_t(outRank); ++d)
        shape.push_back(1);
      Value* bc = addConst(g, p.bias->q->name() + ".bcast", bt.reshaped(shape));
      sum = make(OpKind::Add, {sum, bc}, base + ".biased")->output(0);
    }
    std::vector<float> accScales = accumulatorScales(p);
    for (Value* v : {acc->output(0), sum})
      annotateQuant(v, accScales, std::vector<int64_t>(accScales.size(), 0), chanAxis);
    if (p.out) {
      // Requantize the i32 sum: y = sat(round(sum / (s_y / (s_x·s_w[c]))) + zp_y).
      std::vector<float> rq;
      for (float s : accScales)
        rq.push_back(p.out->params.scale / s);
      Tensor zp(p.out->dtype, rq.size() == 1 ? std::vector<int64_t>{}
                                             : std::vector<int64_t>{int64_t(rq.size())});
      for (int64_t i = 0; i < zp.numElements(); ++i)
        zp.setFromDouble(i, double(p.out->params.zeroPoint));
      Node* q = make(OpKind::QuantizeLinear,
                     {sum, addConst(g, base + ".requant_scale", floatsTensor(rq)),
                      addConst(g, base + ".requant_zero_point", std::move(zp))},
                     base + ".requant");
      if (rq.size() != 1)
        q->attrs().set("axis", chanAxis);
      result = q->output(0);
    } else {
      Node* dq = make(OpKind::DequantizeLinear,
                      {sum, addConst(g, base + ".acc_scale", floatsTensor(accScales))},
                      base + ".dequant");
      if (accScales.size() != 1)
        dq->attrs().set("axis", chanAxis);
      result = dq->output(0);
    }
  }
  for (Node* m : created)
    FB_TRY(inferNodeShapes(*m));
  if (p.out) {
    if (p.out->act) {
      Value* clamped = applyClamp(g, n, result, *p.out);
      if (clamped != result) {
        created.push_back(clamped->producer());
        FB_TRY(inferNodeShapes(*clamped->producer()));
      }
      result = clamped;
    }
    // The integer result takes the QuantizeLinear's name, so diffs and numeric comparisons
    // match the quantized activation across the lowering.
    Value* old = p.out->q->output(0);
    if (old->type().quant) { // the integer result means what the QuantizeLinear's did
      TensorType t = result->type();
      t.quant = old->type().quant;
      result->setType(std::move(t));
    }
    const bool rename = !old->isGraphOutput() && !result->isGraphOutput();
    const std::string name = old->name();
    replaceValue(g, old, result);
    if (rename) {
      g.renameValue(old, g.uniqueValueName(name + ".old"));
      g.renameValue(result, name);
    }
  } else {
    replaceValue(g, n->output(0), result);
  }
  return created;
}

/// Erases nodes of `maybeDead` (and what only they read) once nothing reads their outputs, then
/// the constants left unused.
void eraseDead(Graph& g, std::vector<Node*> maybeDead, PassContext& ctx) {
  std::set<Node*> pending(maybeDead.begin(), maybeDead.end());
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      Node* n = *it;
      bool dead = true;
      for (const Value* o : n->outputs())
        dead = dead && !o->hasUses() && !o->isGraphOutput();
      if (!dead) {
        ++it;
        continue;
      }
      std::vector<Value*> ins = n->inputs();
      ctx.logDeleted(n->id(), "lowered to integer ops");
      g.eraseNode(n);
      it = pending.erase(it);
      progress = true;
      for (Value* in : ins) {
        if (!in)
          continue;
        if (in->producer() && (in->producer()->op() == OpKind::DequantizeLinear ||
                               in->producer()->op() == OpKind::QuantizeLinear))
          pending.insert(in->producer());
        else if (in->isConstant() && !in->hasUses() && !in->isGraphOutput())
          g.eraseValue(in);
      }
    }
  }
}

/// Lower-quantized, for every Conv, Gemm and MatMul in execution order:
///   1. match DQ(x) per tensor (i8/u8), DQ(w) with an i8 constant per tensor or per output
///      channel, and optionally DQ(bias) with an i32 constant at the accumulator scale s_x·s_w[c];
///   2. find the QuantizeLinear that alone reads the result, possibly through one Relu or Clip;
///   3. Conv with a quantized result → QLinearConv (bias and requantization inside);
///      Conv with an f32 result → ConvInteger, Add of the i32 bias, DequantizeLinear at s_x·s_w;
///      Gemm/MatMul → MatMulInteger (B transposed to [K, N] at compile time for transB), Add of
///      the i32 bias, then QuantizeLinear of the i32 sum at s_y/(s_x·s_w[c]) for a quantized
///      result or DequantizeLinear at s_x·s_w[c] for an f32 one;
///   4. an absorbed Relu/Clip becomes an integer Clip at its quantized bounds, omitted when the
///      output's saturation already applies it (affine Relu: zero point = qmin);
///   5. erase the replaced op, Q, activation and DQs nobody reads; re-infer shapes.
class LowerQuantizedPass : public Pass {
public:
  std::string name() const override { return "lower-quantized"; }
  std::string summary() const override {
    return "turn QDQ patterns around Conv/Gemm/MatMul into int8 ops with int32 accumulation";
  }
  std::string description() const override {
    return "After `quantize`, the graph still computes Conv, Gemm and MatMul in float between "
           "DequantizeLinear and QuantizeLinear nodes. This pass replaces each such pattern with "
           "integer ops: QLinearConv multiplies int8 activations by int8 weights, accumulates "
           "in int32, adds the int32 bias and rescales once to the int8 output "
           "(requantization); MatMulInteger does the same for matrix products, followed by an "
           "int32 bias Add and a QuantizeLinear that requantizes. A Relu after a Conv becomes a "
           "clamp of the int8 result, or disappears when the output's zero point already sits "
           "at the bottom of the int8 range. Results equal the QDQ graph's to within one "
           "quantization step (they differ only in rounding order), and the interpreter and "
           "code generator now really compute in integers, as int8 hardware does.";
  }

  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    std::vector<Node*> ops;
    for (const auto& n : graph.nodes())
      if (n->op() == OpKind::Conv || n->op() == OpKind::Gemm || n->op() == OpKind::MatMul)
        ops.push_back(n.get());
    std::vector<Node*> maybeDead;
    std::map<std::string, int64_t> lowered;
    for (Node* n : ops) {
      std::string why;
      auto p = matchPattern(*n, why);
      if (!p) {
        ctx.addStatistic("left alone: " + why);
        continue;
      }
      if (!ctx.mayRewrite())
        continue;
      FB_ASSIGN_OR_RETURN(std::vector<Node*> created, lower(graph, *p));
      std::vector<NodeId> ids;
      for (Node* m : created)
        ids.push_back(m->id());
      ctx.logReplaced(n->id(), ids, "lowered to integer ops");
      std::string key = std::string(opName(n->op())) + " -> " + opName(created.front()->op());
      ++lowered[key];
      maybeDead.push_back(n);
      if (p->out) {
        maybeDead.push_back(p->out->q);
        if (p->out->act) {
          maybeDead.push_back(p->out->act);
          ctx.addStatistic("activations absorbed");
        }
      }
    }
    if (lowered.empty()) {
      ctx.setSummary("no QDQ pattern to lower");
      return false;
    }
    ctx.attributeToRewrite(0); // the clean-up belongs to no single rewrite
    eraseDead(graph, maybeDead, ctx);
    FB_TRY(inferShapes(graph));
    std::string summary;
    for (const auto& [key, count] : lowered) {
      ctx.addStatistic(key, double(count));
      summary += (summary.empty() ? "" : ", ") + std::to_string(count) + " " + key;
    }
    ctx.setSummary(summary + " (int8 x int8 -> int32)");
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createLowerQuantizedPass() { return std::make_unique<LowerQuantizedPass>(); }

} // namespace fb
