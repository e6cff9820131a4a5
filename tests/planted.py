"""Synthetic rewards with planted important segments, and the metrics to score recovery."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class PlantedReward:
    """V(S) = base + sum of planted weights + an interaction pair + Gaussian noise."""

    n: int
    important: np.ndarray
    weights: np.ndarray
    pair: tuple[int, int]
    interaction: float
    noise: float
    rng: np.random.Generator
    base: float = -3.0

    @classmethod
    def make(cls, n: int, seed: int, n_important: int = 4, noise: float = 0.05):
        rng = np.random.default_rng(10_000 + seed)
        important = rng.choice(n, size=n_important, replace=False)
        weights = np.zeros(n)
        weights[important] = rng.uniform(0.3, 1.0, n_important)
        pair = (int(important[0]), int(important[1]))
        return cls(n, important, weights, pair, 0.6, noise, rng)

    def __call__(self, mask: np.ndarray) -> float:
        value = self.base + self.weights @ mask
        value += self.interaction * mask[self.pair[0]] * mask[self.pair[1]]
        return float(value + self.rng.normal(0, self.noise))

    @property
    def labels(self) -> np.ndarray:
        labels = np.zeros(self.n, dtype=bool)
        labels[self.important] = True
        return labels


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Probability that a random positive outranks a random negative (ties count half)."""
    pos, neg = scores[labels], scores[~labels]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))


def brute_force_shapley(value, n: int) -> np.ndarray:
    """Exact Shapley values of ``value`` (a mask -> float function) over ``n`` players."""
    from itertools import product
    from math import factorial

    phi = np.zeros(n)
    for i in range(n):
        for bits in product([0, 1], repeat=n - 1):
            mask = np.insert(np.array(bits, dtype=bool), i, False)
            size = int(mask.sum())
            weight = factorial(size) * factorial(n - size - 1) / factorial(n)
            with_i = mask.copy()
            with_i[i] = True
            phi[i] += weight * (value(with_i) - value(mask))
    return phi
