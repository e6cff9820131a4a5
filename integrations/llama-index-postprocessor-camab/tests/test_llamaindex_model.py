"""End-to-end with real parts: a real VectorStoreIndex (all-MiniLM-L6-v2) over HotpotQA
paragraphs, the embedded SmolLM2 answering as a LlamaIndex LLM and scoring in process."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from llama_fakes import answered, attribution_info
from llama_index.core import get_response_synthesizer
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import LLMChatStartEvent
from llama_index.core.schema import MetadataMode
from llama_index.postprocessor.camab import (
    ATTRIBUTION_KEY,
    CamabEventHandler,
    CamabNodePostprocessor,
    CamabQueryEngine,
    attribution_of,
)
from pydantic import Field

from camab_rag.settings import CHAIN_SETTINGS

pytestmark = pytest.mark.model
BUDGET = 4  # the tests check shapes, metadata and agreement, not quality


def check_attributed(response: Any, question: str, n_nodes: int) -> dict[str, Any]:
    info = attribution_info(response)
    assert info["status"] == "ok", info["error"]
    assert info["question"] == question
    assert info["response"] == response.response
    assert info["prompt_mode"] == "captured", info["prompt_note"]
    assert 1 <= info["n_queries"] <= BUDGET
    assert len(info["scores"]) == len(info["document_scores"]) == n_nodes
    assert info["statements"], "per-sentence attribution is missing"
    for statement in info["statements"]:
        assert len(statement["scores"]) == n_nodes
        assert statement["text"] in response.response
    assert info["node_ids"] == [n.node.node_id for n in response.source_nodes]
    ranks = []
    for nws, doc_score in zip(response.source_nodes, info["document_scores"]):
        node_info = nws.node.metadata[ATTRIBUTION_KEY]
        assert isinstance(node_info["score"], float)
        assert node_info["score"] == pytest.approx(doc_score)
        assert isinstance(nws.score, float) and 0.0 < nws.score <= 1.0  # retrieval score kept
        assert all(s in response.response for s in node_info["supporting_sentences"])
        assert ATTRIBUTION_KEY not in nws.node.get_content(metadata_mode=MetadataMode.LLM)
        ranks.append(node_info["rank"])
    assert sorted(ranks) == list(range(1, n_nodes + 1))
    best = int(np.argmax(info["document_scores"]))
    assert response.source_nodes[best].node.metadata[ATTRIBUTION_KEY]["rank"] == 1
    return info


@pytest.fixture(scope="module")
def first(query_engine: Any, hotpot_rows: list[dict[str, Any]]) -> tuple[str, Any]:
    """The first question, answered and attributed once (shared by several tests)."""
    question = hotpot_rows[0]["question"]
    return question, CamabQueryEngine(
        query_engine, settings=CHAIN_SETTINGS.with_changes(budget=BUDGET)
    ).query(question)


def test_query_attributes_response_and_every_source_node(
    query_engine: Any, first: tuple[str, Any]
) -> None:
    question, response = first
    retrieved = query_engine.retrieve(query_engine_bundle(question))
    assert response.response.strip()
    info = check_attributed(response, question, len(retrieved))
    # the retrieved nodes, sorted by attribution, each with its retrieval score
    scores = {n.node.node_id: n.score for n in retrieved}
    assert sorted(n.node.node_id for n in response.source_nodes) == sorted(scores)
    assert all(n.score == pytest.approx(scores[n.node.node_id]) for n in response.source_nodes)
    result = attribution_of(response)
    assert result.n_segments == len(retrieved) and result.method == "auto"
    assert result.reward_of(np.ones(len(retrieved), dtype=bool)) is not None
    assert info["wall_time_s"] > 0


def query_engine_bundle(question: str) -> Any:
    from llama_index.core.schema import QueryBundle

    return QueryBundle(question)


async def test_concurrent_aqueries_match_their_own_sequential_runs(
    query_engine: Any, first: tuple[str, Any], hotpot_rows: list[dict[str, Any]]
) -> None:
    questions = [row["question"] for row in hotpot_rows]
    camab = CamabQueryEngine(query_engine, settings=CHAIN_SETTINGS.with_changes(budget=BUDGET))
    together = [answered(r) for r in await asyncio.gather(*(camab.aquery(q) for q in questions))]
    infos = [check_attributed(r, q, len(r.source_nodes)) for q, r in zip(questions, together)]
    assert len({tuple(i["node_ids"]) for i in infos}) == len(questions)
    question, alone = first  # the same first question, answered on its own (sync)
    assert question == questions[0]
    assert alone.response == together[0].response
    assert attribution_info(alone)["node_ids"] == infos[0]["node_ids"]
    np.testing.assert_allclose(attribution_info(alone)["scores"], infos[0]["scores"], atol=2e-3)


def test_handler_attributes_a_plain_query_engine(
    query_engine: Any, scorer: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    question = hotpot_rows[1]["question"]
    handler = CamabEventHandler.attach(
        scorer=scorer, settings=CHAIN_SETTINGS.with_changes(budget=BUDGET)
    )
    try:
        response = query_engine.query(question)
    finally:
        handler.detach()
    check_attributed(response, question, len(response.source_nodes))
    assert handler.results[-1]["query"] == question


def test_two_pass_answer_attribute_reanswer(llm: Any, first: tuple[str, Any]) -> None:
    question, response = first
    info = attribution_info(response)
    kept = CamabNodePostprocessor(top_k=1).postprocess_nodes(
        response.source_nodes, query_str=question
    )
    assert len(kept) == 1
    assert kept[0].node.node_id == info["node_ids"][int(np.argmax(info["document_scores"]))]
    capture = PromptCapture()
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(capture)
    try:
        second = answered(get_response_synthesizer(llm=llm).synthesize(question, nodes=kept))
    finally:
        dispatcher.event_handlers = [h for h in dispatcher.event_handlers if h is not capture]
    assert second.response is not None and second.response.strip()
    assert [n.node.node_id for n in second.source_nodes] == [kept[0].node.node_id]
    # the re-answer prompt holds the kept node only, and no attribution metadata
    assert len(capture.prompts) == 1
    prompt = capture.prompts[0]
    assert kept[0].node.get_content() in prompt
    for nws in response.source_nodes:
        if nws.node.node_id != kept[0].node.node_id:
            assert nws.node.get_content() not in prompt
    assert "attribution" not in prompt and "supporting_sentences" not in prompt


class PromptCapture(BaseEventHandler):
    """Records the text of every chat prompt sent to an LLM."""

    prompts: list[str] = Field(default_factory=list)

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, LLMChatStartEvent):
            self.prompts.append("\n".join(m.content or "" for m in event.messages))
