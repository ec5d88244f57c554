"""Hostile models: integer division by 0 and INT_MIN / -1, integer powers that overflow, casts of
non-finite floats to integers, NaN and infinities through the activations."""
import math

import numpy as np
from onnx import TensorProto, helper

from hostile_case import (I32_MAX, I32_MIN, I64_MAX, I64_MIN, MODELS, const, model, result,
                          vi, wrap)

# ---------------------------------------------------------------------------------------------
# Integer division: one rule in every backend (x / 0 = 0, x % 0 = 0, INT_MIN / -1 wraps).


def ref_div_exact(x, y):
    x, y = np.broadcast_arrays(x, y)
    out = []
    for a, b in zip(x.ravel().tolist(), y.ravel().tolist()):
        if b == 0:
            out.append(0)
        else:
            q = abs(a) // abs(b)
            out.append(q if (a < 0) == (b < 0) else -q)
    return wrap(np.array(out, dtype=object).reshape(x.shape), x.dtype)


def ref_mod(x, y, fmod):
    """fmod=1: the sign of the dividend (C's %); fmod=0: the sign of the divisor; x % 0 = 0."""
    x, y = np.broadcast_arrays(x, y)
    out = []
    for a, b in zip(x.ravel().tolist(), y.ravel().tolist()):
        if b == 0:
            out.append(0)
            continue
        r = abs(a) % abs(b)
        r = -r if a < 0 else r
        if not fmod and r != 0 and (r < 0) != (b < 0):
            r += b
        out.append(r)
    return wrap(np.array(out, dtype=object).reshape(x.shape), x.dtype)


def int_operands(dtype):
    info = np.iinfo(dtype)
    if info.min == 0:  # u8
        x = np.array([7, 255, 0, 200, 9, 1, 128, 3], dtype)
        y = np.array([0, 0, 0, 7, 2, 255, 3, 1], dtype)
        return x, y
    x = np.array([7, info.min, info.min, -7, 7, info.max, info.min, 0, -9, 9], dtype)
    y = np.array([0, -1, 0, 2, -2, -1, 1, 0, 4, -4], dtype)
    return x, y


def division_model(op, dtype, fmod=None, constants=False):
    x, y = int_operands(dtype)
    attrs = {} if fmod is None else {"fmod": fmod}
    ref = ref_div_exact(x, y) if op == "Div" else ref_mod(x, y, fmod)
    node = helper.make_node(op, ["x", "y"], ["z"], name=op.lower(), **attrs)
    if constants:
        # Constants and an Add of a zero input: fold-constants computes x op y at compile time.
        add = helper.make_node("Add", ["z", "zero"], ["out"], name="add")
        return result([node, add], [vi("zero", dtype, [len(x)])], [vi("out", dtype, [len(x)])],
                      [ref], f"{op} of {np.dtype(dtype).name} constants (folded)",
                      inits=[const("x", x), const("y", y)], feeds=[np.zeros(len(x), dtype)])
    return result([node], [vi("x", dtype, ["N"]), vi("y", dtype, ["N"])],
                  [vi("z", dtype, ["N"])], [ref],
                  f"{op} of {np.dtype(dtype).name} inputs with zero and -1 divisors",
                  feeds=[x, y])


for _dt in (np.int32, np.int64, np.int8, np.uint8):
    for _const in (False, True):
        _suffix = np.dtype(_dt).name + ("_const" if _const else "_runtime")
        MODELS.append((f"div_{_suffix}", lambda d=_dt, c=_const: division_model("Div", d, None, c)))
    for _fmod in (0, 1):
        MODELS.append((f"mod{_fmod}_{np.dtype(_dt).name}_runtime",
                       lambda d=_dt, f=_fmod: division_model("Mod", d, f, False)))
MODELS.append(("mod0_int64_const", lambda: division_model("Mod", np.int64, 0, True)))


@model
def div_int32_vectorized():
    # Long enough that -O2 vectorizes the division: zero and -1 divisors inside vectors.
    rng = np.random.default_rng(19)
    x = rng.integers(I32_MIN, I32_MAX, 1024, dtype=np.int64, endpoint=True).astype(np.int32)
    y = rng.integers(-3, 3, 1024, dtype=np.int64, endpoint=True).astype(np.int32)
    x[::7] = I32_MIN
    q = helper.make_node("Div", ["x", "y"], ["q"], name="div")
    r = helper.make_node("Mod", ["x", "y"], ["r"], name="mod", fmod=0)
    return result([q, r], [vi("x", np.int32, [1024]), vi("y", np.int32, [1024])],
                  [vi("q", np.int32, [1024]), vi("r", np.int32, [1024])],
                  [ref_div_exact(x, y), ref_mod(x, y, 0)],
                  "1,024 int32 divisions with zero and -1 divisors", feeds=[x, y])


def ref_int_pow(base, exponent, dtype):
    """The interpreter's integer power: exact and wrapping; 0 for a negative exponent unless
    |base| is 1."""
    base, exponent = np.broadcast_arrays(base, exponent)
    out = []
    for b, e in zip(base.ravel().tolist(), exponent.ravel().tolist()):
        if e < 0:
            out.append(1 if b == 1 else (-1 if e % 2 else 1) if b == -1 else 0)
        else:
            out.append(pow(b, e, 1 << 64))
    return wrap(np.array(out, dtype=object).reshape(base.shape), dtype)


