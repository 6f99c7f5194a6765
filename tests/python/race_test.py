"""stalesgd.race from a dict against `stalesgd race` on the same experiment, and stalesgd.load
on a race folder (docs/python.md, "Races")."""

import pandas as pd
import pytest

import stalesgd
from stalesgd._race import toml_text

EXPERIMENT = {
    "model": "softmax", "workers": 4, "delay": "exp:mean=10ms", "clock": "virtual",
    "time": "0.5s", "eval_every": "0.25s", "seeds": [1, 2],
    "run": [{"label": "sync", "rule": "sync"},
            {"label": "k-async K=2", "rule": "k-async", "k": 2, "lr": 0.1}],
}


def test_a_race_from_a_dict_is_the_cli_race(tmp_path, run_cli):
    (tmp_path / "race.toml").write_text(toml_text(EXPERIMENT))
    run_cli("race", "--config", str(tmp_path / "race.toml"), "--out", str(tmp_path / "cli"))
    race = stalesgd.race(EXPERIMENT, jobs=2, out=tmp_path / "py")
    assert not race.interrupted
    assert list(race.results["label"]) == ["sync (seed 1)", "sync (seed 2)",
                                           "k-async K=2 (seed 1)", "k-async K=2 (seed 2)"]
    # The virtual clock's runs are the options' alone: the same files as the CLI's race.
    for slug in race.results["slug"]:
        for name in ("updates.csv", "gradients.csv", "evals.csv"):
            assert (tmp_path / "py" / slug / name).read_bytes() == \
                (tmp_path / "cli" / slug / name).read_bytes(), f"{slug}/{name}"
    pd.testing.assert_frame_equal(race.results, pd.read_csv(tmp_path / "cli" / "results.csv"))
    assert len(race.snapshots) == 4 * 3 and set(race.runs["group"]) == {"sync", "k-async K=2"}
    loaded = stalesgd.load(tmp_path / "cli")
    pd.testing.assert_frame_equal(loaded.snapshots, race.snapshots)


def test_a_race_without_out_leaves_nothing(tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    race = stalesgd.race(EXPERIMENT, set={"seeds": [1]})
    assert race.dir is None and len(race.results) == 2 and len(race.updates) > 0
    assert list(tmp_path.iterdir()) == []


def test_a_bad_race_raises_the_cli_message(tmp_path, run_cli):
    bad = dict(EXPERIMENT, run=[{"label": "x", "rule": "k-asynk"}])
    (tmp_path / "bad.toml").write_text(toml_text(bad))
    status, _, stderr = run_cli("race", "--config", str(tmp_path / "bad.toml"), "--out",
                                str(tmp_path / "cli"), check=False)
    assert status == 2
    with pytest.raises(stalesgd.Error) as e:
        stalesgd.race(tmp_path / "bad.toml", out=tmp_path / "py")
    assert str(e.value) == stderr.strip().splitlines()[-1][len("stalesgd: error: "):]
    assert not (tmp_path / "py").exists()
    with pytest.raises(stalesgd.Error, match="the experiment is a list"):
        stalesgd.race([1, 2])
    # A dict's error names its key, not the line of the file it was written to (and removed).
    with pytest.raises(stalesgd.Error) as e:
        stalesgd.race(bad, out=tmp_path / "py2")
    assert str(e.value).startswith("race: run[0]: ") and "k-asynk" in str(e.value)
    with pytest.raises(stalesgd.Error, match=r"^race: run\[1\]: \[\[run\]\] needs a label"):
        stalesgd.race(dict(EXPERIMENT, run=[{"label": "a", "rule": "async"}, {"rule": "sync"}]))


def test_jobs_out_of_range_is_the_cli_message(tmp_path, run_cli):
    (tmp_path / "race.toml").write_text(toml_text(EXPERIMENT))
    status, _, stderr = run_cli("race", "--config", str(tmp_path / "race.toml"), "--jobs", "0",
                                "--out", str(tmp_path / "cli"), check=False)
    assert status == 2
    with pytest.raises(stalesgd.Error) as e:
        stalesgd.race(tmp_path / "race.toml", jobs=0, out=tmp_path / "py")
    assert str(e.value) == stderr.strip().splitlines()[-1][len("stalesgd: error: "):]
