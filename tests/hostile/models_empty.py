"""Hostile models: empty tensors in every kernel class, at compile time (static zero dims) and
at run time (a symbolic dim an input makes zero)."""
import numpy as np
from onnx import TensorProto, helper

from hostile_case import OPSET, const, error, f32, model, node, result, vi

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
