// The recurrent ops RNN, GRU and LSTM (ONNX opsets 7-14 semantics, with opset 14's `layout`):
// shape inference, the interpreter kernel and the cost.
//
// The kernel runs each direction and each sequence of the batch on its own, in double:
//  1. Gate pre-activations for step t: x_t·Wᵀ + h_{t-1}·Rᵀ + Wb + Rb (GRU's candidate keeps its
//     recurrent product apart, since the reset gate multiplies into it).
//  2. The cell's update (see explainRecurrentNode in RecurrentSpec.h), with clipping applied to
//     every pre-activation when `clip` is set.
//  3. Steps run t = 0 .. len-1, or len-1 .. 0 for the reverse direction, where len is the
//     sequence's entry of `sequence_lens` (default: all steps). Y is zero at steps t >= len, and
//     Y_h/Y_c hold the state after the sequence's last step (the initial state when len = 0).
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"
#include "core/ops/RecurrentSpec.h"

namespace fb {

using namespace math;

namespace {

// Input slots.
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitH = 5, kInitC = 6, kP = 7;

const char* inputName(size_t i) {
  static const char* names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  return names[i];
}

/// Checks a present input's dims against the expected ones (unknown and symbolic dims agree).
Status checkDims(const InferContext& ctx, size_t i, const std::vector<Dim>& want) {
  const TensorType& t = ctx.inputType(i);
  bool bad = t.rank() != want.size();
  for (size_t d = 0; !bad && d < want.size(); ++d)
    bad = dimsConflict(t.dims[d], want[d]);
  if (bad) {
    std::string w;
    for (const Dim& d : want)
      w += (w.empty() ? "" : ", ") + d.str();
    return ctx.error("input ", i, " (", inputName(i), ") must have shape [", w, "], got ", t.str());
  }
  return Status::success();
}

Status inferRecurrent(InferContext& ctx) {
  FB_ASSIGN_OR_RETURN(RecurrentSpec s, readRecurrentSpec(ctx.node()));
  auto has = [&](size_t i) { return i < ctx.numInputs() && ctx.hasInput(i); };
  for (size_t i : {kX, kW, kR, kB, kInitH, kInitC, kP})
    if (has(i)) {
      FB_TRY(checkInputDType(ctx, i, kFloatTypes));
      FB_TRY(checkSameDType(ctx, kX, i));
    }
  const TensorType& x = ctx.inputType(kX);
  if (x.rank() != 3)
    return ctx.error("input 0 (X) must have rank 3 (",
                     s.layout ? "[batch, seq, input]" : "[seq, batch, input]", "), got ", x.str());
  const Dim seq = x.dims[s.layout ? 1 : 0], batch = x.dims[s.layout ? 0 : 1], in = x.dims[2];
  const Dim nd = s.numDirections, H = s.hiddenSize, G = s.numGates * s.hiddenSize;
  FB_TRY(checkDims(ctx, kW, {nd, G, in}));
  FB_TRY(checkDims(ctx, kR, {nd, G, H}));
  if (has(kB))
    FB_TRY(checkDims(ctx, kB, {nd, Dim(2 * s.numGates * s.hiddenSize)}));
  if (has(kSeqLens)) {
    if (ctx.inputType(kSeqLens).dtype != DType::I32)
      return ctx.error("input 4 (sequence_lens) must be i32, got ", ctx.inputType(kSeqLens).str());
    FB_TRY(checkDims(ctx, kSeqLens, {batch}));
  }
  const std::vector<Dim> state =
      s.layout ? std::vector<Dim>{batch, nd, H} : std::vector<Dim>{nd, batch, H};
  for (size_t i : {kInitH, kInitC})
    if (has(i))
      FB_TRY(checkDims(ctx, i, state));
  if (has(kP))
    FB_TRY(checkDims(ctx, kP, {nd, Dim(3 * s.hiddenSize)}));
  if (s.op != OpKind::LSTM && ctx.numOutputs() > 2)
    return ctx.error(opName(s.op), " yields 2 outputs at most");
  ctx.setOutputType(0, TensorType(x.dtype, s.layout ? std::vector<Dim>{batch, seq, nd, H}
                                                    : std::vector<Dim>{seq, nd, batch, H}));
  for (size_t i = 1; i < ctx.numOutputs(); ++i)
    ctx.setOutputType(i, TensorType(x.dtype, state));
  return Status::success();
}

/// A tensor's elements as doubles (the weights of one layer are small).
std::vector<double> toDoubles(const Tensor& t) {
  std::vector<double> out(size_t(t.numElements()));
  for (int64_t i = 0; i < t.numElements(); ++i)
    out[size_t(i)] = t.getAsDouble(i);
  return out;
}

/// Sizes of one evaluation and the offsets of X, Y and state elements under the layout.
struct Geometry {
  int64_t seq, batch, in, H, nd, G;
  bool batchFirst;
  int64_t x(int64_t t, int64_t b, int64_t k) const {
    return ((batchFirst ? b * seq + t : t * batch + b) * in) + k;
  }
  int64_t y(int64_t t, int64_t d, int64_t b, int64_t j) const {
    return batchFirst ? ((b * seq + t) * nd + d) * H + j : ((t * nd + d) * batch + b) * H + j;
  }
  int64_t state(int64_t d, int64_t b, int64_t j) const {
    return batchFirst ? (b * nd + d) * H + j : (d * batch + b) * H + j;
  }
};

Status evalRecurrent(EvalContext& ctx) {
  FB_ASSIGN_OR_RETURN(RecurrentSpec s, readRecurrentSpec(ctx.node()));
  const Tensor& X = ctx.input(kX);
  if (X.rank() != 3)
    return ctx.error("input 0 (X) must have rank 3, got ", X.type().str());
  Geometry g;
  g.batchFirst = s.layout == 1;
  g.seq = X.sizes()[g.batchFirst ? 1 : 0];
  g.batch = X.sizes()[g.batchFirst ? 0 : 1];
  g.in = X.sizes()[2];
  g.H = s.hiddenSize;
  g.nd = s.numDirections;
  g.G = s.numGates * g.H;
  auto want = [&](size_t i, std::vector<int64_t> sizes) -> Status {
    if (ctx.input(i).sizes() != sizes)
      return ctx.error("input ", i, " (", inputName(i), ") must have shape ",
                       TensorType::of(X.dtype(), sizes).str(), ", got ", ctx.input(i).type().str());
    return Status::success();
  };
  FB_TRY(want(kW, {g.nd, g.G, g.in}));
  FB_TRY(want(kR, {g.nd, g.G, g.H}));
  const std::vector<int64_t> stateSizes = g.batchFirst ? std::vector<int64_t>{g.batch, g.nd, g.H}
                                                       : std::vector<int64_t>{g.nd, g.batch, g.H};
  const std::vector<double> x = toDoubles(X), W = toDoubles(ctx.input(kW)),
                            R = toDoubles(ctx.input(kR));
  std::vector<double> B(size_t(g.nd * 2 * g.G), 0.0), h0(size_t(g.nd * g.batch * g.H), 0.0),
      c0 = h0, P(size_t(g.nd * 3 * g.H), 0.0);
  std::vector<int64_t> lens(size_t(g.batch), g.seq);
  if (ctx.hasInput(kB)) {
    FB_TRY(want(kB, {g.nd, 2 * g.G}));
    B = toDoubles(ctx.input(kB));
  }
  if (ctx.hasInput(kSeqLens)) {
    FB_TRY(want(kSeqLens, {g.batch}));
    lens = tensorToInts(ctx.input(kSeqLens));
    for (int64_t b = 0; b < g.batch; ++b)
      if (lens[size_t(b)] < 0 || lens[size_t(b)] > g.seq)
        return ctx.error("sequence_lens[", b, "] is ", lens[size_t(b)],
                         ", outside [0, seq_length = ", g.seq, "]");
  }
  if (ctx.hasInput(kInitH)) {
    FB_TRY(want(kInitH, stateSizes));
    h0 = toDoubles(ctx.input(kInitH));
  }
  if (ctx.hasInput(kInitC)) {
    FB_TRY(want(kInitC, stateSizes));
    c0 = toDoubles(ctx.input(kInitC));
  }
  if (ctx.hasInput(kP)) {
    FB_TRY(want(kP, {g.nd, 3 * g.H}));
    P = toDoubles(ctx.input(kP));
  }

  Tensor Y(X.dtype(), g.batchFirst ? std::vector<int64_t>{g.batch, g.seq, g.nd, g.H}
                                   : std::vector<int64_t>{g.seq, g.nd, g.batch, g.H});
  Tensor Yh(X.dtype(), stateSizes), Yc(X.dtype(), stateSizes);
  for (int64_t i = 0; i < Y.numElements(); ++i)
    Y.setFromDouble(i, 0.0);
  const int64_t H = g.H;
  auto clip = [&](double v) {
    return s.hasClip ? std::min(double(s.clip), std::max(-double(s.clip), v)) : v;
  };
  const size_t nH = size_t(H), nG = size_t(g.G);
  std::vector<double> h(nH), c(nH), gates(nG), hr(nG);
  for (int64_t d = 0; d < g.nd; ++d) {
    const double* Wd = W.data() + d * g.G * g.in;
    const double* Rd = R.data() + d * g.G * H;
    const double* Wb = B.data() + d * 2 * g.G;
    const double* Rb = Wb + g.G;
    const double* Pd = P.data() + d * 3 * H;
    const RecurrentActivation& f = s.activation(d, 0);
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t j = 0; j < H; ++j) {
        h[size_t(j)] = h0[size_t(g.state(d, b, j))];
        c[size_t(j)] = c0[size_t(g.state(d, b, j))];
      }
      const int64_t len = lens[size_t(b)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = s.reversed(d) ? len - 1 - step : step;
        // 1. x_t·Wᵀ + Wb into gates, h_{t-1}·Rᵀ + Rb into hr.
        for (int64_t r = 0; r < g.G; ++r) {
          double ax = Wb[r], ah = Rb[r];
          for (int64_t k = 0; k < g.in; ++k)
            ax += x[size_t(g.x(t, b, k))] * Wd[r * g.in + k];
          for (int64_t k = 0; k < H; ++k)
            ah += h[size_t(k)] * Rd[r * H + k];
          gates[size_t(r)] = ax;
          hr[size_t(r)] = ah;
        }
        // 2. The cell.
        if (s.op == OpKind::RNN) {
          for (int64_t j = 0; j < H; ++j)
            h[size_t(j)] = f.apply(clip(gates[size_t(j)] + hr[size_t(j)]));
        } else if (s.op == OpKind::GRU) {
          const RecurrentActivation& gAct = s.activation(d, 1);
          std::vector<double> z(nH), rh(nH);
          for (int64_t j = 0; j < H; ++j) {
            z[size_t(j)] = f.apply(clip(gates[size_t(j)] + hr[size_t(j)]));
            const double r = f.apply(clip(gates[size_t(H + j)] + hr[size_t(H + j)]));
            rh[size_t(j)] = r;
          }
          std::vector<double> cand(nH);
          for (int64_t j = 0; j < H; ++j) {
            double pre = gates[size_t(2 * H + j)];
            if (s.linearBeforeReset) {
              pre += rh[size_t(j)] * hr[size_t(2 * H + j)];
            } else {
              // (r ⊙ h_{t-1})·Rhᵀ + Rbh.
              double a = Rb[2 * H + j];
              for (int64_t k = 0; k < H; ++k)
                a += rh[size_t(k)] * h[size_t(k)] * Rd[(2 * H + j) * H + k];
              pre += a;
            }
            cand[size_t(j)] = gAct.apply(clip(pre));
          }
          for (int64_t j = 0; j < H; ++j)
            h[size_t(j)] = (1 - z[size_t(j)]) * cand[size_t(j)] + z[size_t(j)] * h[size_t(j)];
        } else {
          const RecurrentActivation &gAct = s.activation(d, 1), &hAct = s.activation(d, 2);
          for (int64_t j = 0; j < H; ++j) {
            auto pre = [&](int64_t gate) {
              return gates[size_t(gate * H + j)] + hr[size_t(gate * H + j)];
            };
            const double cPrev = c[size_t(j)];
            const double i = f.apply(clip(pre(0) + Pd[j] * cPrev));
            const double fg = s.inputForget ? 1 - i : f.apply(clip(pre(2) + Pd[2 * H + j] * cPrev));
            const double cand = gAct.apply(clip(pre(3)));
            const double cNew = fg * cPrev + i * cand;
            const double o = f.apply(clip(pre(1) + Pd[H + j] * cNew));
            c[size_t(j)] = cNew;
            h[size_t(j)] = o * hAct.apply(cNew);
          }
        }
        for (int64_t j = 0; j < H; ++j)
          Y.setFromDouble(g.y(t, d, b, j), h[size_t(j)]);
      }
      for (int64_t j = 0; j < H; ++j) {
        Yh.setFromDouble(g.state(d, b, j), h[size_t(j)]);
        Yc.setFromDouble(g.state(d, b, j), c[size_t(j)]);
      }
    }
  }
  ctx.setOutput(0, std::move(Y));
  if (ctx.numOutputs() > 1)
    ctx.setOutput(1, std::move(Yh));
  if (ctx.numOutputs() > 2)
    ctx.setOutput(2, std::move(Yc));
  return Status::success();
}

