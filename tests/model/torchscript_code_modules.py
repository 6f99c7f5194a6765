#!/usr/bin/python3
"""Modules whose code touches files, for tests/model/torchscript_code_test.cpp: a TorchScript
file is code, and stalesgd refuses one that reads or writes files (docs/models.md, "A module is
code").

usage:
  torchscript_code_modules.py NAME --target FILE --out PATH
      NAME: reads-file (a submodule's forward reads FILE with torch.from_file),
            writes-on-load (__setstate__, which torch.jit.load runs, writes FILE with
            torch.save), spaced (writes-on-load with its code record edited by hand to
            "torch . save (": the TorchScript parser takes it)
  torchscript_code_modules.py load PATH
      torch.jit.load(PATH), as a PyTorch user would: shows what loading alone does
"""
import argparse
import os
import zipfile
from typing import Tuple

import torch
from torch import nn


class Peek(nn.Module):
    def __init__(self, target: str):
        super().__init__()
        self.target = target

    def forward(self, x):
        t = torch.from_file(self.target, shared=False, size=4, dtype=torch.uint8)
        return x + 0 * t.sum()


class ReadsFile(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.peek = Peek(target)
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(self.peek(x).flatten(1))


class WritesOnLoad(nn.Module):
    """A linear layer whose own state is restored by code: __getstate__ and __setstate__, the
    way a module with custom serialisation writes them."""

    def __init__(self, target: str):
        super().__init__()
        self.w = nn.Parameter(torch.randn(10, 784) * 0.01)
        self.b = nn.Parameter(torch.zeros(10))
        self.target = target

    def forward(self, x):
        return x.flatten(1) @ self.w.t() + self.b

    @torch.jit.export
    def __getstate__(self) -> Tuple[torch.Tensor, torch.Tensor, str, bool]:
        return (self.w, self.b, self.target, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[torch.Tensor, torch.Tensor, str, bool]) -> None:
        self.w = state[0]
        self.b = state[1]
        self.target = state[2]
        self.training = state[3]
        torch.save(torch.zeros(1), self.target)


def respaced(path):
    """The archive at `path` with "torch.save(" written "torch . save (" in its code records."""
    tmp = f"{path}.tmp{os.getpid()}"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".py"):
                edited = data.replace(b"torch.save(", b"torch . save (")
                assert edited != data or b"torch.save" not in data
                data = edited
            dst.writestr(info, data)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name")
    ap.add_argument("path", nargs="?")
    ap.add_argument("--target")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.name == "load":
        torch.jit.load(a.path)
        return
    torch.manual_seed(0)
    module = ReadsFile(a.target) if a.name == "reads-file" else WritesOnLoad(a.target)
    torch.jit.script(module).save(a.out)
    if a.name == "spaced":
        respaced(a.out)


if __name__ == "__main__":
    main()
