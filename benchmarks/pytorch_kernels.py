#!/usr/bin/python3
"""PyTorch baseline for benchmarks/kernel_bench.cpp: the same four architectures, one SGD step
(forward + cross-entropy + backward + w -= lr * g) on a fixed batch, single thread, median time.

Run with Debian's python3-torch and single-threaded OpenBLAS (benchmarks/kernel_bench.sh does):
  OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SKYLAKEX /usr/bin/python3 benchmarks/pytorch_kernels.py \
      --model mlp --batch 64 --reps 200
Prints one line: `pytorch <model> <batch> <median us/step>`.
The architectures mirror src/model/{softmax,mlp,lenet,cifar_cnn}.cpp layer for layer (stalesgd
flattens conv features in HWC order, PyTorch in CHW: a permutation of fc1's inputs, same model).
"""
import argparse
import os
import statistics
import struct
import time

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


def build(name, hidden):
    if name == "softmax":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 10)), (1, 28, 28)
    if name == "mlp":
        layers, prev = [nn.Flatten()], 784
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.ReLU()]
            prev = h
        layers.append(nn.Linear(prev, 10))
        return nn.Sequential(*layers), (1, 28, 28)
    if name == "lenet":
        return nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, 10)), (1, 28, 28)
    if name == "cifar-cnn":
        return nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(1024, 64), nn.ReLU(), nn.Linear(64, 10)), (3, 32, 32)
    raise SystemExit(f"pytorch_kernels.py: unknown model '{name}'")


def mnist_batch(data_dir, batch):
    """The first `batch` MNIST training images (the same fixed batch kernel_bench.cpp uses)."""
    path = os.path.join(data_dir, "mnist", "train-images-idx3-ubyte")
    with open(path, "rb") as f:
        _, count, rows, cols = struct.unpack(">IIII", f.read(16))
        pixels = np.frombuffer(f.read(batch * rows * cols), dtype=np.uint8)
    with open(os.path.join(data_dir, "mnist", "train-labels-idx1-ubyte"), "rb") as f:
        f.read(8)
        labels = np.frombuffer(f.read(batch), dtype=np.uint8)
    x = torch.from_numpy(pixels.astype(np.float32) / 255.0).reshape(batch, 1, rows, cols)
    return x, torch.from_numpy(labels.astype(np.int64))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--hidden", default="128")
    ap.add_argument("--data-dir", default="data")
    ap.add_argument("--dense-input", action="store_true",
                    help="add 1e-3 to every MNIST pixel (as kernel_bench --dense-input)")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(1)
    model, shape = build(args.model, [int(h) for h in args.hidden.split(",")])
    if shape == (1, 28, 28):
        x, y = mnist_batch(args.data_dir, args.batch)
        if args.dense_input:
            x = x + 1e-3
    else:  # CIFAR-shaped random data, as in kernel_bench.cpp
        g = torch.Generator().manual_seed(1)
        x = torch.rand((args.batch,) + shape, generator=g)
        y = torch.randint(0, 10, (args.batch,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=True)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(max(10, args.reps // 10)):
        step()
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter_ns()
        step()
        times.append(time.perf_counter_ns() - t0)
    print(f"pytorch {args.model} {args.batch} {statistics.median(times) / 1000.0:.1f}")


if __name__ == "__main__":
    main()
