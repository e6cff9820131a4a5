"""Review finding 13: a response's ``source_nodes`` are re-sorted by attribution, the
sources ``cite()`` shows first (by score), on a real ``SummaryIndex`` query engine scored
by the embedded SmolLM2 (the answer is fixed: it copies the last retrieved node)."""

from __future__ import annotations

from typing import Any

import pytest
from llama_fakes import attribution_info
from llama_index.core import Document, SummaryIndex
from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from llama_index.postprocessor.camab import (
    ATTRIBUTION_KEY,
    CamabQueryEngine,
    attribution_of,
    to_citation_blocks,
)

import camab_rag

pytestmark = pytest.mark.model
TEXTS = [
    "Berlin is the capital of Germany.",
    "Madrid is the capital of Spain.",
    "Rome is the capital of Italy.",
    "Paris is the capital of France.",
]


class Says(CustomLLM):
    """An LLM that answers ``text`` to every prompt."""

    text: str = ""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.text)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        yield CompletionResponse(text=self.text, delta=self.text)


def test_source_nodes_are_sorted_as_cite_shows_them(scorer: Any) -> None:
    index = SummaryIndex.from_documents([Document(text=t) for t in TEXTS])
    engine = CamabQueryEngine(index.as_query_engine(llm=Says(text=TEXTS[-1])), scorer, budget=8)
    response = engine.query("Which city is the capital of France?")
    info = attribution_info(response)
    assert info["status"] == "ok", info["error"]
    nodes = response.source_nodes
    assert nodes[0].node.get_content() == TEXTS[-1]  # retrieved last
    assert info["node_ids"] == [n.node.node_id for n in nodes]
    result = attribution_of(response)
    shown = [source.doc_index for source in camab_rag.cite(result, nodes).sources]
    assert shown and sorted(shown) == list(range(len(shown))) and len(shown) < len(TEXTS)
    scores = [n.node.metadata[ATTRIBUTION_KEY]["score"] for n in nodes]
    top, rest = scores[: len(shown)], scores[len(shown) :]
    assert top == sorted(top, reverse=True) and rest == sorted(rest, reverse=True)
    assert scores == pytest.approx(result.document_scores.tolist())
    assert to_citation_blocks(result, nodes)[0].source == nodes[0].node_id
    # the cited sources are in the summary as in LangChain's (review 11)
    assert info["top_documents"] == list(range(len(shown)))
    assert {c["document"] for c in info["citations"]} - {None} == set(shown)
