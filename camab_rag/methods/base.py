"""What every attribution method provides: a sampler that proposes subsets to evaluate,
and an estimator that turns evaluated subsets into per-segment scores.

Splitting the two lets one run serve many fits at no extra model calls: the anytime
posterior after any prefix of the run, and per-answer-sentence attributions fitted on the
same subsets with rewards restricted to that sentence's tokens.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

Masks = NDArray[np.bool_]
FloatArray = NDArray[np.float64]


class Sampler(ABC):
    """Proposes batches of inclusion masks; adaptive samplers learn from the rewards.

    Every mask a sampler proposes is a model call: samplers propose distinct subsets (a
    cached subset is never proposed twice), except CAMAB's paper-faithful ``redraw=False``.
    """

    stopped_early: bool = False
    #: rounds whose first draw landed on a subset already paid for and was drawn again
    n_redrawn: int = 0

    @abstractmethod
    def next_masks(self) -> Masks | None:
        """The next batch to evaluate, shape ``(m, N)``, or ``None`` when done."""

    def observe(self, masks: Masks, rewards: FloatArray) -> None:  # noqa: B027
        """Receive the rewards of the batch last proposed (non-adaptive samplers ignore them)."""

    def planned(self) -> Masks | None:
        """Every mask this sampler will propose, when that is known before the run (a
        fixed design: exact enumeration, leave-one-out); ``None`` for adaptive ones. A
        progress display takes its total from it."""
        return None


class FixedDesignSampler(Sampler):
    """A non-adaptive sampler: all masks proposed in one batch (scored concurrently)."""

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
    #: whether a prefix of a run is itself a valid run at a smaller budget
    anytime: bool = True
    #: whether :meth:`fit` accepts any prefix of the design (not leave-one-out's)
    prefix_fit: bool = True
    #: whether the scores model the reward (their sum then estimates the context gain
    #: ``L(C) - L(empty)`` when neither end was scored); not the random baseline's
    models_reward: bool = True

    @abstractmethod
    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        """A fresh sampler for one attribution run."""

    @abstractmethod
    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        """Per-segment scores from evaluated masks ``(m, N)`` and rewards ``(m,)``."""

    def fit_many(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        """Scores for several reward vectors on the same masks: ``rewards`` is ``(m, K)``,
        the result ``(K, N)``."""
        return np.stack([self.fit(masks, rewards[:, k], seed) for k in range(rewards.shape[1])])

    def config(self) -> dict[str, Any]:
        """The method's settings, for the result's JSON form."""
        return {}


def all_masks(n_segments: int) -> Masks:
    """Every subset of ``n_segments`` segments, the full context first, then the empty one."""
    codes = np.arange(2**n_segments)[::-1]
    masks = ((codes[:, None] >> np.arange(n_segments)[::-1]) & 1).astype(bool)
    order = np.r_[0, len(masks) - 1, 1 : len(masks) - 1]
    return np.asarray(masks[order], dtype=bool)


def enumerates(method: Method, n_segments: int, budget: int) -> bool:
    """Whether a run can afford every subset (``2**N <= budget``) and so fits exactly.

    Leave-one-out and the random baseline keep their own cost (``N + 1`` and 0 calls), and
    CAMAB's paper-faithful ``redraw=False`` keeps its loop as written.
    """
    if method.name in ("loo", "random") or getattr(method, "redraw", True) is False:
        return False
    return n_segments < 62 and 2**n_segments <= budget


def plan_sampler(method: Method, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
    """The sampler of one run: every subset once when the budget covers them all (exact),
    else the method's own sampler."""
    if enumerates(method, n_segments, budget):
        return FixedDesignSampler(all_masks(n_segments))
    return method.sampler(n_segments, budget, rng)


def distinct_rows(
    draw: Callable[[], Masks], budget: int, n_segments: int, rng: np.random.Generator
) -> Masks:
    """``budget`` distinct masks from repeated calls of ``draw`` (each returns a batch of
    rows); when draws keep repeating, unseen uniformly random masks fill the rest."""
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


def full_mask(n_segments: int) -> Masks:
    return np.ones(n_segments, dtype=bool)


def rows_by_mask(masks: Masks, rewards: FloatArray) -> dict[bytes, float]:
    """Map each distinct mask to its (last) reward."""
    return {mask.tobytes(): float(value) for mask, value in zip(masks, rewards)}
