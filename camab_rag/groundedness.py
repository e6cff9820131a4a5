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

from collections.abc import Callable, Mapping, Sequence
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

Chosen on 50 HotpotQA questions with the embedded SmolLM2 (``benchmarks/
bench_groundedness.py``, section "Groundedness score calibration" of BENCHMARKS.md):
Youden's J of correct answers against answers produced without the evidence, scored on
the same context (ROC AUC 0.87; the threshold was 0.22 on the first 23 questions too).
Recalibrate for another model, reward or prompt."""

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


@dataclass(frozen=True)
class _GainPlan:
    """The endpoint rewards already known, and the oracle that prices the missing ones."""

    known: dict[str, float | None]
    missing: list[str]
    oracle: ScorerOracle | None

    def masks(self, n: int) -> NDArray[np.bool_]:
        return np.array(
            [
                np.ones(n, dtype=bool) if name == "full" else np.zeros(n, dtype=bool)
                for name in self.missing
            ]
        )

    def finish(self, values: Sequence[float] | FloatArray = ()) -> ContextGain:
        known = dict(self.known)
        for name, value in zip(self.missing, values):
            known[name] = float(value)
        queries = self.oracle.n_queries if self.oracle is not None else 0
        return ContextGain(float(known["full"] or 0.0), float(known["empty"] or 0.0), queries)


def _plan_gain(
    result: AttributionResult,
    context: object,
    scorer: Any,
    prompt_builder: PromptBuilder | None,
    reward: RewardFn | None,
    user_template: str,
    system_prompt: str | None,
) -> _GainPlan:
    if result.status != "ok":
        raise InputError(f"the attribution failed ({result.error}); there is nothing to measure")
    if not result.response.strip():
        raise InputError("the attribution result has no response to score")
    full_mask, empty_mask = _endpoint_masks(result)
    known = {"full": result.reward_of(full_mask), "empty": result.reward_of(empty_mask)}
    missing = [name for name, value in known.items() if value is None]
    if not missing:
        return _GainPlan(known, [], None)
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
    return _GainPlan(known, missing, ScorerOracle(builder, scorer, result.response, reward_fn))


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
    plan = _plan_gain(result, context, scorer, prompt_builder, reward, user_template, system_prompt)
    if plan.oracle is None:
        return plan.finish()
    return plan.finish(plan.oracle.evaluate(plan.masks(result.n_segments)))


async def ameasure_context_gain(
    result: AttributionResult,
    context: object,
    scorer: Any,
    *,
    prompt_builder: PromptBuilder | None = None,
    reward: RewardFn | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
) -> ContextGain:
    """Async :func:`measure_context_gain` (scores with ``scorer.ascore``)."""
    plan = _plan_gain(result, context, scorer, prompt_builder, reward, user_template, system_prompt)
    if plan.oracle is None:
        return plan.finish()
    return plan.finish(await plan.oracle.aevaluate(plan.masks(result.n_segments)))


def _known_gain(
    result: AttributionResult, threshold: float, gain: ContextGain | None
) -> tuple[ContextGain | None, GainSource]:
    """The gain that needs no model call: given, or read from the attribution history."""
    if result.status != "ok":
        raise InputError(f"the attribution failed ({result.error}); groundedness is unknown")
    if not np.isfinite(threshold):
        raise InputError(f"threshold must be a finite number, got {threshold!r}")
    if gain is not None:
        return gain, "measured"
    observed = observed_context_gain(result)
    return observed, "observed" if observed is not None else "surrogate"


def _report(
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
    chosen, source = _known_gain(result, threshold, gain)
    extra = 0
    if (
        chosen is None
        and scorer is not None
        and (context is not None or prompt_builder is not None)
    ):
        chosen = measure_context_gain(
            result,
            context,
            scorer,
            prompt_builder=prompt_builder,
            user_template=user_template,
            system_prompt=system_prompt,
        )
        source, extra = ("measured" if chosen.n_queries else "observed"), chosen.n_queries
    return _report(result, chosen, source, threshold, top_k, extra)


async def aassess_groundedness(
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
    """Async :func:`assess_groundedness` (measures with ``scorer.ascore``)."""
    chosen, source = _known_gain(result, threshold, gain)
    extra = 0
    if (
        chosen is None
        and scorer is not None
        and (context is not None or prompt_builder is not None)
    ):
        chosen = await ameasure_context_gain(
            result,
            context,
            scorer,
            prompt_builder=prompt_builder,
            user_template=user_template,
            system_prompt=system_prompt,
        )
        source, extra = ("measured" if chosen.n_queries else "observed"), chosen.n_queries
    return _report(result, chosen, source, threshold, top_k, extra)


@dataclass(frozen=True)
class FilteredAnswer:
    """What the filter returns: the answer to show and the verdict behind it.

    ``grounded`` is ``None`` when groundedness is unknown (the attribution failed); such an
    answer is blocked by a ``mode="block"`` filter (fail closed) unless it was built with
    ``on_error="pass"``.
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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FilteredAnswer:
        """Inverse of :meth:`to_dict`."""
        report = data.get("report")
        grounded = data.get("grounded")
        return cls(
            answer=str(data["answer"]),
            original_answer=str(data["original_answer"]),
            grounded=None if grounded is None else bool(grounded),
            blocked=bool(data["blocked"]),
            mode=data["mode"],
            report=GroundednessReport.from_dict(report) if report is not None else None,
            error=data.get("error"),
        )


Fallback = str | Callable[[AttributionResult, GroundednessReport | None], str]


