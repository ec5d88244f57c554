#!/usr/bin/python3
"""Writes one seeded random .npy per graph input of an ONNX model, in the input's element type
(symbolic dims become 2), and prints their paths comma-separated (for --inputs).

Usage: /usr/bin/python3 random_npy_inputs.py MODEL.onnx PREFIX   (files PREFIX.input<k>.npy)
"""
import sys

import numpy as np
import onnx
from onnx import mapping


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    model = onnx.load(sys.argv[1])
    initializers = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(5)
    files = []
    for k, x in enumerate(i for i in model.graph.input if i.name not in initializers):
        shape = [d.dim_value if d.dim_value > 0 else 2 for d in x.type.tensor_type.shape.dim]
        dtype = mapping.TENSOR_TYPE_TO_NP_TYPE[x.type.tensor_type.elem_type]
        values = rng.standard_normal(shape)
        files.append(f"{sys.argv[2]}.input{k}.npy")
        np.save(files[-1], np.asarray(values > 0 if dtype == np.bool_ else values).astype(dtype))
    print(",".join(files))


if __name__ == "__main__":
    main()
