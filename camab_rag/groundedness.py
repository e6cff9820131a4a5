"""Groundedness: how much of the answer does the retrieved context explain?

The score is built from quantities attribution already has:

* **context gain** ``L(C) - L(empty)``: how much the whole context raises the answer's
  reward (by default its mean token log-probability, nats per token). The two rewards are
  read from the attribution history when both subsets were evaluated; otherwise
  :func:`measure_context_gain` asks the scorer for them (at most two extra queries); with
  neither, the linear surrogate's prediction ``sum(scores)`` is used.
* **top share**: the share of the positive attribution mass carried by the ``top_k``
  segments (1.0 = a few segments explain the answer, low = diffuse support).
* **per answer sentence**: the surrogate gain ``sum(statement.scores)`` and top share of
  each sentence, so one unsupported sentence in a long answer can be flagged.

An answer is *grounded* when its context gain reaches the threshold.
:class:`GroundednessFilter` attaches that verdict (``mode="flag"``) or replaces an
ungrounded answer by a fallback (``mode="block"``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.oracle import ScorerOracle
from camab_rag.prompts import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_USER_TEMPLATE,
    PromptBuilder,
    TemplatePromptBuilder,
)
from camab_rag.result import AttributionResult
from camab_rag.rewards import REWARDS, RewardFn
from camab_rag.segments import to_documents

FloatArray = NDArray[np.float64]
GainSource = Literal["observed", "measured", "surrogate"]
Mode = Literal["flag", "block"]

DEFAULT_THRESHOLD = 0.22
"""Context gain (nats per answer token) at or above which an answer counts as grounded.

