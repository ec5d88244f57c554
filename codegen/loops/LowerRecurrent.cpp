// Lowering of the recurrent ops RNN, GRU and LSTM to loops over time with GEMM-shaped steps,
// the standard CPU approach (ONNX Runtime's DeepCPU LSTM):
//  1. The weights are stored transposed (Wᵀ: [dir, input, gates], Rᵀ: [dir, hidden, gates]) so
//     the vectorized loop of every product runs along the gates, contiguous in the weights and
//     the result: folded at compile time for constant weights, else copied by a nest.
//  2. The input projection of every time step at once: XP[d, t, b, :] = x_t·Wᵀ + Wb + Rb, a
//     GEMM of (seq·batch) × input by input × gates; its outer loops run in parallel.
//  3. Per direction, a serial loop over the steps s: the recurrent product
//     G[b, :] = XP[d, t, b, :] + h_{t-1}·Rᵀ (a sum over k per gate, 8 gates at once in vector
//     registers), then the cell's elementwise update of the states H (and C), written to Y.
//  4. Y_h and Y_c are copies of the final states.
// With sequence_lens, a sequence b takes part in step s only while s < len[b], and the reverse
// direction reads time t = len[b] - 1 - s; Y is zero at the steps a sequence does not reach. The
// arithmetic is what the interpreter's (core/ops/Recurrent.cpp) is, in f32.
#include "codegen/loops/LowerContext.h"
#include "core/ops/RecurrentSpec.h"

namespace fb::cg::lower {

namespace {

constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitH = 5, kInitC = 6, kP = 7;

ExprPtr f32(double v) {
  return fimm(DType::F32, v);
}

/// The loop-IR form of one activation, as RecurrentActivation::apply computes it.
ExprPtr activate(const RecurrentActivation& a, const ExprPtr& x) {
  using K = RecurrentActivationKind;
  const double al = a.alpha, be = a.beta;
  switch (a.kind) {
  case K::Sigmoid:
    return unary(UnaryOp::Sigmoid, x);
  case K::Tanh:
    return unary(UnaryOp::Tanh, x);
  case K::Relu:
    return max(x, f32(0));
  case K::HardSigmoid:
    return min(max(add(mul(f32(al), x), f32(be)), f32(0)), f32(1));
  case K::Affine:
    return add(mul(f32(al), x), f32(be));
  case K::LeakyRelu:
    return select(binary(BinaryOp::Ge, x, f32(0)), x, mul(f32(al), x));
  case K::ThresholdedRelu:
    return select(binary(BinaryOp::Ge, x, f32(al)), x, f32(0));
  case K::ScaledTanh:
    return mul(f32(al), unary(UnaryOp::Tanh, mul(f32(be), x)));
  case K::Elu:
    return select(binary(BinaryOp::Ge, x, f32(0)), x,
                  mul(f32(al), sub(unary(UnaryOp::Exp, x), f32(1))));
  case K::Softsign:
    return div(x, add(f32(1), unary(UnaryOp::Abs, x)));
  case K::Softplus: {
    ExprPtr e = unary(UnaryOp::Exp, unary(UnaryOp::Neg, unary(UnaryOp::Abs, x)));
    return add(max(x, f32(0)), unary(UnaryOp::Log1p, e));
  }
  }
  assert(false && "unknown activation");
  return x;
}

/// Builds the nest of one recurrent node.
class RecurrentLowering {
public:
  RecurrentLowering(KernelBuilder& b, const Node& n, const RecurrentSpec& s, const BufferPtr& y,
                    const std::vector<BufferPtr>& extras)
      : m_b(b), m_n(n), m_s(s), m_y(y) {
    m_yh = extras.size() > 0 ? extras[0] : nullptr;
    m_yc = extras.size() > 1 ? extras[1] : nullptr;
  }

