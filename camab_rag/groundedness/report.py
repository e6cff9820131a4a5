"""The groundedness verdict of one answer, and the figures it is built from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.result import AttributionResult

FloatArray = NDArray[np.float64]
GainSource = Literal["observed", "measured", "surrogate"]

DEFAULT_THRESHOLD = 0.22
"""Context gain (nats per answer token) at or above which an answer counts as grounded.

Chosen on 50 HotpotQA questions with the embedded SmolLM2 (``benchmarks/
bench_groundedness.py``, section "Groundedness score calibration" of BENCHMARKS.md):
Youden's J of correct answers against answers produced without the evidence, scored on
the same context (ROC AUC 0.87; the threshold was 0.22 on the first 23 questions too).
Recalibrate for another model, reward or prompt."""


@dataclass(frozen=True)
class ContextGain:
    """The rewards of the full and the empty context, and the queries it cost."""

    full: float
    empty: float
    n_queries: int

    @property
    def gain(self) -> float:
        return self.full - self.empty


@dataclass(frozen=True)
class SentenceGroundedness:
    """Groundedness of one answer sentence (from its per-statement attribution)."""

    text: str
    start: int
    end: int
    gain: float
    """Surrogate context gain of the sentence: ``sum`` of its segment scores."""
    top_share: float
    supported: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "gain": self.gain,
            "top_share": self.top_share,
            "supported": self.supported,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SentenceGroundedness:
        return cls(
            text=str(data["text"]),
            start=int(data["start"]),
            end=int(data["end"]),
            gain=float(data["gain"]),
            top_share=float(data["top_share"]),
            supported=bool(data["supported"]),
        )


@dataclass(frozen=True)
class GroundednessReport:
    """The groundedness verdict of one answer.

    Attributes:
        score: the context gain ``L(C) - L(empty)`` (the verdict compares it to
            ``threshold``).
        grounded: ``score >= threshold``.
        full_reward, empty_reward: the two rewards (``None`` for a surrogate score).
        source: ``"observed"`` (both subsets were in the attribution history),
            ``"measured"`` (asked the scorer) or ``"surrogate"`` (``sum(scores)``).
        top_share: share of the positive attribution carried by the ``top_k`` segments.
        sentences: per answer sentence gain, share and verdict.
        extra_queries: model calls spent beyond the attribution (0, 1 or 2).
    """

    score: float
    threshold: float
    grounded: bool
    source: GainSource
    full_reward: float | None
    empty_reward: float | None
    top_share: float
    top_k: int
    top_segments: list[int] = field(default_factory=list)
    sentences: list[SentenceGroundedness] = field(default_factory=list)
    extra_queries: int = 0

    @property
    def unsupported_sentences(self) -> list[SentenceGroundedness]:
        return [s for s in self.sentences if not s.supported]

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "threshold": self.threshold,
            "grounded": self.grounded,
            "source": self.source,
            "full_reward": self.full_reward,
            "empty_reward": self.empty_reward,
            "top_share": self.top_share,
            "top_k": self.top_k,
            "top_segments": list(self.top_segments),
            "sentences": [s.to_dict() for s in self.sentences],
            "extra_queries": self.extra_queries,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroundednessReport:
        """Inverse of :meth:`to_dict`."""
        return cls(
            score=float(data["score"]),
            threshold=float(data["threshold"]),
            grounded=bool(data["grounded"]),
            source=data["source"],
            full_reward=_optional_float(data.get("full_reward")),
            empty_reward=_optional_float(data.get("empty_reward")),
            top_share=float(data["top_share"]),
            top_k=int(data["top_k"]),
            top_segments=[int(i) for i in data.get("top_segments", [])],
            sentences=[SentenceGroundedness.from_dict(x) for x in data.get("sentences", [])],
            extra_queries=int(data.get("extra_queries", 0)),
        )


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def top_share(scores: Sequence[float] | FloatArray, k: int) -> float:
    """Share of the positive score mass carried by the ``k`` largest scores (0 if none)."""
    if k < 1:
        raise InputError(f"top_k must be >= 1, got {k}")
    positive = np.clip(np.asarray(scores, dtype=float), 0.0, None)
    total = float(positive.sum())
    if total <= 0.0:
        return 0.0
    return float(np.sort(positive)[::-1][:k].sum() / total)


def build_report(
    result: AttributionResult,
    chosen: ContextGain | None,
    source: GainSource,
    threshold: float,
    top_k: int,
    extra_queries: int,
) -> GroundednessReport:
    score = float(chosen.gain) if chosen is not None else float(np.sum(result.scores))
    sentences = [
        SentenceGroundedness(
            text=s.text,
            start=s.start,
            end=s.end,
            gain=float(np.sum(s.scores)),
            top_share=top_share(s.scores, top_k),
            supported=bool(float(np.sum(s.scores)) >= threshold),
        )
        for s in result.statements
    ]
    return GroundednessReport(
        score=score,
        threshold=float(threshold),
        grounded=bool(score >= threshold),
        source=source,
        full_reward=chosen.full if chosen is not None else None,
        empty_reward=chosen.empty if chosen is not None else None,
        top_share=top_share(result.scores, top_k) if result.n_segments else 0.0,
        top_k=top_k,
        top_segments=[i for i in result.top_k(min(top_k, result.n_segments))],
        sentences=sentences,
        extra_queries=extra_queries,
    )


__all__ = [
    "DEFAULT_THRESHOLD",
    "ContextGain",
    "GainSource",
    "GroundednessReport",
    "SentenceGroundedness",
    "build_report",
    "top_share",
]
