#!/usr/bin/env python3
"""Peak memory (maximum resident set size) of one inference run, Fusebox beside ONNX Runtime.

    bench/rss.py [--threads N] [--build DIR] MODEL.onnx ...

Each model runs in a process of its own, once per engine: `fusebox-opt MODEL -O3 --backend cpu
--bench 3` (import, the -O3 pipeline, compiling and three runs) and `node scripts/bench_ort.js
--runs 3 MODEL` (session creation with all graph optimizations and three runs). The kernel
reports each child's peak RSS (wait4). The two processes start from different baselines — Qt
and LLVM loaded for fusebox-opt, V8 for node — so the table also gives each engine's peak minus
its own empty process (`fusebox-opt --help`, `node -e 0`). Benchmarks are not tests: this prints
numbers and exits 0.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def peak_mb(cmd):
    """Runs cmd with its output discarded; returns (exit status, peak RSS in MiB)."""
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=null)
        _, status, usage = os.wait4(proc.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024.0  # ru_maxrss is KiB


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()

    opt = os.path.join(args.build, "app", "cli", "fusebox-opt")
    if not os.path.exists(opt):
        sys.exit(f"rss.py: {opt} not found; build it first (ninja -C {args.build} fusebox-opt)")
    ort_script = os.path.join(ROOT, "scripts", "bench_ort.js")

    _, fb_base = peak_mb([opt, "--help"])
    _, ort_base = peak_mb(["node", "-e", "0"])
    print(f"empty processes: fusebox-opt {fb_base:.0f} MiB, node {ort_base:.0f} MiB; "
          f"{args.threads} threads")
    print()
    print("| model | Fusebox MiB | ORT MiB | Fusebox/ORT | Fusebox − empty | ORT − empty | ratio |")
    print("|---|---|---|---|---|---|---|")
    for model in args.models:
        fb_rc, fb = peak_mb([opt, model, "-O3", "--backend", "cpu", "--threads",
                             str(args.threads), "--bench", "3"])
        ort_rc, ort = peak_mb(["node", ort_script, "--threads", str(args.threads), "--runs", "3",
                               "--warmup", "1", model])
        name = os.path.basename(model)
        if fb_rc != 0 or ort_rc != 0:
            print(f"| {name} | {'failed' if fb_rc else f'{fb:.0f}'} | "
                  f"{'failed' if ort_rc else f'{ort:.0f}'} | – | – | – | – |")
            continue
        fb_net, ort_net = fb - fb_base, ort - ort_base
        print(f"| {name} | {fb:.0f} | {ort:.0f} | {fb / ort:.2f}× | {fb_net:.0f} | {ort_net:.0f} | "
              f"{fb_net / max(ort_net, 1.0):.2f}× |")


if __name__ == "__main__":
    main()
