"""``auto``'s budget rule (issue 51): random halves when calls are scarce per unit, the
adaptive design otherwise (pure logic on planted rewards; no model)."""

import numpy as np
import pytest

from camab_rag import AttributionSettings, attribute_fn
from camab_rag.methods import Auto
from camab_rag.methods.auto import JOINT_FIT_BELOW, scarce_budget
from camab_rag.methods.registry import method_from_config

N = 40
GROUPS = [i // 4 for i in range(N)]  # 10 documents of 4 sentences, as HotpotQA
WEIGHTS = np.where(np.arange(N) % 7 == 0, 0.3, 0.0)


def planted(mask: np.ndarray) -> float:
    return float(WEIGHTS @ mask) - 2.0


@pytest.mark.parametrize(
    ("n_segments", "budget", "below", "expected"),
    [
        (40, 8, 1.0, True),
        (40, 40, 1.0, True),
        (40, 41, 1.0, False),
        (40, 64, 0.5, False),
        (40, 20, 0.5, True),
        (40, 21, 0.5, False),
        (4, 8, 1.0, False),
        (40, 8, 0.0, False),
    ],
)
def test_the_rule_compares_the_budget_with_calls_per_unit(n_segments, budget, below, expected):
    assert scarce_budget(n_segments, budget, below) is expected


def test_the_shipped_cut_reads_one_joint_fit_at_8_calls_over_40_sentences():
    """The shipped cuts (chosen on the dev rows, BENCHMARKS "Fewer calls"): one fit over
    both levels at 8 calls on a HotpotQA-sized context, one per level from 16 on; the
    random halves stay off (they lost on the dev rows)."""
    assert scarce_budget(40, 8, JOINT_FIT_BELOW)
    assert not scarce_budget(40, 16, JOINT_FIT_BELOW)
    assert Auto()._switches.random_halves_below == 0


def run(method=None, budget=8):
    return attribute_fn(
        planted,
        N,
        budget=budget,
        method=method,
        groups=GROUPS,
        settings=AttributionSettings(seed=5),
    )


def test_under_the_cut_auto_fits_both_levels_at_once_on_the_same_subsets():
    ours, old = run(), run(Auto._variant(joint_fit_below=0.0))
    assert ours.method == "auto"
    assert ours.method_config["hierarchical"] and ours.method_config["joint_fit"]
    assert not old.method_config["joint_fit"]
    np.testing.assert_array_equal(ours.masks, old.masks)  # the estimator alone changed
    assert ours.n_queries == old.n_queries <= 8
    assert not np.allclose(ours.scores, old.scores)
    refit = method_from_config(ours.method, ours.method_config)
    np.testing.assert_allclose(refit.fit(ours.masks, ours.rewards), ours.scores, atol=1e-12)


def test_above_the_cut_auto_keeps_one_fit_per_level():
    result = run(budget=int(np.ceil(JOINT_FIT_BELOW * (N + 1))) + 1)
    assert result.method_config["hierarchical"] and not result.method_config["joint_fit"]
    assert result.method_config["design"] == "adaptive"


def test_the_random_halves_ask_for_contextcites_subsets_on_one_level():
    halves = Auto._variant(design="random_halves", halves_estimator="lasso")
    ours = run(halves, budget=16)
    theirs = attribute_fn(
        planted, N, budget=16, method="contextcite", settings=AttributionSettings(seed=5)
    )
    assert not ours.method_config.get("hierarchical")
    np.testing.assert_array_equal(ours.masks, theirs.masks)
    np.testing.assert_allclose(ours.scores, theirs.scores, atol=1e-12)


def test_the_halves_rule_switches_the_design_below_its_cut():
    rule = Auto._variant(random_halves_below=1.0)
    assert rule.for_budget(N, 16).random_halves and not rule.for_budget(N, 41).random_halves
    assert not run(rule, budget=16).method_config.get("hierarchical")


@pytest.mark.parametrize(
    "switches",
    [
        {"design": "halves"},
        {"halves_estimator": "ols"},
        {"random_halves_below": -1.0},
        {"random_halves_below": True},
        {"joint_fit_below": -0.5},
    ],
)
def test_bad_rule_switches_are_refused(switches):
    with pytest.raises(ValueError, match=next(iter(switches))):
        Auto._variant(**switches)
