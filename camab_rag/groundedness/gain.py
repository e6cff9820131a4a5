"""The groundedness report of an attribution or a bare answer, as generators of model calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from camab_rag.errors import InputError
from camab_rag.groundedness.anchors import (
    anchor_prompts,
    anchor_steps,
    context_words,
    default_builder,
)
from camab_rag.groundedness.report import (
    DEFAULT_BLOCK_ON,
    BlockOn,
    GroundednessReport,
    build_report,
    read_by,
    support_report,
)
from camab_rag.prompts import PromptBuilder, TemplatePromptBuilder
from camab_rag.result import AttributionResult
from camab_rag.scorers.base import ChatMessage, scored_by
from camab_rag.segments import to_documents
from camab_rag.steps import Steps, asynced, synced
from camab_rag.text_gate import check_texts


def _builder_for(
    result: AttributionResult,
    context: object,
    prompt_builder: PromptBuilder | None,
    history: Sequence[ChatMessage] | None = None,
) -> PromptBuilder:
    """The builder given, else the default template over ``context`` after ``history``."""
    builder = prompt_builder
    if builder is None:
        documents = to_documents(context)
        if any(s.doc_index >= len(documents) for s in result.segments):
            raise InputError("the context has fewer documents than the attribution's segments")
        builder = TemplatePromptBuilder(
            result.question, documents, result.segments, history=history
        )
    if builder.n_segments != result.n_segments:
        raise InputError(
            f"the prompt builder covers {builder.n_segments} segments, the attribution has "
            f"{result.n_segments}"
        )
    return builder


def _check(threshold: float | None, block_on: object, builder: object, history: object) -> None:
    if block_on not in ("any", "facts"):
        raise InputError(f"block_on must be 'any' or 'facts', got {block_on!r}")
    if threshold is not None and not np.isfinite(threshold):
        raise InputError(f"threshold must be a finite number, got {threshold!r}")
    if builder is not None and history:
        raise InputError("pass history= or prompt_builder= (whose prompt holds the history)")


def assess_steps(
    result: AttributionResult,
    *,
    threshold: float | None = None,
    top_k: int = 2,
    context: object = None,
    scorer: Any = None,
    prompt_builder: PromptBuilder | None = None,
    history: Sequence[ChatMessage] | None = None,
    block_on: BlockOn = DEFAULT_BLOCK_ON,
) -> Steps[GroundednessReport]:
    """:func:`assess_groundedness` as a generator of model calls."""
    _check(threshold, block_on, prompt_builder, history)
    if result.status != "ok":
        raise InputError(f"the attribution failed ({result.error}); groundedness is unknown")
    support, builder, by = result.token_support, None, result.scored_by
    measurable = scorer is not None and (context is not None or prompt_builder is not None)
    if support is None and measurable:
        if not result.response.strip():
            raise InputError("the attribution result has no response to score")
        builder = _builder_for(result, context, prompt_builder, history)
        support = yield from anchor_steps(anchor_prompts(builder), scorer, result.response)
        by = scored_by(scorer)
    if support is None:
        return read_by(build_report(result, threshold, top_k), block_on)
    report = support_report(
        support,
        threshold,
        source="observed" if builder is None else "measured",
        extra_queries=0 if builder is None else 2,
        scored_by=by,
        result=result,
        top_k=top_k,
        context_words=context_words(
            context, result=result, builder=builder or prompt_builder, history=history
        ),
    )
    return read_by(report, block_on)


assess_groundedness = synced(
    assess_steps,
    "assess_groundedness",
    """The groundedness report of an attribution, from every answer token's log-prob with and
    without the context: the result's own (``anchors=True``), else two calls to ``scorer`` on
    ``context`` (or ``prompt_builder``; ``history``: earlier chat messages), else the
    attribution history or its surrogate (``report.source``); ``block_on`` as in the filter.""",
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
    history: Sequence[ChatMessage] | None = None,
    block_on: BlockOn = DEFAULT_BLOCK_ON,
) -> Steps[GroundednessReport]:
    """:func:`camab_rag.assess_answer` as a generator of model calls."""
    check_texts({"the question": question, "the answer": answer})
    _check(threshold, block_on, prompt_builder, history)
    if not answer.strip():
        raise InputError("the answer is empty: there is nothing to judge")
    if not callable(getattr(scorer, "score", None)):
        raise InputError("scorer must have a score(requests) method")
    builder = prompt_builder or default_builder(question, context, history)
    support = yield from anchor_steps(anchor_prompts(builder), scorer, answer)
    report = support_report(
        support,
        threshold,
        extra_queries=2,
        scored_by=scored_by(scorer),
        context_words=context_words(
            None if prompt_builder is not None else context, builder=builder
        ),
    )
    return read_by(report, block_on)
