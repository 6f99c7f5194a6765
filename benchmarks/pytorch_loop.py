#!/usr/bin/python3
"""PyTorch's own training loop for a TorchScript file: the baseline of
benchmarks/torchscript_step.sh. Loads the module stalesgd trains with --model torchscript:PATH,
then runs plain SGD in train mode on random MNIST minibatches (index, forward, cross-entropy,
backward, optimizer step), single-threaded, and prints `pytorch <seconds per step>` over
--steps steps after --warmup steps.

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 benchmarks/pytorch_loop.py MODEL.pt --batch 64
"""
import argparse
import time

import torch
import torch.nn.functional as F

from pytorch_kernels import mnist_batch  # the same reader of the MNIST files (this folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--data-dir", default="data")
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    x, y = mnist_batch(a.data_dir, 60000)  # the whole training split
    module = torch.jit.load(a.model)
    module.train()  # as stalesgd runs it: dropout on, batch-norm statistics updated
    opt = torch.optim.SGD(module.parameters(), lr=a.lr)
    for step in range(a.warmup + a.steps):
        if step == a.warmup:
            start = time.perf_counter()
        idx = torch.randint(0, x.shape[0], (a.batch,))
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(module(x[idx]), y[idx]).backward()
        opt.step()
    print(f"pytorch {(time.perf_counter() - start) / a.steps:.9f}")


if __name__ == "__main__":
    main()
