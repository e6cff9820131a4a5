"""Estimators: per-segment scores read from evaluated subsets, separate from the design
that chose them.

* ``posterior_mean``: CAMAB's Bayesian linear regression (ridge with an intercept).
* ``lasso``: ContextCite's solver, LASSO on standardised inclusion features.
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
