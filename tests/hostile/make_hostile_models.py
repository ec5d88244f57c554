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
from onnx import helper, save

# Each module registers its models with @model, in this order.
import models_sizes  # noqa: F401
import models_arithmetic  # noqa: F401
import models_indices  # noqa: F401
import models_empty  # noqa: F401
import models_scale  # noqa: F401
from hostile_case import MODELS, OUT_OF_RANGE, error, result, vi

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
