"""stalesgd.train against `stalesgd train`: the same files byte for byte, equal DataFrames, the
CLI's messages for bad options, Ctrl-C (docs/python.md)."""

import _thread
import json
import os
import re
import threading

import numpy as np
import pandas as pd
import pytest

import stalesgd

# A short virtual-clock run: its outputs are a function of the options alone.
OPTIONS = {"model": "softmax", "rule": "k-async", "k": 2, "workers": 4,
           "delay": "exp:mean=10ms", "clock": "virtual", "time": "1s", "eval_every": "0.25s",
           "lr": 0.1, "seed": 3}
TABLES = ("updates.csv", "gradients.csv", "evals.csv", "workers.csv")


# Keys that are flags of train's own, not race-file keys: the CLI takes them as flags.
FLAGS = {"out", "force", "sequential", "no_progress", "save_model", "checkpoint_every"}


def cli_args(options):
    return [f"--{k.replace('_', '-')}={v}" if k in FLAGS
            else f"--set={k}={stalesgd._options.text(k, v)}" for k, v in options.items()]


def test_virtual_clock_run_writes_the_cli_files(tmp_path, run_cli):
    run_cli("train", *cli_args(OPTIONS), "--no-progress", "--out", str(tmp_path / "cli"))
    result = stalesgd.train(OPTIONS, out=tmp_path / "py", progress=False)
    assert result.dir == tmp_path / "py"
    for name in TABLES:
        cli_bytes = (tmp_path / "cli" / name).read_bytes()
        assert (tmp_path / "py" / name).read_bytes() == cli_bytes, name
        assert cli_bytes.count(b"\n") > 1, f"{name} has no rows"
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    py_summary = json.loads((tmp_path / "py" / "summary.json").read_text())
    # Only the provenance (times, command line) tells them apart.
    for summary in (cli_summary, py_summary):
        del summary["provenance"]
    assert py_summary == cli_summary
    assert result.summary["config"] == cli_summary["config"]
    # In memory: the tables the CLI's files hold.
    for table in ("updates", "gradients", "evals", "workers"):
        pd.testing.assert_frame_equal(getattr(result, table),
                                      pd.read_csv(tmp_path / "cli" / f"{table}.csv"))
    assert result.stop_reason == "time" and result.error == ""
    # And stalesgd.load gives the same back from the folder.
    loaded = stalesgd.load(tmp_path / "cli")
    pd.testing.assert_frame_equal(loaded.evals, result.evals)


def test_save_model_writes_the_cli_file(tmp_path, run_cli):
    # The final parameters, byte for byte the CLI's --save-model of the same run.
    run_cli("train", *cli_args(OPTIONS), "--no-progress", "--save-model",
            str(tmp_path / "cli.npy"))
    stalesgd.train(OPTIONS, save_model=tmp_path / "py.npy", progress=False)
    assert (tmp_path / "py.npy").read_bytes() == (tmp_path / "cli.npy").read_bytes()
    assert np.load(tmp_path / "py.npy").shape == (784 * 10 + 10,)
    # A path it cannot write (under a file) is refused before anything is trained, in the CLI's
    # words.
    (tmp_path / "file").write_text("")
    status, _, err = run_cli("train", *cli_args(OPTIONS), "--no-progress", "--save-model",
                             str(tmp_path / "file" / "w.npy"), check=False)
    assert status != 0
    message = err.strip().removeprefix("stalesgd: error: ")
    with pytest.raises(stalesgd.Error) as e:
        stalesgd.train(OPTIONS, save_model=tmp_path / "file" / "w.npy", progress=False)
    assert str(e.value) == message


