"""A key goes only to the server it was given for (issue 37, defect 1).

A real ``ChatOpenAI`` chain on a local OpenAI-compatible server (``tests/chat_only_server.py``
on 127.0.0.1), with ``CamabCallbackHandler(scorer=None)``: the handler rebuilds the scorer
from LangChain's serialized run, where the model's key is only the name of the variable
``OPENAI_API_KEY``. That variable holds a key meant for OpenAI; it must never reach
another server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_camab import CamabAttributor, CamabCallbackHandler
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from camab_rag.errors import CredentialsRefusedError, ScorerUnavailableError
from camab_rag.scorers.proxy import chat_client_settings
from camab_rag.settings import CHAIN_SETTINGS
from tests.fakes import KeywordRetriever
from tests.integration_tests.hotpot import repo_tests_module

OPENAI_KEY = "sk-OPENAI-REAL-999"
SERVER_KEY = "sk-VLLM-SERVER-KEY"
DOCS = [
    Document("The Eiffel Tower is in Paris."),
    Document("Paris is the capital of France."),
]
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Answer from the context."), ("human", "Context:\n{context}\n\nQ: {question}")]
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    module = repo_tests_module("chat_only_server.py")
    with module.ChatOnlyServer(lambda messages: "Paris.", api_key=SERVER_KEY) as fake:
        yield fake


def _llm(server: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model=server.model,
        base_url=server.base_url,
        api_key=SecretStr(SERVER_KEY),
        max_retries=0,
    )


def _chain(llm: ChatOpenAI) -> Any:
    retriever = KeywordRetriever(documents=DOCS, k=2)

    def join(docs: list[Document]) -> str:
        return "\n\n".join(d.page_content for d in docs)

    return (
        {"context": retriever | RunnableLambda(join), "question": RunnablePassthrough()}
        | PROMPT
        | llm
    )


def test_the_handler_never_sends_openais_key_to_another_server(server: Any) -> None:
    handler = CamabCallbackHandler(
        settings=CHAIN_SETTINGS.with_changes(budget=4), scorer_options={"max_retries": 0}
    )
    answer = _chain(_llm(server)).invoke(
        "Where is the Eiffel Tower?", config={"callbacks": [handler]}
    )
    assert answer.content == "Paris."  # the chain's answer comes back
    sent = [auth for _, auth in server.authorizations]
    assert f"Bearer {SERVER_KEY}" in sent  # the chain's own call used its key
    assert all(OPENAI_KEY not in (auth or "") for auth in sent), server.authorizations
    scoring = [(p, a) for p, a in server.authorizations if p != "/v1/chat/completions"]
    assert scoring, "the handler never tried to score"
    result = handler.last_result
    assert result is not None and result.status == "error"
    # the server refused the keyless scorer: the error says what to pass
    assert "llm=" in (result.error or "") and "scorer=" in (result.error or "")
    assert OPENAI_KEY not in (result.error or "")


def test_a_scorer_from_the_live_model_sends_its_own_key(server: Any) -> None:
    """``llm=`` (and a step built on it) score with the model object's key and headers."""
    llm = _llm(server)
    llm.default_headers = {"X-Tenant": "t1"}
    settings = chat_client_settings(llm)
    assert settings.api_key == SERVER_KEY and settings.headers == {"X-Tenant": "t1"}
    assert "t1" not in repr(settings) and SERVER_KEY not in repr(settings)
    handler = CamabCallbackHandler(
        settings=CHAIN_SETTINGS.with_changes(budget=4), llm=llm, scorer_options={"max_retries": 0}
    )
    _chain(llm).invoke("Where is the Eiffel Tower?", config={"callbacks": [handler]})
    scoring = [a for p, a in server.authorizations if p != "/v1/chat/completions"]
    assert scoring and set(scoring) == {f"Bearer {SERVER_KEY}"}
    step = CamabAttributor(llm=llm)
    assert OPENAI_KEY not in repr(step.scorers.get())


def test_a_handler_that_rebuilds_its_scorer_explains_a_refused_key() -> None:
    """Without scorer= or llm=, a refused key says the handler sent none and what to pass."""
    explain = CamabCallbackHandler().runs.explain
    assert explain is not None
    explained = explain(CredentialsRefusedError("401 from the server"))
    assert isinstance(explained, ScorerUnavailableError) and "llm=<the chain's" in str(explained)
    llm = ChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key=SecretStr("k"))
    given = CamabCallbackHandler(llm=llm)
    assert given.runs.explain is None
