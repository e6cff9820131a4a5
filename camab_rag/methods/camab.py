"""CAMAB (Algorithm 1): each round draws ``w ~ N(mu, B^-1)`` over ``[intercept, w_1..w_N]``,
queries the segments of positive weight, observes ``v = V(S)`` and updates the posterior;
the scores are ``mu_1..mu_N``. A draw repeating a paid-for subset is drawn again, then the
unseen subset of largest predictive variance is taken; ``redraw=False`` is the paper's loop."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import cho_factor, cho_solve

from camab_rag.methods.base import FloatArray, Masks, Method, Sampler
from camab_rag.posterior import GaussianLinearPosterior


class CamabSampler(Sampler):
    def __init__(
        self, method: Camab, n_segments: int, budget: int, rng: np.random.Generator
    ) -> None:
        self.method, self.budget, self.rng = method, budget, rng
        self.posterior = method.posterior_from(np.zeros((0, n_segments), dtype=bool), np.zeros(0))
        self.n_evaluated = 0
        self.seen: set[bytes] = set()

    def next_masks(self) -> Masks | None:
        remaining = self.budget - self.n_evaluated
        if remaining <= 0:
            return None
        masks = self._kept(self.posterior.sample(self.rng, min(self.method.batch_size, remaining)))
        if not self.method.redraw:
            return masks
        proposed: set[bytes] = set(self.seen)
        for row in range(masks.shape[0]):
            if masks[row].tobytes() in proposed:
                self.n_redrawn += 1
                masks[row] = self._unseen(masks[row], proposed)
            proposed.add(masks[row].tobytes())
        return masks

    def _kept(self, draws: FloatArray) -> Masks:
        """The subsets of sampled weights (intercept first): the units weighing above 0."""
        return np.asarray(draws[:, 1:] > 0, dtype=bool)

    def _unseen(self, first: NDArray[np.bool_], proposed: set[bytes]) -> NDArray[np.bool_]:
        for _ in range(32):  # redraws, then the most uncertain unseen subset
            mask = self._kept(self.posterior.sample(self.rng, 1))[0]
            if mask.tobytes() not in proposed:
                return np.asarray(mask, dtype=bool)
        n = first.size
        flips = np.repeat(first[None, :], n, axis=0) ^ np.eye(n, dtype=bool)
        candidates = np.concatenate([flips, self.rng.random((4 * n + 16, n)) < 0.5])
        unseen = np.array([c.tobytes() not in proposed for c in candidates])
        if not unseen.any():  # rare: the first unseen subset in order
            for code in range(2**n):
                mask = ((code >> np.arange(n)) & 1).astype(bool)
                if mask.tobytes() not in proposed:
                    return np.asarray(mask, dtype=bool)
            raise RuntimeError("every subset has been evaluated")
        candidates = candidates[unseen]
        features = np.hstack([np.ones((len(candidates), 1)), candidates.astype(float)])
        variance = self.posterior.predictive_variance(features)
        return np.asarray(candidates[int(np.argmax(variance))], dtype=bool)

    def observe(self, masks: Masks, rewards: FloatArray) -> None:
        self.seen.update(mask.tobytes() for mask in masks)
        for mask, value in zip(masks, rewards):
            self.posterior.update(np.concatenate(([1.0], mask.astype(float))), float(value))
        self.n_evaluated += len(masks)


@dataclass
class Camab(Method):
    """CAMAB's settings; ``redraw=False`` is the paper's loop as written."""

    prior_mean: float = 0.0
    prior_variance: float = 1.0
    noise_variance: float = 0.01
    batch_size: int = 1
    redraw: bool = True

    name = "camab"

    def __post_init__(self) -> None:
        if self.prior_variance <= 0 or self.noise_variance <= 0:
            raise ValueError("prior_variance and noise_variance must be positive")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> CamabSampler:
        return CamabSampler(self, n_segments, budget, rng)

    def fit_many(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        features = np.hstack([np.ones((masks.shape[0], 1)), masks.astype(float)])
        dim = features.shape[1]
        precision = np.eye(dim) / self.prior_variance + features.T @ features / self.noise_variance
        shift = self.prior_mean / self.prior_variance  # B0 mu0, the same for every weight
        information = shift + features.T @ rewards / self.noise_variance
        means = cho_solve(cho_factor(precision), information)
        return np.asarray(means[1:].T, dtype=float)

    def posterior_from(self, masks: Masks, rewards: FloatArray) -> GaussianLinearPosterior:
        posterior = GaussianLinearPosterior(
            masks.shape[1] + 1,
            prior_mean=self.prior_mean,
            prior_variance=self.prior_variance,
            noise_variance=self.noise_variance,
        )
        for mask, value in zip(masks, rewards):
            posterior.update(np.concatenate(([1.0], mask.astype(float))), float(value))
        return posterior