Chosen on 23 HotpotQA questions with the embedded SmolLM2 (``benchmarks/
bench_groundedness.py``, section "Groundedness score calibration" of BENCHMARKS.md):
correct answers against answers produced without the evidence, scored on the same
context, ROC AUC 0.90. Recalibrate for another model, reward or prompt."""

DEFAULT_FALLBACK = (
    "I could not find support for an answer in the retrieved documents, so I will not guess."
)


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


def top_share(scores: Sequence[float] | FloatArray, k: int) -> float:
    """Share of the positive score mass carried by the ``k`` largest scores (0 if none)."""
    if k < 1:
        raise InputError(f"top_k must be >= 1, got {k}")
    positive = np.clip(np.asarray(scores, dtype=float), 0.0, None)
    total = float(positive.sum())
    if total <= 0.0:
        return 0.0
    return float(np.sort(positive)[::-1][:k].sum() / total)


def _endpoint_masks(result: AttributionResult) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    n = result.n_segments
    return np.ones(n, dtype=bool), np.zeros(n, dtype=bool)


def observed_context_gain(result: AttributionResult) -> ContextGain | None:
    """``L(C)`` and ``L(empty)`` from the attribution history, if both were evaluated."""
    full_mask, empty_mask = _endpoint_masks(result)
    full, empty = result.reward_of(full_mask), result.reward_of(empty_mask)
    if full is None or empty is None:
        return None
    return ContextGain(full, empty, 0)


def measure_context_gain(
    result: AttributionResult,
    context: object,
    scorer: Any,
    *,
    prompt_builder: PromptBuilder | None = None,
    reward: RewardFn | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
) -> ContextGain:
    """``L(C)`` and ``L(empty)`` for ``result``'s response, asking ``scorer`` only for the
    subsets the attribution did not evaluate (at most two queries).

    ``context`` is what was attributed (the same documents, same order); pass the same
    ``prompt_builder`` (or ``user_template``/``system_prompt``) the attribution used, so
    the prompts match. ``reward`` is needed only for a custom reward function.
    """
    if result.status != "ok":
        raise InputError(f"the attribution failed ({result.error}); there is nothing to measure")
    if not result.response.strip():
        raise InputError("the attribution result has no response to score")
    full_mask, empty_mask = _endpoint_masks(result)
    known = {
        "full": result.reward_of(full_mask),
        "empty": result.reward_of(empty_mask),
    }
    missing = [name for name, value in known.items() if value is None]
    if not missing:
        return ContextGain(float(known["full"] or 0.0), float(known["empty"] or 0.0), 0)
    reward_fn = reward or REWARDS.get(result.reward)
    if reward_fn is None:
        raise InputError(
            f"the attribution used the custom reward {result.reward!r}: pass reward=<function>"
        )
    builder = prompt_builder
    if builder is None:
        documents = to_documents(context)
        if any(s.doc_index >= len(documents) for s in result.segments):
            raise InputError("the context has fewer documents than the attribution's segments")
        builder = TemplatePromptBuilder(
            result.question,
            documents,
            result.segments,
            user_template=user_template,
            system_prompt=system_prompt,
        )
    if builder.n_segments != result.n_segments:
        raise InputError(
            f"the prompt builder covers {builder.n_segments} segments, the attribution has "
            f"{result.n_segments}"
        )
    oracle = ScorerOracle(builder, scorer, result.response, reward_fn)
    masks = np.array([full_mask if name == "full" else empty_mask for name in missing])
    for name, value in zip(missing, oracle.evaluate(masks)):
        known[name] = float(value)
    return ContextGain(float(known["full"] or 0.0), float(known["empty"] or 0.0), oracle.n_queries)


def assess_groundedness(
    result: AttributionResult,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    top_k: int = 2,
    context: object = None,
    scorer: Any = None,
    prompt_builder: PromptBuilder | None = None,
    gain: ContextGain | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
) -> GroundednessReport:
    """The groundedness report of an attribution.

    The context gain is taken, in order, from ``gain`` (precomputed), the attribution
    history, a measurement with ``scorer`` on ``context`` (at most two queries), or the
    linear surrogate ``sum(result.scores)``.
    """
    if result.status != "ok":
        raise InputError(f"the attribution failed ({result.error}); groundedness is unknown")
    if not np.isfinite(threshold):
        raise InputError(f"threshold must be a finite number, got {threshold!r}")
    source: GainSource
    chosen = gain or observed_context_gain(result)
    if chosen is not None:
        source = "observed" if chosen.n_queries == 0 and gain is None else "measured"
    elif scorer is not None and (context is not None or prompt_builder is not None):
        chosen = measure_context_gain(
            result,
            context,
            scorer,
            prompt_builder=prompt_builder,
            user_template=user_template,
            system_prompt=system_prompt,
        )
        source = "measured" if chosen.n_queries else "observed"
    else:
        source = "surrogate"
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
        extra_queries=chosen.n_queries if chosen is not None and gain is None else 0,
    )


@dataclass(frozen=True)
class FilteredAnswer:
    """What the filter returns: the answer to show and the verdict behind it.

    ``grounded`` is ``None`` when groundedness is unknown (the attribution failed); such an
    answer passes unless the filter was built with ``on_error="block"``.
    """

    answer: str
    original_answer: str
    grounded: bool | None
    blocked: bool
    mode: Mode
    report: GroundednessReport | None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "original_answer": self.original_answer,
            "grounded": self.grounded,
            "blocked": self.blocked,
            "mode": self.mode,
            "report": self.report.to_dict() if self.report is not None else None,
            "error": self.error,
        }


Fallback = str | Callable[[AttributionResult, GroundednessReport | None], str]


class GroundednessFilter:
    """Flag or block answers that the retrieved context does not support.

    Args:
        threshold: context gain (reward units, nats per token by default) needed to pass.
        mode: ``"flag"`` keeps the answer and attaches the verdict; ``"block"`` replaces an
            ungrounded answer by ``fallback``.
        fallback: the replacement text, or a function ``(result, report) -> str``.
        top_k: segments counted in the top-share figure.
        on_error: what to do when the attribution failed: ``"pass"`` (default: never break
            the host application) or ``"block"``.
        scorer: optional scorer used to measure ``L(C)``/``L(empty)`` when the attribution
            did not evaluate them (at most two extra queries; needs ``context``).

    Use it on its own (``GroundednessFilter(mode="block")(result, context=docs)``) or inside
    an integration callback that already holds an :class:`AttributionResult`.
    """

    def __init__(
        self,
        threshold: float = DEFAULT_THRESHOLD,
        *,
        mode: Mode = "flag",
        fallback: Fallback = DEFAULT_FALLBACK,
        top_k: int = 2,
        on_error: Literal["pass", "block"] = "pass",
        scorer: Any = None,
    ) -> None:
        if mode not in ("flag", "block"):
            raise InputError(f"mode must be 'flag' or 'block', got {mode!r}")
        if on_error not in ("pass", "block"):
            raise InputError(f"on_error must be 'pass' or 'block', got {on_error!r}")
        if not np.isfinite(threshold):
            raise InputError(f"threshold must be a finite number, got {threshold!r}")
        if top_k < 1:
            raise InputError(f"top_k must be >= 1, got {top_k}")
        if not (isinstance(fallback, str) or callable(fallback)):
            raise InputError("fallback must be a string or a function (result, report) -> str")
        self.threshold = float(threshold)
        self.mode: Mode = mode
        self.fallback = fallback
        self.top_k = top_k
        self.on_error = on_error
        self.scorer = scorer

    def _fallback_text(self, result: AttributionResult, report: GroundednessReport | None) -> str:
        if isinstance(self.fallback, str):
            return self.fallback
        return str(self.fallback(result, report))

    def __call__(
        self,
        result: AttributionResult,
        *,
        context: object = None,
        prompt_builder: PromptBuilder | None = None,
    ) -> FilteredAnswer:
        """Judge ``result.response``; returns the answer to show with its verdict."""
        if result.status != "ok":
            block = self.on_error == "block" and self.mode == "block"
            return FilteredAnswer(
                answer=self._fallback_text(result, None) if block else result.response,
                original_answer=result.response,
                grounded=None,
                blocked=block,
                mode=self.mode,
                report=None,
                error=result.error,
            )
        report = assess_groundedness(
            result,
            threshold=self.threshold,
            top_k=self.top_k,
            context=context,
            scorer=self.scorer,
            prompt_builder=prompt_builder,
        )
        block = self.mode == "block" and not report.grounded
        return FilteredAnswer(
            answer=self._fallback_text(result, report) if block else result.response,
            original_answer=result.response,
            grounded=report.grounded,
            blocked=block,
            mode=self.mode,
            report=report,
        )


__all__ = [
    "DEFAULT_FALLBACK",
    "DEFAULT_THRESHOLD",
    "ContextGain",
    "FilteredAnswer",
    "GroundednessFilter",
    "GroundednessReport",
    "SentenceGroundedness",
    "assess_groundedness",
    "measure_context_gain",
    "observed_context_gain",
    "top_share",
]
