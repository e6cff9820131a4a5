"""Which documents an answer came from, what it then carries, and waiting for it."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.types import CitationBlock, TextBlock
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import MetadataMode, NodeWithScore

from camab_rag.errors import AttributionPendingError, InputError, NoContextError
from camab_rag.integration import (
    METADATA_KEY,
    Attachment,
    native_citations,
    prompt_holds,
    top_documents,
)

if TYPE_CHECKING:
    from camab_rag import AttributionResult, CitationRule
    from camab_rag.integration import Prompt

logger = logging.getLogger(__name__)
ANSWER_JOB = "_camab_attribution_job"
NOT_YET = (
    "this response has no attribution yet: a streamed answer is attributed once its stream "
    "has been read to the end"
)


def set_attribution(answer: object, value: dict[str, Any]) -> None:
    if not isinstance(getattr(answer, "metadata", None), dict):
        answer.metadata = {}  # type: ignore[attr-defined]
    answer.metadata[METADATA_KEY] = value  # type: ignore[attr-defined]


def _info(response: object) -> dict[str, Any]:
    metadata = getattr(response, "metadata", None)
    info = metadata.get(METADATA_KEY) if isinstance(metadata, Mapping) else None
    if info is None:
        raise KeyError(NOT_YET)
    return dict(info)


def wait_for_attribution(response: object, timeout: float | None = None) -> dict[str, Any]:
    """The ``metadata["attribution"]`` of an answer, waiting (up to ``timeout`` seconds)
    for a stream's background attribution.

    Raises:
        KeyError: a stream not read to the end yet (nothing to wait for).
        AttributionPendingError: not finished within ``timeout``, or an async stream's
            attribution still running in its event loop (``await await_attribution``).
    """
    job = getattr(response, ANSWER_JOB, None)
    if job is not None and not job.done():
        try:
            job.result(timeout)
        except AttributionPendingError as error:
            raise AttributionPendingError(
                f"{error} (for a response: await await_attribution(response))"
            ) from None
    return _info(response)


async def await_attribution(response: object) -> dict[str, Any]:
    """Async :func:`wait_for_attribution`; cancelling the caller leaves it running."""
    job = getattr(response, ANSWER_JOB, None)
    if job is not None and not job.done():
        await job.aresult()
    return _info(response)


def answer_documents(
    answer: object, sources: Sequence[Any], retrieved: Sequence[Any], prompts: Sequence[Prompt]
) -> tuple[list[Any], bool]:
    """The documents to attribute ``answer`` to (its ``sources``, else the ``retrieved``
    ones some prompt holds) and whether they are its own; a typed error for none."""
    if not isinstance(answer, str) or not answer.strip():
        raise InputError("the response is empty: there is nothing to attribute")
    if sources:
        return list(sources), True
    if not retrieved:
        raise NoContextError(
            "no nodes were retrieved for this query: the answer has no retrieved context "
            "to come from"
        )
    # a node the input gate refuses: its error, not "none reached"
    if not prompt_holds(prompts, node_documents(retrieved)):
        raise NoContextError(
            f"none of the {len(retrieved)} retrieved nodes reached the LLM "
            "(response.source_nodes is empty: e.g. a node post-processor discarded "
            "them all), so the answer has no retrieved context to come from"
        )
    return list(retrieved), False


def _by_attribution(result: Any, documents: list[Any]) -> tuple[Any, list[Any]]:
    """``result`` and ``documents`` with the sources :func:`camab_rag.cite` cites
    first (most relied-on first), the rest after them by score."""
    n = len(documents)
    if result.status != "ok" or len(result.document_scores) != n:
        return result, documents
    top = top_documents(result)
    order = top + [i for i in result.top_documents(n) if i not in top]
    at = {old: new for new, old in enumerate(order)}
    segments = [replace(s, doc_index=at[s.doc_index]) for s in result.segments]
    placed = tuple(result.documents[i] for i in order) if result.documents else ()
    return replace(result, segments=segments, documents=placed), [documents[i] for i in order]


ATTRIBUTION_KEY = METADATA_KEY
SOURCES = {True: "response.source_nodes", False: "retrieval events"}


def node_documents(nodes: Sequence[NodeWithScore]) -> list[dict[str, Any]]:
    """Each node's text as the LLM saw it (metadata lines included), as a document."""
    return [
        {"text": n.node.get_content(MetadataMode.LLM).strip(), "metadata": {"node_id": n.node_id}}
        for n in nodes
    ]


def _with_attribution(node: Any, info: dict[str, Any]) -> Any:
    update: dict[str, Any] = {"metadata": {**node.metadata, ATTRIBUTION_KEY: info}}
    for name in ("excluded_llm_metadata_keys", "excluded_embed_metadata_keys"):
        keys = list(getattr(node, name))
        update[name] = keys if ATTRIBUTION_KEY in keys else [*keys, ATTRIBUTION_KEY]
    return node.model_copy(update=update)


def attach(response: Any, attributed: Any, documents: list[Any], own_sources: bool) -> Any:
    """Put ``attributed`` (over ``documents``: the answer's ``own_sources``, else retrieved
    ones) on ``response`` in place; a blocked answer reads the filter's fallback."""
    result, documents = _by_attribution(attributed, documents)
    verdict = result.groundedness
    summary: dict[str, Any] = result.to_dict()  # its verdict too
    try:
        if result.status == "ok":
            if result.prompt_mode != "captured":
                logger.info("camab attribution of %r: %s", result.question[:80], result.prompt_note)
            extra = {"method": result.method, "n_queries": result.n_queries}
            attachment = Attachment.of(result, documents, segments=True)
            entries = [{**entry, **extra} for entry in attachment.documents]
            # the cited sources, as LangChain's summary gives them (review 11)
            summary.update({k: attachment.answer[k] for k in ("top_documents", "citations")})
            nodes = [
                NodeWithScore(node=_with_attribution(n.node, e), score=n.score)
                for n, e in zip(documents, entries)
            ]
            summary["node_source"] = SOURCES[own_sources]
            summary["node_ids"] = [n.node.node_id for n in nodes]
            if own_sources:
                response.source_nodes = nodes
            else:
                summary["nodes"] = [{"node_id": n.node_id, **e} for n, e in zip(nodes, entries)]
        if verdict is not None and verdict.blocked and isinstance(response, Response):
            response.response = verdict.answer
        set_attribution(response, summary)
    except Exception:  # pragma: no cover - a response type that refuses attributes
        logger.exception("camab: could not put the attribution on the response")
    return response


def to_citation_blocks(
    result: AttributionResult, nodes: Sequence[NodeWithScore], *, rule: CitationRule | None = None
) -> list[CitationBlock]:
    """``CitationBlock``s for ``result.response`` in answer order, over its attributed
    ``nodes`` (``response.source_nodes``), citing by ``rule``."""
    return [
        CitationBlock(
            cited_content=TextBlock(text=c.cited_text),
            source=location or nodes[c.source.doc_index].node.node_id,
            title=c.source.title or "",
            additional_location_info={
                "answer_start": c.sentence.start,
                "answer_end": c.sentence.end,
                "node_index": c.source.doc_index,
            },
        )
        for c, location in native_citations(result, nodes, rule=rule)
    ]
