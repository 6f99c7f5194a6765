#!/usr/bin/python3
"""Scripts a PyTorch model into a TorchScript file for `stalesgd train --model torchscript:PATH`.

usage: tools/export_model.py {mlp,lenet,cnn,resnet,bn-cnn,layernorm} --out PATH [--input CxHxW]
                             [--classes N] [--hidden 128[,64...]] [--seed S] [--weights FILE]
                             [--trace]

The file holds the module and its initial weights: a TorchScript run starts from them. The
module maps a float32 batch of N x C x H x W samples to N x classes logits; stalesgd adds the
cross-entropy loss (docs/models.md, "TorchScript models"). Models:
  mlp    Flatten, then Linear + ReLU per --hidden size, then Linear to the classes (the built-in
         mlp's architecture)
  lenet  the built-in lenet's architecture for 1x28x28 images (its TorchScript twin)
  cnn    a small CNN for any CxHxW of at least 8x8: two conv3x3-ReLU-maxpool2 blocks (16 and 32
         channels), a 64-unit ReLU layer and the classifier
The zoo, models written the way PyTorch users write them (docs/models.md, "A zoo"):
  resnet     torchvision's ResNet with one BasicBlock per stage (ResNet(BasicBlock, [1, 1, 1, 1]),
             widths 64 to 512) and conv1 replaced by a 7x7 stride-2 convolution of the data set's
             channels, as is done for MNIST; needs python3-torchvision (tools/setup.sh torch)
  bn-cnn     an nn.Sequential of two Conv-BatchNorm-ReLU-MaxPool blocks (32 and 64 channels),
             a 128-unit ReLU layer, Dropout(0.5) and the classifier
  layernorm  an nn.Module of its own: 7x7 patches (4x4 where H or W is no multiple of 7)
             embedded in 64 channels, one MLP-Mixer block (token and channel MLPs, each after a
             LayerNorm, with residuals), a final LayerNorm, mean over the patches and the
             classifier
--trace: torch.jit.trace on an example batch instead of torch.jit.script. A trace keeps the
mode it was traced in (a traced BatchNorm or Dropout ignores train() and eval()), so models
with either are refused; the trace is checked on a batch of another size.
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


def resnet(shape, classes):
    try:
        from torchvision.models.resnet import BasicBlock, ResNet
    except ImportError:
        sys.exit("export_model.py: resnet needs torchvision; install python3-torchvision "
                 "(tools/setup.sh torch)")
    model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=classes)
    model.conv1 = nn.Conv2d(shape[0], 64, kernel_size=7, stride=2, padding=3, bias=False)
    return model


def bn_cnn(shape, classes):
    c, h, w = shape
    if h < 4 or w < 4:
        sys.exit(f"export_model.py: bn-cnn needs images of at least 4x4, not {h}x{w}")

    def block(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                nn.MaxPool2d(2)]

    return nn.Sequential(*block(c, 32), *block(32, 64), nn.Flatten(),
                         nn.Linear(64 * (h // 4) * (w // 4), 128), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(128, classes))


class MixerBlock(nn.Module):
    """Token mixing across patches, then channel mixing, each after a LayerNorm, with residuals
    (Tolstikhin et al. 2021, MLP-Mixer)."""

    def __init__(self, patches, dim, token_hidden, channel_hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.tokens = nn.Sequential(nn.Linear(patches, token_hidden), nn.GELU(),
                                    nn.Linear(token_hidden, patches))
        self.norm2 = nn.LayerNorm(dim)
        self.channels = nn.Sequential(nn.Linear(dim, channel_hidden), nn.GELU(),
                                      nn.Linear(channel_hidden, dim))

    def forward(self, x):  # N x patches x dim
        x = x + self.tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channels(self.norm2(x))


class LayerNormMixer(nn.Module):
    def __init__(self, shape, classes, dim=64):
        super().__init__()
        c, h, w = shape
        patch = 7 if h % 7 == 0 and w % 7 == 0 else 4
        if h % patch or w % patch:
            sys.exit(f"export_model.py: layernorm needs H and W multiples of 7 or of 4, "
                     f"not {h}x{w}")
        self.embed = nn.Conv2d(c, dim, patch, stride=patch)
        self.mix = MixerBlock((h // patch) * (w // patch), dim, 64, 128)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)  # N x patches x dim
        return self.head(self.norm(self.mix(x)).mean(dim=1))


def traced(model, shape):
    """torch.jit.trace on a batch of 4 samples in [0, 1], checked on a batch of 3."""
    fixed = [type(m).__name__ for m in model.modules()
             if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.modules.dropout._DropoutNd))]
    if fixed:
        sys.exit(f"export_model.py: --trace would fix {fixed[0]} in the mode it was traced in "
                 "(a traced module ignores train() and eval()); script this model instead")
    model.eval()
    t = torch.jit.trace(model, torch.rand(4, *shape))
    x = torch.rand(3, *shape)
    with torch.no_grad():
        if not torch.allclose(t(x), model(x), rtol=1e-4, atol=1e-5):
            sys.exit("export_model.py: the traced forward depends on the example batch's size; "
                     "script this model instead")
    return t


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
    ap.add_argument("model", choices=["mlp", "lenet", "cnn", "resnet", "bn-cnn", "layernorm"])
    ap.add_argument("--out", required=True, help="the TorchScript file to write")
    ap.add_argument("--input", default="1x28x28", help="one sample's CxHxW (default 1x28x28)")
    ap.add_argument("--classes", type=int, default=10, help="number of classes (default 10)")
    ap.add_argument("--hidden", default="128", help="mlp hidden sizes, e.g. 256,128")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random initial weights")
    ap.add_argument("--weights", help="float32 file of initial weights (see above)")
    ap.add_argument("--trace", action="store_true",
                    help="torch.jit.trace on an example batch instead of torch.jit.script")
    a = ap.parse_args()
    if a.classes < 2:
        sys.exit("export_model.py: --classes must be at least 2")
    torch.manual_seed(a.seed)
    shape = parse_shape(a.input)
    if a.model == "mlp":
        hidden = [int(h) for h in a.hidden.split(",") if h.strip()]
        model = mlp(shape, a.classes, hidden)
    else:
        model = {"lenet": lenet, "cnn": cnn, "resnet": resnet, "bn-cnn": bn_cnn,
                 "layernorm": LayerNormMixer}[a.model](shape, a.classes)
    if a.weights:
        load_weights(model, a.weights)
    model = model.float()
    scripted = traced(model, shape) if a.trace else torch.jit.script(model)
    # Written beside the target and renamed: a reader never sees half a file.
    tmp = f"{a.out}.tmp{os.getpid()}"
    scripted.save(tmp)
    os.replace(tmp, a.out)
    n = sum(p.numel() for p in model.parameters())
    how = ", traced" if a.trace else ""
    print(f"wrote {a.out}: {a.model} for {a.input} -> {a.classes} classes, {n} parameters{how}")


if __name__ == "__main__":
    main()
