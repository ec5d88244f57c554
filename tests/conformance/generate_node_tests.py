#!/usr/bin/python3
"""Generates the ONNX backend node tests (model.onnx + test_data_set_*/*.pb) into a folder.

Usage: /usr/bin/python3 generate_node_tests.py OUTPUT_DIR   (cases land in OUTPUT_DIR/node/...)

Run with Debian's interpreter (python3-onnx 1.12). Its test-case modules still use NumPy aliases
that NumPy 1.24 removed, so they are restored before onnx's test cases are imported.
"""
import sys

import numpy as np

# Must happen before importing onnx.backend.test: the case modules read these at import time.
np.float = float
np.int = int
np.bool = bool
np.object = object

from onnx.backend.test import cmd_tools  # noqa: E402


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.argv = [sys.argv[0], "generate-data", "-o", sys.argv[1]]
    cmd_tools.main()


if __name__ == "__main__":
    main()
