"""The benchmarks' one statistics module: ROC AUC, mean ± 95% CI, paired t-tests, Holm,
thresholds, the cluster bootstrap, and the LDS on held-out subsets of three kinds with the
top-k removal sets (its protocol: the ``lds`` report, quality/README.md)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata, spearmanr
from scipy.stats import t as student_t

from camab_rag.result import ranking

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
Masks = NDArray[np.bool_]
RESAMPLES = 2000


def auroc(scores: Sequence[float] | FloatArray, positive: Sequence[bool] | BoolArray) -> float:
    """ROC AUC (Mann-Whitney U / (n_pos * n_neg), ties one half); ``nan`` without both classes."""
    labels = np.asarray(positive, dtype=bool)
    pos, n = int(labels.sum()), int(labels.size)
    if pos == 0 or pos == n:
        return float("nan")
    ranks = rankdata(np.asarray(scores, dtype=float))
    return float((ranks[labels].sum() - pos * (pos + 1) / 2) / (pos * (n - pos)))


def gold_auroc(scores: Sequence[float] | FloatArray, gold: Sequence[int]) -> float:
    """ROC AUC of an attribution's scores, the ``gold`` indices against the others."""
    values = np.asarray(scores, dtype=float)
    labels = np.zeros(values.size, dtype=bool)
    for g in gold:
        if not 0 <= g < values.size:
            raise ValueError(f"gold index {g} is outside [0, {values.size})")
        labels[g] = True
    if not labels.any():
        raise ValueError("gold AUROC needs at least one gold segment")
    return auroc(values, labels)


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


def line_side(mean: float, half: float, line: float) -> str:
    """Where the interval ``mean ± half`` lies against ``line``: "above" (at or above it),
    "below" (wholly under it) or "on it"."""
    if mean - half >= line:
        return "above"
    return "below" if mean + half < line else "on it"


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
    """Two-sided p-value of Student's t-test that paired differences have mean 0."""
    array = _finite(differences)
    n = int(array.size)
    if n < 2:
        return math.nan
    mean, spread = float(array.mean()), float(array.std(ddof=1))
    if spread == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    t = mean / (spread / math.sqrt(n))
    return float(2.0 * student_t.sf(abs(t), n - 1))


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given (``nan`` stays, uncounted)."""
    indexed = sorted((p, i) for i, p in enumerate(pvalues) if not math.isnan(p))
    size = len(indexed)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (size - rank) * p))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class AtThreshold:  # a support threshold's decisions: flag when ``support < threshold``
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
    """The threshold (a midpoint between scores) with the best balanced accuracy of
    ``support >= threshold``; ties go to the middle of the best run."""
    pos, neg = np.asarray(support[~unsupported], float), np.asarray(support[unsupported], float)
    values = np.unique(np.concatenate([pos, neg]))
    candidates = np.concatenate(
        [[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]]
    )
    accuracy = np.array(
        [((pos >= t).mean() + (neg < t).mean()) / 2 for t in candidates], dtype=float
    )
    best = np.flatnonzero(accuracy >= accuracy.max() - 1e-12)
    return float(candidates[best[len(best) // 2]])


def resamples(keys: Sequence[str], n: int = RESAMPLES, seed: int = 0) -> list[NDArray[np.int64]]:
    """Index sets of a cluster bootstrap (whole contexts drawn with replacement)."""
    groups: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(key, []).append(index)
    clusters = [np.asarray(g, dtype=np.int64) for g in groups.values()]
    if not clusters:
        return []
    rng, k = np.random.default_rng(seed), len(clusters)
    return [np.concatenate([clusters[c] for c in rng.integers(0, k, k)]) for _ in range(n)]


def auroc_ci(
    support: FloatArray, unsupported: BoolArray, draws: list[NDArray[np.int64]]
) -> tuple[float, float, float]:
    values = [flag_auroc(support[d], unsupported[d]) for d in draws]
    if not values or not np.isfinite(values).any():
        return flag_auroc(support, unsupported), float("nan"), float("nan")
    low, high = np.nanpercentile(values, [2.5, 97.5])
    return flag_auroc(support, unsupported), float(low), float(high)


# ---------------------------------------------------------------- LDS and removal sets
LDS_KINDS = ("bernoulli", "removal", "keep")
REMOVAL_SIZES = (2, 3, 4, 5)
KEEP_SIZES = (1, 2, 3, 4)
MIN_HELD_OUT = 8
"""Fewer held-out subsets than this give no LDS (``nan``)."""


def subset_seed(example_id: str, kind: str) -> int:
    """The seed of one example's held-out draws of one kind (no method's seed)."""
    return zlib.crc32(f"lds:{kind}:{example_id}".encode())


def predicted_rewards(scores: Sequence[float] | FloatArray, masks: Masks) -> FloatArray:
    """The sum of the kept segments' scores for each mask (no intercept: ranks ignore it)."""
    values = np.asarray(scores, dtype=float)
    rows = np.asarray(masks, dtype=bool)
    if rows.ndim != 2 or rows.shape[1] != values.size:
        raise ValueError(f"masks must be (m, {values.size}), got {rows.shape}")
    predicted: FloatArray = rows.astype(float) @ values
    return predicted