  Expected<StmtPtr> run() {
    const std::vector<int64_t> xs = KernelBuilder::sizesOf(m_n.input(kX));
    if (xs.size() != 3)
      return makeError(m_n.describe(), ": input 0 (X) must have rank 3");
    m_batchFirst = m_s.layout == 1;
    m_seq = xs[m_batchFirst ? 1 : 0];
    m_batch = xs[m_batchFirst ? 0 : 1];
    m_in = xs[2];
    m_H = m_s.hiddenSize;
    m_nd = m_s.numDirections;
    m_G = m_s.numGates * m_H;
    m_lstm = m_s.op == OpKind::LSTM;
    m_hasLens = has(kSeqLens);
    if (m_hasLens) {
      // Lengths outside [0, seq] are the interpreter's error. Known ones are refused here,
      // others read from an argument are checked by the executor before the kernel runs, in
      // the interpreter's words; the kernel also clamps them, so a bad length (or one computed
      // inside a hand-built group, which is clamped only) never reads or writes outside a buffer.
      const Value* lens = m_n.input(kSeqLens);
      if (const Tensor* known = m_b.constantOf(lens)) {
        for (int64_t i = 0; i < known->numElements(); ++i)
          if (known->getAsInt64(i) < 0 || known->getAsInt64(i) > m_seq)
            return makeError(m_n.describe(), ": sequence_lens[", i, "] is ", known->getAsInt64(i),
                             ", outside [0, seq_length = ", m_seq, "]");
      } else if (m_b.directBuffer(lens)) {
        IndexCheck check;
        check.sizes = {m_seq};
        check.axes = {0};
        check.inclusive = true;
        check.message = [](int64_t e, int64_t v, int64_t size) {
          return "sequence_lens[" + std::to_string(e) + "] is " + std::to_string(v) +
                 ", outside [0, seq_length = " + std::to_string(size) + "]";
        };
        FB_TRY(m_b.addRangeCheck(m_n, lens, std::move(check)));
      }
    }

    std::vector<StmtPtr> stmts;
    FB_ASSIGN_OR_RETURN(m_wt, transposedWeights(kW, "WT", m_in, stmts));
    FB_ASSIGN_OR_RETURN(m_rt, transposedWeights(kR, "RT", m_H, stmts));
    m_xp = m_b.scratchBuffer("XP", DType::F32, {m_nd, m_seq, m_batch, m_G});
    m_hs = m_b.scratchBuffer("Hs", DType::F32, {m_nd, m_batch, m_H});
    if (m_lstm)
      m_cs = m_b.scratchBuffer("Cs", DType::F32, {m_nd, m_batch, m_H});
    m_gr = m_b.scratchBuffer("G", DType::F32, {m_batch, m_G});
    if (m_s.op == OpKind::GRU && !m_s.linearBeforeReset)
      m_rh = m_b.scratchBuffer("RH", DType::F32, {m_batch, m_H});
    stmts.push_back(projection());
    stmts.push_back(initialStates());
    for (int64_t d = 0; d < m_nd; ++d)
      stmts.push_back(steps(d));
    stmts.push_back(finalStates());
    return block(std::move(stmts));
  }

private:
  bool has(size_t i) const { return i < m_n.numInputs() && m_n.input(i) != nullptr; }

  /// W or R ([dir, gates, k]) as [dir, k, gates]: a folded constant when known, else a scratch
  /// buffer filled by a copy nest appended to `stmts`.
  Expected<BufferPtr> transposedWeights(size_t input, const std::string& name, int64_t k,
                                        std::vector<StmtPtr>& stmts) {
    const Value* w = m_n.input(input);
    if (const Tensor* data = m_b.constantOf(w)) {
      Tensor t(DType::F32, {m_nd, k, m_G});
      float* out = t.mutableData<float>().data();
      for (int64_t d = 0; d < m_nd; ++d)
        for (int64_t g = 0; g < m_G; ++g)
          for (int64_t i = 0; i < k; ++i)
            out[(d * k + i) * m_G + g] = float(data->getAsDouble((d * m_G + g) * k + i));
      return m_b.constantBuffer(name, std::move(t));
    }
    BufferPtr buf = m_b.scratchBuffer(name, DType::F32, {m_nd, k, m_G});
    Indices at = varsOf({"d", "k", "g"});
    stmts.push_back(
        wrapLoops({"d", "k", "g"}, {m_nd, k, m_G},
                  store(buf, at, m_b.read(w, {at[0], at[2], at[1]}), tag(m_n) + " transpose")));
    return buf;
  }

  /// B[d, at] (0 without B).
  ExprPtr bias(int64_t d, const ExprPtr& at) {
    return has(kB) ? m_b.read(m_n.input(kB), {intImm(d), at}) : f32(0);
  }

  /// Element (t, b, k) of X under the layout.
  ExprPtr x(const ExprPtr& t, const ExprPtr& b, const ExprPtr& k) {
    return m_b.read(m_n.input(kX), m_batchFirst ? Indices{b, t, k} : Indices{t, b, k});
  }
  /// Indices of state element (d, b, j) (initial_h, Y_h, ...) under the layout.
  Indices stateAt(int64_t d, const ExprPtr& b, const ExprPtr& j) const {
    return m_batchFirst ? Indices{b, intImm(d), j} : Indices{intImm(d), b, j};
  }
  /// Indices of Y element (t, d, b, j) under the layout.
  Indices yAt(const ExprPtr& t, int64_t d, const ExprPtr& b, const ExprPtr& j) const {
    return m_batchFirst ? Indices{b, t, intImm(d), j} : Indices{t, intImm(d), b, j};
  }

