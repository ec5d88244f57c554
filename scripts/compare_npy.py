#!/usr/bin/python3
"""Compares two .npy files: prints max abs and max rel difference; exits 1 above tolerance, the
rule of fusebox-opt --compare: |got - want| <= atol + rtol*|want| + stol*max|want|.
Usage: /usr/bin/python3 scripts/compare_npy.py GOT.npy WANT.npy [--atol 1e-4] [--rtol 0] [--stol 0]"""
import argparse
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("got")
ap.add_argument("want")
ap.add_argument("--atol", type=float, default=1e-4)
ap.add_argument("--rtol", type=float, default=0.0)
ap.add_argument("--stol", type=float, default=0.0)
a = ap.parse_args()
got, want = np.load(a.got), np.load(a.want)
if got.shape != want.shape:
    print(f"shape mismatch: {got.shape} vs {want.shape}")
    sys.exit(1)
d = np.abs(got.astype(np.float64) - want.astype(np.float64))
rel = d / np.maximum(np.abs(want), 1e-12)
print(f"max_abs {d.max():.3e}  max_rel {rel.max():.3e}  top1 {'same' if got.argmax() == want.argmax() else 'DIFFERENT'}")
scale = float(np.max(np.abs(want))) if want.size else 0.0
sys.exit(0 if np.all(d <= a.atol + a.rtol * np.abs(want) + a.stol * scale) else 1)
