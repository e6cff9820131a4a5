"""Attach an attribution to a LlamaIndex answer: the summary, node copies, ``CitationBlock``s."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.types import CitationBlock, TextBlock
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import MetadataMode, NodeWithScore
from llama_index.postprocessor.camab.answers import AnswerAttribution, set_attribution

from camab_rag.integration import METADATA_KEY, native_citations
from camab_rag.segments import SourceDocument

if TYPE_CHECKING:
    from camab_rag import AttributionResult, CitationRule

logger = logging.getLogger(__name__)
ATTRIBUTION_KEY = METADATA_KEY
"""The metadata key under which responses and nodes carry their attribution."""
SOURCES = {True: "response.source_nodes", False: "retrieval events"}


def node_documents(nodes: Sequence[NodeWithScore]) -> list[SourceDocument]:
    """Each node as the text the LLM saw (content with LLM metadata, stripped)."""
    return [
        SourceDocument(n.node.get_content(MetadataMode.LLM).strip(), {"node_id": n.node_id})
        for n in nodes
    ]


def _with_attribution(node: Any, info: dict[str, Any]) -> Any:
    """A copy of ``node`` carrying ``info``, hidden from LLMs and embedding models."""
    update: dict[str, Any] = {"metadata": {**node.metadata, ATTRIBUTION_KEY: info}}
    for name in ("excluded_llm_metadata_keys", "excluded_embed_metadata_keys"):
        keys = list(getattr(node, name))
        update[name] = keys if ATTRIBUTION_KEY in keys else [*keys, ATTRIBUTION_KEY]
    return node.model_copy(update=update)


def attach(response: Any, done: AnswerAttribution) -> Any:
    """Put ``done`` on ``response`` in place (a blocked answer's text: the fallback)."""
    summary, entries = done.metadata()
    try:
        if entries:
            nodes = [
                NodeWithScore(node=_with_attribution(n.node, e), score=n.score)
                for n, e in zip(done.documents, entries)
            ]
            summary["node_source"] = SOURCES[done.own_sources]
            summary["node_ids"] = [n.node.node_id for n in nodes]
            if done.own_sources:
                response.source_nodes = nodes
            else:
                summary["nodes"] = [{"node_id": n.node_id, **e} for n, e in zip(nodes, entries)]
        if done.replacement is not None and isinstance(response, Response):
            response.response = done.replacement
        set_attribution(response, summary)
    except Exception:  # pragma: no cover - a response type that refuses attributes
        logger.exception("camab: could not put the attribution on the response")
    return response


def to_citation_blocks(
    result: AttributionResult,
    nodes: Sequence[NodeWithScore],
    *,
    rule: CitationRule | None = None,
) -> list[CitationBlock]:
    """``CitationBlock``s for ``result.response`` (e.g. ``attribution_of(response)``) in
    answer order, over its attributed ``nodes`` (``response.source_nodes``), citing by
    ``rule`` (default: ``CitationRule()``)."""
    return [
        CitationBlock(
            cited_content=TextBlock(text=c.cited_text),
            source=c.source or nodes[c.doc_index].node.node_id,
            title=c.title or "",
            additional_location_info={
                "answer_start": c.start,
                "answer_end": c.end,
                "node_index": c.doc_index,
            },
        )
        for c in native_citations(result, nodes, rule=rule)
    ]