  ExprPtr clip(ExprPtr v) const {
    return m_s.hasClip ? min(max(v, f32(-m_s.clip)), f32(m_s.clip)) : v;
  }

  /// Step 2: XP[d, t, b, g] = Wb + Rb + Σ_k X[t, b, k]·Wᵀ[d, k, g]. GRU with
  /// linear_before_reset leaves Rbh out of the candidate's rows (the reset gate multiplies it).
  StmtPtr projection() {
    std::vector<StmtPtr> perDir;
    ExprPtr t = var("t"), b = var("b"), k = var("k"), g = var("g");
    for (int64_t d = 0; d < m_nd; ++d) {
      Indices at{intImm(d), t, b, g};
      ExprPtr init;
      if (m_s.op == OpKind::GRU && m_s.linearBeforeReset)
        init = add(bias(d, g), select(binary(BinaryOp::Lt, g, intImm(2 * m_H)),
                                      bias(d, add(g, intImm(m_G))), f32(0)));
      else
        init = add(bias(d, g), bias(d, add(g, intImm(m_G))));
      // Per time step: the bias rows, then one axpy per k whose row of Wᵀ serves every
      // sequence of the batch; the inner loop runs along the gates (vectorized).
      StmtPtr first = wrapLoops({"b", "g"}, {m_batch, m_G},
                                store(m_xp, at, init, tag(m_n) + " input projection"));
      StmtPtr update = wrapLoops(
          {"k", "b", "g"}, {m_in, m_batch, m_G},
          store(m_xp, at, add(load(m_xp, at), mul(x(t, b, k), load(m_wt, {intImm(d), k, g})))));
      perDir.push_back(wrapLoops({"t"}, {m_seq}, block({first, update})));
    }
    return block(std::move(perDir));
  }

  /// Hs (and Cs) from initial_h (initial_c), or zeros.
  StmtPtr initialStates() {
    ExprPtr b = var("b"), j = var("j");
    std::vector<StmtPtr> stmts;
    for (int64_t d = 0; d < m_nd; ++d) {
      Indices at{intImm(d), b, j};
      std::vector<StmtPtr> inner{
          store(m_hs, at, has(kInitH) ? m_b.read(m_n.input(kInitH), stateAt(d, b, j)) : f32(0),
                tag(m_n) + " initial state")};
      if (m_lstm)
        inner.push_back(
            store(m_cs, at, has(kInitC) ? m_b.read(m_n.input(kInitC), stateAt(d, b, j)) : f32(0)));
      stmts.push_back(wrapLoops({"b", "j"}, {m_batch, m_H}, block(std::move(inner))));
    }
    return block(std::move(stmts));
  }

  /// Y_h and Y_c from the states.
  StmtPtr finalStates() {
    ExprPtr b = var("b"), j = var("j");
    std::vector<StmtPtr> stmts;
    for (int64_t d = 0; d < m_nd; ++d) {
      Indices at{intImm(d), b, j};
      std::vector<StmtPtr> inner;
      if (m_yh)
        inner.push_back(store(m_yh, stateAt(d, b, j), load(m_hs, at), "Y_h"));
      if (m_yc && m_lstm)
        inner.push_back(store(m_yc, stateAt(d, b, j), load(m_cs, at), "Y_c"));
      if (!inner.empty())
        stmts.push_back(wrapLoops({"b", "j"}, {m_batch, m_H}, block(std::move(inner))));
    }
    return block(std::move(stmts));
  }

