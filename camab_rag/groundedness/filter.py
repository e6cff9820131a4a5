"""Flag or block answers the retrieved context does not support.

:class:`GroundednessFilter` judges an attribution (:meth:`~GroundednessFilter.judge`) or a
bare answer (:meth:`~GroundednessFilter.judge_answer`: two model calls) and returns the
answer to show (:class:`FilteredAnswer`); every method runs one generator of model calls.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from camab_rag.errors import InputError, WrongTypeError
from camab_rag.groundedness.calibration import calibrate_steps
from camab_rag.groundedness.gain import answer_steps, assess_steps
from camab_rag.groundedness.report import (
    DEFAULT_BLOCK_ON,
    BlockOn,
    GroundednessReport,
    read_by,
    recalibrated,
)
from camab_rag.groundedness.verdict import DEFAULT_CALIBRATION, Calibration, Verdict
from camab_rag.prompts import PromptBuilder
from camab_rag.result import VERDICT_READER, AttributionResult, cast_fields, fields_dict
from camab_rag.scorers.base import ChatMessage
from camab_rag.steps import Steps, adrive, drive

logger = logging.getLogger(__name__)

Mode = Literal["flag", "block"]

DEFAULT_FALLBACK = (
    "I could not find support for an answer in the retrieved documents, so I will not guess."
)
CHECK_FAILED_FALLBACK = (
    "I could not check this answer against the retrieved documents, so I will not show it."
)
"""What a blocking filter with the default fallback shows when the check itself failed (a
scorer error): saying the documents hold no support would be untrue."""


@dataclass(frozen=True)
class FilteredAnswer:
    """What the filter returns: the answer to show and the verdict behind it.

    ``verdict`` (``grounded``: not ``"unsupported"``) is ``None`` when groundedness is
    unknown; a ``mode="block"`` filter then blocks unless ``on_error="pass"``. ``flagged``:
    show it marked; ``abstained``: it only declines to answer (``supported``).
    """

    answer: str
    original_answer: str
    grounded: bool | None
    blocked: bool
    mode: Mode
    report: GroundednessReport | None
    error: str | None = None
    verdict: Verdict | None = None

    @property
    def flagged(self) -> bool:
        return self.verdict != "supported"

    @property
    def abstained(self) -> bool:
        """The answer only declines to answer: no claim to check (verdict ``supported``)."""
        return self.report is not None and self.report.abstained

    def __repr__(self) -> str:
        state = "blocked" if self.blocked else ("flagged" if self.flagged else "shown")
        verdict = "abstained: no claim to check" if self.abstained else self.verdict
        return f"FilteredAnswer({verdict or 'unknown'}, {state}, mode={self.mode!r})"

    def to_dict(self) -> dict[str, Any]:
        return {
            **fields_dict(self),
            "abstained": self.abstained,
            "flagged": self.flagged,
            "report": self.report.to_dict() if self.report is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FilteredAnswer:
        """Inverse of :meth:`to_dict`."""
        report = data.get("report")
        grounded = data.get("grounded")
        verdict = data.get("verdict")
        if verdict is None and grounded is not None:  # a dict written before verdicts
            verdict = "supported" if grounded else "unsupported"
        done = {
            "grounded": None if grounded is None else bool(grounded),
            "report": GroundednessReport.from_dict(report) if report is not None else None,
            "verdict": verdict,
        }
        return cls(**cast_fields(cls, data, done))


Fallback = str | Callable[[AttributionResult, GroundednessReport | None], str]


def _cut_at(calibration: Calibration, block_at: float | None, flag_at: float | None) -> Calibration:
    """``calibration`` with the caller's ``P(unsupported)`` cut-offs (``flag_at`` at most
    ``block_at``; a ``block_at`` below the calibration's flag cut moves that too)."""
    if block_at is None and flag_at is None:
        return calibration
    for name, value in (("block_at", block_at), ("flag_at", flag_at)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1
        ):
            raise InputError(f"{name} must be a probability between 0 and 1, got {value!r}")
    block = calibration.block_at if block_at is None else float(block_at)
    flag = min(calibration.flag_at, block) if flag_at is None else float(flag_at)
    if flag > block:
        raise InputError(f"flag_at ({flag:g}) must not be above block_at ({block:g})")
    return replace(calibration, block_at=block, flag_at=flag)


