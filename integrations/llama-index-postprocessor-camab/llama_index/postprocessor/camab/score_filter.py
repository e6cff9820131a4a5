"""Keep the documents an answer relied on, by the attribution score each carries: for a
second pass that re-answers from the supporting documents (the LlamaIndex package's
node post-processor). Sorted by score (stable), those under ``threshold`` dropped, at
most ``top_k`` kept; ``missing`` says what becomes of a document without a score."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from camab_rag.errors import InputError

T = TypeVar("T")
Missing = Literal["error", "keep", "drop"]


def finite_number(value: object) -> float | None:
    """``value`` as a finite float (``None`` for anything else, booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class ScoreFilter:
    """``top_k`` (``None``: all), ``threshold`` (``None``: none) and ``missing``
    (``"error"``: raise, ``"keep"``: after the scored ones, never filtered, ``"drop"``),
    checked when built (:class:`~camab_rag.errors.InputError`)."""

    top_k: int | None = None
    threshold: float | None = None
    missing: Missing = "error"

    def __post_init__(self) -> None:
        top_k, threshold, missing = self.top_k, self.threshold, self.missing
        if top_k is not None and (type(top_k) is not int or top_k < 1):
            raise InputError(f"top_k must be a positive integer or None, got {top_k!r}")
        if threshold is not None and finite_number(threshold) is None:
            raise InputError(f"threshold must be a finite number or None, got {threshold!r}")
        if missing not in ("error", "keep", "drop"):
            raise InputError(f"missing must be 'error', 'keep' or 'drop', got {missing!r}")

    def __call__(
        self,
        items: Sequence[T],
        score: Callable[[T], float | None],
        unscored: Callable[[T], Exception],
    ) -> list[T]:
        """``items`` kept and re-ordered by ``score``; with ``missing="error"`` an item
        without a score raises ``unscored(item)``."""
        scored = [(score(item), item) for item in items]
        without = [item for value, item in scored if value is None]
        if without and self.missing == "error":
            raise unscored(without[0])
        ranked = sorted(((s, i) for s, i in scored if s is not None), key=lambda p: -p[0])
        kept = [i for s, i in ranked if self.threshold is None or s >= self.threshold]
        return kept[: self.top_k] + (without if self.missing == "keep" else [])
