"""ChatOpenAI pointed at a real local vLLM server, attributed with ``scorer=None``: the
handler builds the HTTP scorer from the chain's own model (same server, same weights).

The server comes from camab-rag's test helper (``tests/vllm_server.py``); without the
vLLM environment (``scripts/setup_vllm.sh``) the test is skipped, except in CI.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_camab import AsyncCamabCallbackHandler, CamabAttributor, CamabCallbackHandler
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from pydantic import SecretStr

from camab_rag.settings import CHAIN_SETTINGS
from tests.integration_tests.hotpot import (
    PROMPT,
    BM25Retriever,
    Example,
    format_docs,
    rag_chain,
    repo_tests_module,
)

pytestmark = [pytest.mark.model, pytest.mark.server]
BUDGET = 4  # each call is a forward pass of the whole prompt on the shared CPU server


@pytest.fixture(scope="module")
def vllm_base_url() -> Iterator[str]:
    with repo_tests_module("vllm_server.py").smollm2_server() as server:
        yield server.base_url


def _chat_openai(base_url: str) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model="smollm2",
        base_url=base_url,
        api_key=SecretStr("EMPTY"),
        temperature=0,
        max_completion_tokens=24,  # the field max_tokens, by its pydantic alias
    )


def test_chat_openai_chain_is_attributed_by_its_own_server(
    vllm_base_url: str, retriever: BM25Retriever, easy_examples: list[Example]
) -> None:
    llm = _chat_openai(vllm_base_url)
    handler = CamabCallbackHandler(
        settings=CHAIN_SETTINGS.with_changes(budget=BUDGET)
    )  # scorer=None: from the chain's ChatOpenAI
    chain = rag_chain(retriever, llm)
    example = easy_examples[0]
    message = chain.invoke(example.question, {"callbacks": [handler]})
    result = handler.last_result
    assert result is not None
    assert result.status == "ok", result.error
    assert result.prompt_mode == "captured"
    assert result.response == message.content
    assert 0 < result.n_queries <= BUDGET
    assert message.response_metadata["attribution"]["status"] == "ok"
    assert result.n_documents == 4 and result.document_scores.shape == (4,)


def test_a_streamed_answer_gets_its_attribution_in_the_last_chunk(
    vllm_base_url: str, retriever: BM25Retriever, easy_examples: list[Example]
) -> None:
    """The server streams the answer token by token; the attribution (scored by the same
    server against the real prompt) comes after the last token."""
    llm = _chat_openai(vllm_base_url)
    answer = RunnableLambda(lambda x: {**x, "context": format_docs(x["context"])}) | PROMPT | llm
    chain = RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["question"])).assign(
        answer=answer
    ) | CamabAttributor(llm=llm, settings=CHAIN_SETTINGS.with_changes(budget=BUDGET), prompt=PROMPT)
    chunks = list(chain.stream({"question": easy_examples[0].question}))
    tokens = [c["answer"] for c in chunks[:-1] if "answer" in c]
    assert len(tokens) >= 2 and all(isinstance(t, AIMessageChunk) for t in tokens)
    data = chunks[-1]["attribution"]
    assert data["status"] == "ok", data["error"]
    assert data["prompt_mode"] == "captured"
    assert 0 < data["n_queries"] <= BUDGET and len(data["documents"]) == 4
    message = tokens[0]
    for token in [*tokens[1:], chunks[-1]["answer"]]:
        message = message + token
    assert message.response_metadata["attribution"] == data


def test_async_attribution_leaves_no_connection_open(
    vllm_base_url: str, retriever: BM25Retriever, easy_examples: list[Example]
) -> None:
    """Every HTTP client the attribution opens is closed: once the app closes its own
    ChatOpenAI client, no ``ResourceWarning: unclosed transport`` is left."""

    async def run() -> list[str]:
        llm = _chat_openai(vllm_base_url)
        handler = AsyncCamabCallbackHandler(
            settings=CHAIN_SETTINGS.with_changes(budget=BUDGET)
        )  # its scorer: built from the run
        chain = rag_chain(retriever, llm)
        statuses = []
        for example in easy_examples[:2]:
            await chain.ainvoke(example.question, {"callbacks": [handler]})
            assert handler.last_result is not None
            statuses.append(handler.last_result.status)
        await llm.root_async_client.close()  # the app's own client (not camab's)
        return statuses

    gc.collect()  # what earlier tests left behind is not this test's to judge
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        statuses = asyncio.run(run())
        gc.collect()  # the handler, its scorers and their clients are garbage now
    assert statuses == ["ok"] * 2
    warned = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert [w for w in warned if "transport" in w or "socket" in w] == []
