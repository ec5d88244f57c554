"""Hostile models: sizes that do not fit (huge pads, Tile/Expand to 2^31 x 2^31, products that
wrap int64, sizes given at run time, a .npy header that lies)."""
import numpy as np
from onnx import helper

from hostile_case import HUGE, I64_MAX, I64_MIN, TOO_BIG, const, error, model, result, vi

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
