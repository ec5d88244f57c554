#!/usr/bin/python3
"""Writes node-test cases for opset-18 forms that Debian's onnx 1.12 cannot generate.

Usage: /usr/bin/python3 generate_opset18_tests.py OUTPUT_DIR

Each case is laid out like ONNX's backend node tests (OUTPUT_DIR/test_NAME/model.onnx and
test_data_set_0/{input,output}_N.pb), so fusebox-conformance runs them on both backends. The
expected outputs come from NumPy formulas written here from the ONNX operator specification,
independently of Fusebox's C++ kernels:
  - GroupNormalization (opset 18: scale and bias per group), 4-D and 3-D, two epsilons;
  - ReduceMean/ReduceMax/ReduceL2 with the axes as an input (attribute until opset 17);
  - Split with num_outputs and an uneven last chunk;
  - Resize with the opset-18 attributes at their neutral values.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18
RNG = np.random.default_rng(18)


def group_norm(x, scale, bias, groups, eps):
    """ONNX GroupNormalization-18: statistics per (n, group) over the group's channels and all
    spatial positions; scale and bias have one value per group."""
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1).astype(np.float64)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    normed = (g - mean) / np.sqrt(var + eps)
    y = normed * scale.reshape(1, groups, 1) + bias.reshape(1, groups, 1)
    return y.reshape(x.shape).astype(np.float32)


def write_case(root, name, nodes, inputs, outputs, initializers=()):
    """inputs/outputs: lists of (name, array). Initializers are constant inputs of the graph."""
    def info(n, a):
        return helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype)
                                             if hasattr(helper, "np_dtype_to_tensor_dtype")
                                             else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype],
                                             list(a.shape))
    graph = helper.make_graph(nodes, name, [info(n, a) for n, a in inputs],
                              [info(n, a) for n, a in outputs],
                              initializer=[numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    case = os.path.join(root, "test_" + name)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(case, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, items in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(items):
            with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def group_norm_cases(root):
    for name, shape, groups, eps in (("group_normalization_example", (3, 4, 2, 2), 2, 1e-5),
                                     ("group_normalization_epsilon", (3, 4, 2, 2), 2, 1e-2),
                                     ("group_normalization_3d", (2, 6, 7), 3, 1e-5),
                                     ("group_normalization_one_group", (2, 3, 4, 5), 1, 1e-5),
                                     ("group_normalization_per_channel_groups", (1, 4, 3, 3), 4,
                                      1e-5)):
        x = RNG.standard_normal(shape).astype(np.float32) * 3 + 1
        scale = RNG.standard_normal(groups).astype(np.float32)
        bias = RNG.standard_normal(groups).astype(np.float32)
        node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"],
                                num_groups=groups, epsilon=eps)
        write_case(root, name, [node], [("x", x), ("scale", scale), ("bias", bias)],
                   [("y", group_norm(x, scale, bias, groups, eps))])


def reduce_cases(root):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    for op, fn in (("ReduceMean", lambda a, ax, k: a.mean(axis=ax, keepdims=k)),
                   ("ReduceMax", lambda a, ax, k: a.max(axis=ax, keepdims=k)),
                   ("ReduceL2", lambda a, ax, k: np.sqrt((a * a).sum(axis=ax, keepdims=k)))):
        for keep in (0, 1):
            axes = np.array([0, -1], dtype=np.int64)
            y = fn(x.astype(np.float64), (0, 2), bool(keep)).astype(np.float32)
            node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)
            write_case(root, f"{op.lower()}_axes_input_keepdims{keep}", [node],
                       [("x", x), ("axes", axes)], [("y", y)])


def split_cases(root):
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)
    write_case(root, "split_num_outputs_uneven", [node], [("x", x)],
               [("a", x[:, 0:3]), ("b", x[:, 3:6]), ("c", x[:, 6:7])])


def resize_cases(root):
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    scales = np.array([1, 1, 2, 2], dtype=np.float32)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest",
                            antialias=0, keep_aspect_ratio_policy="stretch", axes=[0, 1, 2, 3],
                            coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    y = x.repeat(2, axis=2).repeat(2, axis=3)
    write_case(root, "resize_opset18_neutral_attributes", [node], [("x", x)], [("y", y)],
               initializers=[("scales", scales)])


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    group_norm_cases(root)
    reduce_cases(root)
    split_cases(root)
    resize_cases(root)


if __name__ == "__main__":
    main()
