"""The linear datamodeling score (LDS) on held-out subsets of three kinds (bernoulli,
removal, keep); the protocol is written into the ``lds`` report (quality/README.md)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.stats import spearmanr

FloatArray = NDArray[np.float64]
Masks = NDArray[np.bool_]

LDS_KINDS = ("bernoulli", "removal", "keep")
REMOVAL_SIZES = (2, 3, 4, 5)
KEEP_SIZES = (1, 2, 3, 4)
MIN_HELD_OUT = 8
"""Fewer held-out subsets than this give no LDS (``nan``)."""


def subset_seed(example_id: str, kind: str) -> int:
    """The seed of one example's held-out draws of one kind (no method's seed)."""
    return zlib.crc32(f"lds:{kind}:{example_id}".encode())


def predicted_rewards(scores: Sequence[float] | FloatArray, masks: Masks) -> FloatArray:
    """The sum of the kept segments' scores for each mask (no intercept: a rank
    correlation ignores it)."""
    values = np.asarray(scores, dtype=float)
    rows = np.asarray(masks, dtype=bool)
    if rows.ndim != 2 or rows.shape[1] != values.size:
        raise ValueError(f"masks must be (m, {values.size}), got {rows.shape}")
    predicted: FloatArray = rows.astype(float) @ values
    return predicted


def lds(
    scores: Sequence[float] | FloatArray,
    masks: Masks,
    rewards: Sequence[float] | FloatArray,
) -> float:
    """Spearman correlation of predicted and actual rewards of ``masks``; ``nan`` with
    fewer than :data:`MIN_HELD_OUT` subsets or when either side is constant."""
    actual = np.asarray(rewards, dtype=float)
    predicted = predicted_rewards(scores, masks)
    if actual.shape != predicted.shape:
        raise ValueError(f"{predicted.size} masks but {actual.size} rewards")
    if actual.size < MIN_HELD_OUT or np.ptp(actual) == 0 or np.ptp(predicted) == 0:
        return math.nan
    return float(spearmanr(predicted, actual).statistic)


def bernoulli_subsets(n_segments: int, count: int, seed: int) -> Masks:
    """Up to ``count`` distinct masks keeping each segment with probability ½ (never
    the full or the empty context); prefix-stable in ``count``."""
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
