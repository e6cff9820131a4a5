"""CAMAB with a prior of free weights ``w_free`` (a cheaper model's, or lexical scores):
``V(S) = b + a * (w_free . x_S) + d . x_S + noise``, ``d ~ N(0, tau2 I)``; the calls learn
``b``, the agreement ``a`` and the corrections ``d``, ``tau2`` the grid value of highest
evidence (when they disagree ``a`` goes to 0)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from camab_rag.methods.base import FloatArray, Masks, Method, Sampler
from camab_rag.methods.camab import Camab

FREE_CALLS = 64  # calls of the free model per answer (they cost nothing the user pays for)
TAU2_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)  # candidate variances of the corrections ``d``


def _prior(n_segments: int, tau2: float) -> tuple[FloatArray, FloatArray]:
    mean = np.zeros(n_segments + 2)
    mean[1] = 1.0
    variances = np.full(n_segments + 2, tau2)
    variances[0], variances[1] = 10.0, 1.0  # the intercept's and the agreement's
    return mean, variances


def log_evidence(
    features: FloatArray, rewards: FloatArray, mean: FloatArray, variances: FloatArray, noise: float
) -> float:
    """``log N(rewards; features @ mean, features diag(variances) features^T + noise I)``."""
    n = len(rewards)
    if n == 0:
        return 0.0
    cov = (features * variances) @ features.T + noise * np.eye(n)
    factor = cho_factor(cov, lower=True)
    residual = rewards - features @ mean
    quad = float(residual @ cho_solve(factor, residual))
    logdet = 2.0 * float(np.sum(np.log(np.diag(factor[0]))))
    return float(-0.5 * (quad + logdet + n * np.log(2 * np.pi)))


def posterior(
    masks: Masks, rewards: FloatArray, free_weights: FloatArray, noise: float
) -> tuple[FloatArray, float]:
    """The posterior mean over ``(b, a, d)`` and the ``tau2`` of highest evidence."""
    x = masks.astype(float)
    features = np.hstack([np.ones((len(x), 1)), (x @ free_weights)[:, None], x])
    n = len(free_weights)
    evidence = [log_evidence(features, rewards, *_prior(n, t), noise) for t in TAU2_GRID]
    tau2 = TAU2_GRID[int(np.argmax(evidence))]
    mean0, variances = _prior(n, tau2)
    precision = np.diag(1.0 / variances) + features.T @ features / noise
    information = mean0 / variances + features.T @ rewards / noise
    mean = cho_solve(cho_factor(precision, lower=True), information)
    return np.asarray(mean, dtype=float), tau2


def target_weights(theta: FloatArray, free_weights: FloatArray) -> FloatArray:
    """Segment weights ``a * w_free + d`` of a ``(b, a, d)`` row."""
    return np.asarray(theta[1] * free_weights + theta[2:], dtype=float)


@dataclass
class FreePrior(Method):
    """CAMAB's draws on the target model, fitted with ``free_weights`` as the prior."""

    free_weights: FloatArray = field(default_factory=lambda: np.zeros(0))
    free_calls: int = 0
    free_model: str = ""
    noise_variance: float = 0.01

    name = "prior"

    def __post_init__(self) -> None:
        self.free_weights = np.asarray(self.free_weights, dtype=float).reshape(-1)
        if not np.all(np.isfinite(self.free_weights)):
            raise ValueError("the free model's weights must be finite")

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        if len(self.free_weights) != n_segments:
            raise ValueError(
                f"the free model scored {len(self.free_weights)} segments, the run has {n_segments}"
            )
        return Camab(noise_variance=self.noise_variance).sampler(n_segments, budget, rng)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        mean, _ = posterior(masks, rewards, self.free_weights, self.noise_variance)
        return target_weights(mean, self.free_weights)

    def config(self) -> dict[str, Any]:
        return {**asdict(self), "free_weights": [round(float(w), 6) for w in self.free_weights]}
