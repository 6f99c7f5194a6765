#!/usr/bin/python3
"""Scripts a PyTorch model into a TorchScript file for `stalesgd train --model torchscript:PATH`.

usage: tools/export_model.py {mlp,lenet,cnn} --out PATH [--input CxHxW] [--classes N]
                             [--hidden 128[,64...]] [--seed S] [--weights FILE]

The file holds the module and its initial weights: a TorchScript run starts from them. The
module maps a float32 batch of N x C x H x W samples to N x classes logits; stalesgd adds the
cross-entropy loss (docs/models.md, "TorchScript models"). Models:
  mlp    Flatten, then Linear + ReLU per --hidden size, then Linear to the classes (the built-in
         mlp's architecture)
  lenet  the built-in lenet's architecture for 1x28x28 images (its TorchScript twin)
  cnn    a small CNN for any CxHxW of at least 8x8: two conv3x3-ReLU-maxpool2 blocks (16 and 32
         channels), a 64-unit ReLU layer and the classifier
--weights FILE: float32 little-endian values, in named_parameters() order and each tensor's own
row-major layout (the flat vector stalesgd trains), replacing the random initial weights.
"""
import argparse
import os
import sys

import numpy as np
import torch
from torch import nn


def parse_shape(text):
    try:
        c, h, w = (int(v) for v in text.lower().split("x"))
    except ValueError:
        sys.exit(f"export_model.py: --input '{text}' is not CxHxW, e.g. 1x28x28")
    if min(c, h, w) < 1:
        sys.exit(f"export_model.py: --input '{text}' needs positive sizes")
    return c, h, w


def mlp(shape, classes, hidden):
    layers, width = [nn.Flatten()], shape[0] * shape[1] * shape[2]
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, classes))
    return nn.Sequential(*layers)


def lenet(shape, classes):
    if shape != (1, 28, 28):
        sys.exit("export_model.py: lenet takes 1x28x28 images; use cnn for other shapes")
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, classes))


def cnn(shape, classes):
    c, h, w = shape
    if h < 8 or w < 8:
        sys.exit(f"export_model.py: cnn needs images of at least 8x8, not {h}x{w}")
    return nn.Sequential(
        nn.Conv2d(c, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(32 * (h // 4) * (w // 4), 64), nn.ReLU(), nn.Linear(64, classes))


def load_weights(model, path):
    flat = torch.from_numpy(np.fromfile(path, dtype="<f4"))
    total = sum(p.numel() for p in model.parameters())
    if flat.numel() != total:
        sys.exit(f"export_model.py: {path} holds {flat.numel()} floats, the model has {total}")
    with torch.no_grad():
        at = 0
        for p in model.parameters():
            p.copy_(flat[at:at + p.numel()].view_as(p))
            at += p.numel()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=["mlp", "lenet", "cnn"])
    ap.add_argument("--out", required=True, help="the TorchScript file to write")
    ap.add_argument("--input", default="1x28x28", help="one sample's CxHxW (default 1x28x28)")
    ap.add_argument("--classes", type=int, default=10, help="number of classes (default 10)")
    ap.add_argument("--hidden", default="128", help="mlp hidden sizes, e.g. 256,128")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random initial weights")
    ap.add_argument("--weights", help="float32 file of initial weights (see above)")
    a = ap.parse_args()
    if a.classes < 2:
        sys.exit("export_model.py: --classes must be at least 2")
    torch.manual_seed(a.seed)
    shape = parse_shape(a.input)
    if a.model == "mlp":
        hidden = [int(h) for h in a.hidden.split(",") if h.strip()]
        model = mlp(shape, a.classes, hidden)
    else:
        model = lenet(shape, a.classes) if a.model == "lenet" else cnn(shape, a.classes)
    if a.weights:
        load_weights(model, a.weights)
    scripted = torch.jit.script(model.float())
    # Written beside the target and renamed: a reader never sees half a file.
    tmp = f"{a.out}.tmp{os.getpid()}"
    scripted.save(tmp)
    os.replace(tmp, a.out)
    n = sum(p.numel() for p in model.parameters())
    print(f"wrote {a.out}: {a.model} for {a.input} -> {a.classes} classes, {n} parameters")


if __name__ == "__main__":
    main()