class GroundednessFilter:
    """Flag or block answers that the retrieved context does not support.

    Args:
        threshold: context gain (reward units, nats per token by default) needed to pass.
        mode: ``"flag"`` keeps the answer and attaches the verdict; ``"block"`` replaces an
            ungrounded answer by ``fallback``.
        fallback: the replacement text, or a function ``(result, report) -> str``.
        top_k: segments counted in the top-share figure.
        on_error: what to do when groundedness cannot be judged (the attribution failed,
            the scorer errored): ``"block"`` shows the fallback, ``"pass"`` the answer.
            Default: ``"block"`` in ``mode="block"`` (a filter meant to stop unsupported
            answers fails closed), ``"pass"`` in ``mode="flag"`` (nothing is ever blocked;
            the verdict says ``grounded=None`` with the error).
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
        on_error: Literal["pass", "block"] | None = None,
        scorer: Any = None,
    ) -> None:
        if mode not in ("flag", "block"):
            raise InputError(f"mode must be 'flag' or 'block', got {mode!r}")
        if on_error is None:
            on_error = "block" if mode == "block" else "pass"
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

    def _unknown(self, result: AttributionResult, error: str | None) -> FilteredAnswer:
        """The verdict when groundedness cannot be measured: not grounded when no retrieved
        context reached the model (``status="no_context"``), else unknown (``on_error``
        decides)."""
        no_context = result.status == "no_context"
        block = self.mode == "block" and (no_context or self.on_error == "block")
        return FilteredAnswer(
            answer=self._fallback_text(result, None) if block else result.response,
            original_answer=result.response,
            grounded=False if no_context else None,
            blocked=block,
            mode=self.mode,
            report=None,
            error=error,
        )

    def _verdict(self, result: AttributionResult, report: GroundednessReport) -> FilteredAnswer:
        block = self.mode == "block" and not report.grounded
        return FilteredAnswer(
            answer=self._fallback_text(result, report) if block else result.response,
            original_answer=result.response,
            grounded=report.grounded,
            blocked=block,
            mode=self.mode,
            report=report,
        )

    def _assess_kwargs(
        self, context: object, prompt_builder: PromptBuilder | None, scorer: Any
    ) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "top_k": self.top_k,
            "context": context,
            "scorer": self.scorer if self.scorer is not None else scorer,
            "prompt_builder": prompt_builder,
        }

    def __call__(
        self,
        result: AttributionResult,
        *,
        context: object = None,
        prompt_builder: PromptBuilder | None = None,
        scorer: Any = None,
    ) -> FilteredAnswer:
        """Judge ``result.response``; returns the answer to show with its verdict.

        ``scorer`` (used when the filter has none of its own) and ``context`` or
        ``prompt_builder`` let it measure ``L(C)``/``L(empty)`` when the attribution did
        not evaluate them. Bad input (e.g. a context that does not match the attribution)
        raises :class:`~camab_rag.errors.InputError`; :meth:`judge` never raises.
        """
        if result.status != "ok":
            return self._unknown(result, result.error)
        report = assess_groundedness(result, **self._assess_kwargs(context, prompt_builder, scorer))
        return self._verdict(result, report)

    async def acall(
        self,
        result: AttributionResult,
        *,
        context: object = None,
        prompt_builder: PromptBuilder | None = None,
        scorer: Any = None,
    ) -> FilteredAnswer:
        """Async :meth:`__call__` (measures with ``scorer.ascore``)."""
        if result.status != "ok":
            return self._unknown(result, result.error)
        report = await aassess_groundedness(
            result, **self._assess_kwargs(context, prompt_builder, scorer)
        )
        return self._verdict(result, report)

    def judge(
        self,
        result: AttributionResult,
        *,
        context: object = None,
        prompt_builder: PromptBuilder | None = None,
        scorer: Any = None,
    ) -> FilteredAnswer:
        """:meth:`__call__` for host applications: never raises. When the verdict cannot
        be computed (the attribution failed, the scorer errored) ``grounded`` is ``None``,
        ``error`` says why and ``on_error`` decides whether the answer passes."""
        try:
            return self(result, context=context, prompt_builder=prompt_builder, scorer=scorer)
        except Exception as error:  # the host chain must get its answer
            return self._unknown(result, f"groundedness: {type(error).__name__}: {error}")

    async def ajudge(
        self,
        result: AttributionResult,
        *,
        context: object = None,
        prompt_builder: PromptBuilder | None = None,
        scorer: Any = None,
    ) -> FilteredAnswer:
        """Async :meth:`judge` (never raises)."""
        try:
            return await self.acall(
                result, context=context, prompt_builder=prompt_builder, scorer=scorer
            )
        except Exception as error:  # the host chain must get its answer
            return self._unknown(result, f"groundedness: {type(error).__name__}: {error}")


def check_groundedness_filter(value: object) -> None:
    """Refuse a ``groundedness=`` argument of an integration that is neither ``None`` nor a
    :class:`GroundednessFilter` (a ``TypeError`` naming what was given)."""
    if value is not None and not isinstance(value, GroundednessFilter):
        raise TypeError(
            "groundedness must be a camab_rag.groundedness.GroundednessFilter, got "
            f"{type(value).__name__}"
        )


__all__ = [
    "DEFAULT_FALLBACK",
    "DEFAULT_THRESHOLD",
    "ContextGain",
    "FilteredAnswer",
    "GroundednessFilter",
    "GroundednessReport",
    "SentenceGroundedness",
    "aassess_groundedness",
    "ameasure_context_gain",
    "assess_groundedness",
    "check_groundedness_filter",
    "measure_context_gain",
    "observed_context_gain",
    "top_share",
]
