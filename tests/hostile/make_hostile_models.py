#!/usr/bin/python3
"""Builds the hostile models of issue 19 into OUT, for run_hostile.py.

Each model is small and built with onnx.helper; it aims at one way a compiler can crash, hang or
answer wrongly: sizes that do not fit (huge pads, Tile/Expand to 2^31 x 2^31, a Reshape whose
shape product wraps int64, sizes arriving at run time through an input), integer division
(x / 0, INT_MIN / -1, at run time and as constants that fold-constants sees), empty and
out-of-range operands (indices past the end, zero-sized dims in every kernel class), and names or
output counts far beyond the usual.

Every model comes with an expectation, written to OUT/manifest.json:
  - "error": every runner must exit 1 with a non-empty `error: ...` line that matches `pattern`
    (a Python regex, searched case-insensitively) — it must say what went wrong;
  - "result": every runner must exit 0 and write outputs equal to the reference computed here in
    NumPy (same dtype and shape; floats within 1e-5, integers exactly).
Inputs are .npy files (NAME.in0.npy, ...) in graph-input order; references are
NAME.out0.npy, ...  Integer division follows the interpreter's rule (docs/decisions.md):
x / 0 = 0, x % 0 = 0, INT_MIN / -1 = INT_MIN (two's complement wrap), INT_MIN % -1 = 0.

  make_hostile_models.py OUT          write every model, its inputs, references and the manifest
  make_hostile_models.py --list       print the model names
  make_hostile_models.py --canaries OUT   two models whose expectations are wrong, for a test
                                          that the runner reports failures
"""
import json
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

OPSET = 13
I64_MIN, I64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max
I32_MIN, I32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max
HUGE = 2**40  # fits int64, but no tensor of that many elements fits in memory

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}

MODELS = []  # (name, builder); a builder returns a Case


class Case:
    """One model: its graph pieces, inputs and expectation."""

    def __init__(self, nodes, inputs, outputs, inits=(), feeds=(), expect="result",
                 refs=None, pattern=None, why="", opset=OPSET):
        self.nodes, self.inputs, self.outputs, self.opset = nodes, inputs, outputs, opset
        self.inits, self.feeds = list(inits), list(feeds)
        self.expect, self.refs, self.pattern, self.why = expect, refs, pattern, why


def model(fn):
    MODELS.append((fn.__name__, fn))
    return fn


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, NP_TO_ONNX[np.dtype(dtype)], shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def error(nodes, inputs, outputs, pattern, why, inits=(), feeds=()):
    return Case(nodes, inputs, outputs, inits, feeds, expect="error", pattern=pattern, why=why)


def result(nodes, inputs, outputs, refs, why, inits=(), feeds=(), opset=OPSET):
    return Case(nodes, inputs, outputs, inits, feeds, expect="result", refs=refs, why=why,
                opset=opset)


# Errors that say a size does not fit: an overflow, a memory limit, or a size named too large.
TOO_BIG = r"overflow|too large|too big|exceed|memory|does not fit|limit|cannot allocate"
OUT_OF_RANGE = r"out of range"

# ---------------------------------------------------------------------------------------------
# Sizes that do not fit.


@model
def conv_huge_pads():
    return error([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[HUGE] * 4)],
                 [vi("x", np.float32, [1, 1, 4, 4])], [vi("y", np.float32, None)], TOO_BIG,
                 "pads of 2^40 make an output of 2^80 elements",
                 inits=[const("w", np.ones((1, 1, 3, 3), np.float32))],
                 feeds=[np.ones((1, 1, 4, 4), np.float32)])


@model
def conv_pads_wrap():
    # in + pad_begin + pad_end wraps int64 to a small positive size.
    p = I64_MAX // 2 + 1
    return error([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[0, p, 0, p])],
                 [vi("x", np.float32, [1, 1, 4, 4])], [vi("y", np.float32, None)],
                 TOO_BIG + "|pad", "pads whose sum wraps int64",
                 inits=[const("w", np.ones((1, 1, 3, 3), np.float32))],
                 feeds=[np.ones((1, 1, 4, 4), np.float32)])


@model
def maxpool_huge_pads():
    return error([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
                                   pads=[HUGE] * 4)],
                 [vi("x", np.float32, [1, 1, 4, 4])], [vi("y", np.float32, None)],
                 TOO_BIG + "|pad", "pads of 2^40 on a 2x2 pool",
                 feeds=[np.ones((1, 1, 4, 4), np.float32)])


