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
