"""LangChain's own citation type from an attribution: ``Citation`` annotations, per
:func:`camab_rag.integration.native_citations`. ``cited_text`` and ``title`` are the
documents' own text, not escaped: escape them before putting them in HTML."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.messages.content import Citation, create_citation

from camab_rag.integration import AttributionResult, CitationRule, native_citations


def to_citations(
    result: AttributionResult,
    documents: Sequence[Any],
    *,
    rule: CitationRule | None = None,
) -> list[Citation]:
    """LangChain ``Citation`` annotations for ``result.response``, in answer order.

    Args:
        result: an attribution (``handler.last_result``, ``camab_rag.attribute(...)``).
        documents: the attributed documents, in the same order, as the chain holds them
            (LangChain ``Document`` objects, strings or mappings).
        rule: which documents a sentence cites (default: ``CitationRule()``).
    """
    return [
        create_citation(
            url=c.source,
            title=c.title,
            start_index=c.start,
            end_index=c.end,
            cited_text=c.cited_text,
            document_index=c.doc_index,
            score=c.score,
            camab_source=c.number,
        )
        for c in native_citations(result, documents, rule=rule)
    ]


def with_citations(message: AIMessage, citations: Sequence[Citation]) -> AIMessage:
    """A copy of ``message`` whose content is one text block carrying ``citations`` (the
    content becomes a list of blocks: read it with ``.text`` / ``content_blocks``)."""
    text = message.text
    block: dict[str, Any] = {"type": "text", "text": text, "annotations": list(citations)}
    return message.model_copy(update={"content": [block]})


__all__ = ["to_citations", "with_citations"]