@model
def pad_huge():
    return error([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")],
                 [vi("x", np.float32, [2, 2])], [vi("y", np.float32, None)], TOO_BIG,
                 "Pad by 2^40 on both sides of both axes",
                 inits=[const("pads", np.array([HUGE, HUGE, HUGE, HUGE], np.int64))],
                 feeds=[np.ones((2, 2), np.float32)])


@model
def pad_huge_negative():
    return error([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")],
                 [vi("x", np.float32, [2, 2])], [vi("y", np.float32, None)],
                 r"negative|pad|size", "negative pads that remove 2^40 elements of 2",
                 inits=[const("pads", np.array([0, -HUGE, 0, -HUGE], np.int64))],
                 feeds=[np.ones((2, 2), np.float32)])


@model
def tile_2e31():
    return error([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
                 [vi("x", np.float32, [1, 1])], [vi("y", np.float32, None)], TOO_BIG,
                 "Tile to 2^31 x 2^31",
                 inits=[const("r", np.array([2**31, 2**31], np.int64))],
                 feeds=[np.ones((1, 1), np.float32)])


@model
def expand_2e31():
    return error([helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
                 [vi("x", np.float32, [1, 1])], [vi("y", np.float32, None)], TOO_BIG,
                 "Expand to 2^31 x 2^31",
                 inits=[const("s", np.array([2**31, 2**31], np.int64))],
                 feeds=[np.ones((1, 1), np.float32)])


@model
def reshape_wrap():
    # 1099511627781 * 8116567128549412046 = 6 (mod 2^64): the element count of a 6-element input.
    shape = np.array([1099511627781, 8116567128549412046], np.int64)
    return error([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
                 [vi("x", np.float32, [6])], [vi("y", np.float32, None)],
                 TOO_BIG + "|does not match|cannot reshape|element",
                 "a shape whose product wraps int64 to the element count",
                 inits=[const("s", shape)], feeds=[np.arange(6, dtype=np.float32)])


@model
def reshape_wrap_runtime():
    shape = np.array([1099511627781, 8116567128549412046], np.int64)
    return error([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
                 [vi("x", np.float32, [6]), vi("s", np.int64, [2])], [vi("y", np.float32, None)],
                 TOO_BIG + "|does not match|cannot reshape|element",
                 "the wrapping shape arrives as an input",
                 feeds=[np.arange(6, dtype=np.float32), shape])


@model
def constant_of_shape_huge():
    return error([helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos")], [],
                 [vi("y", np.float32, None)], TOO_BIG, "2^60 zeros",
                 inits=[const("s", np.array([2**20, 2**20, 2**20], np.int64))])


@model
def constant_of_shape_input():
    return error([helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos")],
                 [vi("s", np.int64, [2])], [vi("y", np.float32, None)], TOO_BIG,
                 "the 2^31 x 2^31 shape arrives as an input",
                 feeds=[np.array([2**31, 2**31], np.int64)])


@model
def expand_input():
    return error([helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
                 [vi("x", np.float32, [1, 1]), vi("s", np.int64, [2])],
                 [vi("y", np.float32, None)], TOO_BIG,
                 "Expand to a 2^31 x 2^31 shape given as an input",
                 feeds=[np.ones((1, 1), np.float32), np.array([2**31, 2**31], np.int64)])


@model
def tile_input():
    return error([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
                 [vi("x", np.float32, [2, 2]), vi("r", np.int64, [2])],
                 [vi("y", np.float32, None)], TOO_BIG,
                 "Tile repeats wrapping int64 given as an input",
                 feeds=[np.ones((2, 2), np.float32), np.array([2**62, 2**62], np.int64)])


@model
def range_input():
    return error([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")],
                 [vi("limit", np.int64, [])], [vi("y", np.int64, None)], TOO_BIG,
                 "Range to 2^62 with the limit given as an input",
                 inits=[const("start", np.array(0, np.int64)), const("delta", np.array(1, np.int64))],
                 feeds=[np.array(2**62, np.int64)])


@model
def range_huge():
    return error([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")],
                 [], [vi("y", np.int64, None)], TOO_BIG, "Range of 2^62 elements",
                 inits=[const("start", np.array(0, np.int64)),
                        const("limit", np.array(2**62, np.int64)),
                        const("delta", np.array(1, np.int64))])


@model
def range_full_span():
    # limit - start wraps to -1: a silent empty result is the wrong answer.
    return error([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")],
                 [], [vi("y", np.int64, None)], TOO_BIG, "Range over the full int64 span",
                 inits=[const("start", np.array(I64_MIN, np.int64)),
                        const("limit", np.array(I64_MAX, np.int64)),
                        const("delta", np.array(1, np.int64))])


@model
def resize_huge_scales():
    return error([helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize",
                                   mode="nearest")],
                 [vi("x", np.float32, [1, 1, 4, 4])], [vi("y", np.float32, None)], TOO_BIG,
                 "nearest Resize by 2^30 x 2^30",
                 inits=[const("scales", np.array([1, 1, 2**30, 2**30], np.float32))],
                 feeds=[np.ones((1, 1, 4, 4), np.float32)])


@model
def npy_header_claims_gigabytes():
    # The input file's header claims 3e9 floats; the file holds none of them.
    return error([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [vi("x", np.float32, ["N"])], [vi("y", np.float32, ["N"])],
                 r"npy|holds|truncated|short|bytes|claims|expected",
                 "an input .npy whose header claims 12 GB with no data",
                 feeds=[("lying-npy", "<f4", (3_000_000_000,))])


# ---------------------------------------------------------------------------------------------
# Integer division: one rule in every backend (x / 0 = 0, x % 0 = 0, INT_MIN / -1 wraps).


def wrap(values, dtype):
    """Python ints reduced to dtype's two's complement range."""
    bits = np.iinfo(dtype).bits
    flat = []
    for v in np.asarray(values, dtype=object).ravel():
        v = int(v) % (1 << bits)
        if np.iinfo(dtype).min < 0 and v >= 1 << (bits - 1):
            v -= 1 << bits
        flat.append(v)
    return np.array(flat, dtype).reshape(np.shape(values))


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
    import math
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


# ---------------------------------------------------------------------------------------------
# Out-of-range indices: the interpreter's error, never a clamped answer. The CPU backend compiles
# integer inputs of up to 64 elements in as constants (they may decide shapes), so the *_runtime
# models give more than 64 indices: those stay run-time values, checked before the kernel runs.

RUNTIME_N = 80  # more index elements than the CPU backend specializes


def with_bad(valid, n, bad, at=-1, dtype=np.int64):
    """n valid indices cycling through `valid`, with `bad` at position `at`."""
    idx = np.resize(np.asarray(valid, dtype), n)
    idx[at] = bad
    return idx


def f32(shape, start=0):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32) + start).reshape(shape)


@model
def gather_oob_runtime():
    return error([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)],
                 [vi("x", np.float32, [4, 3]), vi("i", np.int64, [RUNTIME_N])],
                 [vi("y", np.float32, [RUNTIME_N, 3])], r"index 7 is out of range",
                 "index 7 into 4 rows, given at run time",
                 feeds=[f32((4, 3)), with_bad([0, 1, 2, 3, -4], RUNTIME_N, 7)])


@model
def gather_oob_small_input():
    # Two indices: compiled in as constants by the CPU backend, checked at compile time there.
    return error([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)],
                 [vi("x", np.float32, [4, 3]), vi("i", np.int64, [2])],
                 [vi("y", np.float32, [2, 3])], r"index 7 is out of range",
                 "index 7 into 4 rows in a 2-element input",
                 feeds=[f32((4, 3)), np.array([1, 7], np.int64)])


@model
def gather_oob_negative_runtime():
    return error([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=1)],
                 [vi("x", np.float32, [4, 3]), vi("i", np.int32, [RUNTIME_N])],
                 [vi("y", np.float32, [4, RUNTIME_N])], r"index -2147483648 is out of range",
                 "int32 index INT32_MIN into 3 columns, given at run time",
                 feeds=[f32((4, 3)), with_bad([-1, 2, 0], RUNTIME_N, I32_MIN, 3, np.int32)])


@model
def gather_oob_const():
    return error([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)],
                 [vi("x", np.float32, [4, 3])], [vi("y", np.float32, [1, 3])], OUT_OF_RANGE,
                 "constant index 9 into 4 rows",
                 inits=[const("i", np.array([9], np.int64))], feeds=[f32((4, 3))])


@model
def gather_negative_in_range():
    # The control: negative indices count from the end.
    x, i = f32((4, 3)), np.resize(np.array([-1, -4, 2, 3, 0], np.int64), RUNTIME_N)
    return result([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)],
                  [vi("x", np.float32, [4, 3]), vi("i", np.int64, [RUNTIME_N])],
                  [vi("y", np.float32, [RUNTIME_N, 3])], [x[i]],
                  "negative indices in range, at run time", feeds=[x, i])


@model
def reverse_sequence_runtime():
    # The control: lengths 0..3 of 3 steps, at run time.
    x, lens = f32((3, RUNTIME_N)), np.resize(np.array([0, 3, 2, 1], np.int64), RUNTIME_N)
    ref = x.copy()
    for b, n in enumerate(lens):
        ref[:n, b] = x[:n, b][::-1]
    return result([helper.make_node("ReverseSequence", ["x", "lens"], ["y"], name="rev",
                                    time_axis=0, batch_axis=1)],
                  [vi("x", np.float32, [3, RUNTIME_N]), vi("lens", np.int64, [RUNTIME_N])],
                  [vi("y", np.float32, [3, RUNTIME_N])], [ref],
                  "sequence lengths 0 to 3 of 3 steps, at run time", feeds=[x, lens])


@model
def gather_from_empty():
    return error([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)],
                 [vi("x", np.float32, [0, 3]), vi("i", np.int64, [1])],
                 [vi("y", np.float32, [1, 3])], OUT_OF_RANGE,
                 "index 0 into an empty axis",
                 feeds=[np.zeros((0, 3), np.float32), np.array([0], np.int64)])


@model
def gather_from_empty_runtime():
    return error([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)],
                 [vi("x", np.float32, ["N", 3]), vi("i", np.int64, [1])],
                 [vi("y", np.float32, None)], OUT_OF_RANGE,
                 "index 0 into an axis that is empty at run time",
                 feeds=[np.zeros((0, 3), np.float32), np.array([0], np.int64)])


@model
def gather_empty_indices_from_empty():
    return result([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)],
                  [vi("x", np.float32, [0, 3]), vi("i", np.int64, [0])],
                  [vi("y", np.float32, [0, 3])], [np.zeros((0, 3), np.float32)],
                  "no indices into an empty tensor",
                  feeds=[np.zeros((0, 3), np.float32), np.zeros((0,), np.int64)])


@model
def gather_elements_oob_runtime():
    return error([helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=1)],
                 [vi("x", np.float32, [2, 3]), vi("i", np.int64, [2, RUNTIME_N])],
                 [vi("y", np.float32, [2, RUNTIME_N])], r"index 3 is out of range",
                 "index 3 into 3 columns, given at run time",
                 feeds=[f32((2, 3)), with_bad([0, 1, 2, -3], 2 * RUNTIME_N, 3, 100).reshape(2, -1)])


@model
def gather_nd_oob_runtime():
    return error([helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd")],
                 [vi("x", np.float32, [2, 3]), vi("i", np.int64, [RUNTIME_N, 2])],
                 [vi("y", np.float32, [RUNTIME_N])], r"index -4 is out of range",
                 "tuple (1, -4) into 2 x 3, given at run time",
                 feeds=[f32((2, 3)), with_bad([0, 1, 1, 2], 2 * RUNTIME_N, -4).reshape(-1, 2)])


@model
def scatter_elements_oob_runtime():
    return error([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="se", axis=0)],
                 [vi("x", np.float32, [3, 2]), vi("i", np.int64, [RUNTIME_N, 2]),
                  vi("u", np.float32, [RUNTIME_N, 2])], [vi("y", np.float32, [3, 2])],
                 r"index 3 is out of range", "a write to row 3 of 3, given at run time",
                 feeds=[f32((3, 2)), with_bad([0, 1, 2, -1], 2 * RUNTIME_N, 3).reshape(-1, 2),
                        f32((RUNTIME_N, 2), 100)])


@model
def scatter_nd_oob_runtime():
    return error([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="snd")],
                 [vi("x", np.float32, [4, 2]), vi("i", np.int64, [RUNTIME_N, 1]),
                  vi("u", np.float32, [RUNTIME_N, 2])], [vi("y", np.float32, [4, 2])],
                 r"index -5 is out of range", "a write to row -5 of 4, given at run time",
                 feeds=[f32((4, 2)), with_bad([1, 0, 3], RUNTIME_N, -5).reshape(-1, 1),
                        f32((RUNTIME_N, 2), 100)])


@model
def reverse_sequence_bad_length_runtime():
    return error([helper.make_node("ReverseSequence", ["x", "lens"], ["y"], name="rev",
                                   time_axis=0, batch_axis=1)],
                 [vi("x", np.float32, [3, RUNTIME_N]), vi("lens", np.int64, [RUNTIME_N])],
                 [vi("y", np.float32, [3, RUNTIME_N])],
                 r"sequence_lens\[70\] = 4 is outside \[0, 3\]",
                 "a sequence length of 4 for 3 steps, given at run time",
                 feeds=[f32((3, RUNTIME_N)), with_bad([0, 3, 2, 1], RUNTIME_N, 4, 70)])


@model
def max_unpool_oob_runtime():
    return error([helper.make_node("MaxUnpool", ["x", "i"], ["y"], name="unpool",
                                   kernel_shape=[2, 2], strides=[2, 2])],
                 [vi("x", np.float32, [1, 1, 10, 10]), vi("i", np.int64, [1, 1, 10, 10])],
                 [vi("y", np.float32, [1, 1, 20, 20])],
                 r"index 400 is out of range for an output of 400 elements",
                 "a flat index 400 into a 20 x 20 output, given at run time",
                 feeds=[f32((1, 1, 10, 10)),
                        with_bad(np.arange(0, 400, 4), 100, 400).reshape(1, 1, 10, 10)])


@model
def rnn_bad_sequence_length_runtime():
    w = np.full((1, 2, 2), 0.1, np.float32)
    return error([helper.make_node("RNN", ["x", "w", "r", "", "lens"], ["y"], name="rnn",
                                   hidden_size=2)],
                 [vi("x", np.float32, [2, RUNTIME_N, 2]), vi("lens", np.int32, [RUNTIME_N])],
                 [vi("y", np.float32, [2, 1, RUNTIME_N, 2])],
                 r"sequence_lens\[9\] is 5, outside \[0, seq_length = 2\]",
                 "an RNN sequence length of 5 for 2 steps, given at run time",
                 inits=[const("w", w), const("r", w)],
                 feeds=[f32((2, RUNTIME_N, 2)), with_bad([2, 1, 0], RUNTIME_N, 5, 9, np.int32)])


@model
def one_hot_out_of_range():
    # ONNX: an index outside [-depth, depth) gives a row of off values, not an error.
    idx = np.array([0, 2, 5, -1, -4], np.int64)
    ref = np.zeros((5, 3), np.float32)
    for r, i in enumerate(idx):
        if -3 <= i < 3:
            ref[r, i % 3] = 1
    return result([helper.make_node("OneHot", ["i", "depth", "values"], ["y"], name="onehot")],
                  [vi("i", np.int64, [5])], [vi("y", np.float32, [5, 3])], [ref],
                  "indices past depth give all-off rows",
                  inits=[const("depth", np.array(3, np.int64)),
                         const("values", np.array([0, 1], np.float32))], feeds=[idx])


# ---------------------------------------------------------------------------------------------
# Empty tensors in every kernel class, at compile time (static zero dims) and at run time (a
# symbolic dim that an input makes zero).


@model
def resize_zero_sizes():
    return result([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize",
                                    mode="nearest")],
                  [vi("x", np.float32, [1, 1, 4, 4])], [vi("y", np.float32, None)],
                  [np.zeros((1, 1, 0, 0), np.float32)], "Resize to zero rows and columns",
                  inits=[const("sizes", np.array([1, 1, 0, 0], np.int64))],
                  feeds=[f32((1, 1, 4, 4))])


