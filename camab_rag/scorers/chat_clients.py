"""Build the HTTP scorer from an OpenAI-compatible chat client ("the chain's own LLM").

Duck-typed, so neither LangChain nor LlamaIndex is imported:

* LangChain ``ChatOpenAI``: ``.openai_api_base`` (``base_url``), ``.model_name``,
  ``.openai_api_key`` (a pydantic ``SecretStr``, a string or a callable);
* LlamaIndex ``OpenAILike`` / ``OpenAI``: ``.api_base``, ``.model``, ``.api_key``;
* an ``openai.OpenAI`` client (``.base_url``, ``.api_key``; pass ``model=``).

The chat client must point at a server that scores a given text through
``/v1/completions`` (vLLM, SGLang, llama-cpp-python, ...): the scorer then asks the very
model that wrote the answer. OpenAI's own API cannot score a given text, so a client that
talks to it is refused with an explanation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from camab_rag.errors import InputError
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

_BASE_URL_ATTRS = ("openai_api_base", "api_base", "base_url")
_MODEL_ATTRS = ("model_name", "model", "model_id")
_KEY_ATTRS = ("openai_api_key", "api_key")
_OPENAI_HOSTS = ("api.openai.com",)


@dataclass(frozen=True)
class ChatClientSettings:
    """Connection settings read from a chat client (the key is hidden from the repr)."""

    base_url: str
    model: str
    api_key: str | None

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return (
            f"ChatClientSettings(base_url={self.base_url!r}, model={self.model!r}, api_key=<{key}>)"
        )


def _first_attr(obj: object, names: tuple[str, ...]) -> object:
    for name in names:
        value = getattr(obj, name, None)
        if value is not None and value != "":
            return value
    return None


def _secret(value: object) -> str | None:
    """A plain key from a ``SecretStr``, a string, or a zero-argument callable."""
    if value is None:
        return None
    getter = getattr(value, "get_secret_value", None)
    if callable(getter):
        value = getter()
    elif callable(value):
        value = value()
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"the chat client's API key is a {type(value).__name__}, not a string")
    return value or None


def chat_client_settings(client: object, *, model: str | None = None) -> ChatClientSettings:
    """Read base URL, model name and API key from an OpenAI-compatible chat client.

    Args:
        client: a LangChain ``ChatOpenAI``, a LlamaIndex ``OpenAILike``/``OpenAI``, an
            ``openai.OpenAI`` client, or anything with the same attributes.
        model: the served model's name, if the client does not say it (or to override).

    Raises:
        InputError: the client has no base URL, no model name, or talks to OpenAI's own API.
    """
    if client is None:
        raise InputError("chat client is None")
    base_url = _first_attr(client, _BASE_URL_ATTRS)
    if base_url is None:
        # LangChain keeps the underlying openai client on .root_client / .client
        for inner_name in ("root_client", "client", "_client"):
            inner = getattr(client, inner_name, None)
            if inner is not None and getattr(inner, "base_url", None) is not None:
                base_url = inner.base_url
                break
    kind = type(client).__name__
    if base_url is None:
        raise InputError(
            f"the chat client {kind} has no base URL (looked for "
            f"{', '.join(_BASE_URL_ATTRS)}): it is not an OpenAI-compatible client, or it "
            "talks to OpenAI's own API. Point it at an OpenAI-compatible server that scores "
            "a given text (e.g. ChatOpenAI(base_url='http://127.0.0.1:8000/v1', ...) on vLLM)"
        )
    url = str(base_url).rstrip("/")
    host = urlparse(url).hostname or ""
    if host in _OPENAI_HOSTS:
        raise InputError(
            f"the chat client {kind} talks to OpenAI's own API ({url}), whose chat models "
            "cannot score a given text (no prompt log-probabilities), so they cannot serve "
            "as the attribution scorer. Use an open model served by vLLM/SGLang/llama.cpp, "
            "or camab_rag.TransformersScorer"
        )
    if not url.startswith(("http://", "https://")):
        raise InputError(f"the chat client {kind} has a base URL that is not http(s): {url!r}")
    name = model or _first_attr(client, _MODEL_ATTRS)
    if not isinstance(name, str) or not name:
        raise InputError(
            f"the chat client {kind} does not name its model (looked for "
            f"{', '.join(_MODEL_ATTRS)}); pass model='<served model name>'"
        )
    key = _secret(_first_attr(client, _KEY_ATTRS))
    return ChatClientSettings(base_url=url, model=name, api_key=key)


def scorer_from_chat_client(
    client: object, *, model: str | None = None, **options: Any
) -> OpenAICompletionsScorer:
    """An :class:`OpenAICompletionsScorer` on the same server, model and key as ``client``.

    Keyword options go to :class:`OpenAICompletionsScorer` (``max_concurrency``,
    ``timeout``, ``chat_template_renderer``, ...).
    """
    settings = chat_client_settings(client, model=model)
    return OpenAICompletionsScorer(settings.base_url, settings.model, settings.api_key, **options)
