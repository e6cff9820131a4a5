"""The context gain ``L(C) - L(empty)`` of an answer, and its groundedness report.

Both are written once, as generators of model calls (:mod:`camab_rag.rounds`), and run
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
from camab_rag.groundedness.report import (
    DEFAULT_THRESHOLD,
    ContextGain,
    FloatArray,
    GainSource,
    GroundednessReport,
    build_report,
)
from camab_rag.methods import METHODS
from camab_rag.oracle import ScorerOracle
from camab_rag.prompts import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_USER_TEMPLATE,
    PromptBuilder,
    TemplatePromptBuilder,
)
from camab_rag.result import AttributionResult
from camab_rag.rewards import REWARDS, RewardFn
from camab_rag.rounds import Steps, asynced, synced
from camab_rag.segments import to_documents


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


def gain_steps(
    result: AttributionResult,
    context: object,
    scorer: Any,
    *,
    prompt_builder: PromptBuilder | None = None,
    reward: RewardFn | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
) -> Steps[ContextGain]:
    """:func:`measure_context_gain` as a generator of model calls."""
    plan = _plan_gain(result, context, scorer, prompt_builder, reward, user_template, system_prompt)
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
    the prompts match. ``reward`` is needed only for a custom reward function.
    """,
)
ameasure_context_gain = asynced(
    gain_steps,
    "ameasure_context_gain",
    "Async :func:`measure_context_gain` (scores with ``scorer.ascore``).",
)


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


def assess_steps(
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
) -> Steps[GroundednessReport]:
    """:func:`assess_groundedness` as a generator of model calls."""
    chosen, source = _known_gain(result, threshold, gain)
    extra = 0
    if (
        chosen is None
        and scorer is not None
        and (context is not None or prompt_builder is not None)
    ):
        chosen = yield from gain_steps(
            result,
            context,
            scorer,
            prompt_builder=prompt_builder,
            user_template=user_template,
            system_prompt=system_prompt,
        )
        source, extra = ("measured" if chosen.n_queries else "observed"), chosen.n_queries
    if chosen is None and not getattr(METHODS.get(result.method), "models_reward", True):
        raise InputError(
            f"{result.method} scores carry no estimate of the context gain: pass scorer= and "
            "context= to measure it"
        )
    return build_report(result, chosen, source, threshold, top_k, extra)


assess_groundedness = synced(
    assess_steps,
    "assess_groundedness",
    """The groundedness report of an attribution.

    The context gain is taken, in order, from ``gain`` (precomputed), the attribution
    history, a measurement with ``scorer`` on ``context`` (at most two queries), or the
    linear surrogate ``sum(result.scores)``.
    """,
)
aassess_groundedness = asynced(
    assess_steps,
    "aassess_groundedness",
    "Async :func:`assess_groundedness` (measures with ``scorer.ascore``).",
)


__all__ = [
    "aassess_groundedness",
    "ameasure_context_gain",
    "assess_groundedness",
    "assess_steps",
    "gain_steps",
    "measure_context_gain",
    "observed_context_gain",
]