@model
def resize_linear_zero_sizes():
    return result([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize",
                                    mode="linear")],
                  [vi("x", np.float32, [1, 1, 4, 4])], [vi("y", np.float32, None)],
                  [np.zeros((1, 1, 0, 3), np.float32)], "linear Resize to zero rows",
                  inits=[const("sizes", np.array([1, 1, 0, 3], np.int64))],
                  feeds=[f32((1, 1, 4, 4))])


@model
def argmax_empty_axis():
    return error([helper.make_node("ArgMax", ["x"], ["y"], name="argmax", axis=1)],
                 [vi("x", np.float32, [3, 0])], [vi("y", np.int64, None)],
                 r"empty|zero|size 0", "ArgMax over an axis of size 0 has no answer",
                 feeds=[np.zeros((3, 0), np.float32)])


@model
def argmax_empty_other_axis():
    return result([helper.make_node("ArgMax", ["x"], ["y"], name="argmax", axis=1)],
                  [vi("x", np.float32, ["N", 4])], [vi("y", np.int64, None)],
                  [np.zeros((0, 1), np.int64)], "ArgMax of zero rows",
                  feeds=[np.zeros((0, 4), np.float32)])


@model
def reduce_sum_empty():
    return result([helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="rsum", keepdims=0)],
                  [vi("x", np.float32, [0, 3])], [vi("y", np.float32, [3])],
                  [np.zeros(3, np.float32)], "a sum over no rows is 0",
                  inits=[const("axes", np.array([0], np.int64))],
                  feeds=[np.zeros((0, 3), np.float32)])


