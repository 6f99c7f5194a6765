"""plugin= from Python as --plugin from the CLI: a plug-in's rule with its own option, its model
and its delay family train, race and predict from Python with the CLI's files and values, and
loading one again (a notebook cell run twice) changes nothing (docs/python.md, "Options"). A
plug-in stays loaded for the interpreter's life, so the Python side of each test runs in an
interpreter of its own."""

import json

import pytest

import stalesgd

from conftest import in_fresh_interpreter
from train_test import TABLES, cli_args

# examples/custom_rule (capped-k-async and its --cap), examples/custom_model (hand-softmax) and
# examples/custom_delay (weibull), on the virtual clock: the files are the options' alone.
OPTIONS = {"rule": "capped-k-async", "k": 2, "cap": 1, "workers": 4,
           "delay": "weibull:scale=10ms,shape=0.7", "model": "hand-softmax", "clock": "virtual",
           "time": "0.5s", "eval_every": "0.25s", "lr": 0.1, "seed": 5}
FILES = ("libcapped_k_async.so", "libhand_softmax.so", "libweibull_delay.so")


def plugin_paths(plugins):
    return ":".join(str(plugins / name) for name in FILES)


def train_twice(options, tmp_path):
    """Twice, as a notebook cell run again: the plug-ins are loaded once, the runs the same.
    The second run's largest staleness and its summary's config."""
    for name in ("py", "again"):
        result = stalesgd.train(options, out=tmp_path / name, progress=False)
    return float(result.gradients["staleness"].max()), result.summary["config"]


def test_a_plugin_rule_model_and_delay_train_as_from_the_cli(tmp_path, plugins, run_cli):
    options = dict(OPTIONS, plugin=plugin_paths(plugins))
    run_cli("train", *cli_args(options), "--no-progress", "--out", str(tmp_path / "cli"))
    stalest, py_config = in_fresh_interpreter(train_twice, options, tmp_path)
    for name in ("py", "again"):
        for table in TABLES:
            assert (tmp_path / name / table).read_bytes() == \
                (tmp_path / "cli" / table).read_bytes(), f"{name}/{table}"
    # The rule's own option took: no gradient staler than the cap.
    assert 0 < stalest <= 1
    config = json.loads((tmp_path / "cli" / "summary.json").read_text())["config"]
    assert py_config == config and config["cap"] == 1


def test_a_plugin_rule_races_and_predicts_as_from_the_cli(tmp_path, plugins, run_cli):
    rule = {"rule": "capped-k-async", "k": 2, "workers": 4, "delay": "exp:mean=10ms"}
    _, out, _ = run_cli("theory", "--plugin", str(plugins / FILES[0]), "--rule", "capped-k-async",
                        "--k", "2", "--workers", "4", "--delay", "exp:mean=10ms", "--cap", "1",
                        "--json")
    cli = json.loads(out)["rules"][0]
    py, staleness = in_fresh_interpreter(theory_and_race, str(plugins / FILES[0]), rule, tmp_path)
    assert py["monte_carlo"] == {k: cli["monte_carlo"][k] for k in py["monte_carlo"]}
    assert staleness["cap 0"] == 0 and 0 < staleness["cap 2"] <= 2


def theory_and_race(plugin, rule, tmp_path):
    """stalesgd.theory of the plug-in's rule, and each run's largest staleness in a race of it."""
    py = stalesgd.theory(plugin=plugin, cap=1, **rule)
    race = stalesgd.race({"plugin": plugin, "model": "softmax", "clock": "virtual",
                          "time": "0.5s", "eval_every": "0.25s", **rule,
                          "run": [{"label": "cap 0", "cap": 0}, {"label": "cap 2", "cap": 2}]},
                         out=tmp_path / "race", gradients=True)
    return py, race.gradients.groupby("label")["staleness"].max().to_dict()


def test_a_file_that_is_no_plugin_raises_the_cli_message(tmp_path, run_cli):
    bad = tmp_path / "not-a-plugin.so"
    bad.write_text("not a shared library\n")
    status, _, stderr = run_cli("train", "--plugin", str(bad), "--no-progress", check=False)
    assert status == 2
    with pytest.raises(stalesgd.Error) as e:
        stalesgd.train(plugin=bad, progress=False)
    assert str(e.value) == stderr.strip()[len("stalesgd: error: "):]
