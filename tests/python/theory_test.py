"""stalesgd.theory against `stalesgd theory --json` (docs/theory.md, docs/python.md)."""

import json

import pytest

import stalesgd


@pytest.mark.parametrize("rule,k,delay", [("k-async", 2, "exp:mean=10ms"),
                                          ("k-sync", 3, "exp:mean=10ms"),
                                          ("async", 1, "shifted-exp:shift=5ms,mean=10ms")])
def test_theory_values_are_the_cli_values(rule, k, delay, run_cli):
    _, out, _ = run_cli("theory", "--rule", rule, "--k", str(k), "--workers", "4", "--delay",
                        delay, "--json")
    cli = json.loads(out)["rules"][0]
    py = stalesgd.theory(rule=rule, k=k, workers=4, delay=delay)
    assert py["monte_carlo"]["seconds_per_iteration"] == \
        cli["monte_carlo"]["seconds_per_iteration"]
    assert py["monte_carlo"]["ci95"] == cli["monte_carlo"]["ci95"]
    if "closed_form" in cli:
        assert py["method"] == "closed form"
        assert py["seconds_per_iteration"] == cli["closed_form"]["seconds_per_iteration"]
        assert py["formula"] == cli["closed_form"]["formula"]
    else:
        assert py["seconds_per_iteration"] == cli["monte_carlo"]["seconds_per_iteration"]


def test_theory_bad_option():
    with pytest.raises(stalesgd.Error, match=r"^delay spec 'exp:mean=-1ms': exp mean: time '-1ms' is negative"):
        stalesgd.theory(rule="async", workers=4, delay="exp:mean=-1ms")


def test_fit_is_the_cli_fit(tmp_path, run_cli):
    stalesgd.train(model="softmax", rule="k-async", k=2, workers=4,
                   delay="shifted-exp:shift=5ms,mean=10ms", clock="virtual", time="2s",
                   out=tmp_path / "run", progress=False)
    _, out, _ = run_cli("theory", "--fit", str(tmp_path / "run"), "--json")
    cli = json.loads(out)
    py = stalesgd.fit(tmp_path / "run")
    assert py["spec"] == cli["chosen"]["spec"] and py["chosen"] == "shifted-exp"
    assert py["n"] == cli["durations"]["n"] and py["mean_s"] == cli["durations"]["mean_s"]
    for p, c in zip(py["families"], cli["families"]):
        assert (p["family"], p["spec"], p["aic"]) == (c["family"], c["spec"], c["aic"])
    # And from the prediction's side: theory on the fitted spec.
    assert stalesgd.theory(rule="k-async", k=2, workers=4, delay=py["spec"])[
        "seconds_per_iteration"] > 0
    with pytest.raises(stalesgd.Error, match="fewer than 10|at least 10"):
        stalesgd.fit([0.01, 0.02])


# theory --error's quick settings: F over 1,000 samples, w* after 2 epochs.
ERROR_FLAGS = ["--workers", "4", "--delay", "exp:mean=10ms", "--samples", "1000",
               "--constants-samples", "1000", "--optimum-epochs", "2", "--l2", "1e-3"]
ERROR_OPTIONS = dict(workers=4, delay="exp:mean=10ms", samples=1000, constants_samples=1000,
                     optimum_epochs=2, l2=1e-3)


@pytest.mark.parametrize("flags,options", [
    # K swept over 1, 2, 4 with the default budgets.
    ([], {}),
    # One rule at one K, the staleness constants given, budgets as seconds and a duration.
    (["--rule", "k-async", "--k", "2", "--p0", "0.5", "--gamma", "0.3", "--budget", "50ms,2s",
      "--lr", "0.02", "--batch", "16", "--seed", "3"],
     dict(rule="k-async", k=2, p0=0.5, gamma=0.3, budgets=[0.05, "2s"], lr=0.02, batch=16,
          seed=3)),
])
def test_error_bounds_are_the_cli_values(flags, options, run_cli):
    _, out, _ = run_cli("theory", "--error", *ERROR_FLAGS, *flags, "--json")
    py = stalesgd.theory(error=True, **ERROR_OPTIONS, **options)
    assert py == json.loads(out)
    assert [r["k"] for r in py["rules"]] == ([1, 2, 4] if not flags else [2])


def test_error_bounds_of_numpy_arrays_are_those_of_their_npz(tmp_path, run_cli):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, size=(600, 8, 8), dtype=np.uint8)
    y = (x.reshape(600, -1).mean(axis=1) > 127).astype(np.int64) + (x[:, 0, 0] > 127)
    arrays = (x[:500], y[:500], x[500:], y[500:])
    np.savez(tmp_path / "d.npz", x_train=arrays[0], y_train=arrays[1], x_test=arrays[2],
             y_test=arrays[3])
    _, out, _ = run_cli("theory", "--error", *ERROR_FLAGS, "--dataset",
                        f"npz:{tmp_path / 'd.npz'}", "--json")
    py = stalesgd.theory(error=True, data=arrays, **ERROR_OPTIONS)
    assert py == json.loads(out)
    assert py["constants"]["c"] == pytest.approx(1e-3)


@pytest.mark.parametrize("options,message", [
    (dict(model="mlp"), r"^--model mlp is not convex: the error bounds need a strongly convex"),
    (dict(l2=0), r"^--l2 0 leaves the softmax loss not strongly convex"),
    (dict(delay="exp:mean=10ms;w3=x5"), r"^delay spec 'exp:mean=10ms;w3=x5' needs i\.i\.d\."),
    (dict(budgets=["10"]), r"^budgets: '10' is not a positive duration"),
    (dict(budgets=[-1]), r"^budgets: '-1.0s' is not a positive duration"),
    (dict(gamma=2), r"^--gamma must be in \[0, 1\]"),
    # Wrong types: one line, not pybind11's TypeError.
    (dict(p0="x"), r"^theory\(p0='x'\): give a number"),
    (dict(constants_samples=-1), r"^theory\(constants_samples=-1\): give a whole number from 0"),
    (dict(optimum_epochs=2**40), r"^theory\(optimum_epochs=1099511627776\): give a whole number"),
    (dict(samples="x"), r"^theory\(samples='x'\): give a whole number"),
    (dict(budgets={}), r"^budgets: a dict is no list of budgets"),
])
def test_error_bounds_bad_input(options, message):
    with pytest.raises(stalesgd.Error, match=message):
        stalesgd.theory(error=True, **{**ERROR_OPTIONS, **options})


def test_error_keywords_need_error_true():
    with pytest.raises(stalesgd.Error, match=r"^theory: budgets= belongs to the error bounds"):
        stalesgd.theory(workers=4, delay="exp:mean=10ms", budgets=[1])


@pytest.mark.parametrize("options,closest", [(dict(worker=4), "workers"),
                                             (dict(error=True, optimum_epoch=4), "optimum_epochs")])
def test_an_unknown_keyword_names_the_closest(options, closest):
    key = next(k for k in options if k != "error")
    with pytest.raises(stalesgd.Error, match=rf"^theory\({key}=4\): unknown option '{key}' "
                                             rf"\(did you mean '{closest}'\?\)"):
        stalesgd.theory(delay="exp:mean=10ms", **options)
