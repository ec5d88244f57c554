#!/usr/bin/python3
"""Exports the model zoo that tests/zoo/run_zoo.sh checks: torchvision's classification and
segmentation architectures with random weights (weights=None: never a download), a small UNet,
a GPT-style decoder with a causal mask, and an LSTM tagger, each as OUT/NAME.onnx with a
reference input OUT/NAME.input.npy and PyTorch's output OUT/NAME.output.npy.

Exports are cached: a model whose three files exist is skipped (--force exports again).
Usage:  /usr/bin/python3 tests/zoo/export_zoo.py OUT [NAME ...] [--list]
Needs Debian's python3-torch and python3-torchvision (installed by ./test.sh).
"""
import inspect
import os
import sys
import time

import numpy as np
import torch
import torchvision
from torch import nn

OPSET = 14
FORCE = "--force" in sys.argv
# Newer PyTorch exports through dynamo by default (other op patterns, opset 18); the zoo is the
# TorchScript exporter's graph on every version that still has it.
LEGACY_EXPORT = ({"dynamo": False}
                 if "dynamo" in inspect.signature(torch.onnx.export).parameters else {})


class TinyUNet(nn.Module):
    """Two levels, bilinear upsampling by scale_factor, skip concatenation."""

    def __init__(self):
        super().__init__()
        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())
        self.down1, self.down2 = block(3, 8), block(8, 16)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.dec = block(24, 8)
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.down1(x)
        b = self.down2(self.pool(a))
        return self.head(self.dec(torch.cat([self.up(b), a], 1)))


class TinyGpt(nn.Module):
    """A decoder-only transformer: token + position embeddings, causal self-attention (the
    mask is torch.triu, exported as Trilu), GELU MLP, LayerNorm, tied output projection."""

    def __init__(self, vocab=64, d=32, heads=4, layers=2, seq=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d)

    def forward(self, ids):
        n = ids.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        h = self.blocks(self.tok(ids) + self.pos[:n], mask=mask)
        return self.norm(h) @ self.tok.weight.t()


class LstmTagger(nn.Module):
    """Embedding, a bidirectional LSTM and a per-token classifier."""

    def __init__(self, vocab=50, d=16, hidden=24, tags=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, ids):
        h, _ = self.lstm(self.emb(ids))
        return self.out(h)


def tv(name, size=64, **kw):
    return (lambda: getattr(torchvision.models, name)(weights=None, **kw),
            lambda: torch.randn(1, 3, size, size))


# Export options by model: "_bn" models keep BatchNormalization (and the Identity nodes torch
# emits around it), as a training-mode export does, for the passes that fold them.
KEEP_BN = {"training": torch.onnx.TrainingMode.PRESERVE}


def seg(name, size=96, **kw):
    build = lambda: getattr(torchvision.models.segmentation, name)(weights=None,
                                                                    weights_backbone=None, **kw)
    return (build, lambda: torch.randn(1, 3, size, size))


def tokens(vocab, n):
    return lambda: torch.randint(0, vocab, (1, n))


# name -> (builder, input maker). Small images keep the reference interpreter quick; every
# architecture accepts them except those that pool to a fixed size (noted).
MODELS = {
    "alexnet": tv("alexnet", 224),         # adaptive pools to 6x6 and 7x7 export only when
    "vgg11": tv("vgg11", 224),             # the feature map is a multiple of them
    "resnet18": tv("resnet18"),
    "resnet18_bn": tv("resnet18"),
    "resnext50_32x4d": tv("resnext50_32x4d"),
    "densenet121": tv("densenet121"),
    "googlenet": tv("googlenet", 96, aux_logits=False, init_weights=True),
    "inception_v3": tv("inception_v3", 96, aux_logits=False, init_weights=True),
    "shufflenet_v2_x1_0": tv("shufflenet_v2_x1_0"),
    "mnasnet0_5": tv("mnasnet0_5"),
    "mobilenet_v2": tv("mobilenet_v2"),
    "mobilenet_v3_large": tv("mobilenet_v3_large"),
    "regnet_y_400mf": tv("regnet_y_400mf"),
    "squeezenet1_0": tv("squeezenet1_0"),
    "efficientnet_b0": tv("efficientnet_b0"),
    "convnext_tiny": tv("convnext_tiny"),
    "swin_t": tv("swin_t", 224),           # windows of 7 on a 224 input
    "vit_b_16": tv("vit_b_16", 224),       # a fixed 224 input: 14x14 patches
    "deeplabv3_mobilenet_v3_large": seg("deeplabv3_mobilenet_v3_large"),
    "lraspp_mobilenet_v3_large": seg("lraspp_mobilenet_v3_large"),
    "unet_tiny": (TinyUNet, lambda: torch.randn(1, 3, 32, 32)),
    "gpt_tiny": (TinyGpt, tokens(64, 16)),
    "lstm_tagger": (LstmTagger, tokens(50, 12)),
}


def make_outputs_meaningful(model, make_input):
    """Random weights as torchvision initializes them often give a check nothing to check: ViT's
    head starts at zero (every logit 0), and with identity BatchNorm statistics activations
    vanish (MobileNet, EfficientNet: logits of 1e-10) or explode (Inception-v3: 1e9). Parameters
    that start all zero get small random values, and BatchNorm layers take their running
    statistics from a few random batches, as after training, so outputs are O(1) and a wrong
    kernel changes them visibly."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, 0.02)
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return model
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # a cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.cat([make_input() for _ in range(4)]))
    return model.eval()


def export(name, out):
    build, make_input = MODELS[name]
    paths = [os.path.join(out, name + ext) for ext in (".onnx", ".input.npy", ".output.npy")]
    if not FORCE and all(os.path.exists(p) for p in paths):
        return "cached"
    torch.manual_seed(0)
    model = make_outputs_meaningful(build().eval(), make_input)
    x = make_input()
    # Transformer layers export only with gradients enabled (under no_grad torch takes a fused
    # path with no ONNX mapping).
    with torch.enable_grad():
        torch.onnx.export(model, x, paths[0], opset_version=OPSET, input_names=["input"],
                          output_names=["output"], do_constant_folding=False,
                          **LEGACY_EXPORT, **(KEEP_BN if name.endswith("_bn") else {}))
    with torch.no_grad():
        y = model(x)
    if isinstance(y, dict):  # segmentation models return {"out": ...}
        y = y["out"]
    np.save(paths[1], x.numpy())
    np.save(paths[2], y.numpy())
    return "exported"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--list" in sys.argv:
        print("\n".join(MODELS))
        return 0
    if not args:
        print(__doc__)
        return 2
    out, names = args[0], args[1:] or list(MODELS)
    os.makedirs(out, exist_ok=True)
    failed = 0
    for name in names:
        t = time.time()
        try:
            what = export(name, out)
            print(f"{name}: {what} in {time.time() - t:.1f} s", flush=True)
        except Exception as e:  # one architecture that torch cannot export must not stop the rest
            failed += 1
            print(f"{name}: export failed: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