class GroundednessFilter:
    """Flag or block answers that the retrieved context does not support (grounding, not
    relevance: a true but unrelated answer passes).

    Args:
        threshold: ``None``: the calibrated verdict (:attr:`calibration`); a number: the
            two-verdict rule ``score >= threshold``.
        calibration: the verdict model (default: fitted for the embedded SmolLM2;
            :meth:`calibrate` fits one for another model).
        mode: ``"flag"`` marks ``uncertain`` and ``unsupported`` answers; ``"block"``
            replaces an ``unsupported`` one by ``fallback``.
        block_on: ``"facts"`` (default): ``unsupported`` only when the answer also states a
            number, date or name the context lacks or states otherwise, or a sentence it
            holds nothing of (a reworded answer is ``uncertain``); ``"any"``: the stricter
            calibrated verdict (BENCHMARKS.md, "Groundedness gate").
        fallback: the replacement text, or a function ``(result, report) -> str`` (one
            that raises gives the default text).
        top_k: segments counted in the top-share figure.
        on_error: when groundedness cannot be judged, ``"block"`` shows the fallback and
            ``"pass"`` the answer (default: ``"block"`` in block mode, fail closed).
        scorer: measures the anchors when the attribution did not (needs ``context``).
        block_at, flag_at: your own cut-offs on ``P(unsupported)`` (0-1), in place of the
            calibration's (``repr`` shows the ones in use).
    """

    def __init__(
        self,
        threshold: float | None = None,
        *,
        calibration: Calibration | None = None,
        mode: Mode = "flag",
        fallback: Fallback = DEFAULT_FALLBACK,
        top_k: int = 2,
        on_error: Literal["pass", "block"] | None = None,
        scorer: Any = None,
        block_on: BlockOn = DEFAULT_BLOCK_ON,
        block_at: float | None = None,
        flag_at: float | None = None,
    ) -> None:
        if on_error is None:
            on_error = "block" if mode == "block" else "pass"
        for name, value, (a, b) in (
            ("mode", mode, ("flag", "block")),
            ("on_error", on_error, ("pass", "block")),
            ("block_on", block_on, ("any", "facts")),
        ):
            if value not in (a, b):
                raise InputError(f"{name} must be {a!r} or {b!r}, got {value!r}")
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float, np.number))
            or not np.isfinite(threshold)
        ):
            hint = " (a scorer? pass it by name: GroundednessFilter(scorer=...))"
            hint = hint if callable(getattr(threshold, "score", None)) else ""
            raise InputError(f"threshold must be a finite number or None, got {threshold!r}{hint}")
        if calibration is not None and not isinstance(calibration, Calibration):
            raise InputError(
                "calibration must be a camab_rag.groundedness.verdict.Calibration (from "
                f"calibrate()), got {type(calibration).__name__}"
            )
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise InputError(f"top_k must be an integer >= 1, got {top_k!r}")
        if not (isinstance(fallback, str) or callable(fallback)):
            raise InputError("fallback must be a string or a function (result, report) -> str")
        self.threshold = None if threshold is None else float(threshold)
        self.mode: Mode = mode
        self.block_on: BlockOn = block_on
        self.fallback = fallback
        self.top_k = top_k
        self.on_error = on_error
        self.scorer = scorer
        self.calibration: Calibration = _cut_at(
            calibration or DEFAULT_CALIBRATION, block_at, flag_at
        )
        """The verdict model (used when ``threshold`` is ``None``)."""

    def __repr__(self) -> str:
        if self.threshold is not None:
            rule = f"threshold={self.threshold:g}"
        else:
            c = self.calibration
            rule = f"calibration={c.model or '?'!r}, block_at={c.block_at:.3f}"
        if self.block_on != DEFAULT_BLOCK_ON:
            rule += f", block_on={self.block_on!r}"
        return f"GroundednessFilter(mode={self.mode!r}, {rule})"

    def _fallback_text(self, result: AttributionResult, report: GroundednessReport | None) -> str:
        """The text shown instead of a blocked answer (the default if the function fails)."""
        if isinstance(self.fallback, str):
            return self.fallback
        try:
            return str(self.fallback(result, report))
        except Exception as error:  # the host's function: any failure
            logger.warning(
                "groundedness fallback function failed (%s); showing the default fallback",
                type(error).__name__,
            )
            return DEFAULT_FALLBACK

    def _answer(
        self,
        result: AttributionResult,
        report: GroundednessReport | None,
        error: str | None = None,
    ) -> FilteredAnswer:
        """The answer to show under ``report`` read by this filter's rule; without one,
        ``unsupported`` when no retrieved context reached the model (``status=
        "no_context"``), else unknown (``on_error`` decides)."""
        verdict: Verdict | None = "unsupported" if result.status == "no_context" else None
        if report is not None:
            if self.threshold is None and self.calibration is not DEFAULT_CALIBRATION:
                report = recalibrated(report, self.calibration)
            report = read_by(report, self.block_on)
            verdict = report.verdict
        unknown = verdict is None
        block = self.mode == "block" and (
            self.on_error == "block" if unknown else verdict == "unsupported"
        )
        shown = result.response
        if block:
            failed = unknown and self.fallback == DEFAULT_FALLBACK
            shown = CHECK_FAILED_FALLBACK if failed else self._fallback_text(result, report)
        return FilteredAnswer(
            answer=shown,
            original_answer=result.response,
            grounded=None if unknown else verdict != "unsupported",
            blocked=block,
            mode=self.mode,
            report=report,
            error=error,
            verdict=verdict,
        )

    def judge_steps(
        self,
        result: AttributionResult,
        *,
        safe: bool = True,
        context: object = None,
        prompt_builder: PromptBuilder | None = None,
        scorer: Any = None,
    ) -> Steps[FilteredAnswer]:
        """:meth:`judge` as a generator of model calls (:mod:`camab_rag.steps`), for a
        caller that runs its own sync or async loop; ``safe=False``: :meth:`__call__`."""
        try:
            if result.status != "ok":
                return self._answer(result, None, result.error)
            report = yield from assess_steps(
                result,
                threshold=self.threshold,
                top_k=self.top_k,
                context=context,
                scorer=self.scorer if self.scorer is not None else scorer,
                prompt_builder=prompt_builder,
                block_on="any",
            )
            return self._answer(result, report)
        except Exception as error:
            if not safe:
                raise
            return self._answer(result, None, f"groundedness: {type(error).__name__}: {error}")

    def __call__(self, result: AttributionResult, **where: Any) -> FilteredAnswer:
        """Judge ``result.response``; returns the answer to show with its verdict.

        Keywords: ``context`` or ``prompt_builder`` and ``scorer`` (used when the filter
        has none of its own) let it measure ``L(C)``/``L(empty)`` when the attribution did
        not evaluate them. Bad input (e.g. a context that does not match the attribution)
        raises :class:`~camab_rag.errors.InputError`; :meth:`judge` never raises.
        """
        return drive(self.judge_steps(result, safe=False, **where))

    def judge(self, result: AttributionResult, **where: Any) -> FilteredAnswer:
        """:meth:`__call__` for host applications (same keywords): never raises. When the
        verdict cannot be computed (the attribution failed, the scorer errored)
        ``grounded`` is ``None``, ``error`` says why and ``on_error`` decides whether the
        answer passes."""
        return drive(self.judge_steps(result, **where))

    async def ajudge(self, result: AttributionResult, **where: Any) -> FilteredAnswer:
        """Async :meth:`judge` (never raises)."""
        return await adrive(self.judge_steps(result, **where))

    # ------------------------------------------------------------------ no attribution
    def answer_steps(
        self,
        question: str,
        context: object,
        answer: str,
        scorer: Any = None,
        *,
        prompt_builder: PromptBuilder | None = None,
        history: Sequence[ChatMessage] | None = None,
    ) -> Steps[FilteredAnswer]:
        """:meth:`judge_answer` as a generator of model calls."""
        stub = AttributionResult(
            scores=np.zeros(0), question=str(question), response=str(answer), method="none"
        )
        try:
            report = yield from answer_steps(
                question,
                context,
                answer,
                self.scorer if self.scorer is not None else scorer,
                threshold=self.threshold,
                prompt_builder=prompt_builder,
                history=history,
                block_on="any",  # recalibrated first, then read by this filter's rule
            )
        except Exception as error:
            return self._answer(stub, None, f"groundedness: {type(error).__name__}: {error}")
        return self._answer(stub, report)

    def judge_answer(
        self, question: str, context: object, answer: str, scorer: Any = None, **where: Any
    ) -> FilteredAnswer:
        """Judge ``answer`` with no attribution: two model calls, as
        :func:`camab_rag.assess_answer` (``scorer``: when the filter has none of its own;
        keywords ``prompt_builder``, ``history``). Never raises: an error gives
        ``grounded=None`` and ``on_error`` decides."""
        return drive(self.answer_steps(question, context, answer, scorer, **where))

    # ------------------------------------------------------------------ calibration
    def calibrate(
        self,
        scorer: Any = None,
        examples: Iterable[object] | None = None,
        *,
        progress: bool | Callable[[int, int], None] = True,
    ) -> GroundednessFilter:
        """A copy of this filter whose verdict is fitted for ``scorer``'s model (default:
        the filter's own) on the shipped labelled set or ``examples``
        (:func:`~camab_rag.groundedness.calibration.calibrate`: the weights refitted, the
        cut points kept; its :attr:`calibration` says on what, with held-out figures)."""
        fitted = copy(self)
        chosen = scorer if scorer is not None else self.scorer
        fitted.calibration = drive(calibrate_steps(chosen, examples, progress=progress))
        fitted.threshold = None
        return fitted


def check_groundedness_filter(value: object, *, blocking_refused: str | None = None) -> None:
    """Refuse a ``groundedness=`` value that is neither ``None`` nor a
    :class:`GroundednessFilter` (``WrongTypeError``), and a blocking filter where the caller
    cannot hold the answer back (``InputError``; ``blocking_refused`` says why)."""
    if value is not None and not isinstance(value, GroundednessFilter):
        shown = repr(value) if len(repr(value)) <= 40 else type(value).__name__
        raise WrongTypeError(
            "groundedness must be True (the default filter, GroundednessFilter()), False or "
            f"None (no filter), or a camab_rag.GroundednessFilter(...); got {shown}"
        )
    if blocking_refused is not None and value is not None and value.mode == "block":
        raise InputError(f"GroundednessFilter(mode='block') is refused here: {blocking_refused}")


VERDICT_READER[:] = [FilteredAnswer.from_dict]  # AttributionResult.from_dict reads its verdict
