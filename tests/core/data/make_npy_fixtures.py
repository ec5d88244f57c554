#!/usr/bin/python3
"""Writes the tiny .npy fixtures read by tests/core/TestNpy.cpp (run once; outputs are committed).

Run with Debian's interpreter: /usr/bin/python3 tests/core/data/make_npy_fixtures.py
The values are simple on purpose, so the C++ test can hard-code them.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array, version=None):
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, version=version, allow_pickle=False)


def main():
    save("f32_2x3.npy", (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1.0))
    save("f16_4.npy", np.array([1.0, -2.5, 65504.0, 0.000061035156], dtype=np.float16))
    save("i8_3.npy", np.array([-128, 0, 127], dtype=np.int8))
    save("u8_2x2.npy", np.array([[0, 1], [254, 255]], dtype=np.uint8))
    save("i32_3.npy", np.array([-2147483648, 7, 2147483647], dtype=np.int32))
    save("i64_2.npy", np.array([-9223372036854775807 - 1, 1234567890123], dtype=np.int64))
    save("bool_4.npy", np.array([True, False, False, True]))
    save("scalar_f32.npy", np.float32(3.25) * np.ones((), dtype=np.float32))
    save("empty_0x3_f32.npy", np.zeros((0, 3), dtype=np.float32))
    save("f64_2.npy", np.array([1.0, 2.0], dtype=np.float64))
    save("fortran_2x3_f32.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    save("bigendian_f32_2.npy", np.array([1.0, 2.0], dtype=">f4"))
    save("v2_i32_3.npy", np.array([1, 2, 3], dtype=np.int32), version=(2, 0))
    save("v3_i64_2x1.npy", np.array([[5], [-6]], dtype=np.int64), version=(3, 0))


if __name__ == "__main__":
    main()