  /// G[b, lo + g] = init(g) + Σ_k src[b, k]·Rᵀ[d, k, lo + g] for g in [0, n): the recurrent
  /// product of a range of gate rows, as an axpy per k so the inner loop runs along the gates.
  /// Without sequence_lens every sequence takes part, and k runs outside the batch so each row
  /// of Rᵀ serves the whole batch; with them, `perSequence` wraps the product of each sequence
  /// in its own test (an ended sequence must not read XP).
  StmtPtr recurrentProduct(int64_t d, const BufferPtr& src, int64_t lo, int64_t n,
                           const std::function<ExprPtr(const ExprPtr&)>& init,
                           const std::function<StmtPtr(StmtPtr)>& perSequence) {
    ExprPtr b = var("b"), g = var("g"), k = var("k");
    // src is a state [dir, batch, hidden] or GRU's r ⊙ h [batch, hidden].
    ExprPtr srcAt = src->rank() == 3 ? load(src, {intImm(d), b, k}) : load(src, {b, k});
    Indices at{b, add(intImm(lo), g)};
    StmtPtr first = forRange("g", n, store(m_gr, at, init(g), tag(m_n) + " recurrent product"));
    StmtPtr axpy = forRange(
        "g", n,
        store(m_gr, at,
              add(load(m_gr, at), mul(srcAt, load(m_rt, {intImm(d), k, add(intImm(lo), g)})))));
    if (m_hasLens)
      return perSequence(block({first, forRange("k", m_H, axpy)}));
    return block({wrapLoops({"b"}, {m_batch}, first),
                  forRange("k", m_H, wrapLoops({"b"}, {m_batch}, axpy))});
  }

  /// The loop over the steps of direction d (step 3).
  StmtPtr steps(int64_t d) {
    ExprPtr s = var("s"), b = var("b"), j = var("j");
    const bool reversed = m_s.reversed(d);
    // The time step sequence b reads at step s.
    ExprPtr len = m_hasLens
                      ? min(max(cast(Type::i64(), m_b.read(m_n.input(kSeqLens), {b})), intImm(0)),
                            intImm(m_seq))
                      : intImm(m_seq);
    ExprPtr tExpr = reversed ? sub(sub(len, intImm(1)), s) : s;
    BufferPtr tb;
    ExprPtr t = tExpr;
    if (m_hasLens && reversed) {
      // Kept in a local so that no vectorized loop indexes with a load of sequence_lens.
      tb = makeLocalBuffer("t" + std::to_string(d), DType::I64, {1});
      t = load(tb, {intImm(0)});
    }
    auto xp = [&](const ExprPtr& g) { return load(m_xp, {intImm(d), t, b, g}); };
    auto gr = [&](int64_t lo, const ExprPtr& g) { return load(m_gr, {b, add(intImm(lo), g)}); };
    Indices hAt{intImm(d), b, j};
    const RecurrentActivation& f = m_s.activation(d, 0);

    // Per sequence b: phases run one after another over all of b, since each product reads
    // the state of the previous step that the update then overwrites.
    std::vector<StmtPtr> phases;
    auto perSequence = [&](StmtPtr body) {
      if (m_hasLens)
        body = ifThen(binary(BinaryOp::Lt, s, len), body);
      if (tb)
        body = block({store(tb, {intImm(0)}, tExpr), body});
      return wrapLoops({"b"}, {m_batch}, body);
    };
    StmtPtr storeY = store(m_y, yAt(t, d, b, j), load(m_hs, hAt), "Y");
    switch (m_s.op) {
    case OpKind::RNN: {
      phases.push_back(recurrentProduct(d, m_hs, 0, m_G, xp, perSequence));
      StmtPtr cell = store(m_hs, hAt, activate(f, clip(gr(0, j))), "h = f(...)");
      phases.push_back(perSequence(forRange("j", m_H, block({cell, storeY}))));
      break;
    }
    case OpKind::GRU: {
      const RecurrentActivation& gAct = m_s.activation(d, 1);
      ExprPtr z = activate(f, clip(gr(0, j))), r = activate(f, clip(gr(m_H, j)));
      if (m_s.linearBeforeReset) {
        // G = XP(z, r) | Rbh, plus h·Rᵀ over all gates.
        phases.push_back(recurrentProduct(
            d, m_hs, 0, m_G,
            [&](const ExprPtr& g) {
              return select(binary(BinaryOp::Lt, g, intImm(2 * m_H)), xp(g),
                            bias(d, add(g, intImm(m_G))));
            },
            perSequence));
        ExprPtr cand =
            activate(gAct, clip(add(xp(add(intImm(2 * m_H), j)), mul(r, gr(2 * m_H, j)))));
        StmtPtr cell = store(m_hs, hAt, add(mul(sub(f32(1), z), cand), mul(z, load(m_hs, hAt))),
                             "h = (1 - z) h~ + z h");
        phases.push_back(perSequence(forRange("j", m_H, block({cell, storeY}))));
      } else {
        // z and r first; then the candidate's product with r ⊙ h.
        phases.push_back(recurrentProduct(d, m_hs, 0, 2 * m_H, xp, perSequence));
        Indices rhAt{b, j};
        StmtPtr gates = block(
            {store(m_rh, rhAt, mul(r, load(m_hs, hAt)), "r * h"), store(m_gr, {b, j}, z, "z")});
        phases.push_back(perSequence(forRange("j", m_H, gates)));
        phases.push_back(recurrentProduct(
            d, m_rh, 2 * m_H, m_H, [&](const ExprPtr& g) { return xp(add(intImm(2 * m_H), g)); },
            perSequence));
        ExprPtr zv = gr(0, j);
        ExprPtr cand = activate(gAct, clip(gr(2 * m_H, j)));
        StmtPtr cell = store(m_hs, hAt, add(mul(sub(f32(1), zv), cand), mul(zv, load(m_hs, hAt))),
                             "h = (1 - z) h~ + z h");
        phases.push_back(perSequence(forRange("j", m_H, block({cell, storeY}))));
      }
      break;
    }
    case OpKind::LSTM: {
      const RecurrentActivation &gAct = m_s.activation(d, 1), &hAct = m_s.activation(d, 2);
      phases.push_back(recurrentProduct(d, m_hs, 0, m_G, xp, perSequence));
      ExprPtr c = load(m_cs, hAt);
      auto peep = [&](int64_t which, ExprPtr v) {
        return has(kP)
                   ? add(v,
                         mul(m_b.read(m_n.input(kP), {intImm(d), add(intImm(which * m_H), j)}), c))
                   : v;
      };
      // Gate order in W, R and B: i, o, f, c; peepholes: i, o, f.
      ExprPtr i = activate(f, clip(peep(0, gr(0, j))));
      ExprPtr fg = m_s.inputForget ? sub(f32(1), i) : activate(f, clip(peep(2, gr(2 * m_H, j))));
      ExprPtr cand = activate(gAct, clip(gr(3 * m_H, j)));
      StmtPtr cStore = store(m_cs, hAt, add(mul(fg, c), mul(i, cand)), "c = f c + i c~");
      // From here on, c reads the new cell state.
      ExprPtr o = activate(f, clip(peep(1, gr(m_H, j))));
      StmtPtr hStore = store(m_hs, hAt, mul(o, activate(hAct, c)), "h = o h(c)");
      phases.push_back(perSequence(forRange("j", m_H, block({cStore, hStore, storeY}))));
      break;
    }
    default:
      assert(false && "not a recurrent op");
    }
    if (m_hasLens) {
      // Y is zero at the steps a sequence does not reach (t = s >= len[b]).
      StmtPtr zero = forRange("j", m_H, store(m_y, yAt(s, d, b, j), f32(0), "Y padding"));
      phases.push_back(wrapLoops({"b"}, {m_batch}, ifThen(binary(BinaryOp::Ge, s, len), zero)));
    }
    StmtPtr loop = forRange("s", m_seq, block(std::move(phases)), ForKind::Serial);
    loop = withComment(loop, tag(m_n) + (reversed ? " steps, backwards" : " steps"));
    return tb ? alloc(tb, loop) : loop;
  }

