"""Build the HTTP scorer from an OpenAI-compatible chat client ("the chain's own LLM").

Duck-typed (LangChain ``ChatOpenAI``, LlamaIndex ``OpenAILike``/``OpenAI``, an
``openai.OpenAI`` client): the scorer gets the client's own base URL, key and headers, so
a credential goes only to its server. OpenAI's own API cannot score a given text, so a
client that talks to it is refused with an explanation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

from camab_rag.errors import CannotScoreError, InputError
from camab_rag.redaction import public_url, shown_url
from camab_rag.scorers.echo import PROXY_FIX

_BASE_URL_ATTRS = ("openai_api_base", "api_base", "base_url")
_MODEL_ATTRS = ("model_name", "model", "model_id")
_KEY_ATTRS = ("openai_api_key", "api_key")
_OPENAI_HOSTS = ("api.openai.com",)


class ChatAPICannotScoreError(InputError, CannotScoreError):
    """The chat client talks to a hosted chat API that cannot score a given text (a proxy
    can score in its place; the message leads with that fix)."""


@dataclass(frozen=True)
class ChatClientSettings:
    """Connection settings read from a chat client (the key and the header values are
    hidden from the repr)."""

    base_url: str
    model: str
    api_key: str | None
    headers: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return (
            f"ChatClientSettings(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key=<{key}>, headers={sorted(self.headers)})"
        )


def is_openai_endpoint(url: str) -> bool:
    """Whether ``url`` is OpenAI's own API (where a key in ``OPENAI_API_KEY`` belongs)."""
    return (urlparse(url).hostname or "") in _OPENAI_HOSTS


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
    """Base URL, model name and key of an OpenAI-compatible chat client (``model`` overrides);
    :class:`InputError` when one is missing or the client talks to OpenAI's own API."""
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
    if is_openai_endpoint(url):
        cause = (
            f"the chat client {kind} talks to OpenAI's own API ({public_url(url)}), whose "
            "chat models "
            "cannot score a given text (no prompt log-probabilities)"
        )
        raise ChatAPICannotScoreError(
            f"{PROXY_FIX}: {cause}, so they cannot serve as the attribution scorer. To score "
            "with the model itself, use an open model served by vLLM/SGLang/llama.cpp "
            "(`camab serve`), or camab_rag.TransformersScorer",
            reason=cause,
        )
    if not url.startswith(("http://", "https://")):
        raise InputError(
            f"the chat client {kind} has a base URL that is not http(s): {shown_url(url)}"
        )
    name = model or _first_attr(client, _MODEL_ATTRS)
    if not isinstance(name, str) or not name:
        raise InputError(
            f"the chat client {kind} does not name its model (looked for "
            f"{', '.join(_MODEL_ATTRS)}); pass model='<served model name>'"
        )
    key = _secret(_first_attr(client, _KEY_ATTRS))
    return ChatClientSettings(base_url=url, model=name, api_key=key, headers=_headers(client))


def _headers(client: object) -> dict[str, str]:
    """The extra headers the client sends (``default_headers``; an ``openai`` client's own
    ``default_headers`` include its key and platform headers, so its given ones are read)."""
    given = getattr(client, "_custom_headers", None)
    if given is None:
        given = getattr(client, "default_headers", None)
    if not isinstance(given, Mapping):
        return {}
    return {str(k): str(v) for k, v in given.items() if isinstance(v, str)}
