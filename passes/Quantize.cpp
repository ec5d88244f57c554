// quantize: post-training int8 quantization of Conv, Gemm and MatMul into QDQ form
// (QuantizeLinear/DequantizeLinear pairs), calibrated on the fp32 model and evaluated against it.
#include "core/Format.h"
#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "passes/Calibration.h"
#include "passes/OutputDeviation.h"
#include "passes/Passes.h"
#include "passes/QuantizationParams.h"
#include "passes/RewriteUtil.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace fb {

namespace {

/// The pass's options, validated.
struct QuantizeOptions {
  CalibrationSettings calibration;
  CalibrationInputs inputs;
  QuantScheme scheme;
  bool perChannel = true;
  int64_t eval = 8;
};

/// Splits "a.npy:b.npy" (or ';'): commas separate pipeline options, so lists use ':' or ';'.
std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ':' || c == ';') {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

/// Reads and checks the options; errors name the option and the accepted values.
/// The options quantize declares; readOptions reads them after the pass manager has checked
/// them and filled in the defaults.
std::vector<PassOptionSpec> quantizeOptionSpecs() {
  return {
      PassOptionSpec::oneOf("calibration", {"minmax", "percentile", "entropy"}, "percentile",
                            "how an activation's range is chosen from its observed values"),
      PassOptionSpec::number("percentile", 99.99, 50.0, 100.0,
                             "the percentile calibration=percentile keeps", /*minExclusive=*/true),
      PassOptionSpec::integer("samples", 16, 1, 4096, "seeded random calibration inputs"),
      PassOptionSpec::integer("seed", 0, 0, INT64_MAX, "seed of the calibration inputs"),
      PassOptionSpec::text("inputs", "calibration inputs: .npy files separated by ':' or ';'"),
      PassOptionSpec::text("dir", "calibration inputs: every .npy file in this folder"),
      PassOptionSpec::oneOf("mode", {"asymmetric", "symmetric"}, "asymmetric",
                            "zero points free, or fixed at the middle of the range"),
      PassOptionSpec::oneOf("dtype", {"int8", "uint8"}, "int8", "the quantized activation type"),
      PassOptionSpec::boolean("per_channel", true, "one weight scale per output channel"),
      PassOptionSpec::integer("eval", 8, 0, 4096,
                              "seeded inputs the output deviation is measured on (0: none)"),
  };
}

Expected<QuantizeOptions> readOptions(const PassOptions& o) {
  QuantizeOptions q;
  const std::string& method = o.declared("calibration");
  if (method == "minmax")
    q.calibration.method = CalibrationMethod::MinMax;
  else if (method == "percentile")
    q.calibration.method = CalibrationMethod::Percentile;
  else
    q.calibration.method = CalibrationMethod::Entropy;
  FB_ASSIGN_OR_RETURN(q.calibration.percentile, o.getDouble("percentile"));
  FB_ASSIGN_OR_RETURN(q.inputs.samples, o.getInt("samples"));
  FB_ASSIGN_OR_RETURN(int64_t seed, o.getInt("seed"));
  q.inputs.seed = uint64_t(seed);
  if (o.has("inputs") && o.has("dir"))
    return makeError("options 'inputs' and 'dir' exclude each other");
  if (o.has("inputs")) {
    q.inputs.files = splitList(o.getString("inputs", ""));
    if (q.inputs.files.empty())
      return makeError("option 'inputs' names no files (separate them with ':' or ';')");
  }
  if (o.has("dir")) {
    FB_ASSIGN_OR_RETURN(q.inputs.files, npyFilesIn(o.getString("dir", "")));
  }
  q.scheme.symmetric = q.calibration.symmetric = o.declared("mode") == "symmetric";
  q.scheme.dtype = o.declared("dtype") == "int8" ? DType::I8 : DType::U8;
  FB_ASSIGN_OR_RETURN(q.perChannel, o.getBool("per_channel"));
  FB_ASSIGN_OR_RETURN(q.eval, o.getInt("eval"));
  return q;
}

/// One op to quantize and the values around it.
struct Candidate {
  Node* op = nullptr;
  Value* x = nullptr;       ///< the activation operand
  Value* weight = nullptr;  ///< constant f32 weight
  int64_t axis = 0;         ///< the weight's output-channel axis
  Value* bias = nullptr;    ///< constant f32 bias [C], or nullptr
  Value* out = nullptr;     ///< the quantized result (after an absorbed Relu/Clip), or nullptr
};

bool isF32Activation(const Value* v) {
  return v && !v->isConstant() && v->type().dtype == DType::F32;
}

const Tensor* f32Constant(const Value* v, size_t rank) {
  const Tensor* t = constantOf(v);
  return t && t->dtype() == DType::F32 && t->rank() == rank && t->numElements() > 0 ? t : nullptr;
}

/// The candidate for `n`, or nullopt (with `why` set) when it is not quantized.
std::optional<Candidate> findCandidate(Node& n, std::string& why) {
  Candidate c;
  c.op = &n;
  c.x = n.input(0);
  c.weight = n.input(1);
  for (const Value* v : {c.x, c.weight})
    if (v && v->producer() && v->producer()->op() == OpKind::DequantizeLinear) {
      why = "already quantized";
      return std::nullopt;
    }
  if (!isF32Activation(c.x) || !c.weight || !c.weight->isConstant()) {
    why = "not an f32 activation times a constant weight";
    return std::nullopt;
  }
  const Tensor* w = constantOf(c.weight);
  if (n.op() == OpKind::Conv) {
    if (!w || w->dtype() != DType::F32 || w->rank() < 3 || c.x->type().rank() != w->rank()) {
      why = "weight is not an f32 constant of the input's rank";
      return std::nullopt;
    }
    c.axis = 0;
  } else {
    if (!f32Constant(c.weight, 2)) {
      why = "weight is not a 2-D f32 constant";
      return std::nullopt;
    }
    c.axis = 1;
    if (n.op() == OpKind::Gemm) {
      auto axis = plainGemmChannelAxis(n, /*betaMatters=*/n.input(2) != nullptr);
      if (!axis) {
        why = "Gemm with alpha, beta or transA other than 1, 1, 0";
        return std::nullopt;
      }
      c.axis = *axis;
    }
  }
  const int64_t channels = w->sizes()[size_t(c.axis)];
  if (n.numInputs() > 2 && n.input(2)) {
    const Tensor* b = f32Constant(n.input(2), 1);
    if (!b || b->numElements() != channels) {
      why = "bias is not an f32 constant with one entry per output channel";
      return std::nullopt;
    }
    c.bias = n.input(2);
  }
  // Absorb a Relu or Clip that alone reads the result: its output range is the tighter one.
  Value* y = n.output(0);
  c.out = y;
  if (!y->isGraphOutput() && y->uses().size() == 1 && activationClamp(*y->uses()[0].user))
    c.out = y->uses()[0].user->output(0);
  if (c.out->isGraphOutput())
    c.out = nullptr; // outputs keep f32 (and their names)
  return c;
}

/// The quantized activation values, each with its parameters.
struct ActivationPlan {
  std::vector<Value*> values; // in first-seen order
  std::map<const Value*, AffineParams> params;
};

/// Adds a constant named after `base`.
Value* addConst(Graph& g, const std::string& base, Tensor t) {
  return g.addConstant(g.uniqueValueName(base), std::move(t));
}

/// A rank-0 zero point of the scheme's dtype.
Tensor zeroPointTensor(DType dtype, int32_t zp) {
  Tensor t(dtype, {});
  t.setFromDouble(0, double(zp));
  return t;
}

/// Inserts QuantizeLinear → DequantizeLinear on `v` before its first reader and redirects every
/// reader (not graph-output slots) to the dequantized value.
void insertActivationQdq(Graph& g, Value* v, const AffineParams& p, DType dtype,
                         const std::map<const Node*, size_t>& position, PassContext& ctx) {
  std::vector<Use> uses = v->uses();
  Node* first = nullptr;
  for (const Use& u : uses)
    if (!first || position.at(u.user) < position.at(first))
      first = u.user;
  assert(first && "insertActivationQdq on an unused value");
  Value* scale = addConst(g, v->name() + ".scale", Tensor::scalar<float>(p.scale));
  Value* zp = addConst(g, v->name() + ".zero_point", zeroPointTensor(dtype, p.zeroPoint));
  Node* q = g.insertNodeBefore(first, OpKind::QuantizeLinear, {v, scale, zp}, 1,
                               {v->name() + ".q"}, "");
  Node* dq = g.insertNodeBefore(first, OpKind::DequantizeLinear, {q->output(0), scale, zp}, 1,
                                {v->name() + ".dq"}, "");
  annotateQuant(q->output(0), {p.scale}, {p.zeroPoint}, std::nullopt);
  for (Node* n : {q, dq}) {
    if (v->producer())
      n->addProvenanceFrom(*v->producer());
    ctx.logCreated(n->id(), v->producer() ? std::vector<NodeId>{v->producer()->id()}
                                          : std::vector<NodeId>{},
                   "quantize " + v->name());
  }
  for (const Use& u : uses)
    u.user->setInput(u.operand, dq->output(0));
}

/// Inserts DequantizeLinear(constant, scales, zero points) {axis} before `op` and makes it
/// operand `operand` of `op`.
void insertConstantDq(Graph& g, Node* op, size_t operand, Tensor data,
                      const std::vector<float>& scales, int64_t axis, PassContext& ctx) {
  const std::string base = op->input(operand)->name();
  const DType dtype = data.dtype();
  const int64_t n = int64_t(scales.size());
  Value* q = addConst(g, base + ".quantized", std::move(data));
  annotateQuant(q, scales, std::vector<int64_t>(scales.size(), 0), axis);
  Value* s = addConst(g, base + ".scale", n == 1 ? Tensor::scalar<float>(scales[0])
                                                 : Tensor::fromVector<float>({n}, scales));
  Value* zp = addConst(g, base + ".zero_point", n == 1 ? Tensor(dtype, {}) : Tensor(dtype, {n}));
  Node* dq = g.insertNodeBefore(op, OpKind::DequantizeLinear, {q, s, zp}, 1,
                                {base + ".dq"}, "");
  if (n != 1)
    dq->attrs().set("axis", axis);
  dq->addProvenanceFrom(*op);
  ctx.logCreated(dq->id(), {op->id()}, "dequantize " + base);
  op->setInput(operand, dq->output(0));
}

/// Bytes of all constants.
int64_t constantBytes(const Graph& g) {
  int64_t total = 0;
  for (const Value* c : g.constants())
    total += int64_t(c->constantData().byteSize());
  return total;
}


/// Quantize, with options calibration, percentile, samples, seed, inputs|dir, mode, dtype,
/// per_channel and eval:
///   1. validate the options; refuse a graph with fused groups (the values to observe live
///      inside their bodies), naming the first group;
///   2. pick the ops: Conv, Gemm (alpha 1, beta 1, transA 0) and MatMul whose operand 0 is an
///      f32 activation and operand 1 an f32 constant weight, with an f32 bias of one entry per
///      output channel if any; a Relu or Clip that alone reads the result is absorbed, so the
///      result is observed after it (the tighter, non-negative range);
///   3. calibrate: run the fp32 graph on the calibration inputs (the .npy files, or `samples`
///      seeded random inputs) and observe every operand and result to quantize; turn each
///      observation into a range (min/max, percentile, or the entropy threshold) and the range
///      into a per-tensor scale and zero point (symmetric or affine, i8 or u8);
///   4. rewrite into QDQ form: QuantizeLinear → DequantizeLinear on each such activation (one
///      pair per value, shared by its readers; graph outputs stay f32); weights become i8
///      constants, symmetric per output channel (Conv axis 0, Gemm/MatMul along N), behind a
///      DequantizeLinear; biases become i32 constants at the accumulator scale s_x·s_w[c],
///      zero point 0, behind a DequantizeLinear; the f32 constants go;
///   5. re-infer shapes; evaluate the QDQ graph against the fp32 one on `eval` seeded inputs
///      (seeds 1000000 + seed + i, distinct from calibration's) and report size and accuracy.
class QuantizePass : public Pass {
public:
  std::string name() const override { return "quantize"; }
  std::string summary() const override {
    return "post-training int8 quantization of Conv/Gemm/MatMul into calibrated QDQ form "
           "(quantize{calibration=percentile|minmax|entropy,samples=16,eval=8})";
  }
  std::string description() const override {
    return "Quantization stores weights as 8-bit integers instead of 32-bit floats and computes "
           "convolutions and matrix products in integer arithmetic: the model gets about four "
           "times smaller and int8 kernels (VNNI on x86, dp4a and tensor cores on NVIDIA GPUs) "
           "do several times more work per cycle. Each real value is represented as "
           "scale·(q - zero_point). Weights get one scale per output channel, read from their "
           "largest magnitude. Activations are only known at run time, so the pass first "
           "calibrates: it runs the float model on sample inputs and records every activation's "
           "distribution, then picks the range to cover by min/max, a percentile (clipping rare "
           "outliers buys resolution for common values) or the entropy method (the clipping "
           "point whose 8-bit histogram loses least information). The result is in QDQ form: "
           "QuantizeLinear/DequantizeLinear pairs around each Conv, Gemm and MatMul, so the "
           "graph still computes in float but rounds exactly where int8 hardware would; "
           "`lower-quantized` then turns those patterns into integer ops. The pass reports the "
           "model size and how close the quantized outputs stay to the float ones. Run it "
           "before `fuse`, and after fold-batchnorm so BatchNorm is inside the Conv weights. Options: "
           "calibration, percentile, samples, seed, inputs or dir (.npy files), mode "
           "(asymmetric|symmetric), dtype (int8|uint8), per_channel, eval (docs/CLI.md).";
  }

  std::vector<PassOptionSpec> options() const override { return quantizeOptionSpecs(); }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    FB_ASSIGN_OR_RETURN(QuantizeOptions opt, readOptions(ctx.options()));
    for (const auto& n : graph.nodes())
      if (n->body())
        return makeError(n->describe(),
                         " is a fused group; calibration must observe the values inside it, so "
                         "run quantize before fuse");

    std::vector<Candidate> candidates;
    std::map<std::string, int64_t> skipped;
    for (const auto& n : graph.nodes()) {
      if (n->op() != OpKind::Conv && n->op() != OpKind::Gemm && n->op() != OpKind::MatMul)
        continue;
      std::string why;
      if (auto c = findCandidate(*n, why))
        candidates.push_back(*c);
      else
        ++skipped[why];
    }
    for (const auto& [why, count] : skipped)
      ctx.addStatistic("left alone: " + why, double(count));
    if (candidates.empty()) {
      ctx.setSummary("nothing to quantize");
      return false;
    }

    // Calibrate on the unchanged graph: every later change would alter the observed values.
    ActivationPlan plan;
    for (const Candidate& c : candidates)
      for (Value* v : {c.x, c.out})
        if (v && !plan.params.count(v)) {
          plan.params[v] = {};
          plan.values.push_back(v);
        }
    std::vector<const Value*> observed(plan.values.begin(), plan.values.end());
    FB_ASSIGN_OR_RETURN(auto samples, loadCalibrationSamples(graph, opt.inputs));
    FB_ASSIGN_OR_RETURN(auto observers, calibrate(graph, samples, observed));
    for (Value* v : plan.values)
      plan.params[v] = chooseParams(observers.at(v->name()).range(opt.calibration), opt.scheme);

    std::unique_ptr<Graph> fp32 = graph.clone();
    const int64_t bytesBefore = constantBytes(graph);

    std::map<const Node*, size_t> position;
    for (size_t i = 0; i < graph.nodes().size(); ++i)
      position[graph.nodes()[i].get()] = i;
    // Rewrites: one per activation given a Q/DQ pair, then one per op whose weight (and bias)
    // is quantized. Each leaves a valid graph alone: a DequantizeLinear yields f32.
    for (Value* v : plan.values)
      if (ctx.mayRewrite())
        insertActivationQdq(graph, v, plan.params.at(v), opt.scheme.dtype, position, ctx);

    std::map<std::string, int64_t> quantizedByOp;
    std::set<Value*> oldConstants;
    for (const Candidate& c : candidates) {
      if (!ctx.mayRewrite())
        continue;
      QuantizedWeight qw = quantizeWeight(c.weight->constantData(), c.axis, opt.perChannel);
      const float xScale = plan.params.at(c.x).scale;
      oldConstants.insert(c.weight);
      if (c.bias) {
        std::vector<float> biasScales;
        Tensor qb = quantizeBias(c.bias->constantData(), xScale, qw.scales, biasScales);
        oldConstants.insert(c.bias);
        insertConstantDq(graph, c.op, 2, std::move(qb), biasScales, 0, ctx);
      }
      insertConstantDq(graph, c.op, 1, std::move(qw.data), qw.scales, c.axis, ctx);
      ++quantizedByOp[opName(c.op->op())];
    }
    for (Value* v : oldConstants)
      if (!v->hasUses() && !v->isGraphOutput())
        graph.eraseValue(v);
    FB_TRY(inferShapes(graph));
    const int64_t bytesAfter = constantBytes(graph);

    std::string ops;
    for (const auto& [op, count] : quantizedByOp) {
      ctx.addStatistic(op + " quantized", double(count));
      ops += (ops.empty() ? "" : "/") + op;
    }
    ctx.addStatistic("activations quantized", double(plan.values.size()));
    ctx.addStatistic("calibration samples", double(samples.size()));
    ctx.addStatistic("weight bytes before", double(bytesBefore));
    ctx.addStatistic("weight bytes after", double(bytesAfter));
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%zu %s quantized (%s int8, %s activations, %s calibration on %zu inputs), "
                  "weights %s -> %s (%.2fx)",
                  candidates.size(), ops.c_str(), opt.perChannel ? "per-channel" : "per-tensor",
                  opt.scheme.symmetric ? "symmetric" : "asymmetric",
                  calibrationMethodName(opt.calibration.method), samples.size(),
                  formatBytes(double(bytesBefore)).c_str(), formatBytes(double(bytesAfter)).c_str(),
                  bytesAfter ? double(bytesBefore) / double(bytesAfter) : 0.0);
    std::string summary = buf;
    if (opt.eval > 0) {
      FB_ASSIGN_OR_RETURN(OutputDeviation e,
                          measureOutputDeviation(*fp32, graph, opt.eval, 1000000 + opt.inputs.seed));
      summary += recordOutputDeviation(e, ctx);
    }
    ctx.setSummary(summary);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createQuantizePass() { return std::make_unique<QuantizePass>(); }

} // namespace fb
