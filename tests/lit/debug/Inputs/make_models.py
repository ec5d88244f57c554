#!/usr/bin/env python3
"""Writes the small models the bisection tests use where no sample triggers a fault: each is a
pattern real networks have (an attention map and its transpose, a dual softmax, a YOLO-style SPP
block, BatchNorm over dead channels). Deterministic: run it again to regenerate them.
  python3 make_models.py   (in this folder)"""
import random

rng = random.Random(14)


def dense(n, scale=0.5):
    return "dense<[" + ", ".join(f"{rng.uniform(-scale, scale):.6f}" for _ in range(n)) + "]>"


def write(name, lines):
    with open(name + ".fbir", "w") as f:
        f.write("\n".join(lines) + "\n")


# An attention-like map and its transpose: [1, 8, 8] -> Transpose(0, 2, 1) has the same type.
write("square_transpose", [
    "graph @square_transpose opset 17 {",
    "  input %x : f32[1, 8, 8]",
    f"  const %wq : f32[8, 8] = {dense(64)}",
    f"  const %wv : f32[8, 8] = {dense(64)}",
    "  %scores : f32[1, 8, 8] = MatMul(%x, %wq)  #1 \"/attn/scores/MatMul\"",
    "  %scores_t : f32[1, 8, 8] = Transpose(%scores) {perm = [0, 2, 1]}  #2 \"/attn/Transpose\"",
    "  %ctx : f32[1, 8, 8] = MatMul(%scores_t, %wv)  #3 \"/attn/context/MatMul\"",
    "  %output : f32[1, 8, 8] = Add(%ctx, %x)  #4 \"/residual/Add\"",
    "  output %output",
    "}",
])

# Dual softmax (feature matching, as in LoFTR): a similarity map normalized over rows and over
# columns, the second written as a transpose and a softmax over the last axis, and as a softmax
# over axis 1 of the same map.
write("dual_softmax", [
    "graph @dual_softmax opset 17 {",
    "  input %x : f32[1, 8, 8]",
    f"  const %w : f32[8, 8] = {dense(64)}",
    "  %sim : f32[1, 8, 8] = MatMul(%x, %w)  #1 \"/match/sim/MatMul\"",
    "  %rows : f32[1, 8, 8] = Softmax(%sim) {axis = -1}  #2 \"/match/rows/Softmax\"",
    "  %cols : f32[1, 8, 8] = Softmax(%sim) {axis = 1}  #3 \"/match/cols/Softmax\"",
    "  %sim_t : f32[1, 8, 8] = Transpose(%sim) {perm = [0, 2, 1]}  #4 \"/match/Transpose\"",
    "  %cols_t : f32[1, 8, 8] = Softmax(%sim_t) {axis = -1}  #5 \"/match/cols_t/Softmax\"",
    "  %p : f32[1, 8, 8] = Mul(%rows, %cols)  #6 \"/match/Mul\"",
    "  %output : f32[1, 8, 8] = Add(%p, %cols_t)  #7 \"/match/Add\"",
    "  output %output",
    "}",
])

# YOLOv3's spatial pyramid pooling: max pools of 5, 9 and 13 with "same" padding over one input,
# concatenated: three nodes with one op and one operand that differ only in attributes.
write("spp_block", [
    "graph @spp_block opset 17 {",
    "  input %x : f32[1, 4, 12, 12]",
    f"  const %w1 : f32[8, 4, 1, 1] = {dense(32)}",
    f"  const %w2 : f32[4, 32, 1, 1] = {dense(128)}",
    "  %c1 : f32[1, 8, 12, 12] = Conv(%x, %w1) {kernel_shape = [1, 1]}  #1 \"/spp/cv1/Conv\"",
    "  %p5 : f32[1, 8, 12, 12] = MaxPool(%c1) {kernel_shape = [5, 5], pads = [2, 2, 2, 2]}  #2 \"/spp/m5/MaxPool\"",
    "  %p9 : f32[1, 8, 12, 12] = MaxPool(%c1) {kernel_shape = [9, 9], pads = [4, 4, 4, 4]}  #3 \"/spp/m9/MaxPool\"",
    "  %p13 : f32[1, 8, 12, 12] = MaxPool(%c1) {kernel_shape = [13, 13], pads = [6, 6, 6, 6]}  #4 \"/spp/m13/MaxPool\"",
    "  %cat : f32[1, 32, 12, 12] = Concat(%c1, %p5, %p9, %p13) {axis = 1}  #5 \"/spp/Concat\"",
    "  %output : f32[1, 4, 12, 12] = Conv(%cat, %w2) {kernel_shape = [1, 1]}  #6 \"/spp/cv2/Conv\"",
    "  output %output",
    "}",
])

# A BatchNormalization whose running variance is zero on two channels (dead filters: the
# channel was constant over the calibration data): only epsilon keeps 1/sqrt(var + eps) finite.
var = [f"{rng.uniform(0.5, 1.5):.6f}" for _ in range(8)]
var[2] = var[5] = "0.0"
write("dead_channels", [
    "graph @dead_channels opset 17 {",
    "  input %x : f32[1, 3, 8, 8]",
    f"  const %w : f32[8, 3, 3, 3] = {dense(216)}",
    f"  const %gamma : f32[8] = {dense(8, 1.0)}",
    f"  const %beta : f32[8] = {dense(8, 0.2)}",
    "  const %mean : f32[8] = dense<[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]>",
    "  const %var : f32[8] = dense<[" + ", ".join(var) + "]>",
    f"  const %fw : f32[4, 8] = {dense(32)}",
    f"  const %fb : f32[4] = {dense(4)}",
    "  %c : f32[1, 8, 8, 8] = Conv(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}  #1 \"/conv/Conv\"",
    "  %bn : f32[1, 8, 8, 8] = BatchNormalization(%c, %gamma, %beta, %mean, %var) {epsilon = 1e-05}  #2 \"/bn/BatchNormalization\"",
    "  %r : f32[1, 8, 8, 8] = Relu(%bn)  #3 \"/relu/Relu\"",
    "  %g : f32[1, 8, 1, 1] = GlobalAveragePool(%r)  #4 \"/gap/GlobalAveragePool\"",
    "  %f : f32[1, 8] = Flatten(%g) {axis = 1}  #5 \"/flatten/Flatten\"",
    "  %output : f32[1, 4] = Gemm(%f, %fw, %fb) {transB = 1}  #6 \"/fc/Gemm\"",
    "  output %output",
    "}",
])