@model
def reduce_max_empty():
    # ONNX (opset 18): the maximum over an empty set is -inf, as the interpreter computes.
    return result([helper.make_node("ReduceMax", ["x"], ["y"], name="rmax", axes=[0], keepdims=0)],
                  [vi("x", np.float32, ["N", 3])], [vi("y", np.float32, None)],
                  [np.full(3, -np.inf, np.float32)], "a max over no rows (run time) is -inf",
                  feeds=[np.zeros((0, 3), np.float32)])


@model
def resize_from_empty():
    return error([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize",
                                   mode="linear")],
                 [vi("x", np.float32, [1, 1, 0, 4])], [vi("y", np.float32, None)],
                 r"empty", "Resize of an empty dim to 2 rows has nothing to interpolate",
                 inits=[const("sizes", np.array([1, 1, 2, 4], np.int64))],
                 feeds=[np.zeros((1, 1, 0, 4), np.float32)])


@model
def softmax_zero_rows():
    return result([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)],
                  [vi("x", np.float32, ["N", 5])], [vi("y", np.float32, ["N", 5])],
                  [np.zeros((0, 5), np.float32)], "Softmax of zero rows (run time)",
                  feeds=[np.zeros((0, 5), np.float32)])


@model
def softmax_empty_axis():
    return result([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)],
                  [vi("x", np.float32, [3, 0])], [vi("y", np.float32, [3, 0])],
                  [np.zeros((3, 0), np.float32)], "Softmax over an empty axis",
                  feeds=[np.zeros((3, 0), np.float32)])


