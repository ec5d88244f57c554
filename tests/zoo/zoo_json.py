#!/usr/bin/python3
"""Reads fusebox-opt --json reports for tests/zoo/run_zoo.sh.
  zoo_json.py nodes FILE      the "nodes" of a --stats report
  zoo_json.py timing FILE     "<compile_ms> <median_ms>" of a --bench report
  zoo_json.py failures FILE   the outputs a --compare report says are not ok"""
import json
import sys

kind, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    d = json.load(f)
if kind == "nodes":
    print(d["nodes"])
elif kind == "timing":
    print(f"{d['compile_ms']:.0f} {d['median_ms']:.2f}")
elif kind == "failures":
    print("; ".join(f"{o['name']} max_abs {o['max_abs']:.3g} max_rel {o['max_rel']:.3g}"
                    for o in d["outputs"] if not o["ok"]))
else:
    sys.exit(f"unknown report kind {kind}")
