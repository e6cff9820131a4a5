"""LlamaIndex's own citation type from an attribution: ``CitationBlock`` per cited
(sentence, node), from :func:`camab_rag.integration.native_citations`."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.base.llms.types import CitationBlock, TextBlock
from llama_index.core.schema import NodeWithScore

from camab_rag.integration import AttributionResult, CitationRule, native_citations


def to_citation_blocks(
    result: AttributionResult,
    nodes: Sequence[NodeWithScore],
    *,
    rule: CitationRule | None = None,
) -> list[CitationBlock]:
    """``CitationBlock``s for ``result.response``, in answer order.

    Args:
        result: an attribution (``attribution_of(response)``, ``camab_rag.attribute``).
        nodes: the attributed nodes in the same order (``response.source_nodes``).
        rule: which nodes a sentence cites (default: ``CitationRule()``).
    """
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


__all__ = ["to_citation_blocks"]
