#!/usr/bin/python3
"""Where do Fusebox and ONNX Runtime part on a quantized (QDQ) export, and is it only rounding?

Usage: /usr/bin/python3 qdq_divergence.py MODEL.onnx FUSEBOX_OPT IN0.npy [IN1.npy ...]

Both run MODEL with every intermediate value made a graph output. Float arithmetic in another
order differs by a few ulps; at a QuantizeLinear such a difference can move a value across a
rounding boundary, one quantization step, and from there the difference grows through the
layers that follow. That is rounding, not a wrong export. The first node whose outputs differ
by more than float noise decides:
  - a QuantizeLinear (or a QLinearConv/QLinearMatMul, which requantize) whose integer outputs
    differ by at most one step on at most 1% of the values, with every earlier difference
    within float noise: exit 0,
    "rounding: ...";
  - anything else: exit 1, "divergence: ..." naming the node, its op and the difference.
Prints one line. onnxruntime-node comes from scripts/ort_run.js's cache.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
FLOAT_ATOL, FLOAT_RTOL = 1e-5, 1e-4  # float32 in another order of operations
# Ops that round a real value to an integer grid: the quantizer, and the integer ops that
# requantize their exact accumulator with a float scale (computed in another order, the scaled
# value can land on the other side of a rounding boundary).
REQUANTIZING_OPS = {"QuantizeLinear", "QLinearConv", "QLinearMatMul"}


def file_name(value):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", value) + ".npy"


def with_all_outputs(model):
    declared = {o.name for o in model.graph.output}
    infos = {v.name: v for v in model.graph.value_info}
    for node in model.graph.node:
        for out in node.output:
            if out and out not in declared and out in infos:
                model.graph.output.append(infos[out])
                declared.add(out)
    return model


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    model_path, opt, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        model = with_all_outputs(onnx.load(model_path))
        full = os.path.join(tmp, "all.onnx")
        onnx.save(model, full)
        fb_dir, ort_dir = os.path.join(tmp, "fusebox"), os.path.join(tmp, "ort")
        run = subprocess.run([opt, full, "--run", "--inputs", ",".join(inputs), "--output-dir",
                              fb_dir], capture_output=True, text=True)
        if run.returncode != 0:
            print("divergence: fusebox-opt failed: " + run.stderr.strip().splitlines()[-1])
            sys.exit(1)
        run = subprocess.run(["node", os.path.join(HERE, "ort_run.js"), full, ort_dir] + inputs,
                             capture_output=True, text=True)
        if run.returncode != 0:
            print("divergence: ONNX Runtime failed: " + run.stderr.strip()[-300:])
            sys.exit(1)
        worst_float = 0.0
        for node in model.graph.node:
            for out in node.output:
                a_path, b_path = (os.path.join(d, file_name(out)) for d in (fb_dir, ort_dir))
                if not out or not (os.path.exists(a_path) and os.path.exists(b_path)):
                    continue
                a = np.load(a_path).astype(np.float64)
                b = np.load(b_path).astype(np.float64)
                if a.shape != b.shape:
                    print(f"divergence: {node.op_type} '{node.name}' output '{out}': shapes "
                          f"{a.shape} and {b.shape}")
                    sys.exit(1)
                if a.size == 0:
                    continue
                diff = np.abs(a - b)
                if node.op_type in REQUANTIZING_OPS:
                    steps = int(diff.max())
                    if steps == 0:
                        continue
                    # A systematic error (a wrong zero point or scale) moves many values; a
                    # rounding flip moves the few that sit on a boundary.
                    if steps == 1 and (diff > 0).sum() <= max(1, a.size // 100):
                        print(f"rounding: first difference at {node.op_type} '{out}', one step "
                              f"on {int((diff > 0).sum())} of {a.size} values, after float "
                              f"differences of at most {worst_float:.2e}")
                        sys.exit(0)
                    print(f"divergence: {node.op_type} '{out}' differs by up to {steps} steps on "
                          f"{int((diff > 0).sum())} of {a.size} values, with float differences "
                          f"before it of at most {worst_float:.2e}")
                    sys.exit(1)
                if np.all(diff <= FLOAT_ATOL + FLOAT_RTOL * np.abs(b)):
                    worst_float = max(worst_float, float(diff.max()))
                    continue
                print(f"divergence: {node.op_type} '{node.name}' output '{out}': max abs "
                      f"{diff.max():.3e} (max |value| {np.abs(b).max():.3e})")
                sys.exit(1)
        print("divergence: no intermediate differs, yet the outputs do")
        sys.exit(1)


if __name__ == "__main__":
    main()
