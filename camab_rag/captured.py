"""Attribution of what a RAG chain really did (the core of both integrations): the
documents are ablated in the last captured prompt that holds them all verbatim (else the
default template, and it says why); :func:`document_summary` is the per-document metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from camab_rag.citations import cite
from camab_rag.conflicts import disputes
from camab_rag.deadline import bounded
from camab_rag.engine import attribution_steps
from camab_rag.errors import InputError
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.prompts import PromptPlan, plan_prompt
from camab_rag.result import AttributionResult
from camab_rag.runs import ProgressFn
from camab_rag.scorers.base import Prompt, scored_by
from camab_rag.segments import SourceDocument, segment_documents, to_documents
from camab_rag.settings import CHAIN_SETTINGS, AttributionSettings, groundedness_filter
from camab_rag.steps import Steps
from camab_rag.text_gate import check_texts, check_value


def reached_the_model(prompts: Sequence[Prompt], documents: Sequence[SourceDocument]) -> bool:
    """Whether some captured prompt holds every one of ``documents`` verbatim."""
    return plan_prompt(prompts, documents, "chunk").mode == "captured"


def document_ranks(result: AttributionResult) -> list[int]:
    """1-based rank of each document by its score (ties: earlier document first)."""
    order = result.top_documents(result.n_documents or len(result.document_scores))
    ranks = [0] * len(order)
    for position, doc_index in enumerate(order):
        ranks[doc_index] = position + 1
    return ranks


def sentence_citations(result: AttributionResult) -> list[tuple[str, list[int]]]:
    """Each answer sentence and the documents :func:`~camab_rag.cite` cites for it."""
    cited = cite(result)
    return [
        (sentence.text, [cited.source(n).doc_index for n in sentence.citations])
        for sentence in cited.sentences
    ]


def document_summary(
    result: AttributionResult, n_documents: int, *, segments: bool = False
) -> list[dict[str, Any]]:
    """What to attach to each of ``n_documents`` documents: ``status``, ``score``, ``rank``
    (1-based), ``supporting_sentences``, ``disputes`` (``error`` on failure), and with
    ``segments=True`` each segment's ``text`` and ``score``."""
    if result.status != "ok":
        return [{"status": result.status, "error": result.error} for _ in range(n_documents)]
    scores = result.document_scores
    ranks = document_ranks(result)
    cited = sentence_citations(result)
    disputed = disputes(result)
    summary = []
    for i in range(n_documents):
        entry: dict[str, Any] = {
            "status": "ok",
            "score": float(scores[i]) if i < len(scores) else 0.0,
            "rank": ranks[i] if i < len(ranks) else len(ranks) + 1,
            "supporting_sentences": [text for text, docs in cited for d in docs if d == i],
            "disputes": disputed.get(i, []),
        }
        if segments:
            entry["segments"] = [
                {"text": segment.text, "score": float(score)}
                for segment, score in zip(result.segments, result.scores)
                if segment.doc_index == i
            ]
        summary.append(entry)
    return summary


@dataclass(frozen=True)
class CapturedAttribution:
    """One answer's attribution (its verdict in ``result.groundedness``) and how its
    prompt was ablated."""

    result: AttributionResult
    documents: list[SourceDocument]
    plan: PromptPlan

    @property
    def verdict(self) -> FilteredAnswer | None:
        return self.result.groundedness

    def in_chain(self, run_id: str | None, documents: Sequence[Any]) -> AttributionResult:
        """The result as a chain keeps it: its ``run_id`` and, when it is ok, its
        ``documents`` as the chain holds them."""
        ok = self.result.status == "ok"
        return replace(self.result, run_id=run_id, documents=tuple(documents) if ok else ())


def captured_steps(
    question: str,
    documents: object,
    response: str,
    scorer: Any,
    settings: AttributionSettings | None = None,
    *,
    prompts: Sequence[Prompt] = (),
    progress: ProgressFn | None = None,
    groundedness: GroundednessFilter | bool | None = None,
) -> Steps[CapturedAttribution]:
    """Attribute an answer to the documents a chain gave its model, in the ``prompts`` the
    model received (the last that holds every document is ablated in place), and judge
    it with ``groundedness`` (``True``: a default filter; with ``budget=0``, the verdict
    alone), as a generator of model calls; ``settings`` default to ``CHAIN_SETTINGS``."""
    settings = settings or CHAIN_SETTINGS
    gate = groundedness_filter(groundedness, settings)
    check_texts({"the question": question, "the response": response})  # the input gate
    docs = to_documents(documents)
    for i, prompt in enumerate(prompts):
        check_value(prompt, f"captured prompt {i}")
    plan = plan_prompt(list(prompts), docs, settings.granularity)
    if settings.judge_only and gate is not None:
        steps = _judged_only(question, docs, response, scorer, settings, plan, gate)
        return (yield from bounded(steps, settings.deadline_s))
    result = yield from attribution_steps(
        question, docs, response, scorer, settings, groundedness=gate, plan=plan, progress=progress
    )
    return CapturedAttribution(result, docs, plan)


def _judged_only(
    question: str,
    docs: list[SourceDocument],
    response: str,
    scorer: Any,
    settings: AttributionSettings,
    plan: PromptPlan,
    gate: GroundednessFilter,
) -> Steps[CapturedAttribution]:
    """``budget=0``: the verdict alone (two calls) and a result that attributes nothing."""
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
        groundedness=verdict,
    )
    return CapturedAttribution(result, docs, plan)
