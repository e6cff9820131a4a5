"""ContextCite-style surrogate: Bernoulli(0.5) ablation masks and a LASSO fit.

As in ContextCite's solver: features standardised, LASSO (``alpha = 0.01``,
objective ``1/(2m) ||y - Xw||^2 + alpha ||w||_1``) with an intercept, coefficients mapped
back to the unstandardised scale. ContextCite's own target is the mean token logit
(``reward="logit"``); by default the engine's reward is used so every method sees the same
signal. The LASSO is a short coordinate descent here: it keeps scikit-learn out of the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.methods.base import FixedDesignSampler, FloatArray, Masks, Method, Sampler


def lasso(
    x: FloatArray, y: FloatArray, alpha: float, *, max_iter: int = 2000, tol: float = 1e-8
) -> FloatArray:
    """Coordinate-descent LASSO on centred data (no intercept)."""
    m, n = x.shape
    weights = np.zeros(n)
    residual = y.astype(float).copy()
    col_sq = (x**2).sum(axis=0) / m
    for _ in range(max_iter):
        largest_step = 0.0
        for j in range(n):
            if col_sq[j] == 0.0:
                continue
            old = weights[j]
            rho = x[:, j] @ residual / m + col_sq[j] * old
            new = np.sign(rho) * max(abs(rho) - alpha, 0.0) / col_sq[j]
            if new != old:
                residual -= x[:, j] * (new - old)
                weights[j] = new
                largest_step = max(largest_step, abs(new - old))
        if largest_step < tol:
            break
    return weights


@dataclass
class ContextCite(Method):
    """ContextCite-style surrogate settings."""

    alpha: float = 0.01
    keep_probability: float = 0.5

    name = "contextcite"
    anytime = True

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        return FixedDesignSampler(rng.random((budget, n_segments)) < self.keep_probability)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        x = masks.astype(float)
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        scale[scale == 0.0] = 1.0  # constant columns carry no signal (as StandardScaler)
        standardised = (x - mean) / scale
        coefficients = lasso(standardised, rewards - rewards.mean(), self.alpha)
        return np.asarray(coefficients / scale, dtype=float)

    def config(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "keep_probability": self.keep_probability}
