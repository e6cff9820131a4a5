"""A method: a sampler of subsets to evaluate and an estimator of per-segment scores from
them (:meth:`Method.fit`), apart so one run serves many fits; the shared estimators."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

Masks = NDArray[np.bool_]
FloatArray = NDArray[np.float64]


class Sampler(ABC):
    """Proposes batches of inclusion masks (each a model call); may learn from the rewards."""

    n_redrawn: int = 0  # draws that repeated a subset already paid for and were redrawn

    @abstractmethod
    def next_masks(self) -> Masks | None:
        """The next batch, shape ``(m, N)``, or ``None`` when done."""

    def observe(self, masks: Masks, rewards: FloatArray) -> None:  # noqa: B027
        """The rewards of the batch last proposed."""

    def planned(self) -> Masks | None:
        """Every mask a fixed design will propose (a progress total); ``None`` if adaptive."""
        return None


class FixedDesignSampler(Sampler):
    """All masks in one batch (scored concurrently)."""

    def __init__(self, masks: Masks) -> None:
        self._masks: Masks | None = masks
        self._design = masks

    def planned(self) -> Masks | None:
        return self._design

    def next_masks(self) -> Masks | None:
        masks, self._masks = self._masks, None
        return masks


class Method(ABC):
    """An attribution method, selectable by :attr:`name`."""

    name: str = ""
    models_reward: bool = True  # the scores model the reward (not random's)

    @abstractmethod
    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        """A fresh sampler for one attribution run."""

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        """Per-segment scores from evaluated masks ``(m, N)`` and rewards ``(m,)`` (a method
        overrides this or :meth:`fit_many`)."""
        return np.asarray(self.fit_many(masks, rewards[:, None], seed)[0], dtype=float)

    def fit_many(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        """Scores for several reward vectors on the same masks: ``(m, K)`` to ``(K, N)``."""
        return np.stack([self.fit(masks, rewards[:, k], seed) for k in range(rewards.shape[1])])

    def config(self) -> dict[str, Any]:
        """The method's settings, for the result's JSON form."""
        return asdict(self) if is_dataclass(self) else {}


def leave_one_out_rows(n_segments: int) -> Masks:
    """The full context, then each unit left out once (``N + 1`` rows)."""
    rows = np.ones((n_segments + 1, n_segments), dtype=bool)
    rows[np.arange(1, n_segments + 1), np.arange(n_segments)] = False
    return rows


def every_subset_fits(n_segments: int, budget: int) -> bool:
    """Whether ``budget`` calls cover every subset of ``n_segments`` units, ``2**N``."""
    return n_segments < 62 and 2**n_segments <= budget


def enumerates(method: Method, n_segments: int, budget: int) -> bool:
    """Whether a run scores every subset, ``2**N <= budget`` (not loo, random, ``redraw=False``)."""
    if method.name in ("loo", "random") or getattr(method, "redraw", True) is False:
        return False
    return every_subset_fits(n_segments, budget)


def plan_sampler(method: Method, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
    """Every subset once (the full context first, then the empty one) when the budget
    covers them all, else the method's sampler."""
    if not enumerates(method, n_segments, budget):
        return method.sampler(n_segments, budget, rng)
    codes = np.arange(2**n_segments)[::-1]
    masks = ((codes[:, None] >> np.arange(n_segments)[::-1]) & 1).astype(bool)
    return FixedDesignSampler(masks[np.r_[0, len(masks) - 1, 1 : len(masks) - 1]])


def distinct_rows(
    draw: Callable[[], Masks], budget: int, n_segments: int, rng: np.random.Generator
) -> Masks:
    """``budget`` distinct masks from ``draw()`` batches, topped up with random ones."""
    seen: dict[bytes, NDArray[np.bool_]] = {}
    for _ in range(64):
        for row in draw():
            seen.setdefault(row.tobytes(), row)
            if len(seen) >= budget:
                return np.array(list(seen.values()), dtype=bool)
    while len(seen) < min(budget, 2**n_segments):
        row = rng.random(n_segments) < 0.5
        seen.setdefault(row.tobytes(), row)
    return np.array(list(seen.values()), dtype=bool).reshape(-1, n_segments)


def lasso(x: FloatArray, y: FloatArray, alpha: float) -> FloatArray:
    """Coordinate-descent LASSO on centred data, ``1/(2m) ||y - Xw||^2 + alpha ||w||_1``
    (keeps scikit-learn out of the core)."""
    m, n = x.shape
    weights = np.zeros(n)
    residual = y.astype(float).copy()
    col_sq = (x**2).sum(axis=0) / m
    for _ in range(2000):
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
        if largest_step < 1e-8:
            break
    return weights


