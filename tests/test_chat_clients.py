"""Building the HTTP scorer from a chat client's base URL, model and key.

Uses real LangChain / LlamaIndex / openai client objects (no network: constructing them
contacts nothing). Scoring through such a scorer against a real server is tested in
tests/test_openai_scorer.py.
"""

from __future__ import annotations

import types

import openai
import pytest
from pydantic import SecretStr

from camab_rag.errors import InputError
from camab_rag.scorers import resolve_scorer
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
from camab_rag.scorers.proxy import chat_client_settings

URL = "http://127.0.0.1:8011/v1"
KEY = "sk-chat-client-SECRET-77"


def test_langchain_chat_openai() -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    llm = langchain_openai.ChatOpenAI(base_url=URL, model="smollm2", api_key=KEY)
    settings = chat_client_settings(llm)
    assert (settings.base_url, settings.model, settings.api_key) == (URL, "smollm2", KEY)
    scorer = resolve_scorer(llm=llm, max_concurrency=3)
    assert isinstance(scorer, OpenAICompletionsScorer)
    assert scorer.base_url == URL and scorer.model == "smollm2"
    assert scorer.max_concurrency == 3
    assert KEY not in repr(scorer) and KEY not in repr(settings)


def test_llama_index_openai_like() -> None:
    openai_like = pytest.importorskip("llama_index.llms.openai_like")
    llm = openai_like.OpenAILike(
        api_base=URL,
        model="smollm2",
        api_key=KEY,
        is_chat_model=True,
        default_headers={"X-Gateway-Key": "gw-SECRET-1"},
    )
    settings = chat_client_settings(llm)
    assert (settings.base_url, settings.model, settings.api_key) == (URL, "smollm2", KEY)
    assert settings.headers == {"X-Gateway-Key": "gw-SECRET-1"}  # the LLM's own headers
    scorer = resolve_scorer(llm=llm)
    assert "gw-SECRET-1" not in repr(scorer) and KEY not in repr(scorer)


def test_openai_client_needs_the_model_name() -> None:
    client = openai.OpenAI(base_url=URL, api_key=KEY)
    with pytest.raises(InputError, match="model="):
        chat_client_settings(client)
    settings = chat_client_settings(client, model="smollm2")
    assert settings.base_url == URL and settings.api_key == KEY
    assert settings.headers == {}  # not its own key and platform headers
    given = openai.OpenAI(base_url=URL, api_key=KEY, default_headers={"X-Team": "t"})
    assert chat_client_settings(given, model="smollm2").headers == {"X-Team": "t"}


def test_clients_of_openais_own_api_are_refused() -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    llm = langchain_openai.ChatOpenAI(model="gpt-4o", api_key=KEY)  # no base URL: OpenAI
    with pytest.raises(InputError, match="OpenAI's own API") as info:
        chat_client_settings(llm)
    assert KEY not in str(info.value)
    llama_openai = pytest.importorskip("llama_index.llms.openai")
    with pytest.raises(InputError, match="cannot score a given text"):
        chat_client_settings(llama_openai.OpenAI(model="gpt-4o", api_key=KEY))


def test_not_an_openai_compatible_client() -> None:
    other = types.SimpleNamespace(model="claude", anthropic_api_key="x")
    with pytest.raises(InputError, match="no base URL"):
        chat_client_settings(other)
    with pytest.raises(InputError, match="is None"):
        chat_client_settings(None)
    with pytest.raises(InputError, match=r"must be an http\(s\) URL"):
        resolve_scorer(llm=types.SimpleNamespace(api_base="ftp://x", model="m"))


def test_key_forms() -> None:
    secret = types.SimpleNamespace(
        openai_api_base=URL, model_name="m", openai_api_key=SecretStr(KEY)
    )
    assert chat_client_settings(secret).api_key == KEY
    call = types.SimpleNamespace(api_base=URL, model="m", api_key=lambda: KEY)
    assert chat_client_settings(call).api_key == KEY
    none = types.SimpleNamespace(api_base=URL, model="m", api_key=None)
    assert chat_client_settings(none).api_key is None
    bad = types.SimpleNamespace(api_base=URL, model="m", api_key=42)
    with pytest.raises(InputError, match="API key"):
        chat_client_settings(bad)
