"""Hostile models: a 2 MB node name and 3,000 graph outputs."""
import numpy as np
from onnx import helper

from hostile_case import f32, model, result, vi

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
