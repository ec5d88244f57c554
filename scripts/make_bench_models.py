#!/usr/bin/python3
"""Writes the GEMM benchmark models gemm_<n>.onnx (Y = X·W, W an initializer) for bench/run.sh.

usage: make_bench_models.py OUT_DIR [N ...]   (default sizes 256 512 1024)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def gemm_model(n: int) -> onnx.ModelProto:
    rng = np.random.default_rng(n)
    w = numpy_helper.from_array(rng.uniform(-1, 1, (n, n)).astype(np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"], name="matmul")],
        f"gemm_{n}",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, n])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2:]] or [256, 512, 1024]
    os.makedirs(out, exist_ok=True)
    for n in sizes:
        path = os.path.join(out, f"gemm_{n}.onnx")
        if not os.path.exists(path):
            onnx.save(gemm_model(n), path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
