#!/usr/bin/python3
"""Writes tests/core/RecurrentCases.inc: RNN/GRU/LSTM cases with references computed by NumPy.

The reference below follows the ONNX equations directly (vectorized over the batch, float64),
independently of core/ops/Recurrent.cpp. Run from the repository root:
    /usr/bin/python3 tests/core/data/gen_recurrent_cases.py
"""
import numpy as np

rng = np.random.default_rng(1234)
SEQ, BATCH, IN, H = 3, 2, 2, 3

ACT = {
    "Sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "Tanh": lambda x, a, b: np.tanh(x),
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "Affine": lambda x, a, b: a * x + b,
    "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "ThresholdedRelu": lambda x, a, b: np.where(x >= a, x, 0),
    "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
    "Elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1)),
    "Softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "Softplus": lambda x, a, b: np.log1p(np.exp(x)),
}


def reference(op, ins, attrs):
    X, W, R = ins[0], ins[1], ins[2]
    B = ins[3] if len(ins) > 3 else None
    lens = ins[4] if len(ins) > 4 else None
    h0 = ins[5] if len(ins) > 5 else None
    c0 = ins[6] if len(ins) > 6 else None
    P = ins[7] if len(ins) > 7 else None
    layout = attrs.get("layout", 0)
    if layout:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    seq, batch, _ = X.shape
    nd = W.shape[0]
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    hs = W.shape[1] // gates
    acts = attrs.get("activations", {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                                     "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[op])
    if len(acts) * 2 == gates and False:
        pass
    per = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    if nd == 2 and len(acts) == per:
        acts = acts * 2
    alphas = list(attrs.get("activation_alpha", []))
    betas = list(attrs.get("activation_beta", []))
    defaults = {"HardSigmoid": (0.2, 0.5), "Affine": (1.0, 0.0), "LeakyRelu": (0.01, None),
                "ThresholdedRelu": (1.0, None), "ScaledTanh": (1.0, 1.0), "Elu": (1.0, None)}
    fns = []
    for name in acts:
        a, b = defaults.get(name, (None, None))
        if a is not None and alphas:
            a = alphas.pop(0)
        if b is not None and betas:
            b = betas.pop(0)
        fns.append(lambda x, n=name, a=a, b=b: ACT[n](x, a, b))
    clip = attrs.get("clip")
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    direction = attrs.get("direction", "forward")
    if B is None:
        B = np.zeros((nd, 2 * gates * hs))
    if lens is None:
        lens = np.full(batch, seq)
    if h0 is None:
        h0 = np.zeros((nd, batch, hs))
    if c0 is None:
        c0 = np.zeros((nd, batch, hs))
    if P is None:
        P = np.zeros((nd, 3 * hs))
    Y = np.zeros((seq, nd, batch, hs))
    Yh = np.zeros((nd, batch, hs))
    Yc = np.zeros((nd, batch, hs))
    for d in range(nd):
        rev = direction == "reverse" or d == 1
        f, g, hh = (fns[d * per:(d + 1) * per] + [None, None])[:3]
        Wd, Rd = W[d], R[d]
        Wb, Rb = B[d, :gates * hs], B[d, gates * hs:]
        h, c = h0[d].copy(), c0[d].copy()
        for s in range(seq):
            active = s < lens  # [batch]
            t = np.where(active, (lens - 1 - s) if rev else s, 0)
            xt = X[t, np.arange(batch)]  # [batch, in]
            if op == "RNN":
                hn = f(cl(xt @ Wd.T + h @ Rd.T + Wb + Rb))
                cn = c
            elif op == "GRU":
                xw = xt @ Wd.T + Wb
                hr = h @ Rd.T + Rb
                z = f(cl(xw[:, :hs] + hr[:, :hs]))
                r = f(cl(xw[:, hs:2 * hs] + hr[:, hs:2 * hs]))
                if attrs.get("linear_before_reset", 0):
                    cand = g(cl(xw[:, 2 * hs:] + r * hr[:, 2 * hs:]))
                else:
                    cand = g(cl(xw[:, 2 * hs:] + (r * h) @ Rd[2 * hs:].T + Rb[2 * hs:]))
                hn = (1 - z) * cand + z * h
                cn = c
            else:
                pre = xt @ Wd.T + h @ Rd.T + Wb + Rb
                pi, po, pf = P[d, :hs], P[d, hs:2 * hs], P[d, 2 * hs:]
                i = f(cl(pre[:, :hs] + pi * c))
                if attrs.get("input_forget", 0):
                    fg = 1 - i
                else:
                    fg = f(cl(pre[:, 2 * hs:3 * hs] + pf * c))
                cc = g(cl(pre[:, 3 * hs:]))
                cn = fg * c + i * cc
                o = f(cl(pre[:, hs:2 * hs] + po * cn))
                hn = o * hh(cn)
            m = active[:, None]
            h = np.where(m, hn, h)
            c = np.where(m, cn, c)
            for b in range(batch):
                if active[b]:
                    Y[t[b], d, b] = h[b]
        Yh[d], Yc[d] = h, c
    if layout:
        Y = Y.transpose(2, 0, 1, 3)
        Yh = Yh.transpose(1, 0, 2)
        Yc = Yc.transpose(1, 0, 2)
    outs = [Y, Yh] + ([Yc] if op == "LSTM" else [])
    return outs


def make(op, direction="forward", bias=False, lens=None, init=False, peep=False, layout=0):
    nd = 2 if direction == "bidirectional" else 1
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    r = lambda *s: rng.uniform(-1, 1, s)
    X = r(BATCH, SEQ, IN) if layout else r(SEQ, BATCH, IN)
    ins = [X, r(nd, gates * H, IN), r(nd, gates * H, H)]
    opt = [r(nd, 2 * gates * H) if bias else None,
           None if lens is None else np.array(lens, dtype=np.int32),
           (r(BATCH, nd, H) if layout else r(nd, BATCH, H)) if init else None]
    if op == "LSTM":
        opt += [(r(BATCH, nd, H) if layout else r(nd, BATCH, H)) if init else None,
                r(nd, 3 * H) if peep else None]
    while opt and opt[-1] is None:
        opt.pop()
    return ins + opt


CASES = [
    ("lstm_defaults", "LSTM", {}, dict()),
    ("lstm_bidirectional_peepholes", "LSTM", {"direction": "bidirectional"},
     dict(direction="bidirectional", bias=True, init=True, peep=True)),
    ("lstm_sequence_lens", "LSTM", {"direction": "bidirectional"},
     dict(direction="bidirectional", bias=True, lens=[3, 1], init=True)),
    ("lstm_layout1_reverse_clip_forget", "LSTM",
     {"direction": "reverse", "layout": 1, "clip": 0.7, "input_forget": 1},
     dict(direction="reverse", bias=True, lens=[2, 3], init=True, peep=True, layout=1)),
    ("lstm_activations", "LSTM",
     {"activations": ["HardSigmoid", "LeakyRelu", "Softsign"], "activation_alpha": [0.3, 0.1],
      "activation_beta": [0.4]}, dict(bias=True, init=True)),
    ("gru_bidirectional_lens", "GRU", {"direction": "bidirectional"},
     dict(direction="bidirectional", bias=True, lens=[1, 3], init=True)),
    ("gru_linear_before_reset_layout1", "GRU", {"linear_before_reset": 1, "layout": 1},
     dict(bias=True, init=True, layout=1)),
    ("gru_reverse_activations", "GRU",
     {"direction": "reverse", "activations": ["Sigmoid", "Elu"], "activation_alpha": [0.5]},
     dict(direction="reverse", bias=True)),
    ("rnn_defaults", "RNN", {}, dict()),
    ("rnn_bidirectional_relu_lens", "RNN",
     {"direction": "bidirectional", "activations": ["Relu", "ScaledTanh"],
      "activation_alpha": [0.8], "activation_beta": [1.5]},
     dict(direction="bidirectional", bias=True, lens=[2, 0], init=True)),
    ("rnn_layout1_clip_softplus", "RNN",
     {"layout": 1, "clip": 0.5, "activations": ["Softplus"]}, dict(bias=True, init=True, layout=1)),
]


def cpp_doubles(a):
    return "{" + ", ".join(repr(float(v)) for v in np.asarray(a).ravel()) + "}"


def cpp_sizes(a):
    return "{" + ", ".join(str(s) for s in np.asarray(a).shape) + "}"


def cpp_attr(v):
    if isinstance(v, str):
        return 'AttrValue(std::string("%s"))' % v
    if isinstance(v, int):
        return "AttrValue(int64_t(%d))" % v
    if isinstance(v, float):
        return "AttrValue(float(%r))" % v
    if all(isinstance(x, str) for x in v):
        return "AttrValue(std::vector<std::string>{%s})" % ", ".join('"%s"' % x for x in v)
    return "AttrValue(std::vector<float>{%s})" % ", ".join("%rf" % x for x in v)


def main():
    lines = ["// Generated by tests/core/data/gen_recurrent_cases.py: RNN/GRU/LSTM cases with",
             "// references computed by NumPy (float64). Do not edit by hand.", ""]
    for name, op, attrs, kw in CASES:
        ins = make(op, **kw)
        ins = [None if a is None else (a.astype(np.float32) if a.dtype != np.int32 else a)
               for a in ins]
        outs = reference(op, [None if a is None else a.astype(np.float64) if a.dtype != np.int32
                              else a for a in ins], attrs)
        lines.append("{\"%s\", OpKind::%s," % (name, op))
        lines.append(" {" + ", ".join('{"%s", %s}' % (k, cpp_attr(v)) for k, v in attrs.items()) + "},")
        lines.append(" {")
        for a in ins:
            if a is None:
                lines.append("  {false, false, {}, {}},")
            else:
                lines.append("  {true, %s, %s, %s}," % ("true" if a.dtype == np.int32 else "false",
                                                        cpp_sizes(a), cpp_doubles(a)))
        lines.append(" },")
        lines.append(" {")
        for o in outs:
            lines.append("  {%s, %s}," % (cpp_sizes(o), cpp_doubles(o)))
        lines.append(" }},")
    open("tests/core/RecurrentCases.inc", "w").write("\n".join(lines) + "\n")


main()