/// Two FLOPs per multiply-add of the input and recurrent products, plus about ten per gate
/// element for the activations and the state update.
OpCost costRecurrent(const CostContext& ctx) {
  const TensorType& x = ctx.inputType(kX);
  const TensorType& w = ctx.inputType(kW);
  const TensorType& r = ctx.inputType(kR);
  auto dim = [](const TensorType& t, size_t i) {
    return i < t.rank() && t.dims[i].isStatic() ? double(t.dims[i].size()) : 1.0;
  };
  // seq * batch, whatever the layout.
  const double steps = dim(x, 0) * dim(x, 1);
  const double nd = dim(w, 0), G = dim(w, 1), in = dim(w, 2), H = dim(r, 2);
  OpCost c;
  c.flops = nd * steps * (2 * G * (in + H) + 10 * G);
  double bytes = 0;
  for (size_t i = 0; i < ctx.node().numInputs(); ++i)
    if (ctx.hasInput(i))
      bytes += CostContext::elements(ctx.inputType(i)) * double(dtypeSize(ctx.inputType(i).dtype));
  for (size_t i = 0; i < ctx.node().numOutputs(); ++i)
    bytes += ctx.outputElements(i) * double(dtypeSize(ctx.outputType(i).dtype));
  c.bytes = bytes;
  return c;
}

} // namespace

void registerRecurrentOps(OpRegistry& r) {
  for (OpKind op : {OpKind::RNN, OpKind::GRU, OpKind::LSTM})
    r.set(op, inferRecurrent, evalRecurrent, costRecurrent);
}

} // namespace fb
