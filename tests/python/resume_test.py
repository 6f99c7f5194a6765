"""stalesgd.train(resume=DIR) against `stalesgd train --resume DIR`: a run cut by Ctrl-C (from
Python, or the CLI's run killed) and resumed writes the uninterrupted run's files byte for byte;
a finished run, a conflicting option or other arrays are refused with the CLI's one line
(docs/python.md, "Resume")."""

import _thread
import json
import os
import signal
import subprocess
import time

import pytest

import stalesgd

from data_test import blobs
from train_test import cli_args

# Long enough on the virtual clock (about a second of real time) that the cut lands mid-run.
OPTIONS = {"model": "softmax", "rule": "k-async", "k": 2, "workers": 4,
           "delay": "exp:mean=10ms", "clock": "virtual", "time": "30s", "eval_every": "2s",
           "lr": 0.1, "seed": 3, "checkpoint_every": "1s"}
JOURNAL = ("updates.csv", "gradients.csv", "evals.csv")


class CtrlC:
    """A progress bar that presses Ctrl-C at the run's first progress sample (a tenth of a second
    in), so the cut always lands while the run goes, wherever the machine's load puts it."""

    def __init__(self, *args, **kwargs):
        self.pressed = False

    def __call__(self, sample):
        if not self.pressed:
            self.pressed = True
            _thread.interrupt_main()

    def close(self, complete=False):
        pass


def cut(monkeypatch, options, data=None):
    """stalesgd.train(**options) stopped by Ctrl-C mid-run; its summary.json."""
    with monkeypatch.context() as m:
        m.setattr(stalesgd._train, "Progress", CtrlC)
        with pytest.raises(KeyboardInterrupt):
            stalesgd.train(options, data=data, progress=True)
    folder = options.get("out") or options["resume"]
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["status"] == "interrupted", summary["status"]
    assert summary["stop_reason"] == "interrupted"
    return summary


def assert_same_run(a, b):
    for name in JOURNAL + ("workers.csv",):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    summaries = [json.loads((d / "summary.json").read_text()) for d in (a, b)]
    for s in summaries:
        del s["provenance"]  # the processes, their times and host
    assert summaries[0] == summaries[1]


def cli_message(run_cli, *args):
    status, _, stderr = run_cli("train", "--no-progress", *args, check=False)
    lines = stderr.strip().splitlines()
    assert status != 0 and len(lines) == 1 and lines[0].startswith("stalesgd: error: "), stderr
    return status, lines[0][len("stalesgd: error: "):]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("uninterrupted") / "run"
    stalesgd.train(OPTIONS, out=out, save_model=out.parent / "final.npy", progress=False)
    return out


def test_a_run_cut_by_ctrl_c_twice_and_resumed_is_the_uninterrupted_run(
        uninterrupted, tmp_path, monkeypatch):
    out = tmp_path / "cut"
    first = cut(monkeypatch, dict(OPTIONS, out=out))
    # Ctrl-C stops a resumed run as it stops a new one: outputs written, a checkpoint at the stop.
    second = cut(monkeypatch, {"resume": out})
    assert first["iterations"] < second["iterations"]
    # save_model is where the final parameters go, no part of the run: given only now, it is
    # taken, and they are the uninterrupted run's.
    result = stalesgd.train(resume=out, save_model=tmp_path / "final.npy", progress=False)
    assert result.dir == out and result.stop_reason == "time" and result.error == ""
    assert_same_run(uninterrupted, out)
    assert (tmp_path / "final.npy").read_bytes() == (uninterrupted.parent / "final.npy").read_bytes()
    assert len(result.updates) == result.summary["iterations"]
    assert result.summary["config"] == json.loads(
        (uninterrupted / "summary.json").read_text())["config"]


def test_a_run_the_cli_killed_resumes_from_python(uninterrupted, tmp_path, cli, run_cli):
    out = tmp_path / "killed"
    args = [cli, "train", *cli_args(OPTIONS), "--no-progress", "--out", str(out)]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(1500):
            if (out / "checkpoint.bin").exists() or p.poll() is not None:
                break
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait()
    assert p.returncode == -signal.SIGKILL, "the run ended before it was killed"
    assert json.loads((out / "summary.json").read_text())["status"] == "running"
    listing = sorted(os.listdir(out))
    journal = [(out / name).read_bytes() for name in JOURNAL]

    # Options beside resume: each refused as the CLI refuses it, the folder unchanged.
    messages = []
    for given, flags in [({"time": "90s"}, ["--time", "90s"]),
                         ({"sequential": True}, ["--sequential"]),
                         ({"out": tmp_path / "elsewhere"},
                          ["--out", str(tmp_path / "elsewhere")]),
                         ({"force": True}, ["--force"])]:
        status, message = cli_message(run_cli, "--resume", str(out), *flags)
        assert status == 2, message
        with pytest.raises(stalesgd.Error) as e:
            stalesgd.train(resume=out, progress=False, **given)
        assert str(e.value) == message
        messages.append(message)
    assert messages[0] == ("--time conflicts with the run's --time 30s: --resume continues a "
                           "run with the flags in its checkpoint")
    assert messages[1].startswith("--sequential conflicts with the run's --sequential (not given)")
    assert messages[2].endswith("a resumed run writes into its own folder")
    assert messages[3].startswith("--force and --resume exclude each other: ")
    assert sorted(os.listdir(out)) == listing
    assert [(out / name).read_bytes() for name in JOURNAL] == journal

    # data_dir may differ (the data may have moved), the same out and the options it ran with
    # may be given; progress options are the caller's.
    result = stalesgd.train(resume=out, out=out, data_dir="data", lr=0.1, workers=4,
                            progress=False)
    assert result.stop_reason == "time"
    assert_same_run(uninterrupted, out)


def test_a_finished_run_or_no_folder_is_refused_as_by_the_cli(uninterrupted, tmp_path, run_cli):
    for folder in (uninterrupted, tmp_path / "none"):
        status, message = cli_message(run_cli, "--resume", str(folder))
        assert status == 1
        with pytest.raises(stalesgd.Error) as e:
            stalesgd.train(resume=folder, progress=False)
        assert str(e.value) == message
    assert message.endswith("no such folder; give the --out of the run to continue")
    assert not (tmp_path / "none").exists()
    with pytest.raises(stalesgd.Error, match=r"holds a finished run \(summary.json says "
                                             r"complete\); nothing to resume$"):
        stalesgd.train(resume=uninterrupted, progress=False)


def test_numpy_arrays_resume_when_they_are_the_runs(tmp_path, monkeypatch):
    data = blobs(600, 1) + blobs(200, 2)
    options = {"model": "softmax", "rule": "async", "workers": 3, "clock": "virtual",
               "delay": "exp:mean=1ms", "time": "20s", "eval_every": "1s", "lr": 0.2,
               "batch": 16, "checkpoint_every": "0.5s"}
    whole = stalesgd.train(options, data=data, out=tmp_path / "whole", progress=False)
    assert whole.stop_reason == "time"
    out = tmp_path / "cut"
    cut(monkeypatch, dict(options, out=out), data=data)
    with pytest.raises(stalesgd.Error, match=r"^resume .*: the run trained on NumPy arrays; "
                                             r"give them again as data=$"):
        stalesgd.train(resume=out, progress=False)
    other = blobs(600, 3) + blobs(200, 2)
    with pytest.raises(stalesgd.Error, match=r"^data=: the arrays are not the ones the run in "):
        stalesgd.train(resume=out, data=other, progress=False)
    stalesgd.train(resume=out, data=data, progress=False)
    assert_same_run(tmp_path / "whole", out)