def _standardised(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Columns' means and scales (a constant column keeps scale 1: it carries no signal,
    as scikit-learn's StandardScaler)."""
    scale = x.std(axis=0)
    scale[scale == 0.0] = 1.0
    return x.mean(axis=0), scale


def lasso_scores(masks: Masks, rewards: FloatArray, alpha: float = 0.01) -> FloatArray:
    """ContextCite's fit: LASSO on standardised features, mapped back to their scale."""
    x = masks.astype(float)
    if x.shape[0] == 0:
        return np.zeros(x.shape[1])
    mean, scale = _standardised(x)
    coefficients = lasso((x - mean) / scale, rewards - rewards.mean(), alpha)
    return np.asarray(coefficients / scale, dtype=float)


CV_FOLDS = 5  # scikit-learn's LassoCV default
CV_ALPHAS = 16  # penalties tried, evenly on a log scale under the smallest that keeps
CV_ALPHA_RANGE = 1e-3  # every weight zero, down to this share of it (LassoCV's eps)
_PATH_STEPS = 500  # FISTA steps per fold (every penalty at once)


def _lasso_path(x: FloatArray, y: FloatArray, alphas: FloatArray) -> FloatArray:
    """LASSO weights at every penalty at once, ``(N, len(alphas))``, by FISTA on centred
    data: approximate, for choosing a penalty only."""
    m, n = x.shape
    gram, xty = x.T @ x / m, x.T @ y / m
    step = float(np.linalg.eigvalsh(gram)[-1]) if n else 0.0
    weights = np.zeros((n, alphas.size))
    if step <= 0.0:
        return weights
    ahead, t = weights.copy(), 1.0
    for _ in range(_PATH_STEPS):
        moved = ahead - (gram @ ahead - xty[:, None]) / step
        new = np.sign(moved) * np.maximum(np.abs(moved) - alphas / step, 0.0)
        t_next = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        ahead = new + (t - 1.0) / t_next * (new - weights)
        weights, t = new, t_next
    return weights


def lasso_cv_scores(masks: Masks, rewards: FloatArray) -> FloatArray:
    """:func:`lasso_scores` with its penalty chosen by ``CV_FOLDS``-fold cross-validation
    on the run's own rows, fold ``i % CV_FOLDS`` holding row ``i`` (leave-one-out under
    ``CV_FOLDS`` rows; no label and no seed, so a stored run refits the same). ContextCite's
    fixed penalty suits neither every number of rows nor every reward scale (BENCHMARKS.md,
    issue 51: 'random halves, cross-validated LASSO' beside 'random halves, LASSO'). The
    penalty that zeroes every weight is not a candidate (it ranks nothing); under 3 rows
    the fixed penalty stands. The search costs about ``CV_FOLDS * 500`` products of an
    ``N x N`` matrix: 0.05 s at 64 rows of 60 segments, seconds from a few hundred."""
    x = masks.astype(float)
    y = np.asarray(rewards, dtype=float)
    m, n = x.shape
    if m < 3 or n == 0:
        return lasso_scores(masks, y)
    mean, scale = _standardised(x)
    centred = y - y.mean()
    largest = float(np.abs(((x - mean) / scale).T @ centred).max()) / m
    if largest == 0.0:
        return np.zeros(n)
    # not ``largest`` itself: a fit that scores every segment zero ranks nothing
    alphas = largest * np.logspace(0.0, np.log10(CV_ALPHA_RANGE), CV_ALPHAS + 1)[1:]
    folds = np.arange(m) % min(CV_FOLDS, m)
    errors = np.zeros(alphas.size)
    for fold in np.unique(folds):
        train, test = folds != fold, folds == fold
        mu, sc = _standardised(x[train])
        level = y[train].mean()
        weights = _lasso_path((x[train] - mu) / sc, y[train] - level, alphas)
        predicted = (x[test] - mu) / sc @ weights + level
        errors += ((predicted - y[test][:, None]) ** 2).sum(axis=0)
    return lasso_scores(masks, y, float(alphas[int(np.argmin(errors))]))


def flat_intercept_posterior_mean(
    masks: Masks, rewards: FloatArray, *, noise_variance: float = 0.01, prior_variance: float = 1.0
) -> FloatArray:
    """CAMAB's posterior means with a flat prior on the intercept (ridge regression on
    centred data): ``(m, K)`` rewards give ``(K, N)``."""
    x = masks.astype(float)
    if x.shape[0] == 0:
        return np.zeros((rewards.shape[1], x.shape[1]))
    xc = x - x.mean(axis=0)
    precision = xc.T @ xc / noise_variance + np.eye(x.shape[1]) / prior_variance
    centred = rewards - rewards.mean(axis=0)
    return np.asarray(np.linalg.solve(precision, xc.T @ centred / noise_variance).T, dtype=float)