def test_without_out_nothing_is_left(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    result = stalesgd.train(OPTIONS, progress=False)
    assert result.dir is None and len(result.updates) > 10
    assert list(tmp_path.iterdir()) == []


def test_keyword_options_and_config_merge():
    with pytest.raises(stalesgd.Error, match=r"^--set lr=\.\.\.: lr is given twice; give it once$"):
        stalesgd.train({"lr": 0.1}, lr=0.2)


@pytest.mark.parametrize("options", [
    {"workers": 2.5, "time": "1s"},               # a float for an integer
    {"time": "5"},                                # a duration without its unit
    {"rule": "k-async", "k": 9, "workers": 4, "time": "1s"},  # a value the run refuses
    {"lr": [0.1, 0.2], "time": "1s"},             # a sweep
    {"clock": "virtual"},                          # no budget
    {"out": "", "time": "1s"},                     # an empty folder name
])
def test_a_bad_option_raises_the_cli_message(options, run_cli):
    status, _, stderr = run_cli("train", *cli_args(options), "--no-progress", check=False)
    assert status == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stalesgd: error: "), stderr
    with pytest.raises(stalesgd.Error) as e:
        stalesgd.train(options, progress=False)
    assert str(e.value) == lines[0][len("stalesgd: error: "):]
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("key,value,shown,closest", [
    ("local_step", 3, "3", "local_steps"),
    ("lr_rul", "fixed", "'fixed'", "lr_rule"),              # a race-file key
    ("checkpoint_evry", "1s", "'1s'", "checkpoint_every"),  # train's own flags are keys too
    ("no_progres", True, "True", "no_progress"),
    ("resum", "runs/x", "'runs/x'", "resume"),
    ("dat", [1, 2], "[1,2]", "data"),                       # and its own keyword arguments
])
def test_an_unknown_keyword_names_the_closest_option(key, value, shown, closest):
    with pytest.raises(stalesgd.Error) as e:
        stalesgd.train({key: value}, time="1s", progress=False)
    assert str(e.value) == (
        f"train({key}={shown}): unknown option '{key}' (did you mean '{closest}'?); the options "
        "are the option table's keys, as `stalesgd train --help` lists them (docs/cli.md)")
    assert isinstance(e.value, ValueError)


def test_an_unknown_key_far_from_any_is_named_alone(run_cli):
    with pytest.raises(stalesgd.Error, match=r"^train\(zzzzzzzz='it\\'s'\): unknown option "
                                             r"'zzzzzzzz'; the options are"):
        stalesgd.train(zzzzzzzz="it's", time="1s", progress=False)
    # The CLI's --set keeps its own phrasing for the same key.
    _, _, stderr = run_cli("train", "--set", "lr_rul=fixed", "--time", "1s", check=False)
    assert "--set lr_rul=fixed: unknown key 'lr_rul' (did you mean 'lr_rule'?)" in stderr


def test_a_path_that_is_no_path_raises():
    for key in ("out", "resume", "save_model"):
        with pytest.raises(stalesgd.Error, match=rf"^train\({key}=5\): a int is no path"):
            stalesgd.train(OPTIONS, progress=False, **{key: 5})


def test_a_value_without_a_text_raises():
    with pytest.raises(stalesgd.Error, match=r"a dict is no option value"):
        stalesgd.train(lr={"a": 1})


def test_ctrl_c_stops_the_run_with_its_outputs_written(tmp_path):
    # A real-clock run long enough to be cut; Ctrl-C as the terminal sends it, to the main thread.
    options = dict(OPTIONS, clock="real", time="60s", delay="exp:mean=5ms")
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            stalesgd.train(options, out=tmp_path / "cut", progress=False)
    finally:
        timer.cancel()
    summary = json.loads((tmp_path / "cut" / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["stop_reason"] == "interrupted"
    assert summary["wall_s"] < 30
    cut = stalesgd.load(tmp_path / "cut")
    assert len(cut.updates) > 0 and len(cut.evals) > 0
    # Nothing half-written blocks the next call: the folder is free again (with force).
    again = stalesgd.train(OPTIONS, out=tmp_path / "cut", force=True, progress=False)
    assert again.stop_reason == "time"


def test_a_folder_holding_a_run_is_refused_as_by_the_cli(tmp_path, run_cli):
    stalesgd.train(OPTIONS, out=tmp_path / "a", progress=False)
    status, _, stderr = run_cli("train", *cli_args(OPTIONS), "--no-progress", "--out",
                                str(tmp_path / "a"), check=False)
    assert status != 0
    with pytest.raises(stalesgd.Error) as e:
        stalesgd.train(OPTIONS, out=tmp_path / "a", progress=False)
    assert str(e.value) == stderr.strip().splitlines()[-1][len("stalesgd: error: "):]


def test_a_delay_as_per_worker_arrays_is_a_trace(tmp_path):
    import numpy as np
    # Worker 1 is ten times slower: it delivers a tenth of the gradients.
    delays = [np.full(5, 0.001), np.full(5, 0.01)]
    options = dict(OPTIONS, workers=2, k=1, rule="async")
    options["delay"] = delays
    result = stalesgd.train(options, progress=False)
    counts = result.gradients.groupby("worker").size()
    assert 8 < counts[0] / counts[1] < 12, counts
    # Kept in the run's folder, under a name its content gives: the run can be run again.
    kept = stalesgd.train(options, out=tmp_path / "kept", progress=False)
    delay = kept.summary["config"]["delay"]
    path = re.fullmatch(r"trace:(.*/delays-[0-9a-f]{12}\.csv)", delay).group(1)
    assert os.path.dirname(path) == str((tmp_path / "kept").resolve())
    assert open(path).read().splitlines()[:2] == ["w0[s],w1[s]", "0.001,0.01"]
    pd.testing.assert_frame_equal(kept.gradients, result.gradients)
    with pytest.raises(stalesgd.Error, match=r"^delay: the workers' arrays have \[2, 3\]"):
        stalesgd.train(dict(options, delay=[[0.1, 0.2], [0.1, 0.2, 0.3]]), progress=False)
    with pytest.raises(stalesgd.Error, match=r"^delay: worker 0's durations hold -1.0"):
        stalesgd.train(dict(options, delay=[[-1.0]]), progress=False)


def test_ctrl_c_stops_a_race_and_the_next_call_runs(tmp_path):
    experiment = {"model": "softmax", "workers": 2, "clock": "real", "time": "60s",
                  "delay": "exp:mean=5ms",
                  "run": [{"label": "sync", "rule": "sync"}, {"label": "async", "rule": "async"}]}
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            stalesgd.race(experiment, out=tmp_path / "race")
    finally:
        timer.cancel()
    summary = json.loads((tmp_path / "race" / "sync" / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    again = stalesgd.race(dict(experiment, clock="virtual", time="0.5s"), out=tmp_path / "race",
                          force=True)
    assert list(again.results["rule"]) == ["sync", "async"]


def test_progress_is_shown_while_it_runs(capsys):
    # tqdm's bar (tools/setup.sh python installs python3-tqdm) on stderr, rewritten in place,
    # with the run's iteration and clock after it.
    options = dict(OPTIONS, clock="real", time="0.5s")
    stalesgd.train(options, progress=True)
    err = capsys.readouterr().err
    assert "\r" in err and "100%" in err and re.search(r"it \d+  t 0\.\d\ds", err), err
