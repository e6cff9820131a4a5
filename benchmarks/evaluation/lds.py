"""The linear datamodeling score (LDS): how well a method's scores predict the model.

ContextCite, AT2 and the CAMAB paper read an attribution as a linear model of the
reward: the predicted reward of a subset is the sum of the scores of the segments it
keeps. LDS is the Spearman rank correlation between that prediction and the model's
actual reward (here the mean token log-prob of the original answer, the library's
``V(S)``) over held-out subsets the method did not train on.

Three kinds of held-out subsets:

* ``bernoulli``: each segment kept with probability 1/2, distinct, 32 or more per
  example (ContextCite's protocol; its own design draws from the same distribution, so
  this is ContextCite's home ground);
* ``removal``: the full context without ``k`` segments drawn uniformly, ``k`` cycling
  through :data:`REMOVAL_SIZES` (the subsets the top-k log-prob drop scores: the
  context minus a few segments). Removing one segment is left out: leave-one-out and
  ``auto``'s openings train on exactly those subsets;
* ``keep``: only ``k`` segments kept, ``k`` cycling through :data:`KEEP_SIZES` (the
  small contexts a top-k citation stands for: does the ranking tell which few segments
  carry the answer on their own?).

Draws are seeded per example (:func:`subset_seed`) and prefix-stable: the first ``m``
of ``count`` draws are the draws of ``count=m``, so a later, larger sample extends an
earlier one instead of replacing it.
"""

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
"""Fewer held-out subsets than this give no LDS (``nan``): a rank correlation over a
handful of points says little."""


def subset_seed(example_id: str, kind: str) -> int:
    """The seed of one example's held-out draws of one kind (independent of the methods'
    seeds, so no method's design reproduces them)."""
    return zlib.crc32(f"lds:{kind}:{example_id}".encode())


def predicted_rewards(scores: Sequence[float] | FloatArray, masks: Masks) -> FloatArray:
    """The reward a linear reading of ``scores`` predicts for each mask: the sum of the
    scores of the segments it keeps (the intercept is left out: it moves every prediction
    by the same amount, which a rank correlation ignores)."""
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
    min_subsets: int = MIN_HELD_OUT,
) -> float:
    """Spearman correlation between the predicted and the actual rewards of ``masks``;
    ``nan`` with fewer than ``min_subsets`` subsets or when either side is constant (a
    ranking that predicts no order, or subsets the model cannot tell apart)."""
    actual = np.asarray(rewards, dtype=float)
    predicted = predicted_rewards(scores, masks)
    if actual.shape != predicted.shape:
        raise ValueError(f"{predicted.size} masks but {actual.size} rewards")
    if actual.size < max(min_subsets, 3) or np.ptp(actual) == 0 or np.ptp(predicted) == 0:
        return math.nan
    return float(spearmanr(predicted, actual).statistic)


def bernoulli_subsets(n_segments: int, count: int, seed: int, keep: float = 0.5) -> Masks:
    """Up to ``count`` distinct masks, each segment kept with probability ``keep`` (the
    full and the empty context excluded); fewer when ``n_segments`` has fewer subsets."""
    rng = np.random.default_rng(seed)
    wanted = min(count, max(0, 2**n_segments - 2)) if n_segments < 62 else count
    seen: dict[bytes, NDArray[np.bool_]] = {}
    while len(seen) < wanted:
        row = rng.random(n_segments) < keep
        if 0 < row.sum() < n_segments:
            seen.setdefault(row.tobytes(), row)
    return _stack(seen.values(), n_segments)


def removal_subsets(
    n_segments: int, count: int, seed: int, sizes: Sequence[int] = REMOVAL_SIZES
) -> Masks:
    """Up to ``count`` distinct masks of the full context without ``k`` segments, ``k``
    cycling through ``sizes`` (sizes that leave nothing or that run out of distinct
    subsets are skipped)."""
    return _sized_subsets(n_segments, count, seed, sizes, keep=False)


def keep_subsets(
    n_segments: int, count: int, seed: int, sizes: Sequence[int] = KEEP_SIZES
) -> Masks:
    """Up to ``count`` distinct masks that keep only ``k`` segments, ``k`` cycling through
    ``sizes`` (as :func:`removal_subsets`, the other way round)."""
    return _sized_subsets(n_segments, count, seed, sizes, keep=True)


def held_out_draws(example_id: str, n_segments: int, count: int) -> dict[str, Masks]:
    """The first ``count`` draws of every kind in :data:`LDS_KINDS` for one example (before
    the subsets a method trained on are left out: :func:`held_out`)."""
    seed = {kind: subset_seed(example_id, kind) for kind in LDS_KINDS}
    return {
        "bernoulli": bernoulli_subsets(n_segments, count, seed["bernoulli"]),
        "removal": removal_subsets(n_segments, count, seed["removal"]),
        "keep": keep_subsets(n_segments, count, seed["keep"]),
    }


def _sized_subsets(
    n_segments: int, count: int, seed: int, sizes: Sequence[int], keep: bool
) -> Masks:
    """Distinct masks that keep (``keep``) or remove ``k`` uniformly drawn segments, ``k``
    cycling through ``sizes``; prefix-stable in ``count``."""
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
    if not found:
        return np.zeros((0, n_segments), dtype=bool)
    return np.array(found, dtype=bool)