@model
def matmul_k0():
    return result([helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")],
                  [vi("a", np.float32, [2, 0]), vi("b", np.float32, [0, 3])],
                  [vi("y", np.float32, [2, 3])], [np.zeros((2, 3), np.float32)],
                  "a product over an empty inner dim is all zeros",
                  feeds=[np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)])


@model
def matmul_m0_runtime():
    b = f32((4, 3))
    return result([helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")],
                  [vi("a", np.float32, ["M", 4])], [vi("y", np.float32, ["M", 3])],
                  [np.zeros((0, 3), np.float32)], "MatMul of zero rows (run time)",
                  inits=[const("b", b)], feeds=[np.zeros((0, 4), np.float32)])


@model
def gemm_k0_bias():
    c = np.array([1, 2, 3], np.float32)
    return result([helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm")],
                  [vi("a", np.float32, [2, 0]), vi("b", np.float32, [0, 3])],
                  [vi("y", np.float32, [2, 3])], [np.tile(c, (2, 1))],
                  "Gemm over an empty inner dim is the bias",
                  inits=[const("c", c)],
                  feeds=[np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)])


@model
def conv_zero_batch():
    return result([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
                  [vi("x", np.float32, ["N", 1, 4, 4])], [vi("y", np.float32, None)],
                  [np.zeros((0, 2, 2, 2), np.float32)], "Conv of an empty batch (run time)",
                  inits=[const("w", f32((2, 1, 3, 3)))], feeds=[np.zeros((0, 1, 4, 4), np.float32)])


@model
def conv_zero_channels():
    bias = np.array([0.5, -2], np.float32)
    return result([helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")],
                  [vi("x", np.float32, [1, 0, 4, 4])], [vi("y", np.float32, [1, 2, 2, 2])],
                  [np.broadcast_to(bias.reshape(1, 2, 1, 1), (1, 2, 2, 2)).copy()],
                  "Conv over zero input channels is the bias",
                  inits=[const("w", np.zeros((2, 0, 3, 3), np.float32)), const("b", bias)],
                  feeds=[np.zeros((1, 0, 4, 4), np.float32)])


@model
def maxpool_zero_batch():
    return result([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2])],
                  [vi("x", np.float32, ["N", 2, 4, 4])], [vi("y", np.float32, None)],
                  [np.zeros((0, 2, 3, 3), np.float32)], "MaxPool of an empty batch",
                  feeds=[np.zeros((0, 2, 4, 4), np.float32)])


@model
def concat_with_empty():
    a = f32((2, 3))
    return result([helper.make_node("Concat", ["a", "e"], ["y"], name="concat", axis=0),
                   helper.make_node("Relu", ["y"], ["z"], name="relu")],
                  [vi("a", np.float32, [2, 3]), vi("e", np.float32, ["N", 3])],
                  [vi("z", np.float32, None)], [a], "Concat with an empty operand",
                  feeds=[a, np.zeros((0, 3), np.float32)])


@model
def topk_zero():
    x = f32((2, 5))
    return result([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk")],
                  [vi("x", np.float32, [2, 5])],
                  [vi("v", np.float32, None), vi("i", np.int64, None)],
                  [np.zeros((2, 0), np.float32), np.zeros((2, 0), np.int64)], "TopK with k = 0",
                  inits=[const("k", np.array([0], np.int64))], feeds=[x])


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)


def bundle(spec, x_shape, x_dims, why, inits=(), opset=OPSET):
    """One input x (zeros of x_shape, declared with x_dims) and one output per (node, reference)
    of spec, so that a kernel class is tried on an empty tensor in one model."""
    nodes = [n for n, _ in spec]
    refs = [np.asarray(r) for _, r in spec]
    outs = [vi(n.output[0], r.dtype, None) for (n, _), r in zip(spec, refs)]
    return result(nodes, [vi("x", np.float32, x_dims)], outs, refs, why, inits=inits,
                  feeds=[np.zeros(x_shape, np.float32)], opset=opset)


def empty_injective(x_dims):
    z = lambda *shape: np.zeros(shape, np.float32)
    spec = [
        (node("Transpose", ["x"], ["transpose"], perm=[1, 0]), z(4, 0)),
        (node("Slice", ["x", "s0", "s4", "s1"], ["slice"]), z(0, 3)),
        (node("Pad", ["x", "pads"], ["pad"]), z(2, 4)),  # an empty input padded to 2 x 4 zeros
        (node("Expand", ["x", "shape3"], ["expand"]), z(3, 0, 4)),
        (node("Tile", ["x", "reps"], ["tile"]), z(0, 8)),
        (node("Concat", ["x", "x"], ["concat"], axis=1), z(0, 8)),
        (node("Reshape", ["x", "shape2"], ["reshape"]), z(0, 2, 2)),  # its 0 copies x's 0
        (node("Gather", ["x", "idx"], ["gather"], axis=1), z(0, 2)),
        (node("Relu", ["x"], ["relu"]), z(0, 4)),
        (node("Add", ["x", "row"], ["add"]), z(0, 4)),
        (node("Where", ["mask", "x", "row"], ["where"]), z(0, 4)),
        (node("Cast", ["x"], ["cast"], to=TensorProto.INT32), np.zeros((0, 4), np.int32)),
    ]
    inits = [const("s0", np.array([0], np.int64)), const("s4", np.array([3], np.int64)),
             const("s1", np.array([1], np.int64)),
             const("pads", np.array([1, 0, 1, 0], np.int64)),
             const("shape3", np.array([3, 1, 4], np.int64)),
             const("reps", np.array([1, 2], np.int64)),
             const("shape2", np.array([0, 2, 2], np.int64)),
             const("idx", np.array([1, 3], np.int64)),
             const("row", np.arange(4, dtype=np.float32)),
             const("mask", np.array([True, False, True, False]))]
    return spec, inits


@model
def empty_injective_ops():
    spec, inits = empty_injective([0, 4])
    return bundle(spec, (0, 4), [0, 4], "injective and elementwise ops on f32[0, 4]", inits)


@model
def empty_injective_ops_runtime():
    spec, inits = empty_injective(["N", 4])
    return bundle(spec, (0, 4), ["N", 4], "the same with N = 0 given at run time", inits)


def empty_reductions():
    z = lambda *shape: np.zeros(shape, np.float32)
    full = lambda v: np.full(2, v, np.float32)
    spec = [
        (node("ReduceSum", ["x", "ax1"], ["rsum"], keepdims=0), full(0)),
        (node("ReduceMean", ["x"], ["rmean"], axes=[1], keepdims=0), full(np.nan)),
        (node("ReduceProd", ["x"], ["rprod"], axes=[1], keepdims=0), full(1)),
        (node("ReduceMin", ["x"], ["rmin"], axes=[1], keepdims=0), full(np.inf)),
        (node("ReduceL2", ["x"], ["rl2"], axes=[1], keepdims=0), full(0)),
        (node("ReduceLogSumExp", ["x"], ["rlse"], axes=[1], keepdims=0), full(-np.inf)),
        (node("ReduceSum", ["x", "ax0"], ["rsum0"], keepdims=1), z(1, 0)),
        (node("CumSum", ["x", "ax1s"], ["cumsum"]), z(2, 0)),
        (node("Softmax", ["x"], ["softmax"], axis=1), z(2, 0)),
        (node("LogSoftmax", ["x"], ["logsoftmax"], axis=1), z(2, 0)),
        (node("ArgMin", ["x"], ["argmin"], axis=0), np.zeros((1, 0), np.int64)),
        (node("TopK", ["x", "k0"], ["topk", "topk_i"], axis=1), z(2, 0)),
    ]
    inits = [const("ax1", np.array([1], np.int64)), const("ax0", np.array([0], np.int64)),
             const("ax1s", np.array(1, np.int64)), const("k0", np.array([0], np.int64))]
    return spec, inits


@model
def empty_reductions_ops():
    spec, inits = empty_reductions()
    return bundle(spec, (2, 0), [2, 0], "reductions, scans and softmax over an empty axis", inits)


@model
def empty_reductions_ops_runtime():
    spec, inits = empty_reductions()
    return bundle(spec, (2, 0), [2, "N"], "the same with the empty axis given at run time", inits)


def empty_windows(x_dims):
    z = lambda *shape: np.zeros(shape, np.float32)
    spec = [
        (node("AveragePool", ["x"], ["avgpool"], kernel_shape=[2, 2]), z(0, 2, 3, 3)),
        (node("GlobalAveragePool", ["x"], ["gap"]), z(0, 2, 1, 1)),
        (node("GlobalMaxPool", ["x"], ["gmp"]), z(0, 2, 1, 1)),
        (node("ConvTranspose", ["x", "wt"], ["convt"]), z(0, 3, 5, 5)),
        (node("Conv", ["x", "w0"], ["conv_no_filters"]), z(0, 0, 2, 2)),
        (node("BatchNormalization", ["x", "sc", "bi", "mu", "var"], ["bn"]), z(0, 2, 4, 4)),
        (node("Resize", ["x", "", "scales"], ["resize"], mode="nearest"), z(0, 2, 8, 8)),
        (node("InstanceNormalization", ["x", "sc", "bi"], ["inorm"]), z(0, 2, 4, 4)),
        (node("DepthToSpace", ["x"], ["d2s"], blocksize=1), z(0, 2, 4, 4)),
    ]
    inits = [const("wt", np.ones((2, 3, 2, 2), np.float32)),
             const("w0", np.ones((0, 2, 3, 3), np.float32)),
             const("sc", np.ones(2, np.float32)), const("bi", np.zeros(2, np.float32)),
             const("mu", np.zeros(2, np.float32)), const("var", np.ones(2, np.float32)),
             const("scales", np.array([1, 1, 2, 2], np.float32))]
    return spec, inits


@model
def empty_window_ops():
    spec, inits = empty_windows([0, 2, 4, 4])
    return bundle(spec, (0, 2, 4, 4), [0, 2, 4, 4], "pooling, convolution, normalization and "
                  "Resize on an empty batch", inits)


@model
def empty_window_ops_runtime():
    spec, inits = empty_windows(["N", 2, 4, 4])
    return bundle(spec, (0, 2, 4, 4), ["N", 2, 4, 4], "the same with N = 0 at run time", inits)


def empty_linear_algebra(m):
    """x: f32[2, m, 3] and y: f32[m, 4], with m = 0: products with M = 0 or K = 0."""
    z = lambda *shape: np.zeros(shape, np.float32)
    c4 = np.array([1, 2, 3, 4], np.float32)
    pre = [node("Reshape", ["x", "to_m"], ["xm"]),                 # f32[2m, 3]
           node("Transpose", ["x"], ["xk"], perm=[0, 2, 1]),       # f32[2, 3, m]
           node("Gather", ["xk", "zero"], ["xk2"], axis=0)]        # f32[3, m]
    spec = [
        (node("MatMul", ["x", "b34"], ["matmul"]), z(2, 0, 4)),
        (node("Gemm", ["xm", "b34"], ["gemm"]), z(0, 4)),
        (node("Gemm", ["xk2", "y", "c4"], ["gemm_k0"]), np.tile(c4, (3, 1))),
        (node("MatMul", ["xk", "y"], ["matmul_k0_batched"]), z(2, 3, 4)),
        (node("Einsum", ["x", "b34"], ["einsum"], equation="bij,jk->bik"), z(2, 0, 4)),
    ]
    inits = [const("b34", np.ones((3, 4), np.float32)), const("c4", c4),
             const("to_m", np.array([-1, 3], np.int64)), const("zero", np.array(0, np.int64))]
    nodes = pre + [n for n, _ in spec]
    outs = [vi(n.output[0], np.float32, None) for n, _ in spec]
    return result(nodes, [vi("x", np.float32, [2, m, 3]), vi("y", np.float32, [m, 4])], outs,
                  [r for _, r in spec], "MatMul, Gemm and Einsum with M = 0 or K = 0",
                  inits=inits, feeds=[z(2, 0, 3), z(0, 4)])


@model
def empty_linear_algebra_ops():
    return empty_linear_algebra(0)


@model
def empty_linear_algebra_ops_runtime():
    case = empty_linear_algebra("M")
    case.why += " (M given at run time)"
    return case


@model
def empty_indexing_ops():
    data = f32((3, 4))
    spec = [
        (node("GatherElements", ["x", "ie"], ["gather_elements"], axis=1), np.zeros((3, 0), np.float32)),
        (node("GatherND", ["x", "ind"], ["gather_nd"]), np.zeros((0,), np.float32)),
        (node("ScatterElements", ["x", "ie", "ue"], ["scatter_elements"], axis=1), data),
        (node("ScatterND", ["x", "ind", "und"], ["scatter_nd"]), data),
        (node("OneHot", ["i0", "depth", "values"], ["one_hot"]), np.zeros((0, 3), np.float32)),
        (node("Gather", ["x", "i0"], ["gather"], axis=0), np.zeros((0, 4), np.float32)),
    ]
    nodes = [n for n, _ in spec]
    refs = [r for _, r in spec]
    outs = [vi(n.output[0], r.dtype, None) for (n, _), r in zip(spec, refs)]
    inits = [const("ie", np.zeros((3, 0), np.int64)), const("ue", np.zeros((3, 0), np.float32)),
             const("ind", np.zeros((0, 2), np.int64)), const("und", np.zeros((0,), np.float32)),
             const("i0", np.zeros((0,), np.int64)), const("depth", np.array(3, np.int64)),
             const("values", np.array([0, 1], np.float32))]
    return result(nodes, [vi("x", np.float32, [3, 4])], outs, refs,
                  "index ops with no indices: empty gathers, scatters that copy", inits=inits,
                  feeds=[data])


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


# ---------------------------------------------------------------------------------------------
# Long names and many outputs.


@model
def long_node_name():
    x = np.array([-1, 0, 2], np.float32)
    return result([helper.make_node("Relu", ["x"], ["y"], name="n" * (2 << 20))],
                  [vi("x", np.float32, [3])], [vi("y", np.float32, [3])], [np.maximum(x, 0)],
                  "a Relu whose node name is 2 MB", feeds=[x])


@model
def many_outputs():
    n = 3000
    x = f32((n,))
    outs = [f"o{i}" for i in range(n)]
    return result([helper.make_node("Split", ["x"], outs, name="split", axis=0)],
                  [vi("x", np.float32, [n])], [vi(o, np.float32, [1]) for o in outs],
                  [x[i:i + 1] for i in range(n)], "one Split into 3,000 graph outputs",
                  feeds=[x])


# ---------------------------------------------------------------------------------------------


def write_lying_npy(path, descr, shape):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())


