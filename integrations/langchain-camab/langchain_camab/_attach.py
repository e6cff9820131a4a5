"""Put attribution metadata on LangChain objects (answers and documents)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage

from camab_rag.integration import (
    AttributionResult,
    check_groundedness_filter,
    document_summary,
    fill,
)
from langchain_camab.citations import to_citations, with_citations
from langchain_camab.result import summary

METADATA_KEY = "attribution"
RUN_METADATA_KEY = "camab_attribution"


def check_filter(groundedness: object, *, can_block: bool, where: str) -> None:
    """Reject a filter the integration object cannot honour, naming the problem."""
    check_groundedness_filter(
        groundedness,
        blocking_refused=None
        if can_block
        else (
            f"{where} cannot replace the chain's answer, so it would not block anything: use "
            "mode='flag' here, or put CamabAttributor(settings=AttributionSettings("
            "groundedness=GroundednessFilter(mode='block'))) after the chain"
        ),
    )


def annotate_documents(
    documents: Sequence[Document],
    result: AttributionResult,
    *,
    extra: Sequence[Document] = (),
    previous: Sequence[dict[str, Any]] | None = None,
) -> None:
    """Set ``metadata["attribution"]`` on each attributed document, in place (filling the
    ``previous`` placeholders); ``extra`` duplicates (same text) get the same entry."""
    entries = document_summary(result, len(documents))
    by_text = {doc.page_content: i for i, doc in enumerate(documents)}
    for i, doc in enumerate(documents):
        if previous is not None and i < len(previous):
            doc.metadata[METADATA_KEY] = fill(previous[i], entries[i])
        else:
            doc.metadata[METADATA_KEY] = entries[i]
    for doc in extra:
        index = by_text.get(doc.page_content)
        if index is not None:
            doc.metadata[METADATA_KEY] = documents[index].metadata[METADATA_KEY]


def annotate_message(message: BaseMessage, data: dict[str, Any]) -> None:
    """Set ``response_metadata["attribution"]`` on an answer message (in place)."""
    metadata = getattr(message, "response_metadata", None)
    if isinstance(metadata, dict):
        metadata[METADATA_KEY] = data


def annotate_citations(
    message: BaseMessage, result: AttributionResult, documents: Sequence[Document]
) -> None:
    """Give an answer message, in place, one text block carrying its ``Citation``
    annotations (a message that is not an ``AIMessage`` is left alone)."""
    if isinstance(message, AIMessage):
        message.content = with_citations(message, to_citations(result, documents)).content


def summarize(result: AttributionResult, documents: Sequence[Document]) -> dict[str, Any]:
    """The answer-level attribution dict, with titles (``title`` or ``source`` metadata)."""
    names = [d.metadata.get("title") or d.metadata.get("source") for d in documents]
    return summary(result, [str(n) if n is not None else None for n in names])
