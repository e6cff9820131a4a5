"""LlamaIndex's own citation type from an attribution: ``CitationBlock``.

Each answer sentence cites only the nodes its attribution supports (camab-rag's
:class:`~camab_rag.CitationRule`), never every source node. ``cited_content`` is the
node's segment that supports the sentence most, ``source`` the node's id (or its
``url``/``source``/``file_path`` metadata: :data:`camab_rag.citations.SOURCE_KEYS`, the
keys LangChain's citations and the renderers read too), ``title`` the node's title metadata, and
``additional_location_info`` the sentence's span in the answer
(``answer_start``/``answer_end``) and the node's position (``node_index``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import CitationBlock, TextBlock
from llama_index.core.schema import NodeWithScore

from camab_rag.citations import CitationRule, citation_pairs, source_location
from camab_rag.result import AttributionResult


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
    blocks = []
    for pair in citation_pairs(result, nodes, rule=rule):
        node: Any = nodes[pair.source.doc_index].node
        metadata = node.metadata
        source = source_location(metadata) or node.node_id
        blocks.append(
            CitationBlock(
                cited_content=TextBlock(text=pair.cited_text),
                source=source,
                title=pair.source.title or "",
                additional_location_info={
                    "answer_start": pair.sentence.start,
                    "answer_end": pair.sentence.end,
                    "node_index": pair.source.doc_index,
                },
            )
        )
    return blocks


__all__ = ["to_citation_blocks"]
