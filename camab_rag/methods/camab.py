"""CAMAB: context attribution with combinatorial Linear Thompson Sampling (Algorithm 1).

Each round draws ``w ~ N(mu, B^-1)`` over ``[intercept, w_1..w_N]``, queries the subset of
segments whose sampled weight is positive, observes ``v = V(S)`` and updates
``B += x x^T / s2``, ``f += v x / s2``, ``mu = B^-1 f`` with ``x = [1, 1(s_1 in S), ...]``.
The scores are the posterior means ``mu_1..mu_N``. Defaults follow the paper: prior mean 0,
prior variance 1, noise variance 0.01, one sample per round (``batch_size=1``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from camab_rag.methods.base import FloatArray, Masks, Method, Sampler
from camab_rag.posterior import GaussianLinearPosterior


@dataclass(frozen=True)
class EarlyStop:
    """Stop before the budget once the top-k set is settled.

    After ``min_rounds`` observations, ``n_samples`` posterior draws are compared with the
    posterior mean: when the share of draws whose top-``k`` set equals the mean's top-``k``
    reaches ``threshold``, the run stops.
    """

    k: int = 3
    threshold: float = 0.95
    n_samples: int = 256
    min_rounds: int = 10

    def __post_init__(self) -> None:
        if self.k < 1 or not 0 < self.threshold <= 1 or self.n_samples < 1:
            raise ValueError("EarlyStop needs k >= 1, 0 < threshold <= 1, n_samples >= 1")


def top_k_settled_share(
    posterior: GaussianLinearPosterior, k: int, n_samples: int, rng: np.random.Generator
) -> float:
    """Share of posterior draws whose top-k segments equal the posterior mean's top-k."""
    weights = posterior.mean[1:]
    k = min(k, weights.size)
    target = np.sort(np.argsort(-weights, kind="stable")[:k])
    draws = posterior.sample(rng, n_samples)[:, 1:]
    tops = np.sort(np.argpartition(-draws, k - 1, axis=1)[:, :k], axis=1)
    return float(np.mean(np.all(tops == target, axis=1)))


class CamabSampler(Sampler):
    """The Thompson-sampling loop; ``posterior`` is live during and after the run."""

    def __init__(
        self, method: Camab, n_segments: int, budget: int, rng: np.random.Generator
    ) -> None:
        self.method = method
        self.budget = budget
        self.rng = rng
        self.posterior = GaussianLinearPosterior(
            n_segments + 1,
            prior_mean=method.prior_mean,
            prior_variance=method.prior_variance,
            noise_variance=method.noise_variance,
        )
        self.n_evaluated = 0

    def next_masks(self) -> Masks | None:
        remaining = self.budget - self.n_evaluated
        if remaining <= 0 or self.stopped_early:
            return None
        draws = self.posterior.sample(self.rng, min(self.method.batch_size, remaining))
        return draws[:, 1:] > 0

    def observe(self, masks: Masks, rewards: FloatArray) -> None:
        for mask, value in zip(masks, rewards):
            self.posterior.update(np.concatenate(([1.0], mask.astype(float))), float(value))
        self.n_evaluated += len(masks)
        stop = self.method.early_stop
        if stop is not None and self.n_evaluated >= stop.min_rounds:
            share = top_k_settled_share(self.posterior, stop.k, stop.n_samples, self.rng)
            self.stopped_early = share >= stop.threshold and self.n_evaluated < self.budget


@dataclass
class Camab(Method):
    """CAMAB method settings (see module docstring)."""

    prior_mean: float = 0.0
    prior_variance: float = 1.0
    noise_variance: float = 0.01
    batch_size: int = 1
    early_stop: EarlyStop | None = None

    name = "camab"
    anytime = True

    def __post_init__(self) -> None:
        if self.prior_variance <= 0 or self.noise_variance <= 0:
            raise ValueError("prior_variance and noise_variance must be positive")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> CamabSampler:
        return CamabSampler(self, n_segments, budget, rng)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        return np.asarray(self.fit_many(masks, rewards[:, None], seed)[0], dtype=float)

    def fit_many(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        """Posterior means for several reward vectors on the same subsets: one factorisation
        of the shared precision, one solve per reward vector."""
        features = np.hstack([np.ones((masks.shape[0], 1)), masks.astype(float)])
        dim = features.shape[1]
        precision = np.eye(dim) / self.prior_variance + features.T @ features / self.noise_variance
        information = (
            np.full((dim, 1), self.prior_mean / self.prior_variance)
            + features.T @ rewards / self.noise_variance
        )
        means = cho_solve(cho_factor(precision), information)
        return np.asarray(means[1:].T, dtype=float)

    def posterior_from(self, masks: Masks, rewards: FloatArray) -> GaussianLinearPosterior:
        """The posterior after the given observations (for a prefix of a run)."""
        posterior = GaussianLinearPosterior(
            masks.shape[1] + 1,
            prior_mean=self.prior_mean,
            prior_variance=self.prior_variance,
            noise_variance=self.noise_variance,
        )
        for mask, value in zip(masks, rewards):
            posterior.update(np.concatenate(([1.0], mask.astype(float))), float(value))
        return posterior

    def config(self) -> dict[str, Any]:
        return {
            "prior_mean": self.prior_mean,
            "prior_variance": self.prior_variance,
            "noise_variance": self.noise_variance,
            "batch_size": self.batch_size,
            "early_stop": asdict(self.early_stop) if self.early_stop else None,
        }
