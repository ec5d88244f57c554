#!/usr/bin/env python3
"""Per-node profile of one ONNX model in ONNX Runtime's Python package, to set beside
`fusebox-opt --profile`: the twin of scripts/ort_profile.js for machines with Python's
onnxruntime but no Node.js (the GPU machines).

    python3 scripts/ort_profile.py [--threads 2] [--runs 20] model.onnx

Prints one line per node (after ORT's own graph optimizations): median microseconds over the
runs, the op type (ORT's, e.g. "FusedConv") and the node name, slowest first, then the sum."""
import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ort import make_input, make_session  # noqa: E402  (the same inputs and session)

WARMUP = 5


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("model")
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="ort-profile-")
    try:
        session = make_session(a.model, a.threads, profile_prefix=os.path.join(tmp, "ort"))
        feeds = {m.name: make_input(m, 17 + i) for i, m in enumerate(session.get_inputs())}
        for _ in range(WARMUP + a.runs):
            session.run(None, feeds)
        with open(session.end_profiling()) as f:
            events = json.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # Node events are "<name>_kernel_time"; the first WARMUP runs of each node are warm-up.
    by_node = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        name = e["name"][: -len("_kernel_time")]
        op = (e.get("args") or {}).get("op_name", "?")
        by_node.setdefault(name, (op, []))[1].append(e["dur"])
    rows = []
    for name, (op, times) in by_node.items():
        measured = sorted(times[WARMUP:])
        if measured:
            rows.append((measured[len(measured) // 2], op, name))
    rows.sort(key=lambda r: -r[0])
    for us, op, name in rows:
        print(f"{us:8d}  {op:<24} {name}")
    print(f"{sum(r[0] for r in rows):8d}  total of {len(rows)} nodes (us, medians)")


if __name__ == "__main__":
    main()
