#!/usr/bin/env python3
"""Checks that includes only run down the layers of docs/decisions.md ("Layers").

Each source folder has a rank; a file may include headers of its own folder or of folders
with a lower rank. Two folders of the same rank (codegen/loops and codegen/gemm; the CLI and
the GUI) are siblings and never include each other, so there is no cycle between folders.

  scripts/check_layers.py [ROOT]          exit 1 and list every include that runs up or sideways
  scripts/check_layers.py [ROOT] --graph  print the folder dependency graph (a structure view)
"""
import os
import re
import sys

# Folder -> rank. Lower ranks are lower layers. Longest prefix wins.
LAYERS = {
    "core": 0,
    "passes": 1,
    "codegen/kernel": 2,
    "codegen/runtime": 2,
    "codegen/ir": 2,
    "codegen/loops": 3,
    "codegen/gemm": 3,
    "codegen/llvm": 4,
    "codegen/exec": 5,
    "app/workbench": 6,
    "app/cli": 7,
    "app/gui": 7,
    "tests": 8,
    "bench": 8,
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    best = None
    for folder in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    graph = "--graph" in sys.argv
    violations = []
    edges = {}
    for top in ("core", "passes", "codegen", "app", "tests", "bench"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cpp", ".def")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                src = folder_of(path)
                if src is None:
                    continue
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    dst = folder_of(inc)
                    if dst is None or dst == src:
                        continue
                    edges.setdefault(src, set()).add(dst)
                    if LAYERS[dst] >= LAYERS[src] and not src.startswith(("tests", "bench")):
                        kind = "sideways" if LAYERS[dst] == LAYERS[src] else "up"
                        violations.append(f"{path}: includes {inc} ({kind}: {src} -> {dst})")
    if graph:
        for src in sorted(edges, key=lambda f: (LAYERS[f], f)):
            print(f"{src} (layer {LAYERS[src]}) -> " + ", ".join(sorted(edges[src], key=lambda f: (-LAYERS[f], f))))
    for v in violations:
        print("error: " + v)
    if violations:
        print(f"{len(violations)} include(s) run against the layers")
        return 1
    if not graph:
        print(f"layers: every include runs down ({sum(len(v) for v in edges.values())} folder edges)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
