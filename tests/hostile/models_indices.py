"""Hostile models: indices, sequence lengths and flat positions out of range, given at run time
and as constants."""
import numpy as np
from onnx import helper

from hostile_case import I32_MIN, OUT_OF_RANGE, const, error, f32, model, result, vi

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
