"""The key in ``OPENAI_API_KEY`` goes to OpenAI only (issue 50, item 10).

LlamaIndex's ``OpenAILike`` reads ``OPENAI_API_KEY`` when no ``api_key`` is given; on main
the scorer built from it sent that key, meant for OpenAI, to the other server's
``/tokenize`` and ``/completions``. A real ``OpenAILike`` on the chat-only server
(``tests/chat_only_server.py``, 127.0.0.1, which records each request's Authorization)
answers a real ``CamabQueryEngine``'s query; the scoring requests are then inspected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from llama_fakes import attribution_info, repo_tests_module
from llama_index.core import Document, SummaryIndex
from llama_index.llms.openai_like import OpenAILike
from llama_index.postprocessor.camab import CamabQueryEngine
from llama_index.postprocessor.camab.attributor import without_openai_key

from camab_rag.settings import CHAIN_SETTINGS

OPENAI_KEY = "sk-OPENAI-ENV-7d21c4"
SERVER_KEY = "sk-SERVER-OWN-0be95a"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    module = repo_tests_module("chat_only_server.py")
    with module.ChatOnlyServer(lambda messages: "Paris.") as fake:
        yield fake


def scoring_authorizations(server: Any, **llm_options: Any) -> list[str | None]:
    """The Authorization of each scoring request an engine on an ``OpenAILike`` made."""
    llm = OpenAILike(
        model=server.model,
        api_base=server.base_url,
        is_chat_model=True,
        max_retries=0,
        **llm_options,
    )
    index = SummaryIndex.from_documents(
        [Document(text="The Eiffel Tower is in Paris."), Document(text="Rome is in Italy.")]
    )
    settings = CHAIN_SETTINGS.with_changes(budget=2)
    engine = CamabQueryEngine(index.as_query_engine(llm=llm), settings=settings)
    response = engine.query("Where is the Eiffel Tower?")
    assert str(response) == "Paris."  # the engine's own LLM answered
    assert attribution_info(response)["status"] == "error"  # a chat-only server cannot score
    scoring = [auth for path, auth in server.authorizations if "chat" not in path]
    assert scoring, f"the engine never tried to score: {server.paths()}"
    return scoring


def test_openais_key_from_the_environment_goes_to_no_other_server(server: Any) -> None:
    assert set(scoring_authorizations(server)) == {None}


def test_a_key_given_to_the_llm_goes_with_its_scorer(server: Any) -> None:
    assert set(scoring_authorizations(server, api_key=SERVER_KEY)) == {f"Bearer {SERVER_KEY}"}


def test_openais_key_stays_for_openais_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only another server loses the key, and only the copy the scorer reads does."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    hosted = OpenAILike(model="gpt-4o-mini", api_base="https://api.openai.com/v1")
    assert without_openai_key(hosted) is hosted
    local = OpenAILike(model="m", api_base="http://127.0.0.1:9/v1")
    assert local.api_key == OPENAI_KEY and without_openai_key(local).api_key == ""  # type: ignore[attr-defined]
    assert local.api_key == OPENAI_KEY  # the LLM itself is unchanged
