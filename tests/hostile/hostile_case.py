"""What every hostile model module shares: the Case an expectation is written as, the registry
(`@model`), ONNX value helpers and the two's complement wrap the references use."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
I64_MIN, I64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max
I32_MIN, I32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max
HUGE = 2**40  # fits int64, but no tensor of that many elements fits in memory

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}

MODELS = []  # (name, builder); a builder returns a Case


class Case:
    """One model: its graph pieces, inputs and expectation."""

    def __init__(self, nodes, inputs, outputs, inits=(), feeds=(), expect="result",
                 refs=None, pattern=None, why="", opset=OPSET):
        self.nodes, self.inputs, self.outputs, self.opset = nodes, inputs, outputs, opset
        self.inits, self.feeds = list(inits), list(feeds)
        self.expect, self.refs, self.pattern, self.why = expect, refs, pattern, why


def model(fn):
    MODELS.append((fn.__name__, fn))
    return fn


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, NP_TO_ONNX[np.dtype(dtype)], shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def error(nodes, inputs, outputs, pattern, why, inits=(), feeds=()):
    return Case(nodes, inputs, outputs, inits, feeds, expect="error", pattern=pattern, why=why)


def result(nodes, inputs, outputs, refs, why, inits=(), feeds=(), opset=OPSET):
    return Case(nodes, inputs, outputs, inits, feeds, expect="result", refs=refs, why=why,
                opset=opset)


# Errors that say a size does not fit: an overflow, a memory limit, or a size named too large.
TOO_BIG = r"overflow|too large|too big|exceed|memory|does not fit|limit|cannot allocate"
OUT_OF_RANGE = r"out of range"


def wrap(values, dtype):
    """Python ints reduced to dtype's two's complement range."""
    bits = np.iinfo(dtype).bits
    flat = []
    for v in np.asarray(values, dtype=object).ravel():
        v = int(v) % (1 << bits)
        if np.iinfo(dtype).min < 0 and v >= 1 << (bits - 1):
            v -= 1 << bits
        flat.append(v)
    return np.array(flat, dtype).reshape(np.shape(values))


def f32(shape, start=0):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32) + start).reshape(shape)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)
