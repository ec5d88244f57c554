#!/usr/bin/python3
"""Copies the generated test_add case with a wrong expected output, so a ctest can check that
fusebox-conformance really reports a mismatch (a runner that cannot fail is a defect).

Usage: /usr/bin/python3 make_mismatch_case.py GENERATED_NODE_DIR OUTPUT_DIR
"""
import os
import shutil
import sys

import onnx
from onnx import numpy_helper


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    src = os.path.join(sys.argv[1], "test_add")
    dst = os.path.join(sys.argv[2], "test_add_wrong")
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    path = os.path.join(dst, "test_data_set_0", "output_0.pb")
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    expected = numpy_helper.to_array(tensor).copy()
    expected.flat[7] += 1.0  # one element off by far more than the tolerance
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(expected, tensor.name).SerializeToString())


if __name__ == "__main__":
    main()
