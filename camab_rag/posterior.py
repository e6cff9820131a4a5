"""Gaussian posterior of Bayesian linear regression, one rank-one Cholesky update (O(d^2))
per observation."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import cho_solve, solve_triangular

FloatArray = NDArray[np.float64]


class GaussianLinearPosterior:
    """Posterior ``N(mean, B^-1)`` over ``dim`` weights (segments + intercept) of a linear
    reward model, with a prior mean, a prior variance and the noise variance ``sigma^2``."""

    def __init__(
        self,
        dim: int,
        *,
        prior_mean: float | ArrayLike = 0.0,
        prior_variance: float = 1.0,
        noise_variance: float = 0.01,
    ) -> None:
        self.dim, self.noise_variance = dim, float(noise_variance)
        mean = np.broadcast_to(np.asarray(prior_mean, dtype=float), (dim,)).copy()
        self._factor = np.eye(dim) / np.sqrt(float(prior_variance))  # upper Cholesky of B
        self._information = mean / float(prior_variance)  # f = B0 mu0 + X^T v / s2
        self.mean = mean  # B^-1 f

    def update(self, x: ArrayLike, value: float) -> None:
        """Absorb one observation ``(x, v)``: ``B += x x^T / s2``, ``f += v x / s2``."""
        features = np.asarray(x, dtype=float)
        if features.shape != (self.dim,):
            raise ValueError(f"x must have shape ({self.dim},), got {features.shape}")
        if not np.isfinite(value):
            raise ValueError(f"reward must be finite, got {value}")
        _cholesky_rank_one_update(self._factor, features * (1.0 / np.sqrt(self.noise_variance)))
        self._information += (float(value) / self.noise_variance) * features
        self.mean = np.asarray(cho_solve((self._factor, False), self._information), dtype=float)

    def correlation(self) -> FloatArray:
        """Posterior correlation matrix of the weights (from ``B^-1``, O(d^3))."""
        covariance = cho_solve((self._factor, False), np.eye(self.dim))
        std = np.sqrt(np.diag(covariance))
        return np.asarray(covariance / np.outer(std, std), dtype=float)

    def predictive_variance(self, features: ArrayLike) -> FloatArray:
        """``x^T B^-1 x`` for each row of ``features`` (the uncertainty of its reward)."""
        rows = np.atleast_2d(np.asarray(features, dtype=float))
        solved = solve_triangular(self._factor, rows.T, trans="T", lower=False)
        return np.asarray(np.sum(solved**2, axis=0), dtype=float)

    def sample(self, rng: np.random.Generator, size: int = 1) -> FloatArray:
        """``size`` weight vectors drawn from the posterior, shape ``(size, dim)``."""
        offsets = solve_triangular(self._factor, rng.standard_normal((self.dim, size)))
        return np.asarray((self.mean[:, None] + offsets).T, dtype=float)


def _cholesky_rank_one_update(factor: FloatArray, x: FloatArray) -> None:
    """In place (``x`` too): the upper ``factor`` of ``A = R^T R`` becomes that of ``A + x x^T``."""
    n = factor.shape[0]
    for k in range(n):
        xk = x[k]
        if xk == 0.0:
            continue
        rkk = factor[k, k]
        r = np.hypot(rkk, xk)
        c, s = r / rkk, xk / rkk
        factor[k, k] = r
        row = factor[k, k + 1 :]  # empty for the last k
        row += s * x[k + 1 :]
        row /= c
        x[k + 1 :] = c * x[k + 1 :] - s * row
