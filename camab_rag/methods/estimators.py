"""Estimators: per-segment scores read from evaluated subsets, separate from the design
that chose them.

* ``posterior_mean``: CAMAB's Bayesian linear regression (ridge with an intercept).
* ``lasso``: ContextCite's solver, LASSO on standardised inclusion features.
* :func:`flat_intercept_posterior_mean` (``method="auto"``'s estimator, not one of CAMAB's
  ``ESTIMATORS``): the same Gaussian posterior over the segment weights, with a flat prior
  on the intercept instead of ``N(0, prior_variance)``. CAMAB's prior pulls the intercept
  (the reward with no segment, often -1 to -3 nats per token) towards 0; when the design
  has many near-full-context rows (leave-one-out openings) the intercept and the common
  level of the weights are nearly collinear, so that pull moves every weight by a common,
  design-dependent amount, and scores read from different rows (documents against
  sentences) stop being comparable. See ``benchmarks/bench_estimators.py``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Masks = NDArray[np.bool_]
FloatArray = NDArray[np.float64]

ESTIMATORS = ("posterior_mean", "lasso")
LASSO_ALPHA = 0.01


def lasso(
    x: FloatArray, y: FloatArray, alpha: float, *, max_iter: int = 2000, tol: float = 1e-8
) -> FloatArray:
    """Coordinate-descent LASSO on centred data (no intercept):
    ``1/(2m) ||y - Xw||^2 + alpha ||w||_1``."""
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


def lasso_scores(masks: Masks, rewards: FloatArray, alpha: float = LASSO_ALPHA) -> FloatArray:
    """ContextCite's fit: standardised features, LASSO with an intercept, coefficients
    mapped back to the unstandardised scale."""
    x = masks.astype(float)
    if x.shape[0] == 0:
        return np.zeros(x.shape[1])
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0.0] = 1.0  # constant columns carry no signal (as StandardScaler)
    coefficients = lasso((x - mean) / scale, rewards - rewards.mean(), alpha)
    return np.asarray(coefficients / scale, dtype=float)


def flat_intercept_posterior_mean(
    masks: Masks,
    rewards: FloatArray,
    *,
    noise_variance: float = 0.01,
    prior_variance: float = 1.0,
    prior_mean: float = 0.0,
) -> FloatArray:
    """Posterior means of the segment weights under CAMAB's model ``v = b + x.w + noise``
    with ``w ~ N(prior_mean, prior_variance I)``, noise variance ``noise_variance`` and a
    flat prior on the intercept ``b``.

    Integrating ``b`` out centres the design and the rewards, so this is ridge regression
    on centred data with penalty ``noise_variance / prior_variance`` (shrinking towards
    ``prior_mean``). ``rewards`` is ``(m,)`` or ``(m, K)``; the result is ``(N,)`` or
    ``(K, N)``. No rows: the prior mean.
    """
    x = masks.astype(float)
    y = np.asarray(rewards, dtype=float)
    single = y.ndim == 1
    y2 = y[:, None] if single else y
    n = x.shape[1]
    if x.shape[0] == 0:
        out = np.full((y2.shape[1], n), prior_mean)
        return np.asarray(out[0] if single else out, dtype=float)
    xc = x - x.mean(axis=0)
    yc = y2 - y2.mean(axis=0)
    precision = xc.T @ xc / noise_variance + np.eye(n) / prior_variance
    information = xc.T @ yc / noise_variance + prior_mean / prior_variance
    weights = np.linalg.solve(precision, information).T
    return np.asarray(weights[0] if single else weights, dtype=float)
