#!/usr/bin/python3
"""The PyTorch side of tests/model/torchscript_train_test.cpp: modules written the way PyTorch
users write them, PyTorch's own training loop on given minibatches, and PyTorch's test error of
an exported model.

usage:
  torchscript_train_modules.py module NAME --out PATH
      NAME: bn-cnn (Conv-BatchNorm-ReLU-MaxPool twice, Dropout, Linear: an nn.Sequential),
            bn-cnn-named (the same layers as attributes of an nn.Module, other names),
            bn-cnn-wide (bn-cnn with 12 channels, other shapes), buffer-grows (a buffer that
            changes shape in train mode), train-fails (a forward that fails in train mode
            only), fails-later (train mode fails on minibatches of more than 2), batch-of-two
            (a view with a hard-coded batch size of 2, in both modes: right only for stalesgd's
            two-sample check), state-dict (torch.save of bn-cnn's state_dict: not a module)
  torchscript_train_modules.py loop --module PATH --batches DIR --lr LR --out PATH
      PyTorch's loop: for each minibatch in DIR (features.f32, labels.u8, seeds.u64, steps.txt),
      torch.manual_seed(seed >> 1), forward in train mode, cross-entropy, backward, p -= lr g;
      writes the parameters then the buffers (stalesgd's flat vector) as float32
  torchscript_train_modules.py score --data-dir DIR (--module PATH | --state-dict PATH)
      the test error in eval mode, of a TorchScript file or of a state_dict loaded into a fresh
      bn-cnn with load_state_dict; prints it with its error count
"""
import argparse
import os

import numpy as np
import torch
from torch import nn


def bn_cnn(channels=8):
    return nn.Sequential(
        nn.Conv2d(1, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(channels, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.3), nn.Linear(16 * 7 * 7, 10))


class NamedCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        x = torch.max_pool2d(torch.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


class BufferGrows(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
        self.register_buffer("seen", torch.zeros(1))

    def forward(self, x):
        if self.training:
            self.seen = torch.cat([self.seen, torch.ones(1)])
        return self.fc(x.flatten(1))


class TrainFails(nn.Module):
    """Fails in train mode on minibatches of more than `more_than` samples: 0 fails stalesgd's
    probe (two samples) at once, 2 passes it and fails on the first larger minibatch."""

    def __init__(self, more_than=0):
        super().__init__()
        self.fc = nn.Linear(784, 10)
        self.more_than = more_than

    def forward(self, x):
        h = x.flatten(1)
        if self.training and x.size(0) > self.more_than:
            h = h.view(-1, 3)
        return self.fc(h)


class BatchOfTwo(nn.Module):
    """Written for a batch of 2: the view hard-codes it, so the check's two samples pass and
    every other batch fails, in train and eval mode alike."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x.view(2, 784))


def save(module, path):
    tmp = f"{path}.tmp{os.getpid()}"
    torch.jit.script(module).save(tmp)
    os.replace(tmp, path)


def make_module(name, out):
    torch.manual_seed(0)
    if name == "state-dict":
        torch.save(bn_cnn().state_dict(), out)
        return
    module = {"bn-cnn": bn_cnn, "bn-cnn-named": NamedCnn, "bn-cnn-wide": lambda: bn_cnn(12),
              "buffer-grows": BufferGrows, "train-fails": TrainFails,
              "fails-later": lambda: TrainFails(2), "batch-of-two": BatchOfTwo}[name]()
    save(module, out)


def loop(a):
    torch.set_num_threads(1)
    model = torch.jit.load(a.module)
    model.train()
    steps, batch = (int(v) for v in open(os.path.join(a.batches, "steps.txt")).read().split())
    x = np.fromfile(os.path.join(a.batches, "features.f32"), dtype="<f4")
    x = torch.from_numpy(x.reshape(steps, batch, 1, 28, 28).copy())
    y = np.fromfile(os.path.join(a.batches, "labels.u8"), dtype=np.uint8).astype(np.int64)
    y = torch.from_numpy(y.reshape(steps, batch))
    seeds = np.fromfile(os.path.join(a.batches, "seeds.u64"), dtype="<u8")
    params = list(model.parameters())
    for s in range(steps):
        torch.manual_seed(int(seeds[s]) >> 1)
        loss = nn.functional.cross_entropy(model(x[s]), y[s])
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(a.lr * g)
    flat = [p.detach().reshape(-1).float() for p in model.parameters()]
    flat += [b.reshape(-1).float() for b in model.buffers()]
    torch.cat(flat).numpy().astype("<f4").tofile(a.out)


def mnist_test(data_dir):
    d = os.path.join(data_dir, "mnist")
    x = np.frombuffer(open(os.path.join(d, "t10k-images-idx3-ubyte"), "rb").read(), np.uint8,
                      offset=16)
    y = np.frombuffer(open(os.path.join(d, "t10k-labels-idx1-ubyte"), "rb").read(), np.uint8,
                      offset=8)
    return (torch.from_numpy(x.reshape(-1, 1, 28, 28).astype(np.float32) / 255),
            torch.from_numpy(y.astype(np.int64)))


def score(a):
    if a.module:
        model = torch.jit.load(a.module)
    else:
        model = bn_cnn()
        model.load_state_dict(torch.load(a.state_dict))
    model.eval()
    x, y = mnist_test(a.data_dir)
    wrong = 0
    with torch.no_grad():
        for i in range(0, len(x), 500):
            wrong += int((model(x[i:i + 500]).argmax(1) != y[i:i + 500]).sum())
    print(f"test error {wrong / len(x):.6f} ({wrong} of {len(x)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("module")
    m.add_argument("name")
    m.add_argument("--out", required=True)
    lp = sub.add_parser("loop")
    lp.add_argument("--module", required=True)
    lp.add_argument("--batches", required=True)
    lp.add_argument("--lr", type=float, required=True)
    lp.add_argument("--out", required=True)
    sc = sub.add_parser("score")
    sc.add_argument("--data-dir", required=True)
    sc.add_argument("--module")
    sc.add_argument("--state-dict")
    a = ap.parse_args()
    if a.command == "module":
        make_module(a.name, a.out)
    elif a.command == "loop":
        loop(a)
    else:
        score(a)


if __name__ == "__main__":
    main()
