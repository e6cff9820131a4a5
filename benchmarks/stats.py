"""The benchmarks' one statistics module: ROC AUC, mean ± 95% CI, paired t-tests, Holm,
thresholds, and the paired cluster bootstrap (answers sharing a context resampled together)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata
from scipy.stats import t as student_t

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
RESAMPLES = 2000


def auroc(scores: Sequence[float] | FloatArray, positive: Sequence[bool] | BoolArray) -> float:
    """ROC AUC: the chance that a positive scores above a negative, ties one half (Mann-Whitney
    U / (n_pos * n_neg)); ``nan`` unless both classes are present."""
    labels = np.asarray(positive, dtype=bool)
    pos, n = int(labels.sum()), int(labels.size)
    if pos == 0 or pos == n:
        return float("nan")
    ranks = rankdata(np.asarray(scores, dtype=float))
    return float((ranks[labels].sum() - pos * (pos + 1) / 2) / (pos * (n - pos)))


def flag_auroc(support: FloatArray, unsupported: BoolArray) -> float:
    """ROC AUC of flagging unsupported answers by low support (the gate's reading)."""
    return auroc(-np.asarray(support, dtype=float), unsupported)


# two-sided 97.5% Student-t quantiles for small samples (df -> value); normal beyond
_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
    9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
    17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000,
    120: 1.980,
}  # fmt: skip


def _finite(values: Sequence[float | None]) -> FloatArray:
    """The values as an array, without None, NaN or infinities."""
    array = np.asarray([v for v in values if v is not None], dtype=float)
    finite: FloatArray = array[np.isfinite(array)]
    return finite


def mean_ci(values: Sequence[float]) -> tuple[float, float, int]:
    """Mean, 95% confidence half-width (Student t) and count, ignoring NaNs."""
    array = _finite(values)
    n = int(array.size)
    if n == 0:
        return math.nan, math.nan, 0
    mean = float(array.mean())
    if n == 1:
        return mean, math.nan, 1
    df = n - 1
    key = max((d for d in _T975 if d <= df), default=1)
    quantile = _T975[key] if df <= 120 else 1.96
    return mean, float(quantile * array.std(ddof=1) / math.sqrt(n)), n


def paired_t_pvalue(differences: Sequence[float]) -> float:
    """Two-sided p-value of Student's t-test that paired differences have mean 0 (``nan``
    under two values; all equal: 1.0 when 0, else 0.0)."""
    array = _finite(differences)
    n = int(array.size)
    if n < 2:
        return math.nan
    mean = float(array.mean())
    spread = float(array.std(ddof=1))
    if spread == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    t = mean / (spread / math.sqrt(n))
    return float(2.0 * student_t.sf(abs(t), n - 1))


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given (``nan`` stays, uncounted)."""
    indexed = sorted(
        ((p, i) for i, p in enumerate(pvalues) if not math.isnan(p)), key=lambda pair: pair[0]
    )
    size = len(indexed)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (size - rank) * p))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class AtThreshold:
    """A support threshold's decisions: flag when ``support < threshold``."""

    balanced_accuracy: float
    f1: float
    pass_supported: float
    flag_unsupported: float


def at_threshold(support: FloatArray, unsupported: BoolArray, threshold: float) -> AtThreshold:
    flagged = support < threshold
    tp = int((flagged & unsupported).sum())
    fp = int((flagged & ~unsupported).sum())
    fn = int((~flagged & unsupported).sum())
    tpr = tp / max(int(unsupported.sum()), 1)
    tnr = 1.0 - fp / max(int((~unsupported).sum()), 1)
    f1 = 2 * tp / max(2 * tp + fp + fn, 1)
    return AtThreshold((tpr + tnr) / 2, f1, tnr, tpr)


def fit_threshold(
    supported_scores: Sequence[float], unsupported_scores: Sequence[float]
) -> tuple[float, float]:
    """The threshold (a midpoint between scores) with the best balanced accuracy of
    ``score >= threshold``, and that accuracy; ties go to the middle of the best run."""
    pos = np.asarray(supported_scores, dtype=float)
    neg = np.asarray(unsupported_scores, dtype=float)
    values = np.unique(np.concatenate([pos, neg]))
    candidates = np.concatenate(
        [[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]]
    )
    accuracy = np.array(
        [((pos >= t).mean() + (neg < t).mean()) / 2 for t in candidates], dtype=float
    )
    best = np.flatnonzero(accuracy >= accuracy.max() - 1e-12)
    chosen = float(candidates[best[len(best) // 2]])
    return chosen, float(accuracy.max())


def fitted_threshold(support: FloatArray, unsupported: BoolArray) -> float:
    """The balanced-accuracy-maximising threshold (:func:`fit_threshold`)."""
    return fit_threshold(list(support[~unsupported]), list(support[unsupported]))[0]


def resamples(keys: Sequence[str], n: int = RESAMPLES, seed: int = 0) -> list[NDArray[np.int64]]:
    """Index sets of a cluster bootstrap (whole contexts drawn with replacement)."""
    groups: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(key, []).append(index)
    clusters = [np.asarray(g, dtype=np.int64) for g in groups.values()]
    if not clusters:
        return []
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n):
        chosen = rng.integers(0, len(clusters), len(clusters))
        draws.append(np.concatenate([clusters[c] for c in chosen]))
    return draws


def auroc_ci(
    support: FloatArray, unsupported: BoolArray, draws: list[NDArray[np.int64]]
) -> tuple[float, float, float]:
    values = [flag_auroc(support[d], unsupported[d]) for d in draws]
    if not values or not np.isfinite(values).any():
        return flag_auroc(support, unsupported), float("nan"), float("nan")
    low, high = np.nanpercentile(values, [2.5, 97.5])
    return flag_auroc(support, unsupported), float(low), float(high)
