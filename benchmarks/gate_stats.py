"""Statistics of the gate benchmark: ROC AUC, thresholds, and paired cluster bootstrap.

Answers that share a context (FRANK's summaries of one article) are resampled together,
so confidence intervals and paired comparisons respect that they are not independent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata

from camab_rag.groundedness.calibration import fit_threshold

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
RESAMPLES = 2000


def auroc(support: FloatArray, unsupported: BoolArray) -> float:
    """ROC AUC of flagging unsupported answers by low support (ties count one half)."""
    unsupported = np.asarray(unsupported, dtype=bool)
    pos, n = int(unsupported.sum()), int(unsupported.size)
    if pos == 0 or pos == n:
        return float("nan")
    ranks = rankdata(-support)
    return float((ranks[unsupported].sum() - pos * (pos + 1) / 2) / (pos * (n - pos)))


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


def fitted_threshold(support: FloatArray, unsupported: BoolArray) -> float:
    """The balanced-accuracy-maximising threshold (the library's :func:`fit_threshold`)."""
    return fit_threshold(list(support[~unsupported]), list(support[unsupported]))[0]


def _clusters(keys: Sequence[str]) -> list[NDArray[np.int64]]:
    groups: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(key, []).append(index)
    return [np.asarray(g, dtype=np.int64) for g in groups.values()]


def resamples(keys: Sequence[str], n: int = RESAMPLES, seed: int = 0) -> list[NDArray[np.int64]]:
    """Index sets of a cluster bootstrap (whole contexts drawn with replacement)."""
    clusters = _clusters(keys)
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
    values = [auroc(support[d], unsupported[d]) for d in draws]
    if not values or not np.isfinite(values).any():
        return auroc(support, unsupported), float("nan"), float("nan")
    low, high = np.nanpercentile(values, [2.5, 97.5])
    return auroc(support, unsupported), float(low), float(high)


def paired_difference(
    first: FloatArray,
    second: FloatArray,
    unsupported: BoolArray,
    draws: list[NDArray[np.int64]],
) -> tuple[float, float, float, float]:
    """AUROC(first) - AUROC(second) on the same answers: the difference, its 95% interval
    and a two-sided bootstrap p-value (twice the share of resamples on the other side of
    zero)."""
    diffs = np.array(
        [auroc(first[d], unsupported[d]) - auroc(second[d], unsupported[d]) for d in draws]
    )
    diffs = diffs[np.isfinite(diffs)]
    observed = auroc(first, unsupported) - auroc(second, unsupported)
    low, high = np.percentile(diffs, [2.5, 97.5])
    side = (diffs <= 0).mean() if observed > 0 else (diffs >= 0).mean()
    p = float(min(1.0, 2 * side + 1 / (diffs.size + 1)))
    return float(observed), float(low), float(high), p
