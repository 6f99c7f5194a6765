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