def lds(
    scores: Sequence[float] | FloatArray, masks: Masks, rewards: Sequence[float] | FloatArray
) -> float:
    """Spearman correlation of predicted and actual rewards of ``masks`` (``nan`` under
    :data:`MIN_HELD_OUT` subsets or a constant side)."""
    actual = np.asarray(rewards, dtype=float)
    predicted = predicted_rewards(scores, masks)
    if actual.shape != predicted.shape:
        raise ValueError(f"{predicted.size} masks but {actual.size} rewards")
    if actual.size < MIN_HELD_OUT or np.ptp(actual) == 0 or np.ptp(predicted) == 0:
        return math.nan
    return float(spearmanr(predicted, actual).statistic)


def bernoulli_subsets(n_segments: int, count: int, seed: int) -> Masks:
    """Up to ``count`` distinct masks keeping each segment with probability ½ (never full or
    empty); prefix-stable in ``count``."""
    rng = np.random.default_rng(seed)
    wanted = min(count, max(0, 2**n_segments - 2)) if n_segments < 62 else count
    seen: dict[bytes, NDArray[np.bool_]] = {}
    while len(seen) < wanted:
        row = rng.random(n_segments) < 0.5
        if 0 < row.sum() < n_segments:
            seen.setdefault(row.tobytes(), row)
    return _stack(seen.values(), n_segments)


def removal_subsets(
    n_segments: int, count: int, seed: int, sizes: Sequence[int] = REMOVAL_SIZES
) -> Masks:
    """Up to ``count`` distinct full contexts without ``k`` segments, ``k`` cycling."""
    return _sized_subsets(n_segments, count, seed, sizes, keep=False)


def keep_subsets(n_segments: int, count: int, seed: int) -> Masks:
    """Up to ``count`` distinct masks keeping only ``k`` segments, ``k`` cycling."""
    return _sized_subsets(n_segments, count, seed, KEEP_SIZES, keep=True)


def held_out_draws(example_id: str, n_segments: int, count: int) -> dict[str, Masks]:
    """The first ``count`` draws of every kind for one example (before :func:`held_out`)."""
    seed = {kind: subset_seed(example_id, kind) for kind in LDS_KINDS}
    return {
        "bernoulli": bernoulli_subsets(n_segments, count, seed["bernoulli"]),
        "removal": removal_subsets(n_segments, count, seed["removal"]),
        "keep": keep_subsets(n_segments, count, seed["keep"]),
    }


def _sized_subsets(
    n_segments: int, count: int, seed: int, sizes: Sequence[int], keep: bool
) -> Masks:
    usable = [k for k in sizes if 0 < k < n_segments]
    rng = np.random.default_rng(seed)
    seen: dict[bytes, NDArray[np.bool_]] = {}
    available = {k: math.comb(n_segments, k) for k in usable}
    taken = dict.fromkeys(usable, 0)
    index = 0
    while usable and len(seen) < count:
        k = usable[index % len(usable)]
        if taken[k] >= available[k]:
            usable.remove(k)
            continue
        row = np.full(n_segments, not keep, dtype=bool)
        row[rng.choice(n_segments, size=k, replace=False)] = keep
        if row.tobytes() not in seen:  # a repeat draws the same size again
            seen[row.tobytes()] = row
            taken[k] += 1
            index += 1
    return _stack(seen.values(), n_segments)


def held_out(masks: Masks, trained: Iterable[NDArray[np.bool_]]) -> Masks:
    """The rows of ``masks`` that are not among the ``trained`` subsets."""
    rows = np.asarray(masks, dtype=bool)
    seen = {np.asarray(m, dtype=bool).tobytes() for m in trained}
    keep = [i for i, row in enumerate(rows) if row.tobytes() not in seen]
    return rows[keep] if rows.size else rows


def _stack(rows: Iterable[NDArray[np.bool_]], n_segments: int) -> Masks:
    found = list(rows)
    return np.array(found, dtype=bool) if found else np.zeros((0, n_segments), dtype=bool)


def removal_mask(n_segments: int, removed: Sequence[int]) -> NDArray[np.bool_]:
    """The inclusion mask of the context without the ``removed`` segments."""
    mask = np.ones(n_segments, dtype=bool)
    mask[list(removed)] = False
    return mask


def removal_set(scores: Sequence[float] | FloatArray, k: int) -> tuple[int, ...]:
    """The top-``k`` segments (ties, near ones too: earlier index first, as the library's
    :func:`~camab_rag.result.ranking`) in index order (the results' key)."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return tuple(sorted(ranking(scores)[:k]))
