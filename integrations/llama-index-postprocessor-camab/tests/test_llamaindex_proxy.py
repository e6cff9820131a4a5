"""A query engine whose LLM returns no prompt log-probabilities: a real ``OpenAILike`` on a
tiny local chat-only server (``tests/chat_only_server.py``) over a real
``VectorStoreIndex``, with the embedded SmolLM2 as the proxy scorer. The answer copies a
sentence of one retrieved node; the proxy must find that node and say that it scored."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from llama_fakes import attribution_info, repo_tests_module
from llama_index.postprocessor.camab import ATTRIBUTION_KEY, CamabQueryEngine

from camab_rag.settings import CHAIN_SETTINGS

K = 3
BUDGET = 2**K  # every subset once: the ranking is exact

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def case(index: Any, hotpot_rows: list[dict[str, Any]]) -> tuple[str, str, str]:
    """(question, the text of the 2nd retrieved node, an answer copied from it)."""
    question = str(hotpot_rows[0]["question"])
    nodes = index.as_retriever(similarity_top_k=K).retrieve(question)
    source = nodes[1].node.get_content()
    return question, source, source.split(". ")[0].rstrip(".") + "."


@pytest.fixture(scope="module")
def chat_api(case: tuple[str, str, str]) -> Iterator[Any]:
    answer = case[2]
    with repo_tests_module("chat_only_server.py").ChatOnlyServer(lambda messages: answer) as server:
        yield server


def _engine(index: Any, server: Any, **options: Any) -> CamabQueryEngine:
    from llama_index.llms.openai_like import OpenAILike

    llm = OpenAILike(
        model=server.model,
        api_base=server.base_url,
        api_key="sk-test",
        is_chat_model=True,
        context_window=2048,
        max_retries=0,
    )
    inner = index.as_query_engine(llm=llm, similarity_top_k=K)
    return CamabQueryEngine(inner, settings=CHAIN_SETTINGS.with_changes(budget=BUDGET), **options)


def _source_rank(response: Any, text: str) -> int:
    node = next(n for n in response.source_nodes if n.node.get_content() == text)
    return int(node.node.metadata[ATTRIBUTION_KEY]["rank"])


def test_the_proxy_scores_an_engine_whose_llm_cannot(
    index: Any, chat_api: Any, case: tuple[str, str, str], scorer: Any
) -> None:
    question, source, answer = case
    engine = _engine(index, chat_api, proxy=scorer)
    for response in (engine.query(question), asyncio.run(engine.aquery(question))):
        assert str(response) == answer  # the engine's own LLM answered
        info = attribution_info(response)
        assert info["status"] == "ok", info["error"]
        assert info["scored_by"]["model"] == "smollm2" and info["scored_by"]["proxy"] is True
        assert "chat template" in info["scored_by"]["reason"]
        # the prompt the engine sent was ablated, rendered under SmolLM2's chat template
        assert info["prompt_mode"] == "captured", info["prompt_note"]
        assert info["exact"] and info["n_queries"] == BUDGET
        assert _source_rank(response, source) == 1
    assert "/v1/chat/completions" in chat_api.paths()


def test_without_a_proxy_the_error_is_unchanged(
    index: Any, chat_api: Any, case: tuple[str, str, str]
) -> None:
    question, _, answer = case
    response = _engine(index, chat_api).query(question)
    assert str(response) == answer  # attribution never breaks the query
    info = attribution_info(response)
    assert info["status"] == "error"
    assert "chat template" in info["error"] and "proxy" in info["error"]
