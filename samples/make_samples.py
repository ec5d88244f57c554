#!/usr/bin/python3
"""Builds Fusebox's sample ONNX models (opset 17) with onnx.helper and NumPy.

Run with Debian's interpreter, which has onnx and numpy:

    /usr/bin/python3 samples/make_samples.py [--out DIR] [--fbir PATH_TO_FUSEBOX_OPT]

Every model has random weights from a fixed seed, so re-running the script writes byte-identical
files. No network and no torch: the graphs are written node by node the way PyTorch's exporter
lays them out (Conv without bias before BatchNormalization, GELU as Div/Erf/Add/Mul/Mul, the
Shape->Gather->Unsqueeze->Concat->Reshape flatten for a dynamic batch).

With --fbir, each sample is also converted to Fusebox's text IR with
`fusebox-opt samples/x.onnx -o samples/x.fbir`.
"""
import argparse
import math
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
HERE = os.path.dirname(os.path.abspath(__file__))


class GraphBuilder:
    """Collects nodes and initializers, and hands out unique value names."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.counter = {}

    def fresh(self, base):
        n = self.counter.get(base, 0)
        self.counter[base] = n + 1
        return f"{base}_{n}" if n else base

    def const(self, name, array):
        name = self.fresh(name)
        self.initializers.append(numpy_helper.from_array(np.array(array, order="C", copy=True), name))
        return name

    def i64(self, name, values):
        return self.const(name, np.array(values, dtype=np.int64))

    def f32(self, name, values):
        return self.const(name, np.array(values, dtype=np.float32))

    def node(self, op, inputs, name, num_outputs=1, **attrs):
        """Adds a node named like torch's exporter (/layer/Op) and returns its output name(s)."""
        node_name = self.fresh(name)
        outputs = [f"{node_name}_output_{i}" for i in range(num_outputs)]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=node_name, **attrs))
        return outputs[0] if num_outputs == 1 else outputs

    def weight(self, name, shape, fan_in):
        """He-normal weights keep activations in a sensible range through ReLU layers."""
        w = self.rng.normal(0.0, math.sqrt(2.0 / fan_in), size=shape).astype(np.float32)
        return self.const(name, w)

    def bias(self, name, n):
        return self.const(name, self.rng.normal(0.0, 0.05, size=(n,)).astype(np.float32))

    # Layers -------------------------------------------------------------------------------

    def gemm(self, x, in_features, out_features, name):
        w = self.weight(f"{name}.weight", (out_features, in_features), in_features)
        b = self.bias(f"{name}.bias", out_features)
        return self.node("Gemm", [x, w, b], f"/{name}/Gemm", alpha=1.0, beta=1.0, transB=1)

    def conv(self, x, cin, cout, k, name, stride=1, pad=None, group=1, bias=False):
        pad = k // 2 if pad is None else pad
        fan_in = (cin // group) * k * k
        inputs = [x, self.weight(f"{name}.weight", (cout, cin // group, k, k), fan_in)]
        if bias:
            inputs.append(self.bias(f"{name}.bias", cout))
        return self.node("Conv", inputs, f"/{name}/Conv", dilations=[1, 1], group=group,
                         kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])

    def batch_norm(self, x, c, name):
        """Inference-mode BatchNormalization with non-trivial statistics (variance > 0)."""
        scale = self.const(f"{name}.weight", self.rng.uniform(0.5, 1.5, c).astype(np.float32))
        shift = self.const(f"{name}.bias", self.rng.normal(0.0, 0.1, c).astype(np.float32))
        mean = self.const(f"{name}.running_mean", self.rng.normal(0.0, 0.1, c).astype(np.float32))
        var = self.const(f"{name}.running_var", self.rng.uniform(0.5, 1.5, c).astype(np.float32))
        return self.node("BatchNormalization", [x, scale, shift, mean, var],
                         f"/{name}/BatchNormalization", epsilon=1e-5, momentum=0.9)

    def relu(self, x, name):
        return self.node("Relu", [x], f"/{name}/Relu")

    def relu6(self, x, name):
        lo = self.f32("clip_min", 0.0)
        hi = self.f32("clip_max", 6.0)
        return self.node("Clip", [x, lo, hi], f"/{name}/Clip")

    def max_pool(self, x, name):
        return self.node("MaxPool", [x], f"/{name}/MaxPool", kernel_shape=[2, 2],
                         pads=[0, 0, 0, 0], strides=[2, 2])

    def layer_norm(self, x, d, name):
        gamma = self.const(f"{name}.weight", self.rng.uniform(0.8, 1.2, d).astype(np.float32))
        beta = self.const(f"{name}.bias", self.rng.normal(0.0, 0.05, d).astype(np.float32))
        return self.node("LayerNormalization", [x, gamma, beta],
                         f"/{name}/LayerNormalization", axis=-1, epsilon=1e-5)

    def linear(self, x, in_features, out_features, name):
        """torch.nn.Linear on a rank-3 input exports as MatMul with W^T plus Add."""
        w = self.weight(f"{name}.weight_t", (in_features, out_features), in_features)
        b = self.bias(f"{name}.bias", out_features)
        y = self.node("MatMul", [x, w], f"/{name}/MatMul")
        return self.node("Add", [y, b], f"/{name}/Add")

    def build(self, name, inputs, outputs):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, producer_name="fusebox make_samples.py",
                                  opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        return model


def tensor_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# Models ----------------------------------------------------------------------------------------


def make_mlp():
    g = GraphBuilder(seed=1)
    x = g.relu(g.gemm("input", 784, 512, "fc1"), "fc1")
    x = g.relu(g.gemm(x, 512, 512, "fc2"), "fc2")
    x = g.gemm(x, 512, 10, "fc3")
    g.nodes[-1].output[0] = "output"
    return g.build("mlp", [tensor_info("input", [1, 784])], [tensor_info("output", [1, 10])])


def make_small_cnn():
    g = GraphBuilder(seed=2)
    x = "input"
    for i, (cin, cout) in enumerate([(3, 16), (16, 32)], start=1):
        x = g.conv(x, cin, cout, 3, f"conv{i}")
        x = g.batch_norm(x, cout, f"bn{i}")
        x = g.relu(x, f"relu{i}")
        x = g.max_pool(x, f"pool{i}")
    x = g.node("GlobalAveragePool", [x], "/gap/GlobalAveragePool")
    x = g.node("Flatten", [x], "/flatten/Flatten", axis=1)
    g.gemm(x, 32, 10, "fc")
    g.nodes[-1].output[0] = "output"
    return g.build("small_cnn", [tensor_info("input", [1, 3, 32, 32])],
                   [tensor_info("output", [1, 10])])


def make_resnet_block():
    g = GraphBuilder(seed=3)
    c = 64
    x = g.conv("input", c, c, 3, "conv1")
    x = g.relu(g.batch_norm(x, c, "bn1"), "relu1")
    x = g.conv(x, c, c, 3, "conv2")
    x = g.batch_norm(x, c, "bn2")
    x = g.node("Add", [x, "input"], "/residual/Add")
    g.relu(x, "relu2")
    g.nodes[-1].output[0] = "output"
    return g.build("resnet_block", [tensor_info("input", [1, c, 28, 28])],
                   [tensor_info("output", [1, c, 28, 28])])


def make_mobilenet_v2_block():
    g = GraphBuilder(seed=4)
    c, expand = 32, 6
    hidden = c * expand
    x = g.conv("input", c, hidden, 1, "expand")
    x = g.relu6(g.batch_norm(x, hidden, "expand_bn"), "expand")
    x = g.conv(x, hidden, hidden, 3, "depthwise", group=hidden)
    x = g.relu6(g.batch_norm(x, hidden, "depthwise_bn"), "depthwise")
    x = g.conv(x, hidden, c, 1, "project")
    x = g.batch_norm(x, c, "project_bn")
    g.node("Add", [x, "input"], "/residual/Add")
    g.nodes[-1].output[0] = "output"
    return g.build("mobilenet_v2_block", [tensor_info("input", [1, c, 28, 28])],
                   [tensor_info("output", [1, c, 28, 28])])


def make_transformer_block():
    """A pre-LayerNorm encoder layer: x + Attn(LN(x)), then h + FFN(LN(h))."""
    g = GraphBuilder(seed=5)
    seq, d, heads, ffn = 16, 64, 4, 256
    dh = d // heads
    x = "input"
    y = g.layer_norm(x, d, "ln1")
    head_shape = g.i64("head_shape", [1, seq, heads, dh])

    def split_heads(t, name, perm):
        t = g.node("Reshape", [t, head_shape], f"/attn/{name}/Reshape")
        return g.node("Transpose", [t], f"/attn/{name}/Transpose", perm=perm)

    q = split_heads(g.linear(y, d, d, "attn/q_proj"), "q", [0, 2, 1, 3])
    k = split_heads(g.linear(y, d, d, "attn/k_proj"), "k", [0, 2, 3, 1])
    v = split_heads(g.linear(y, d, d, "attn/v_proj"), "v", [0, 2, 1, 3])
    scores = g.node("MatMul", [q, k], "/attn/scores/MatMul")
    scores = g.node("Div", [scores, g.f32("sqrt_dh", math.sqrt(dh))], "/attn/Div")
    probs = g.node("Softmax", [scores], "/attn/Softmax", axis=-1)
    ctx = g.node("MatMul", [probs, v], "/attn/context/MatMul")
    ctx = g.node("Transpose", [ctx], "/attn/merge/Transpose", perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, g.i64("model_shape", [1, seq, d])], "/attn/merge/Reshape")
    attn = g.linear(ctx, d, d, "attn/out_proj")
    h = g.node("Add", [x, attn], "/residual1/Add")

    y = g.layer_norm(h, d, "ln2")
    y = g.linear(y, d, ffn, "ffn/fc1")
    # GELU as torch exports it: x * 0.5 * (1 + erf(x / sqrt(2))), computed as ((x*(1+erf))*0.5).
    e = g.node("Div", [y, g.f32("sqrt2", math.sqrt(2.0))], "/ffn/gelu/Div")
    e = g.node("Erf", [e], "/ffn/gelu/Erf")
    e = g.node("Add", [e, g.f32("one", 1.0)], "/ffn/gelu/Add")
    e = g.node("Mul", [y, e], "/ffn/gelu/Mul")
    e = g.node("Mul", [e, g.f32("half", 0.5)], "/ffn/gelu/Mul")
    y = g.linear(e, ffn, d, "ffn/fc2")
    g.node("Add", [h, y], "/residual2/Add")
    g.nodes[-1].output[0] = "output"
    return g.build("transformer_block", [tensor_info("input", [1, seq, d])],
                   [tensor_info("output", [1, seq, d])])


def make_dynamic_batch():
    """A small CNN whose batch is the symbol N, flattened with the exporter's shape chain."""
    g = GraphBuilder(seed=6)
    x = g.conv("input", 1, 8, 3, "conv1", bias=True)
    x = g.relu(x, "relu1")
    x = g.max_pool(x, "pool1")  # [N, 8, 14, 14]
    shape = g.node("Shape", [x], "/flatten/Shape")
    batch = g.node("Gather", [shape, g.const("gather_index", np.array(0, dtype=np.int64))],
                   "/flatten/Gather", axis=0)
    batch = g.node("Unsqueeze", [batch, g.i64("unsqueeze_axes", [0])], "/flatten/Unsqueeze")
    target = g.node("Concat", [batch, g.i64("minus_one", [-1])], "/flatten/Concat", axis=0)
    x = g.node("Reshape", [x, target], "/flatten/Reshape")
    g.gemm(x, 8 * 14 * 14, 10, "fc")
    g.nodes[-1].output[0] = "output"
    return g.build("dynamic_batch", [tensor_info("input", ["N", 1, 28, 28])],
                   [tensor_info("output", ["N", 10])])


def make_control_flow():
    """If and Loop whose bodies read outer values (Fusebox makes those explicit captures):
    h = Relu(x W + b); y = If(flag, then: h * 2 + b, else: Sigmoid(-h));
    three Loop iterations v <- Tanh(v W) + i carry y and stack each v as a scan output."""
    g = GraphBuilder(seed=7)
    d = 8
    w = g.weight("w", (d, d), d)
    b = g.bias("b", d)
    h = g.relu(g.node("Add", [g.node("MatMul", ["input", w], "/fc/MatMul"), b], "/fc/Add"), "fc")

    then_nodes = [
        helper.make_node("Constant", [], ["two"], name="/then/Constant",
                         value=numpy_helper.from_array(np.array(2.0, dtype=np.float32))),
        helper.make_node("Mul", [h, "two"], ["then_scaled"], name="/then/Mul"),
        helper.make_node("Add", ["then_scaled", b], ["then_out"], name="/then/Add"),
    ]
    else_nodes = [
        helper.make_node("Neg", [h], ["else_neg"], name="/else/Neg"),
        helper.make_node("Sigmoid", ["else_neg"], ["else_out"], name="/else/Sigmoid"),
    ]
    then_branch = helper.make_graph(then_nodes, "then_body", [], [tensor_info("then_out", [1, d])])
    else_branch = helper.make_graph(else_nodes, "else_body", [], [tensor_info("else_out", [1, d])])
    g.nodes.append(helper.make_node("If", ["flag"], ["branch_out"], name="/If",
                                    then_branch=then_branch, else_branch=else_branch))

    body_nodes = [
        helper.make_node("Identity", ["loop_cond_in"], ["loop_cond_out"], name="/loop/Identity"),
        helper.make_node("MatMul", ["loop_v_in", w], ["loop_mm"], name="/loop/MatMul"),
        helper.make_node("Tanh", ["loop_mm"], ["loop_tanh"], name="/loop/Tanh"),
        helper.make_node("Cast", ["loop_iter"], ["loop_iter_f"], name="/loop/Cast",
                         to=TensorProto.FLOAT),
        helper.make_node("Add", ["loop_tanh", "loop_iter_f"], ["loop_v_out"], name="/loop/Add"),
        helper.make_node("Identity", ["loop_v_out"], ["loop_scan"], name="/loop/Identity_1"),
    ]
    body = helper.make_graph(
        body_nodes, "loop_body",
        [helper.make_tensor_value_info("loop_iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("loop_cond_in", TensorProto.BOOL, []),
         tensor_info("loop_v_in", [1, d])],
        [helper.make_tensor_value_info("loop_cond_out", TensorProto.BOOL, []),
         tensor_info("loop_v_out", [1, d]), tensor_info("loop_scan", [1, d])])
    trips = g.i64("trip_count", 3)
    g.nodes.append(helper.make_node("Loop", [trips, "", "branch_out"], ["output", "steps"],
                                    name="/Loop", body=body))
    return g.build("control_flow",
                   [tensor_info("input", [1, d]),
                    helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
                   [tensor_info("output", [1, d]), tensor_info("steps", [3, 1, d])])


SAMPLES = {
    "mlp": make_mlp,
    "small_cnn": make_small_cnn,
    "resnet_block": make_resnet_block,
    "mobilenet_v2_block": make_mobilenet_v2_block,
    "transformer_block": make_transformer_block,
    "dynamic_batch": make_dynamic_batch,
    "control_flow": make_control_flow,
}


def check(model, name):
    """Runs the ONNX checker and strict shape inference; the outputs' inferred types must match
    the declared ones, so a wiring mistake in this script fails here rather than in Fusebox."""
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    known = {vi.name: vi for vi in inferred.graph.value_info}
    for out in inferred.graph.output:
        dims = [d.dim_value or d.dim_param for d in out.type.tensor_type.shape.dim]
        if any(d == 0 for d in dims):
            raise RuntimeError(f"{name}: output {out.name} has an unknown inferred dim: {dims}")
    if len(known) + len(inferred.graph.output) < len(model.graph.node):
        raise RuntimeError(f"{name}: shape inference left values untyped")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=HERE, help="output folder (default: samples/)")
    parser.add_argument("--fbir", metavar="PATH_TO_FUSEBOX_OPT",
                        help="also write x.fbir next to each x.onnx with this fusebox-opt")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    for name, make in SAMPLES.items():
        model = make()
        check(model, name)
        path = os.path.join(args.out, f"{name}.onnx")
        onnx.save(model, path)
        print(f"{path}: {len(model.graph.node)} nodes, {os.path.getsize(path)} bytes")

    if args.fbir:
        failed = False
        for name in SAMPLES:
            src = os.path.join(args.out, f"{name}.onnx")
            dst = os.path.join(args.out, f"{name}.fbir")
            result = subprocess.run([args.fbir, src, "-o", dst])
            if result.returncode != 0:
                print(f"error: {args.fbir} failed on {src}", file=sys.stderr)
                failed = True
            else:
                print(f"{dst}")
        if failed:
            sys.exit(1)


if __name__ == "__main__":
    main()
