"""A prior from a free model's calls (camab_rag.methods.prior): pure logic on known linear
rewards, so every figure below can be checked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from camab_rag import AttributionSettings
from camab_rag.engine import attribute_fn
from camab_rag.methods import Method
from camab_rag.methods.prior import TAU2_GRID, FreePrior, log_evidence, posterior

N = 24


def _target(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    weights = rng.normal(0.0, 0.02, N)
    weights[rng.choice(N, 3, replace=False)] += rng.uniform(0.3, 1.0, 3)
    return weights


def _lds(scores: np.ndarray, truth: np.ndarray, seed: int) -> float:
    held = np.random.default_rng(seed + 100).random((64, N)) < 0.5
    return float(spearmanr(held @ scores, held @ truth).statistic)


def _run(truth: np.ndarray, method: str | Method, budget: int, seed: int = 0, noise: float = 0.0):
    def reward(mask: np.ndarray) -> float:
        jitter = np.random.default_rng(int.from_bytes(np.packbits(mask).tobytes(), "big"))
        return -2.0 + float(truth @ mask) + noise * float(jitter.normal())

    settings = AttributionSettings(seed=seed)
    return attribute_fn(reward, N, budget=budget, method=method, settings=settings)


def test_an_agreeing_free_model_gives_8_calls_the_lds_of_many():
    """The free model ranks like the target on another scale (x1.7) and the target's
    rewards are noisy: 8 target calls with its prior reach an LDS that CAMAB without a
    prior reaches neither at 8 nor at 32 calls."""
    found: dict[str, list[float]] = {"prior": [], "camab8": [], "camab32": []}
    for seed in range(4):
        truth = _target(seed)
        runs = (("prior", FreePrior(free_weights=1.7 * truth), 8), ("camab8", "camab", 8))
        for key, method, budget in (*runs, ("camab32", "camab", 32)):
            scores = _run(truth, method, budget, seed, noise=0.3).scores
            found[key].append(_lds(scores, truth, seed))
    assert np.mean(found["prior"]) > 0.95
    assert np.mean(found["prior"]) > np.mean(found["camab32"]) + 0.02
    assert np.mean(found["camab8"]) < 0.8


def test_the_agreement_is_learned_on_the_targets_scale():
    """Free weights twice the target's: the fitted scores are the target's (a = 0.5)."""
    truth = _target(1)
    result = _run(truth, FreePrior(free_weights=2.0 * truth), 16)
    assert np.allclose(result.scores, truth, atol=0.02)


def test_a_free_model_that_disagrees_costs_little():
    """Free weights unrelated to the target's: the evidence lets the corrections take over
    (large tau2), and 32 target calls still find the target's three big segments."""
    truth = _target(2)
    unrelated = np.random.default_rng(9).permutation(truth)
    result = _run(truth, FreePrior(free_weights=unrelated), 32, seed=2)
    top = set(np.argsort(-result.scores)[:3])
    assert top == set(np.argsort(-truth)[:3])
    _, tau2 = posterior(result.masks, result.rewards, unrelated, 0.01)
    assert tau2 >= 1e-2
    _, agreeing = posterior(result.masks, result.rewards, 3.0 * truth, 0.01)
    assert agreeing == min(TAU2_GRID)


def test_the_default_design_asks_for_camabs_subsets_and_fits_with_the_prior():
    """design="camab": the target's subsets are exactly CAMAB's at the same seed (so a
    benchmark replays CAMAB's stored calls); only the fit uses the free model."""
    truth = _target(3)
    prior = _run(truth, FreePrior(free_weights=1.5 * truth), 8, seed=3, noise=0.3)
    camab = _run(truth, "camab", 8, seed=3, noise=0.3)
    assert np.array_equal(prior.masks, camab.masks)
    assert _lds(prior.scores, truth, 3) > _lds(camab.scores, truth, 3) + 0.2


def test_log_evidence_matches_the_gaussian_density():
    rng = np.random.default_rng(0)
    features = rng.random((5, 3))
    rewards = rng.normal(size=5)
    mean, variances, noise = np.array([0.1, 1.0, 0.0]), np.array([2.0, 0.5, 0.3]), 0.2
    cov = features @ np.diag(variances) @ features.T + noise * np.eye(5)
    residual = rewards - features @ mean
    expected = -0.5 * (
        residual @ np.linalg.solve(cov, residual)
        + np.linalg.slogdet(cov)[1]
        + 5 * np.log(2 * np.pi)
    )
    assert log_evidence(features, rewards, mean, variances, noise) == pytest.approx(expected)


def test_bad_free_weights_are_refused():
    with pytest.raises(ValueError, match="finite"):
        FreePrior(free_weights=np.array([0.1, np.nan]))
    with pytest.raises(ValueError, match="scored 3 segments"):
        FreePrior(free_weights=np.zeros(3)).sampler(4, 8, np.random.default_rng(0))


# ---------------------------------------------------------------------- the switch, end to end
DOCS = [
    "The Eiffel Tower is in Paris.",
    "Mount Fuji is the highest mountain in Japan.",
    "The Danube flows through Vienna.",
    "Tokyo is the capital of Japan.",
]
ANSWER = "Mount Fuji is the highest mountain in Japan."


def test_prior_switch_spends_free_calls_first_and_counts_them_apart(smollm2_scorer):
    """``Attributor(scorer, prior=free_scorer)``: the free model attributes first (4
    documents: all 16 subsets, within its 64 calls), the target then makes ``budget``
    calls with its scores as the prior, and the result records both counts. The same model serves as
    both here (the only model the tests load), so the prior is exact and the target's 8
    calls find the document that holds the answer."""
    from camab_rag import Attributor

    settings = AttributionSettings(granularity="chunk", statements=False)
    door = Attributor(smollm2_scorer, budget=8, settings=settings, prior=smollm2_scorer)
    result = door.run("Which is Japan's highest mountain?", DOCS, ANSWER)
    assert result.method == "prior"
    assert result.n_queries == 8
    assert result.method_config["free_calls"] == 16
    assert result.method_config["free_model"] == result.scored_by.model
    assert int(np.argmax(result.scores)) == 1
    free = np.array(result.method_config["free_weights"])
    assert int(np.argmax(free)) == 1


def test_prior_must_be_a_scorer():
    from fakes import KeywordScorer

    from camab_rag import Attributor
    from camab_rag.errors import InputError

    with pytest.raises(InputError, match="prior must have a score"):
        Attributor(KeywordScorer(), prior="smollm2")