@model
def int_pow_overflow():
    # Powers far beyond the type (wrapping, as the interpreter computes them), negative
    # exponents, and an i32 base with an i64 exponent; 4 x 12 lanes so -O2 vectorizes.
    b32 = np.array([3, -3, 2, 7, -1, -1, 1, 0, 5, 10, -2, 13] * 4, np.int32)
    e32 = np.array([40, 39, 31, 100, -3, -4, -7, 0, 27, 19, 63, 1000] * 4, np.int32)
    b64 = b32.astype(np.int64) * 1000003
    e64 = e32.astype(np.int64)
    return result([helper.make_node("Pow", ["b32", "e32"], ["p32"], name="pow32"),
                   helper.make_node("Pow", ["b64", "e64"], ["p64"], name="pow64"),
                   helper.make_node("Pow", ["b32", "e64"], ["pmixed"], name="pow_mixed")],
                  [vi("b32", np.int32, [48]), vi("e32", np.int32, [48]),
                   vi("b64", np.int64, [48]), vi("e64", np.int64, [48])],
                  [vi("p32", np.int32, [48]), vi("p64", np.int64, [48]),
                   vi("pmixed", np.int32, [48])],
                  [ref_int_pow(b32, e32, np.int32), ref_int_pow(b64, e64, np.int64),
                   ref_int_pow(b32, e64, np.int32)],
                  "integer Pow that overflows, with negative exponents and mixed widths",
                  feeds=[b32, e32, b64, e64])


def divisor_constant_model(op, divisor, dtype=np.int64):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, -7, 0, 7], dtype)
    y = np.array(divisor, dtype)
    ref = ref_div_exact(x, y) if op == "Div" else ref_mod(x, y, 0)
    return result([helper.make_node(op, ["x", "y"], ["z"], name=op.lower())],
                  [vi("x", dtype, [5])], [vi("z", dtype, [5])], [ref],
                  f"{op} of an input by the constant scalar {divisor}",
                  inits=[const("y", y)], feeds=[x])


MODELS += [
    ("div_by_const_zero", lambda: divisor_constant_model("Div", 0)),
    ("div_by_const_minus_one", lambda: divisor_constant_model("Div", -1)),
    ("div_i32_by_const_minus_one", lambda: divisor_constant_model("Div", -1, np.int32)),
    ("mod_by_const_zero", lambda: divisor_constant_model("Mod", 0)),
    ("mod_by_const_minus_one", lambda: divisor_constant_model("Mod", -1)),
]

@model
def nan_and_inf_through_activations():
    # Non-finite values must come out as IEEE arithmetic says (np.exp(nan) is nan), not as
    # whatever a clamped polynomial gives for them. 16 lanes each, so -O2 vectorizes.
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 100.0, -100.0] * 2, np.float32)
    with np.errstate(all="ignore"):
        refs = {
            "Exp": np.exp(x),
            "Sigmoid": (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32),
            "Tanh": np.tanh(x),
            "Relu": np.where(np.isnan(x), x, np.maximum(x, 0)),
            "Erf": np.array([math.erf(v) if not math.isnan(v) else math.nan for v in x.tolist()],
                            np.float32),
            "Abs": np.abs(x),
            "Neg": -x,
        }
    nodes = [helper.make_node(op, ["x"], [op.lower()], name=op.lower()) for op in refs]
    return result(nodes, [vi("x", np.float32, [x.size])],
                  [vi(op.lower(), np.float32, [x.size]) for op in refs], list(refs.values()),
                  "NaN, infinities, -0 and a denormal through the activations", feeds=[x])


@model
def nan_through_gemm_epilogue():
    # At -O2 the Sigmoid fuses into the GEMM micro-kernel's epilogue, which has its own exp.
    rng = np.random.default_rng(7)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    a[3, 5] = np.nan
    a[5] *= 1e30  # products near +-1e31: sigmoid saturates to 0 or 1
    w = rng.standard_normal((32, 16)).astype(np.float32)
    with np.errstate(all="ignore"):
        z = a.astype(np.float64) @ w.astype(np.float64)
        ref = (1 / (1 + np.exp(-z))).astype(np.float32)
    return result([helper.make_node("MatMul", ["a", "w"], ["z"], name="matmul"),
                   helper.make_node("Sigmoid", ["z"], ["y"], name="sigmoid")],
                  [vi("a", np.float32, [16, 32])], [vi("y", np.float32, [16, 16])], [ref],
                  "a NaN row through MatMul + Sigmoid (fused epilogue at -O2)",
                  inits=[const("w", w)], feeds=[a])


def ref_float_to_int(x, dtype):
    """The interpreter's Cast of floats to integers (core/ops/MathUtil.h floatToInt): NaN is 0,
    truncation toward zero, values beyond int64 clamp to it, then wrap-around to the width."""
    out = []
    for v in np.asarray(x, np.float64).ravel().tolist():
        if np.isnan(v):
            out.append(0)
            continue
        v = np.trunc(v)
        out.append(int(I64_MAX) if v >= 2.0**63 else int(I64_MIN) if v <= -2.0**63 else int(v))
    return wrap(np.array(out, dtype=object).reshape(np.shape(x)), dtype)


@model
def cast_float_to_int_extremes():
    # NaN, infinities and values beyond each width: LLVM's fptosi makes them poison.
    x = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 3e9, 2.5e19, -2.5e19, 300.7, -1.9, 255.5,
                  -129.5] * 8, np.float32)
    outs = [("i32", np.int32, TensorProto.INT32), ("i64", np.int64, TensorProto.INT64),
            ("i8", np.int8, TensorProto.INT8), ("u8", np.uint8, TensorProto.UINT8)]
    return result([helper.make_node("Cast", ["x"], [n], name="cast_" + n, to=t) for n, _, t in outs],
                  [vi("x", np.float32, [x.size])], [vi(n, d, [x.size]) for n, d, _ in outs],
                  [ref_float_to_int(x, d) for _, d, _ in outs],
                  "Cast of NaN, infinities and out-of-range floats to integers", feeds=[x])
