"""Flag or block answers the retrieved context does not support: :class:`GroundednessFilter`
judges an attribution or a bare answer and returns the answer to show."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from camab_rag.errors import InputError, WrongTypeError
from camab_rag.groundedness.calibration import Progress, calibrate_steps
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
from camab_rag.result import AttributionResult, cast_fields, fields_dict
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
CHECK_FAILED_NOTICE = "Not checked: this answer could not be checked against the documents."
"""The notice beside an answer shown though its check failed (flag mode, or ``on_error``)."""


@dataclass(frozen=True)
class FilteredAnswer:
    """The answer to show and the verdict behind it (``None``: unknown, and ``on_error``
    decided); ``grounded`` is ``verdict != "unsupported"``."""

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
        return self.report is not None and self.report.abstained

    @property
    def notice(self) -> str | None:
        """The words to show beside a flagged answer that is shown (``None``: none needed)."""
        from camab_rag.render.text import verdict_text  # the renderers import this module

        if not self.flagged or self.blocked:
            return None
        if self.report is None and self.error is not None:  # shown, never checked
            return CHECK_FAILED_NOTICE
        return verdict_text(self.report)

    def __repr__(self) -> str:
        state = "blocked" if self.blocked else ("flagged" if self.flagged else "shown")
        verdict = "abstained: no claim to check" if self.abstained else self.verdict
        return f"FilteredAnswer({verdict or 'unknown'}, {state}, mode={self.mode!r})"

    def to_dict(self) -> dict[str, Any]:
        return {
            **fields_dict(self),
            "abstained": self.abstained,
            "flagged": self.flagged,
            "notice": self.notice,  # the words to show beside it (review 23: JSON lacked them)
            "report": self.report.to_dict() if self.report is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FilteredAnswer:
        report = data.get("report")
        done = {"report": GroundednessReport.from_dict(report) if report is not None else None}
        return cls(**cast_fields(cls, data, done))


Fallback = str | Callable[[AttributionResult, GroundednessReport | None], str]


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


class GroundednessFilter:
    """Flag or block answers the retrieved context does not support (grounding, not
    relevance: a true but unrelated answer passes).

    ``mode="flag"`` marks ``uncertain`` and ``unsupported`` answers, ``"block"`` replaces an
    ``unsupported`` one by ``fallback`` (text, or ``(result, report) -> str``); ``on_error``:
    ``"block"`` or ``"pass"`` an answer that cannot be judged (default: fail closed in block
    mode). ``block_on="facts"``: ``unsupported`` only when a number, date or name is also
    unchecked, ``"any"``: as calibrated. ``threshold``: ``score >= threshold`` in place of
    the ``calibration`` (:meth:`calibrate`); ``block_at``/``flag_at``: your own cut-offs on
    ``P(unsupported)``; ``scorer`` measures the anchors when the attribution did not."""

    def __init__(
        self,
        threshold: float | None = None,
        *,
        calibration: Calibration | None = None,
        mode: Mode = "flag",
        fallback: Fallback = DEFAULT_FALLBACK,
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
        if threshold is not None and not (_is_number(threshold) and np.isfinite(threshold)):
            hint = " (a scorer? pass it by name: GroundednessFilter(scorer=...))"
            hint = hint if callable(getattr(threshold, "score", None)) else ""
            raise InputError(f"threshold must be a finite number or None, got {threshold!r}{hint}")
        if calibration is not None and not isinstance(calibration, Calibration):
            raise InputError(f"calibration must come from calibrate(), got {calibration!r:.60}")
        if not (isinstance(fallback, str) or callable(fallback)):
            raise InputError("fallback must be a string or a function (result, report) -> str")
        self.threshold = None if threshold is None else float(threshold)
        self.mode: Mode = mode
        self.block_on: BlockOn = block_on
        self.fallback = fallback
        self.on_error = on_error
        self.scorer = scorer
        calibration = calibration or DEFAULT_CALIBRATION
        if block_at is not None or flag_at is not None:  # your own cut-offs
            for name, cut in (("block_at", block_at), ("flag_at", flag_at)):
                if cut is not None and not (_is_number(cut) and 0 < cut < 1):
                    raise InputError(f"{name} must be a probability between 0 and 1, got {cut!r}")
            block = calibration.block_at if block_at is None else float(block_at)
            flag = min(calibration.flag_at, block) if flag_at is None else float(flag_at)
            if flag > block:
                raise InputError(f"flag_at ({flag:g}) must not be above block_at ({block:g})")
            calibration = replace(calibration, block_at=block, flag_at=flag)
        self.calibration: Calibration = calibration

    def __repr__(self) -> str:
        c = self.calibration
        rule = f"calibration={c.model or '?'!r}, block_at={c.block_at:.3f}"
        if self.threshold is not None:
            rule = f"threshold={self.threshold:g}"
        if self.block_on != DEFAULT_BLOCK_ON:
            rule += f", block_on={self.block_on!r}"
        return f"GroundednessFilter(mode={self.mode!r}, {rule})"

    def _fallback_text(self, result: AttributionResult, report: GroundednessReport | None) -> str:
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
        self, result: AttributionResult, report: GroundednessReport | None, error: str | None = None
    ) -> FilteredAnswer:
        """The answer to show; without a report: unsupported if no context, else unknown."""
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
        if block and unknown and self.fallback == DEFAULT_FALLBACK:
            shown = CHECK_FAILED_FALLBACK  # the check failed: "no support" would be untrue
        elif block:
            shown = self._fallback_text(result, report)
        grounded = None if unknown else verdict != "unsupported"
        return FilteredAnswer(
            shown, result.response, grounded, block, self.mode, report, error, verdict
        )

    def _judged(
        self,
        result: AttributionResult,
        steps: Callable[..., Steps[GroundednessReport]],
        /,
        **how: Any,
    ) -> Steps[FilteredAnswer]:
        """The verdict ``steps(**how)`` measures (``block_on`` read here); a failure: unknown."""
        how["scorer"] = how["scorer"] if self.scorer is None else self.scorer
        try:
            report = yield from steps(threshold=self.threshold, block_on="any", **how)
        except Exception as error:
            return self._answer(result, None, f"groundedness: {type(error).__name__}: {error}")
        return self._answer(result, report)

    def judge_steps(
        self,
        result: AttributionResult,
        *,
        context: object = None,
        prompt_builder: PromptBuilder | None = None,
        scorer: Any = None,
        history: Sequence[ChatMessage] | None = None,
    ) -> Steps[FilteredAnswer]:
        """:meth:`judge` as a generator of model calls."""
        if result.status != "ok":
            return self._answer(result, None, result.error)
        where = {"context": context, "prompt_builder": prompt_builder, "scorer": scorer}
        where["history"] = history  # a follow-up ("And on Sundays?") reads the turn before
        return (yield from self._judged(result, assess_steps, result=result, **where))

    def judge(self, result: AttributionResult, **where: Any) -> FilteredAnswer:
        """Judge ``result.response``: the answer to show with its verdict (``context`` or
        ``prompt_builder`` with ``scorer`` measure the anchors when the attribution did not;
        ``history``: the chat messages before the question, as given to ``attribute``).
        Never raises: on a failure ``grounded`` is ``None`` and ``error`` says why."""
        return drive(self.judge_steps(result, **where))

    async def ajudge(self, result: AttributionResult, **where: Any) -> FilteredAnswer:
        """Async :meth:`judge` (never raises)."""
        return await adrive(self.judge_steps(result, **where))

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
        """Judge ``answer`` with no attribution (two model calls), as a generator of model
        calls (``camab_rag.steps.drive``). Never raises: an error gives ``grounded=None``."""
        stub = AttributionResult(
            scores=np.zeros(0), question=str(question), response=str(answer), method="none"
        )
        where = {"prompt_builder": prompt_builder, "history": history, "scorer": scorer}
        return (
            yield from self._judged(
                stub, answer_steps, question=question, context=context, answer=answer, **where
            )
        )

    def check(
        self,
        question: str,
        context: object,
        answer: str,
        scorer: Any = None,
        *,
        prompt_builder: PromptBuilder | None = None,
        history: Sequence[ChatMessage] | None = None,
    ) -> FilteredAnswer:
        """Judge a bare ``answer`` over ``context`` with no attribution (two model calls; the
        filter's ``scorer`` when none is given): the answer to show with its verdict. Never
        raises: on a failure ``grounded`` is ``None`` and ``error`` says why."""
        steps = self.answer_steps(
            question, context, answer, scorer, prompt_builder=prompt_builder, history=history
        )
        return drive(steps)

    async def acheck(
        self,
        question: str,
        context: object,
        answer: str,
        scorer: Any = None,
        *,
        prompt_builder: PromptBuilder | None = None,
        history: Sequence[ChatMessage] | None = None,
    ) -> FilteredAnswer:
        """Async :meth:`check` (never raises)."""
        steps = self.answer_steps(
            question, context, answer, scorer, prompt_builder=prompt_builder, history=history
        )
        return await adrive(steps)

    def calibrate(
        self,
        scorer: Any = None,
        examples: Iterable[object] | None = None,
        *,
        progress: bool | Progress = True,
    ) -> GroundednessFilter:
        """A copy of this filter whose verdict is fitted for ``scorer``'s model on the shipped
        labelled set or ``examples`` (:func:`~camab_rag.groundedness.calibration.calibrate`)."""
        fitted = copy(self)
        chosen = scorer if scorer is not None else self.scorer
        fitted.calibration = drive(calibrate_steps(chosen, examples, progress=progress))
        fitted.threshold = None
        return fitted


def check_groundedness_filter(value: object, *, blocking_refused: str | None = None) -> None:
    """Refuse a ``groundedness=`` value that is not a :class:`GroundednessFilter` or ``None``,
    and a blocking filter where the caller cannot hold the answer back (``blocking_refused``)."""
    if value is not None and not isinstance(value, GroundednessFilter):
        shown = repr(value) if len(repr(value)) <= 40 else type(value).__name__
        raise WrongTypeError(
            "groundedness must be True (the default filter, GroundednessFilter()), False or "
            f"None (no filter), or a camab_rag.GroundednessFilter(...); got {shown}"
        )
    if blocking_refused is not None and value is not None and value.mode == "block":
        raise InputError(f"GroundednessFilter(mode='block') is refused here: {blocking_refused}")
