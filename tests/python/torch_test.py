"""A torch.nn.Module passed as the model: scripted and trained through --model torchscript:PATH,
its file kept in the run's folder under a name its content gives, so that the run resumes without
it; a module that does not script is one message (docs/python.md, "PyTorch modules")."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import stalesgd

from data_test import OPTIONS, blobs
from resume_test import cut

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


def mlp(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Flatten(), nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))


DATA = blobs(600, 1) + blobs(200, 2)


def test_a_module_is_kept_in_the_run_folder_and_a_refusal_leaves_none(tmp_path):
    out = tmp_path / "run"
    result = stalesgd.train(TORCH_OPTIONS, model=mlp(0), data=DATA, out=out, progress=False)
    model = result.summary["config"]["model"]
    path = Path(re.fullmatch(r"torchscript:(.*/model-[0-9a-f]{12}\.pt)", model).group(1))
    assert path.parent == out.resolve() and path.is_file()
    assert model in (out / "run.toml").read_text()
    listing = sorted(os.listdir(out))
    # The same module again finds its file: nothing is added.
    again = stalesgd.train(TORCH_OPTIONS, model=mlp(0), data=DATA, out=out, force=True,
                           progress=False)
    assert again.summary["config"]["model"] == model
    assert sorted(os.listdir(out)) == listing
    # Refused calls change nothing: another module into the folder that holds a run; a bad
    # option into a folder not there yet.
    with pytest.raises(stalesgd.Error, match=r"already holds a run"):
        stalesgd.train(TORCH_OPTIONS, model=mlp(1), data=DATA, out=out, progress=False)
    assert sorted(os.listdir(out)) == listing
    with pytest.raises(stalesgd.Error, match=r"^unknown --lr-rule 'bogus'"):
        stalesgd.train(TORCH_OPTIONS, model=mlp(1), data=DATA, out=tmp_path / "new" / "run",
                       lr_rule="bogus", progress=False)
    assert not (tmp_path / "new").exists()


# Many class constants (Conv2d's, BatchNorm2d's), which TorchScript writes in the order of a
# Python set: another hash seed, another order.
SCRIPTED = """
import torch
from torch import nn
from stalesgd._torch import script_module
torch.manual_seed(0)
content, digest = script_module(nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                                              nn.Flatten(), nn.Linear(4, 3)))
import hashlib
print(digest, hashlib.sha256(content).hexdigest())
"""


def test_the_same_module_has_one_name_in_every_process():
    runs = [subprocess.run([sys.executable, "-c", SCRIPTED], capture_output=True, text=True,
                           check=True, env=dict(os.environ, PYTHONHASHSEED=str(seed)))
            for seed in (1, 2)]
    (digest_a, bytes_a), (digest_b, bytes_b) = (r.stdout.split() for r in runs)
    assert bytes_a != bytes_b  # the files differ in their constants' order ...
    assert digest_a == digest_b  # ... and are one module


def test_a_module_run_resumes_without_the_module(tmp_path, monkeypatch):
    options = {k: v for k, v in TORCH_OPTIONS.items() if k != "iterations"}
    options.update(time="3s", checkpoint_every="0.5s")
    whole = stalesgd.train(options, model=mlp(0), data=DATA, out=tmp_path / "whole",
                           progress=False)
    out = tmp_path / "cut"
    cut(monkeypatch, dict(options, model=mlp(0), out=out), data=DATA)
    # Given again, the module is the file the run records; not given, that file is read.
    cut(monkeypatch, {"resume": out, "model": mlp(0)}, data=DATA)
    resumed = stalesgd.train(resume=out, data=DATA, progress=False)
    assert resumed.stop_reason == whole.stop_reason == "time"
    for name in ("updates.csv", "gradients.csv", "evals.csv", "workers.csv"):
        assert (out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    assert len(list(out.glob("model-*.pt"))) == 1
    summaries = [json.loads((d / "summary.json").read_text()) for d in (tmp_path / "whole", out)]
    for s in summaries:
        del s["provenance"]
        s["config"]["model"] = os.path.basename(s["config"]["model"])  # the folders differ
    assert summaries[0] == summaries[1]
