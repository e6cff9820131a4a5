"""The context gain ``L(C) - L(empty)`` of an answer, and its groundedness report.

Both are written once, as generators of model calls (:mod:`camab_rag.steps`), and run
with blocking calls (:func:`measure_context_gain`, :func:`assess_groundedness`) or awaited
(:func:`ameasure_context_gain`, :func:`aassess_groundedness`, same arguments).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.groundedness.anchors import (
    anchor_prompts,
    anchor_steps,
    context_words,
    default_builder,
)
from camab_rag.groundedness.report import (
    ContextGain,
    FloatArray,
    GainSource,
    GroundednessReport,
    build_report,
    support_report,
)
from camab_rag.methods import METHODS
from camab_rag.prompts import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_USER_TEMPLATE,
    PromptBuilder,
    TemplatePromptBuilder,
)
from camab_rag.result import AttributionResult
from camab_rag.rewards import REWARDS, RewardFn, ScorerOracle
from camab_rag.scorers.base import ChatMessage, scored_by
from camab_rag.segments import to_documents
from camab_rag.steps import Steps, asynced, synced
from camab_rag.text_gate import check_texts


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


def _builder_for(
    result: AttributionResult,
    context: object,
    prompt_builder: PromptBuilder | None,
    user_template: str,
    system_prompt: str | None,
    history: Sequence[ChatMessage] | None = None,
) -> PromptBuilder:
    """The prompt builder of ``result``'s attribution: the one given, else the default
    template over ``context`` after ``history`` (checked against the attribution's
    segments)."""
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
            history=history,
        )
    elif history:
        raise InputError("pass history= or prompt_builder= (whose prompt holds the history)")
    if builder.n_segments != result.n_segments:
        raise InputError(
            f"the prompt builder covers {builder.n_segments} segments, the attribution has "
            f"{result.n_segments}"
        )
    return builder


def _plan_gain(
    result: AttributionResult,
    context: object,
    scorer: Any,
    prompt_builder: PromptBuilder | None,
    reward: RewardFn | None,
    user_template: str,
    system_prompt: str | None,
    history: Sequence[ChatMessage] | None,
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
    builder = _builder_for(result, context, prompt_builder, user_template, system_prompt, history)
    return _GainPlan(known, missing, ScorerOracle(builder, scorer, result.response, reward_fn))


def gain_steps(
    result: AttributionResult,
    context: object,
    scorer: Any,
    *,
    prompt_builder: PromptBuilder | None = None,
    reward: RewardFn | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    history: Sequence[ChatMessage] | None = None,
) -> Steps[ContextGain]:
    """:func:`measure_context_gain` as a generator of model calls."""
    plan = _plan_gain(
        result, context, scorer, prompt_builder, reward, user_template, system_prompt, history
    )
    if plan.oracle is None:
        return plan.finish()
    values = yield from plan.oracle.rewards(plan.masks(result.n_segments))
    return plan.finish(values)


measure_context_gain = synced(
    gain_steps,
    "measure_context_gain",
    """``L(C)`` and ``L(empty)`` for ``result``'s response, asking ``scorer`` only for the
    subsets the attribution did not evaluate (at most two queries).

    ``context`` is what was attributed (the same documents, same order); pass the same
    ``prompt_builder`` (or ``user_template``/``system_prompt``) the attribution used, so
    the prompts match, and the same ``history`` (earlier chat messages). ``reward`` is
    needed only for a custom reward function.
    """,
)
ameasure_context_gain = asynced(
    gain_steps,
    "ameasure_context_gain",
    "Async :func:`measure_context_gain` (scores with ``scorer.ascore``).",
)


def _check(result: AttributionResult, threshold: float | None) -> None:
    if result.status != "ok":
        raise InputError(f"the attribution failed ({result.error}); groundedness is unknown")
    if threshold is not None and not np.isfinite(threshold):
        raise InputError(f"threshold must be a finite number, got {threshold!r}")


def assess_steps(
    result: AttributionResult,
    *,
    threshold: float | None = None,
    top_k: int = 2,
    context: object = None,
    scorer: Any = None,
    prompt_builder: PromptBuilder | None = None,
    gain: ContextGain | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    history: Sequence[ChatMessage] | None = None,
) -> Steps[GroundednessReport]:
    """:func:`assess_groundedness` as a generator of model calls."""
    _check(result, threshold)
    if gain is not None:
        return build_report(result, gain, "measured", threshold, top_k, 0)
    if result.token_support is not None:
        return support_report(
            result.token_support,
            threshold,
            source="observed",
            scored_by=result.scored_by,
            result=result,
            top_k=top_k,
            context_words=context_words(context, result=result),
        )
    if scorer is not None and (context is not None or prompt_builder is not None):
        if not result.response.strip():
            raise InputError("the attribution result has no response to score")
        builder = _builder_for(
            result, context, prompt_builder, user_template, system_prompt, history
        )
        support = yield from anchor_steps(anchor_prompts(builder), scorer, result.response)
        return support_report(
            support,
            threshold,
            extra_queries=2,
            scored_by=scored_by(scorer),
            result=result,
            top_k=top_k,
            context_words=context_words(context, result=result, builder=builder),
        )
    observed = observed_context_gain(result)
    if observed is None and not getattr(METHODS.get(result.method), "models_reward", True):
        raise InputError(
            f"{result.method} scores carry no estimate of the context gain: pass scorer= and "
            "context= to measure it"
        )
    source: GainSource = "observed" if observed is not None else "surrogate"
    return build_report(result, observed, source, threshold, top_k, 0)


assess_groundedness = synced(
    assess_steps,
    "assess_groundedness",
    """The groundedness report of an attribution.

    Measured from every answer token's log-prob with and without the context: the
    result's own (``attribute(..., anchors=True)``), else two calls to ``scorer`` on
    ``context`` (or ``prompt_builder``). Without either, the context gain is read from
    ``gain`` (precomputed), the attribution history, or the linear surrogate
    ``sum(result.scores)`` (``report.source`` says which). ``history``: the earlier chat
    messages the attribution was given (``attribute(..., history=...)``), when the
    scorer measures.
    """,
)
aassess_groundedness = asynced(
    assess_steps,
    "aassess_groundedness",
    "Async :func:`assess_groundedness` (measures with ``scorer.ascore``).",
)


def answer_steps(
    question: str,
    context: object,
    answer: str,
    scorer: Any,
    *,
    threshold: float | None = None,
    prompt_builder: PromptBuilder | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    history: Sequence[ChatMessage] | None = None,
) -> Steps[GroundednessReport]:
    """:func:`camab_rag.assess_answer` as a generator of model calls."""
    check_texts({"the question": question, "the answer": answer})  # camab_rag.text_gate
    if not isinstance(answer, str) or not answer.strip():
        raise InputError("the answer is empty: there is nothing to judge")
    if not callable(getattr(scorer, "score", None)):
        raise InputError("scorer must have a score(requests) method")
    if threshold is not None and not np.isfinite(threshold):
        raise InputError(f"threshold must be a finite number, got {threshold!r}")
    if prompt_builder is not None and history:
        raise InputError("pass history= or prompt_builder= (whose prompt holds the history)")
    builder = prompt_builder or default_builder(
        question,
        context,
        user_template=user_template,
        system_prompt=system_prompt,
        history=history,
    )
    support = yield from anchor_steps(anchor_prompts(builder), scorer, answer)
    return support_report(
        support,
        threshold,
        extra_queries=2,
        scored_by=scored_by(scorer),
        context_words=context_words(
            None if prompt_builder is not None else context, builder=builder
        ),
    )
