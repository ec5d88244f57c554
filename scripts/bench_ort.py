#!/usr/bin/env python3
"""Times ONNX models with ONNX Runtime's Python package, like scripts/bench_ort.js does with the
npm package, for machines that have `onnxruntime` for Python but no Node.js (the GPU machines):

    python3 scripts/bench_ort.py [--threads 2] [--runs 20] [--warmup 5] model.onnx...

Prints one line per model: "<path>\t<median ms>\t<min ms>", the format fusebox-bench reads
(--ort FILE or --ort-cmd COMMAND). Inputs are the same deterministic values bench_ort.js makes
(a linear congruential sequence in [-1, 1) per float input; zeros for integer and bool inputs;
symbolic dimensions become 1). Session options match bench_ort.js: intra-op threads as given,
one inter-op thread, sequential execution, all graph optimizations."""
import argparse
import sys
import time

import numpy as np

try:
    import onnxruntime as ort
except ImportError:
    print("bench_ort.py: the onnxruntime Python package is not installed", file=sys.stderr)
    sys.exit(2)


def lcg_values(n, seed):
    """bench_ort.js's sequence: s = s * 1664525 + 1013904223 (mod 2^32), value s / 2^32 * 2 - 1."""
    out = np.empty(n, dtype=np.float32)
    s = seed & 0xFFFFFFFF
    for i in range(n):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        out[i] = np.float32(s / 4294967296.0 * 2 - 1)
    return out


def make_input(meta, seed):
    shape = [d if isinstance(d, int) and d > 0 else 1 for d in meta.shape]
    n = int(np.prod(shape)) if shape else 1
    kinds = {
        "tensor(float)": lambda: lcg_values(n, seed).reshape(shape),
        "tensor(int64)": lambda: np.zeros(shape, dtype=np.int64),
        "tensor(int32)": lambda: np.zeros(shape, dtype=np.int32),
        "tensor(bool)": lambda: np.zeros(shape, dtype=np.bool_),
    }
    if meta.type not in kinds:
        raise ValueError(f"unsupported input type {meta.type} of {meta.name}")
    return kinds[meta.type]()


def make_session(model, threads, profile_prefix=None):
    """bench_ort.js's session: `threads` intra-op threads, one inter-op thread, sequential
    execution, all graph optimizations, the CPU provider; with `profile_prefix`, profiling on."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("models", nargs="+")
    a = p.parse_args()
    for model in a.models:
        session = make_session(model, a.threads)
        feeds = {m.name: make_input(m, 17 + i) for i, m in enumerate(session.get_inputs())}
        for _ in range(a.warmup):
            session.run(None, feeds)
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            session.run(None, feeds)
            times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        print(f"{model}\t{times[len(times) // 2]:.4f}\t{times[0]:.4f}", flush=True)


if __name__ == "__main__":
    main()
