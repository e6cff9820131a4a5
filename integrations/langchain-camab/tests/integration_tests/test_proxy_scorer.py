"""A chain on a chat API that returns no prompt log-probabilities: a real ``ChatOpenAI``
pointed at a tiny local chat-only server (``tests/chat_only_server.py``), HotpotQA
paragraphs behind BM25, and the embedded SmolLM2 as the proxy scorer. The answer copies a
sentence of one retrieved paragraph; the proxy must find that paragraph, and say that it,
not the chain's model, scored."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_camab import CamabAttributor, CamabCallbackHandler
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from pydantic import SecretStr

from camab_rag.settings import CHAIN_SETTINGS
from tests.integration_tests.hotpot import (
    PROMPT,
    BM25Retriever,
    format_docs,
    load_rows,
    rag_chain,
    repo_tests_module,
)

pytestmark = pytest.mark.model
K = 3
BUDGET = 2**K  # every subset once: the ranking is exact


@pytest.fixture(scope="module")
def case(documents: list[Document]) -> tuple[str, list[Document], str]:
    """(question, the 3 retrieved paragraphs, an answer copied from the 2nd of them)."""
    retriever = BM25Retriever(documents=documents, k=K)
    question = str(load_rows(1)[0]["question"])
    retrieved = retriever.invoke(question)
    source = retrieved[1].page_content
    answer = source.split(". ")[0].rstrip(".") + "."
    return question, retrieved, answer


@pytest.fixture(scope="module")
def chat_api(case: tuple[str, list[Document], str]) -> Iterator[Any]:
    answer = case[2]
    with repo_tests_module("chat_only_server.py").ChatOnlyServer(lambda messages: answer) as server:
        yield server


def _chat_openai(server: Any) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=server.model, base_url=server.base_url, api_key=SecretStr("sk-test"), max_retries=0
    )


def test_the_proxy_scores_a_chain_whose_model_cannot(
    chat_api: Any, case: tuple[str, list[Document], str], documents: list[Document], smollm2: Any
) -> None:
    question, retrieved, answer = case
    handler = CamabCallbackHandler(
        settings=CHAIN_SETTINGS.with_changes(budget=BUDGET), proxy=smollm2
    )
    chain = rag_chain(BM25Retriever(documents=documents, k=K), _chat_openai(chat_api))
    message = chain.invoke(question, config={"callbacks": [handler]})

    assert message.content == answer  # the chain's own model answered
    assert "/v1/chat/completions" in chat_api.paths()
    result = handler.last_result
    assert result is not None and result.status == "ok", result and result.error
    assert result.scored_by is not None
    assert result.scored_by.model == "smollm2" and result.scored_by.proxy is True
    assert "chat template" in (result.scored_by.reason or "")  # what the chat API lacks
    # the prompt the chain sent (system + human messages) was ablated, under SmolLM2's
    # own chat template
    assert result.prompt_mode == "captured"
    assert result.exact and result.n_queries == BUDGET
    assert result.top_documents(1) == [1]
    assert result.scored_documents()[0][0].page_content == retrieved[1].page_content
    summary = message.response_metadata["attribution"]
    assert summary["scored_by"]["model"] == "smollm2" and summary["scored_by"]["proxy"] is True


def test_the_attributor_step_uses_the_proxy_too(
    chat_api: Any, case: tuple[str, list[Document], str], smollm2: Any
) -> None:
    question, retrieved, _ = case
    llm = _chat_openai(chat_api)
    answer_step: Runnable[Any, Any] = (
        RunnableLambda(lambda x: {**x, "context": format_docs(x["context"])}) | PROMPT
    )
    chain = RunnablePassthrough.assign(answer=answer_step | llm) | CamabAttributor(
        llm=llm,
        proxy=smollm2,
        settings=CHAIN_SETTINGS.with_changes(budget=BUDGET),
        prompt=PROMPT,
    )
    attribution = chain.invoke({"question": question, "context": retrieved})["attribution"]
    assert attribution["status"] == "ok", attribution["error"]
    assert attribution["scored_by"]["proxy"] is True
    assert attribution["scored_by"]["model"] == "smollm2"
    assert attribution["top_documents"][0] == 1


def test_without_a_proxy_the_error_is_unchanged(
    chat_api: Any, case: tuple[str, list[Document], str], documents: list[Document]
) -> None:
    question, _, answer = case
    handler = CamabCallbackHandler(settings=CHAIN_SETTINGS.with_changes(budget=BUDGET))
    chain = rag_chain(BM25Retriever(documents=documents, k=K), _chat_openai(chat_api))
    message = chain.invoke(question, config={"callbacks": [handler]})
    assert message.content == answer  # attribution never breaks the chain
    result = handler.last_result
    assert result is not None and result.status == "error"
    assert "proxy" in (result.error or "")  # the error says what to do
    assert "chat template" in (result.error or "")
    assert message.response_metadata["attribution"]["scored_by"] is None
