"""Attribution of what a RAG chain really did: the core of both integrations.

An integration captures three things (the question, the documents the model was given,
the prompts it received) and hands them to :func:`attribute_captured`, which

1. finds the documents in the prompt the model really received (the last captured prompt
   that holds every document verbatim) and ablates them there, or falls back to the
   default template and says why (:func:`plan_prompt`; ``result.prompt_mode`` /
   ``result.prompt_note``);
2. attributes the answer (:func:`camab_rag.attribute`) with one validated
   :class:`AttributionSettings`;
3. judges it with the settings' groundedness filter from the result alone (the engine
   scores the full and empty contexts itself when the attribution did not: at most two
   more calls, in ``n_queries``), never raising;

and returns a :class:`CapturedAttribution`. :func:`document_summary` is the per-document
metadata both integrations attach to the documents. One generator of model calls serves
the sync and the async entry point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.citations import cite
from camab_rag.conflicts import disputes
from camab_rag.deadline import bounded
from camab_rag.errors import InputError
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.prompts import PromptPlan, plan_prompt
from camab_rag.result import AttributionResult
from camab_rag.runs import ProgressFn
from camab_rag.scorers.base import Prompt, scored_by
from camab_rag.segments import SourceDocument, segment_documents, to_documents
from camab_rag.settings import CHAIN_SETTINGS, AttributionSettings, groundedness_filter
from camab_rag.steps import Steps, asynced, synced
from camab_rag.text_attribution import TextAttribution
from camab_rag.text_gate import check_prompts, check_texts


def reached_the_model(prompts: Sequence[Prompt], documents: Sequence[SourceDocument]) -> bool:
    """Whether some captured prompt holds every one of ``documents`` verbatim."""
    return plan_prompt(prompts, documents, "chunk").mode == "captured"


# ---------------------------------------------------------------------- document summary
def document_ranks(result: AttributionResult) -> list[int]:
    """1-based rank of each document by its score (ties: earlier document first)."""
    order = result.top_documents(result.n_documents or len(result.document_scores))
    ranks = [0] * len(order)
    for position, doc_index in enumerate(order):
        ranks[doc_index] = position + 1
    return ranks


def sentence_citations(result: AttributionResult) -> list[tuple[str, list[int]]]:
    """Each answer sentence and the documents :func:`~camab_rag.cite` cites for it (the
    default :class:`~camab_rag.CitationRule`; a disputing document is never one), so the
    attached metadata and the native citation types say the same thing."""
    cited = cite(result)
    return [
        (sentence.text, [cited.source(n).doc_index for n in sentence.citations])
        for sentence in cited.sentences
    ]


def document_summary(
    result: AttributionResult, n_documents: int, *, segments: bool = False
) -> list[dict[str, Any]]:
    """What to attach to each of ``n_documents`` documents.

    ``{"status", "score", "rank", "supporting_sentences", "disputes"}`` (plus ``"error"``
    on failure, and with ``segments=True`` the document's ``"segments"``: ``text`` and
    ``score`` of each): ``score`` is the document's attribution (the sum over its
    segments), ``rank`` its 1-based place among the documents, ``supporting_sentences``
    the answer sentences that cite this document (:func:`sentence_citations`),
    ``disputes`` the answer words it argues against (:mod:`camab_rag.conflicts`).
    """
    if result.status != "ok":
        return [{"status": result.status, "error": result.error} for _ in range(n_documents)]
    scores = result.document_scores
    ranks = document_ranks(result)
    sentences: list[list[str]] = [[] for _ in range(n_documents)]
    for text, doc_indices in sentence_citations(result):
        for doc_index in doc_indices:
            if doc_index < n_documents:
                sentences[doc_index].append(text)
    parts: list[list[dict[str, Any]]] = [[] for _ in range(n_documents)]
    for segment, score in zip(result.segments, result.scores):
        if segment.doc_index < n_documents:
            parts[segment.doc_index].append({"text": segment.text, "score": float(score)})
    disputed = disputes(result)
    summary = []
    for i in range(n_documents):
        entry: dict[str, Any] = {
            "status": "ok",
            "score": float(scores[i]) if i < len(scores) else 0.0,
            "rank": ranks[i] if i < len(ranks) else len(ranks) + 1,
            "supporting_sentences": sentences[i],
            "disputes": disputed.get(i, []),
        }
        if segments:
            entry["segments"] = parts[i]
        summary.append(entry)
    return summary


# ---------------------------------------------------------------------- one answer
@dataclass(frozen=True)
class CapturedAttribution:
    """One answer's attribution, how its prompt was ablated, and the filter's verdict."""

    result: AttributionResult
    documents: list[SourceDocument]
    plan: PromptPlan
    verdict: FilteredAnswer | None = None


def _captured_steps(
    question: str,
    documents: object,
    response: str,
    scorer: Any,
    settings: AttributionSettings | None = None,
    *,
    prompts: Sequence[Prompt] = (),
    progress: ProgressFn | None = None,
    prior: Any = None,
    groundedness: GroundednessFilter | bool | None = None,
) -> Steps[CapturedAttribution]:
    """:func:`attribute_captured` as a generator of model calls, under the settings'
    deadline (the attribution and the verdict together). ``settings``: default
    :data:`~camab_rag.settings.CHAIN_SETTINGS` (whole documents, a deadline)."""
    settings = settings or CHAIN_SETTINGS
    gate = groundedness_filter(groundedness, settings)
    settings = settings.with_changes(anchors=True) if gate is not None else settings
    steps = _captured(
        question, documents, response, scorer, settings, prompts, progress, gate, prior
    )
    return (yield from bounded(steps, settings.deadline_s))


def _captured(
    question: str,
    documents: object,
    response: str,
    scorer: Any,
    settings: AttributionSettings,
    prompts: Sequence[Prompt],
    progress: ProgressFn | None,
    gate: GroundednessFilter | None,
    prior: Any = None,
) -> Steps[CapturedAttribution]:
    check_texts({"the question": question, "the response": response})  # the input gate
    docs = to_documents(documents)
    check_prompts(prompts)
    plan = plan_prompt(list(prompts), docs, settings.granularity)
    if settings.judge_only and gate is not None:
        return (yield from _judged_only(question, docs, response, scorer, settings, plan, gate))
    # planned once, here; the engine scores the anchors the verdict reads (L(C) - L(empty))
    attribution = TextAttribution.start(
        question, docs, response, scorer, settings, plan=plan, progress=progress, prior=prior
    )
    result = yield from attribution.steps()
    verdict = None
    if gate is not None:
        verdict = yield from gate.judge_steps(
            result, scorer=scorer, context=docs, prompt_builder=plan.builder
        )
    return CapturedAttribution(result, docs, plan, verdict)


def _judged_only(
    question: str,
    docs: list[SourceDocument],
    response: str,
    scorer: Any,
    settings: AttributionSettings,
    plan: PromptPlan,
    gate: GroundednessFilter,
) -> Steps[CapturedAttribution]:
    """``budget=0``: the groundedness verdict alone (two calls), with a result that
    attributes nothing (zero scores, ``method="none"``) but carries the token support."""
    if not isinstance(response, str) or not response.strip():
        raise InputError("the response is empty: there is nothing to judge")
    verdict = yield from gate.answer_steps(
        question, docs, response, scorer, prompt_builder=plan.builder
    )
    segments = segment_documents(docs, settings.granularity)
    report = verdict.report
    result = AttributionResult(
        scores=np.zeros(len(segments)),
        segments=segments,
        method="none",
        budget=0,
        n_queries=2 if report is not None else 0,
        question=question,
        response=response,
        n_documents=len(docs),
        scored_by=scored_by(scorer),
        prompt_mode=plan.mode,
        prompt_note=plan.note,
        anchor_rewards=(
            {"full": report.full_reward or 0.0, "empty": report.empty_reward or 0.0}
            if report is not None and report.token_support is not None
            else {}
        ),
        token_support=report.token_support if report is not None else None,
        uninformative="budget 0: nothing was attributed, only the groundedness verdict",
        status="ok" if verdict.error is None else "error",
        error=verdict.error,
    )
    return CapturedAttribution(result, docs, plan, verdict)


attribute_captured = synced(
    _captured_steps,
    "attribute_captured",
    """Attribute an answer to the documents a chain gave its model, in the prompt the model
    really received (see the module docstring).

    Args:
        question: the user's question.
        documents: the documents, as the model saw them (strings, mappings, LangChain
            ``Document``, LlamaIndex nodes).
        response: the answer.
        scorer: the model that scores (the chain's own, or a proxy).
        settings: every knob (:class:`AttributionSettings`; default
            :data:`~camab_rag.settings.CHAIN_SETTINGS`: whole documents, a deadline).
        prompts: the prompts the chain's model received, in order (text or chat
            messages); the last that holds every document is ablated in place.
        progress: ``progress(calls_made, total)`` every few model calls (see
            :func:`camab_rag.attribute`).
        prior: a free scorer that attributes first (``Attributor(prior=...)``).
        groundedness: a :class:`~camab_rag.groundedness.GroundednessFilter` (``True``: a
            default one) that judges the answer: ``.verdict`` (with ``budget=0``, alone).

    Raises what :func:`camab_rag.attribute` raises; the groundedness verdict never raises.
    """,
)
aattribute_captured = asynced(
    _captured_steps,
    "aattribute_captured",
    "Async :func:`attribute_captured` (scores with ``scorer.ascore``).",
)
