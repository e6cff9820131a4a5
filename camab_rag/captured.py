"""Attribution of what a RAG chain really did: the documents are ablated in the last
captured prompt that holds them all verbatim (else the template, saying why)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from camab_rag.citations import cite
from camab_rag.conflicts import disputes
from camab_rag.engine import attribution_steps
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.result import AttributionResult
from camab_rag.runs import ProgressFn
from camab_rag.scorers.base import Prompt
from camab_rag.segments import SourceDocument, to_documents
from camab_rag.settings import CHAIN_SETTINGS, AttributionSettings, groundedness_filter
from camab_rag.steps import Steps


def document_ranks(result: AttributionResult) -> list[int]:
    """1-based rank of each document by its score (ties: earlier document first)."""
    order = result.top_documents(result.n_documents or len(result.document_scores))
    ranks = [0] * len(order)
    for position, doc_index in enumerate(order):
        ranks[doc_index] = position + 1
    return ranks


def sentence_citations(result: AttributionResult) -> list[tuple[str, list[int]]]:
    """Each answer sentence and the documents ``cite()`` cites for it."""
    cited = cite(result)
    return [
        (sentence.text, [cited.source(n).doc_index for n in sentence.citations])
        for sentence in cited.sentences
    ]


def document_summary(
    result: AttributionResult, n_documents: int, *, segments: bool = False
) -> list[dict[str, Any]]:
    """What each of ``n_documents`` documents carries: ``status``, ``score``, ``rank``,
    ``supporting_sentences``, ``disputes`` (``error`` on failure), with ``segments=True``
    each segment's ``text`` and ``score``."""
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
    """One answer's attribution (how its prompt was ablated: ``result.prompt_mode``)."""

    result: AttributionResult
    documents: list[SourceDocument]

    @property
    def verdict(self) -> FilteredAnswer | None:
        return self.result.groundedness

    def in_chain(self, run_id: str | None, documents: Sequence[Any]) -> AttributionResult:
        """The result with its ``run_id`` and, when ok, the chain's ``documents``."""
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
    """Attribute an answer to the documents a chain gave its model, in the ``prompts`` it
    received, and judge it with ``groundedness`` (with ``budget=0``, the verdict alone)."""
    settings = settings or CHAIN_SETTINGS
    gate = groundedness_filter(groundedness, settings)
    docs = to_documents(documents)
    result = yield from attribution_steps(
        question,
        docs,
        response,
        scorer,
        settings,
        groundedness=gate,
        prompts=prompts,
        progress=progress,
    )
    return CapturedAttribution(result, docs)
