"""What every attribution method provides: a sampler that proposes subsets to evaluate,
and an estimator that turns evaluated subsets into per-segment scores.

Splitting the two lets one run serve many fits at no extra model calls: the anytime
posterior after any prefix of the run, and per-answer-sentence attributions fitted on the
same subsets with rewards restricted to that sentence's tokens.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import NDArray

Masks = NDArray[np.bool_]
FloatArray = NDArray[np.float64]


class Sampler(ABC):
    """Proposes batches of inclusion masks; adaptive samplers learn from the rewards."""

    stopped_early: bool = False

    @abstractmethod
    def next_masks(self) -> Masks | None:
        """The next batch to evaluate, shape ``(m, N)``, or ``None`` when done."""

    def observe(self, masks: Masks, rewards: FloatArray) -> None:  # noqa: B027
        """Receive the rewards of the batch last proposed (non-adaptive samplers ignore them)."""


class FixedDesignSampler(Sampler):
    """A non-adaptive sampler: all masks proposed in one batch (scored concurrently)."""

    def __init__(self, masks: Masks) -> None:
        self._masks: Masks | None = masks

    def next_masks(self) -> Masks | None:
        masks, self._masks = self._masks, None
        return masks


class Method(ABC):
    """An attribution method, selectable by :attr:`name`."""

    name: str = ""
    #: whether a prefix of a run is itself a valid run at a smaller budget
    anytime: bool = True

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


def full_mask(n_segments: int) -> Masks:
    return np.ones(n_segments, dtype=bool)


def rows_by_mask(masks: Masks, rewards: FloatArray) -> dict[bytes, float]:
    """Map each distinct mask to its (last) reward."""
    return {mask.tobytes(): float(value) for mask, value in zip(masks, rewards)}
