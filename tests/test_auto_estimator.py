"""auto's estimator (#23 item 3): CAMAB's posterior over the weights with a flat prior on
the intercept, one fit over every evaluated subset; the design does not depend on it.

Why (BENCHMARKS.md, "Estimator choice: auto's subsets re-fitted"): CAMAB's N(0, 1) prior on
the intercept pulls it towards 0 while rewards sit at -0.5 to -3 nats per token; with
auto's leave-one-out openings the intercept and the common level of the weights are nearly
collinear, so the pull shifts the weights by a common, design-dependent amount and the
document-level shares stop being comparable with the sentence-level scores.
"""

from __future__ import annotations

import numpy as np
import pytest
from planted import PlantedReward, auroc

from camab_rag import AttributionSettings, attribute_fn
from camab_rag.errors import InputError
from camab_rag.methods import Auto, Camab, Hierarchical
from camab_rag.methods.base import flat_intercept_posterior_mean
from camab_rag.methods.registry import method_from_config


def weak_documents(seed: int, base: float = -2.0):
    """8 documents of 2-7 sentences; every sentence helps a little (0.02 +- 0.03), one
    sentence in each of two documents more (0.05-0.2): the shape of the HotpotQA rewards."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 8, size=8)
    groups = np.repeat(np.arange(8), sizes)
    n = groups.size
    gold_docs = rng.choice(8, size=2, replace=False)
    gold = np.array([np.flatnonzero(groups == d)[rng.integers(sizes[d])] for d in gold_docs])
    weights = rng.normal(0.02, 0.03, n)
    weights[gold] = rng.uniform(0.05, 0.2, 2)
    noise = np.random.default_rng(100 + seed)

    def value(mask: np.ndarray) -> float:
        return float(base + weights @ mask + noise.normal(0, 0.01))

    labels = np.zeros(n, dtype=bool)
    labels[gold] = True
    return value, groups, labels


def test_flat_intercept_posterior_mean_is_the_posterior_with_an_improper_intercept_prior():
    rng = np.random.default_rng(0)
    masks = rng.random((25, 7)) < 0.5
    rewards = rng.normal(-2.0, 0.3, 25)
    features = np.hstack([np.ones((25, 1)), masks.astype(float)])
    prior_precision = np.eye(8) / 1.0
    prior_precision[0, 0] = 0.0  # flat on the intercept
    expected = np.linalg.solve(
        prior_precision + features.T @ features / 0.01, features.T @ rewards / 0.01
    )
    np.testing.assert_allclose(
        flat_intercept_posterior_mean(masks, rewards[:, None])[0], expected[1:]
    )
    stacked = flat_intercept_posterior_mean(masks, np.c_[rewards, 2 * rewards])
    assert stacked.shape == (2, 7)
    np.testing.assert_allclose(stacked[1], 2 * expected[1:], atol=1e-12)
    np.testing.assert_array_equal(flat_intercept_posterior_mean(masks[:0], rewards[:0, None]), 0.0)


def test_auto_scores_do_not_depend_on_the_reward_baseline_on_the_same_subsets():
    """Adding a constant to every reward (a response that is less likely overall) leaves
    auto's scores unchanged; CAMAB's posterior means read level by level (auto's old
    reading) change their ranking."""
    reward = PlantedReward.make(40, seed=3)
    groups = np.repeat(np.arange(10), 4)
    result = attribute_fn(
        reward, 40, budget=20, groups=groups, settings=AttributionSettings(seed=3)
    )
    method = method_from_config(result.method, result.method_config)
    assert isinstance(method, Hierarchical) and isinstance(method.base, Auto)
    for shift in (-2.0, 2.0):
        np.testing.assert_allclose(
            method.fit(result.masks, result.rewards + shift), result.scores, atol=1e-9
        )
    old = Hierarchical(Camab(), groups.tolist(), result.method_config["stage1_calls"])
    ranks = [
        np.argsort(-old.fit(result.masks, result.rewards + shift), kind="stable")
        for shift in (-2.0, 2.0)
    ]
    assert not np.array_equal(ranks[0], ranks[1])


def test_auto_beats_its_old_reading_on_weak_signals_at_budget_20():
    new, old = [], []
    for seed in range(40):
        value, groups, labels = weak_documents(seed)
        ours = attribute_fn(
            value, groups.size, budget=20, groups=groups, settings=AttributionSettings(seed=seed)
        )
        stage1 = ours.method_config["stage1_calls"]
        before = Hierarchical(Camab(), groups.tolist(), stage1).fit(ours.masks, ours.rewards)
        new.append(auroc(ours.scores, labels))
        old.append(auroc(before, labels))
    wins = sum(a > b for a, b in zip(new, old))
    losses = sum(a < b for a, b in zip(new, old))
    assert np.mean(new) >= np.mean(old) + 0.02 and wins > 2 * losses


@pytest.mark.parametrize("estimator", ["flat_intercept", "lasso"])
def test_the_design_does_not_depend_on_the_estimator(estimator):
    reward = PlantedReward.make(40, seed=5)
    groups = np.repeat(np.arange(10), 4)
    default = attribute_fn(
        reward, 40, budget=30, groups=groups, settings=AttributionSettings(seed=5)
    )
    reward = PlantedReward.make(40, seed=5)
    other = attribute_fn(
        reward,
        40,
        budget=30,
        method=Auto._variant(estimator=estimator, joint_fit=False),
        groups=groups,
        settings=AttributionSettings(seed=5),
    )
    np.testing.assert_array_equal(default.masks, other.masks)
    assert default.method_config["estimator"] == "flat_intercept"
    assert default.method_config["joint_fit"] is False


def test_one_level_auto_uses_the_flat_intercept_estimator_and_camab_keeps_its_posterior():
    reward = PlantedReward.make(12, seed=1)
    chunks = list(range(12))  # whole documents (one document's sentences read with LASSO)
    settings = AttributionSettings(seed=1)
    result = attribute_fn(reward, 12, budget=30, groups=chunks, settings=settings)
    assert result.method == "auto" and not result.method_config.get("hierarchical")
    np.testing.assert_allclose(
        result.scores, flat_intercept_posterior_mean(result.masks, result.rewards[:, None])[0]
    )
    camab = attribute_fn(
        PlantedReward.make(12, seed=1),
        12,
        budget=30,
        method="camab",
        settings=AttributionSettings(seed=1),
    )
    np.testing.assert_allclose(camab.scores, Camab().fit(camab.masks, camab.rewards))


def test_unknown_auto_estimator_is_refused():
    with pytest.raises(ValueError, match="unknown estimator"):
        Auto._variant(estimator="median")
    with pytest.raises(InputError, match="estimator"):  # not an option of Auto any more
        AttributionSettings().with_changes(method="auto", estimator="median")
