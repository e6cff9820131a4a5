"""Top-k removal sets (what the log-prob drop removes) and gold AUROC of one attribution."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from benchmarks.stats import auroc as _auroc

FloatArray = NDArray[np.float64]


def removal_mask(n_segments: int, removed: Sequence[int]) -> NDArray[np.bool_]:
    """The inclusion mask of the context without the ``removed`` segments."""
    mask = np.ones(n_segments, dtype=bool)
    mask[list(removed)] = False
    return mask


def removal_set(scores: Sequence[float] | FloatArray, k: int) -> tuple[int, ...]:
    """The top-``k`` segments (ties: earlier index first) in index order, the key results
    are stored under; all of them when ``k`` exceeds their number."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    return tuple(sorted(int(i) for i in order[:k]))


def auroc(scores: Sequence[float] | FloatArray, gold: Sequence[int]) -> float:
    """ROC AUC of the scores for the ``gold`` segments' indices against the others
    (``nan`` when all are gold)."""
    values = np.asarray(scores, dtype=float)
    labels = np.zeros(values.size, dtype=bool)
    for g in gold:
        if not 0 <= g < values.size:
            raise ValueError(f"gold index {g} is outside [0, {values.size})")
        labels[g] = True
    if not labels.any():
        raise ValueError("gold AUROC needs at least one gold segment")
    return _auroc(values, labels)
