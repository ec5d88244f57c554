#!/usr/bin/env python3
"""Drafts tests/conformance/skipped_cases.txt from `fusebox-conformance --verbose` runs.

    fusebox-conformance DIR --verbose > interp.txt
    fusebox-conformance DIR --verbose --backend cpu > cpu.txt
    draft_skip_list.py interp.txt cpu.txt > tests/conformance/skipped_cases.txt

Every skipped case gets one line with a reason in words, grouped under a heading per reason; a
case skipped only by the CPU backend gets a `cpu` entry. Review the draft before committing it:
the list is a set of decisions, and the runner enforces it both ways."""
import re
import sys
from collections import defaultdict

# (pattern on the runner's reason, reason written in the list). The first match wins.
CATEGORIES = [
    (r"ai\.onnx\.preview\.training", "training ops (ai.onnx.preview.training domain): out of scope"),
    (r"op (Bernoulli|RandomUniformLike|RandomNormalLike|RandomUniform|RandomNormal|Multinomial)\b",
     "random-number op: no deterministic reference to compare with"),
    (r"Dropout.*training_mode", "training-mode Dropout drops at random: no deterministic reference"),
    (r"BatchNormalization.*training_mode", "training-mode BatchNormalization: training is out of scope"),
    (r"element type STRING|ONNX element type 8\b|op (StringNormalizer|RegexFullMatch|StringConcat|StringSplit|TfIdfVectorizer)\b",
     "string tensors: out of scope"),
    (r"not a tensor \(sequence|Sequence|Optional", "sequence, optional and map values: out of scope"),
    (r"BFLOAT16", "bf16 stored as raw u16 in the test data: not a Fusebox dtype"),
    (r"element type DOUBLE|ONNX element type 11\b", "f64 tensors: not a Fusebox dtype (f32, f16, bf16, i8, u8, i32, i64, bool)"),
    (r"element type (UINT16|UINT32|UINT64|INT16)|ONNX element type (4|5|12|13)\b",
     "u16/u32/u64/i16 tensors: not Fusebox dtypes"),
    (r"\((NonZero|Unique|NonMaxSuppression)\) has a non-static type",
     "output shape depends on the data: the CPU backend compiles static shapes only"),
    (r"changed between opset (8|9) and", "opset 8/9 semantics: Fusebox upgrades models from opset 11 on"),
    (r"op (\w+), opset \d+\): unsupported op", None),  # "OP: not implemented"
]


def reason_for(text):
    for pattern, reason in CATEGORIES:
        m = re.search(pattern, text)
        if m:
            return reason or f"{m.group(1)}: not implemented"
    return "unsupported: " + re.sub(r"\S*/model\.onnx: ", "", text)[:150]


def skips(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"SKIP (\S+) \[[^]]*\]: (.*)", line)
        if m:
            out[m.group(1)] = reason_for(m.group(2))
    return out


def main():
    interp = skips(sys.argv[1])
    cpu = skips(sys.argv[2]) if len(sys.argv) > 2 else {}
    groups = defaultdict(list)
    for name, reason in interp.items():
        groups[("", reason)].append(name)
    for name, reason in cpu.items():
        if name not in interp:
            groups[("cpu ", reason)].append(name)
    print("# ONNX node-test cases that fusebox-conformance may skip, with the reason for each.")
    print("# Format: [interp |cpu ]REGEX: REASON  (REGEX matches the whole case name).")
    print("# The runner fails on a skip this file does not list, and on a listed case that passes.")
    print("# Drafted by tests/conformance/draft_skip_list.py from --verbose runs, then reviewed.")
    for (backend, reason), names in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        print(f"\n# {reason} ({len(names)})")
        for n in sorted(names):
            print(f"{backend}{n}: {reason}")


if __name__ == "__main__":
    main()