  KernelBuilder& m_b;
  const Node& m_n;
  const RecurrentSpec& m_s;
  BufferPtr m_y, m_yh, m_yc;
  BufferPtr m_wt, m_rt; // transposed weights [dir, k, gates]
  BufferPtr m_xp;       // input projection [dir, seq, batch, gates]
  BufferPtr m_hs, m_cs; // states [dir, batch, hidden]
  BufferPtr m_gr;       // one step's gate pre-activations [batch, gates]
  BufferPtr m_rh;       // GRU: r ⊙ h [batch, hidden]
  bool m_batchFirst = false, m_lstm = false, m_hasLens = false;
  int64_t m_seq = 0, m_batch = 0, m_in = 0, m_H = 0, m_nd = 1, m_G = 0;
};

} // namespace

std::optional<Expected<StmtPtr>> lowerRecurrentOp(KernelBuilder& b, const Node& node,
                                                  const BufferPtr& out,
                                                  const std::vector<BufferPtr>& extras) {
  if (!isRecurrentOp(node.op()))
    return std::nullopt;
  Expected<RecurrentSpec> spec = readRecurrentSpec(node);
  if (!spec)
    return Expected<StmtPtr>(spec.error());
  if (node.input(0)->type().dtype != DType::F32)
    return Expected<StmtPtr>(makeUnsupported(node.describe(), ": the CPU backend runs ",
                                             opName(node.op()), " in f32 only, got ",
                                             dtypeName(node.input(0)->type().dtype)));
  RecurrentLowering lowering(b, node, *spec, out, extras);
  return lowering.run();
}

} // namespace fb::cg::lower
