#!/usr/bin/python3
"""Exports torchvision classifiers (random weights, never a download) to ONNX with a reference
input and PyTorch's output as .npy, for checking Fusebox by hand against PyTorch.

Needs Debian's python3-torch and python3-torchvision (not installed by the project: they are
large). Usage:  /usr/bin/python3 scripts/export_torchvision.py OUT_DIR [model ...] [--opset N]
                [--keep-bn]   (keep BatchNormalization in the graph, as training-mode export does)
Then:  fusebox-opt OUT_DIR/resnet18.onnx --run --inputs OUT_DIR/resnet18.input.npy --output-dir D
and compare D/*.npy with OUT_DIR/resnet18.output.npy (scripts/compare_npy.py).
"""
import argparse
import inspect
import os

import numpy as np
import torch
import torchvision

MODELS = {
    "resnet18": lambda: torchvision.models.resnet18(weights=None),
    "resnet50": lambda: torchvision.models.resnet50(weights=None),
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(weights=None),
    "mobilenet_v3_small": lambda: torchvision.models.mobilenet_v3_small(weights=None),
    "squeezenet1_0": lambda: torchvision.models.squeezenet1_0(weights=None),
    "efficientnet_b0": lambda: torchvision.models.efficientnet_b0(weights=None),
    "vit_b_16": lambda: torchvision.models.vit_b_16(weights=None),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("models", nargs="*", default=["resnet18", "mobilenet_v2", "squeezenet1_0",
                                                  "efficientnet_b0"])
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--keep-bn", action="store_true")
    ap.add_argument("--dynamic-batch", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    for name in args.models:
        model = MODELS[name]().eval()
        x = torch.randn(1, 3, 224, 224)
        path = os.path.join(args.out, name + ".onnx")
        # Newer PyTorch exports through dynamo by default (other op patterns, opset 18): keep
        # the TorchScript exporter's graph wherever it still exists, as tests/zoo does.
        kwargs = ({"dynamo": False}
                  if "dynamo" in inspect.signature(torch.onnx.export).parameters else {})
        if args.keep_bn:
            kwargs["training"] = torch.onnx.TrainingMode.PRESERVE
            kwargs["do_constant_folding"] = False
        if args.dynamic_batch:
            kwargs["dynamic_axes"] = {"input": {0: "N"}, "output": {0: "N"}}
        grad = torch.enable_grad() if name.startswith("vit") else torch.no_grad()
        with grad:
            torch.onnx.export(model, x, path, opset_version=args.opset, input_names=["input"],
                              output_names=["output"], **kwargs)
        with torch.no_grad():
            y = model(x).numpy()
        np.save(os.path.join(args.out, name + ".input.npy"), x.numpy())
        np.save(os.path.join(args.out, name + ".output.npy"), y)
        print(f"{name}: {path}  output {y.shape}")


if __name__ == "__main__":
    main()