def write_case(out, name, case):
    graph = helper.make_graph(case.nodes, name, case.inputs, case.outputs, case.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)],
                          producer_name="fusebox-hostile")
    m.ir_version = 7
    save(m, os.path.join(out, name + ".onnx"))
    inputs = []
    for k, feed in enumerate(case.feeds):
        path = os.path.join(out, f"{name}.in{k}.npy")
        if isinstance(feed, tuple) and feed[0] == "lying-npy":
            write_lying_npy(path, feed[1], feed[2])
        else:
            np.save(path, feed)
        inputs.append(os.path.basename(path))
    refs = []
    for k, ref in enumerate(case.refs or []):
        path = os.path.join(out, f"{name}.out{k}.npy")
        np.save(path, np.ascontiguousarray(ref))
        refs.append(os.path.basename(path))
    return {"name": name, "model": name + ".onnx", "inputs": inputs, "expect": case.expect,
            "pattern": case.pattern, "outputs": [o.name for o in case.outputs],
            "references": refs, "why": case.why}


def canary_wrong_reference():
    x = np.array([-1, 0, 2], np.float32)
    return result([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                  [vi("x", np.float32, [3])], [vi("y", np.float32, [3])],
                  [np.array([0, 0, 3], np.float32)], "a reference that is wrong", feeds=[x])


def canary_expects_error():
    x = np.array([-1, 0, 2], np.float32)
    return error([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [vi("x", np.float32, [3])], [vi("y", np.float32, [3])], OUT_OF_RANGE,
                 "an error expected from a valid model", feeds=[x])


# The runner's own test: both must be reported as failures.
CANARIES = [("canary_wrong_reference", canary_wrong_reference),
            ("canary_expects_error", canary_expects_error)]


def main():
    args = sys.argv[1:]
    if args == ["--list"]:
        for name, _ in MODELS:
            print(name)
        return 0
    models = MODELS
    if args[:1] == ["--canaries"]:
        models, args = CANARIES, args[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = args[0]
    os.makedirs(out, exist_ok=True)
    manifest = [write_case(out, name, build()) for name, build in models]
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(manifest)} hostile models in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
