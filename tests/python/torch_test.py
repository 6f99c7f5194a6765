"""A torch.nn.Module passed as the model: scripted and trained through --model torchscript:PATH;
a module that does not script is one message (docs/python.md, "PyTorch modules")."""

import numpy as np
import pytest
import torch
from torch import nn

import stalesgd

from data_test import OPTIONS, blobs

# The data tests' options, the model given as a module instead.
TORCH_OPTIONS = {k: v for k, v in OPTIONS.items() if k != "model"}


def test_a_torch_module_trains():
    torch.manual_seed(0)
    module = nn.Sequential(nn.Flatten(), nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    x, y = blobs(600, 1)
    xt, yt = blobs(200, 2)
    result = stalesgd.train(TORCH_OPTIONS, model=module, data=(x, y, xt, yt), progress=False)
    assert result.stop_reason == "iterations"
    assert result.summary["config"]["model"].startswith("torchscript:")
    assert result.evals["test_error"].iloc[-1] < 0.1 < result.evals["test_error"].iloc[0]


class NotScriptable(nn.Module):
    def forward(self, x):
        return np.asarray(x)  # NumPy inside forward: TorchScript cannot compile it


def test_a_module_that_does_not_script_raises_one_message():
    x, y = blobs(60, 1)
    with pytest.raises(stalesgd.Error, match=r"^model: NotScriptable does not script with "
                                             r"torch.jit.script \(") as e:
        stalesgd.train(TORCH_OPTIONS, model=NotScriptable(), data=(x, y, x, y), progress=False)
    assert "\n" not in str(e.value)
    with pytest.raises(stalesgd.Error, match=r"^model: a int is no model"):
        stalesgd.train(TORCH_OPTIONS, model=3, data=(x, y, x, y), progress=False)
