"""Which scorer scores: :func:`resolve_scorer`, the one rule every caller uses, and the
proxy fallback (:class:`ProxyFallbackScorer`): a local model scores in place of one that
cannot, never silently (``result.scored_by``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

from camab_rag.errors import CannotScoreError, InputError, ScorerUnavailableError
from camab_rag.redaction import public_url
from camab_rag.scorers.base import (
    ResponseLogprobs,
    ScoredBy,
    ScoreRequest,
    _first_attr,
    parallel_requests,
    scorer_model_name,
)
from camab_rag.steps import ScoreCall, Steps, asynced, synced

_BASE_URL_ATTRS = ("openai_api_base", "api_base", "base_url")
_MODEL_ATTRS = ("model_name", "model", "model_id")
_KEY_ATTRS = ("openai_api_key", "api_key")
_RECHECK_AFTER_S = 600.0  # when a switched scorer gives its own model another try


class ChatAPICannotScoreError(InputError, CannotScoreError):
    """The chat client talks to a hosted chat API that cannot score a given text."""


@dataclass(frozen=True)
class ChatClientSettings:
    """Connection settings read from a chat client (key and headers not in the repr)."""

    base_url: str
    model: str
    api_key: str | None = field(repr=False)
    headers: dict[str, str] = field(default_factory=dict, repr=False)


def is_openai_endpoint(url: str) -> bool:
    return urlparse(url).hostname == "api.openai.com"


def _secret(value: object) -> str | None:
    """A plain key from a ``SecretStr``, a string, or a zero-argument callable."""
    getter = getattr(value, "get_secret_value", None)
    value = getter() if callable(getter) else value() if callable(value) else value
    if value is not None and not isinstance(value, str):
        raise InputError(f"the chat client's API key is a {type(value).__name__}, not a string")
    return value or None


def chat_client_settings(client: object, *, model: str | None = None) -> ChatClientSettings:
    """Base URL, model name, key and headers of an OpenAI-compatible chat client."""
    from camab_rag.scorers.transport import PROXY_FIX  # httpx only when a client is read

    if client is None:
        raise InputError("chat client is None")
    inner = ("root_client", "client", "_client")  # LangChain's underlying openai client
    urls = (getattr(getattr(client, n, None), "base_url", None) for n in inner)
    base_url = _first_attr(client, _BASE_URL_ATTRS) or next((u for u in urls if u), None)
    kind = type(client).__name__
    if base_url is None:
        raise InputError(
            f"the chat client {kind} has no base URL (looked for {', '.join(_BASE_URL_ATTRS)}): "
            "it is not an OpenAI-compatible client; point it at a server that scores a given "
            "text (e.g. ChatOpenAI(base_url='http://127.0.0.1:8000/v1', ...) on vLLM)"
        )
    url = str(base_url).rstrip("/")
    if is_openai_endpoint(url):
        cause = (
            f"the chat client {kind} talks to OpenAI's own API ({public_url(url)}), whose "
            "chat models cannot score a given text (no prompt log-probabilities)"
        )
        raise ChatAPICannotScoreError(
            f"{PROXY_FIX}: {cause}. To score with the model itself, serve an open model with "
            "vLLM/SGLang/llama.cpp (`camab serve`), or use camab_rag.TransformersScorer",
            reason=cause,
        )
    name = model or _first_attr(client, _MODEL_ATTRS)
    if not isinstance(name, str) or not name:
        raise InputError(
            f"the chat client {kind} does not name its model (looked for "
            f"{', '.join(_MODEL_ATTRS)}); pass model='<served model name>'"
        )
    # an openai client's own default_headers hold its key: read the ones it was given
    given = _first_attr(client, ("_custom_headers", "default_headers"))
    pairs = given.items() if isinstance(given, Mapping) else ()
    headers = {str(k): v for k, v in pairs if isinstance(v, str)}
    return ChatClientSettings(url, name, _secret(_first_attr(client, _KEY_ATTRS)), headers)


def _checked_scorer(scorer: Any, name: str = "scorer", *, required: bool = False) -> Any:
    if (scorer is not None or required) and not callable(getattr(scorer, "score", None)):
        raise InputError(
            f"{name} must have a score(requests) method, got {type(scorer).__name__}: "
            "e.g. camab_rag.default_scorer() or camab_rag.OpenAICompletionsScorer(...)"
        )
    return scorer


class ProxyFallbackScorer:
    """``own`` (``None``: none could be built, for ``reason``), switched to ``proxy`` when it
    raises :class:`~camab_rag.errors.CannotScoreError` (not for a dead server or a timeout);
    :meth:`recheck` gives ``own`` another try ten minutes later."""

    def __init__(self, own: Any, proxy: Any, *, reason: str | None = None) -> None:
        self.own = _checked_scorer(own, "the answering model's scorer")
        self.proxy = _checked_scorer(proxy, "proxy", required=True)
        self._reason = None if own is not None else (reason or "the answering model cannot score")
        self._switched_at: float | None = None
        self._lock = threading.Lock()

    @property
    def using_proxy(self) -> bool:
        return self._reason is not None

    @property
    def scored_by(self) -> ScoredBy:
        if self.using_proxy:
            return ScoredBy(scorer_model_name(self.proxy), proxy=True, reason=self._reason)
        return ScoredBy(scorer_model_name(self.own))

    @property
    def parallel_requests(self) -> int:
        both = (self.proxy,) if self.using_proxy else (self.own, self.proxy)
        return min(parallel_requests(s) for s in both)

    def recheck(self) -> None:
        """Give the own model another try when due."""
        with self._lock:
            since = self._switched_at
            if since is not None and time.monotonic() - since >= _RECHECK_AFTER_S:
                self._reason = self._switched_at = None

    def _score_steps(self, requests: Sequence[ScoreRequest]) -> Steps[list[ResponseLogprobs]]:
        if not self.using_proxy:
            try:
                return list((yield ScoreCall(self.own, requests)))
            except CannotScoreError as error:
                with self._lock:
                    if self._reason is None:
                        self._reason = error.reason
                        self._switched_at = time.monotonic()
        return list((yield ScoreCall(self.proxy, requests)))

    score = synced(_score_steps, "score", "The own model's log-probs, else the proxy's.")
    ascore = asynced(_score_steps, "ascore", "Async :meth:`score`.")

    def generate(self, prompts: Sequence[Any], *, max_new_tokens: int = 128) -> list[str]:
        target = self.proxy if self.using_proxy else self.own
        return list(target.generate(prompts, max_new_tokens=max_new_tokens))

    def __repr__(self) -> str:
        return f"ProxyFallbackScorer(own={self.own!r}, proxy={self.proxy!r})"


def _own_or_proxy(build_own: Callable[[], Any], proxy: Any | None) -> Any:
    """``build_own()``, else ``proxy`` where it cannot score or raises an InputError."""
    if proxy is None:
        return build_own()
    try:
        own = build_own()
    except InputError as error:
        return ProxyFallbackScorer(None, proxy, reason=getattr(error, "reason", "") or str(error))
    return own if isinstance(own, ProxyFallbackScorer) else ProxyFallbackScorer(own, proxy)


_READERS: list[Callable[[object], object]] = []


def register_model_reader(reader: Callable[[object], object]) -> None:
    """Let :func:`resolve_scorer` read a framework's chat models: ``reader`` returns the
    object to build a scorer from, or the model."""
    if reader not in _READERS:
        _READERS.append(reader)


def _scorer_of_model(model: object, **options: Any) -> Any:
    """A chat model's own ``scorer``, the model when it scores, else its server's scorer."""
    for reader in _READERS:
        model = reader(model)
    own = getattr(model, "scorer", None)
    if callable(getattr(own, "score", None)):
        return own
    if callable(getattr(model, "score", None)):
        return model
    from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
    from camab_rag.scorers.transport import PROXY_FIX

    try:
        client = chat_client_settings(model)
        headers = {**client.headers, **dict(options.pop("default_headers", None) or {})}
        options["default_headers"] = headers or None
        return OpenAICompletionsScorer(client.base_url, client.model, client.api_key, **options)
    except InputError as error:
        cause = f"cannot score with the chain's model {type(model).__name__}: "
        cause += getattr(error, "reason", "") or str(error)
        raise ScorerUnavailableError(
            f"{PROXY_FIX}, or scorer=camab_rag.OpenAICompletionsScorer(...) for a server that "
            f"scores a given text (`camab serve`), or use an OpenAI-compatible chat model: {cause}",
            reason=cause,
        ) from error


def resolve_scorer(
    scorer: Any = None,
    *,
    llm: Any = None,
    proxy: Any = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    **options: Any,
) -> Any:
    """The scorer to attribute with: ``scorer`` as it is; else ``llm``'s (a framework's chat
    model: its own weights, else its OpenAI-compatible server's); else ``base_url`` and
    ``model`` (with ``api_key``); else the in-process ``model``. ``options`` go to the scorer
    built; ``proxy`` scores whenever that one cannot (``scored_by.proxy`` says so)."""
    if proxy is not None:
        _checked_scorer(proxy, "proxy")
        own = {"llm": llm, "model": model, "base_url": base_url, "api_key": api_key}
        return _own_or_proxy(lambda: resolve_scorer(scorer, **own, **options), proxy)
    if scorer is not None:
        if llm is not None or base_url is not None or model is not None:
            raise InputError("pass scorer= or a model to build one from (llm=, model=), not both")
        return _checked_scorer(scorer)
    if llm is not None:
        return _scorer_of_model(llm, **options)
    if base_url is not None:
        if not model:
            raise ScorerUnavailableError("base_url= needs model= (the served model's name)")
        url, name = str(base_url), str(model)
        if is_openai_endpoint(url):  # the chat-client path says why its models cannot score
            return _scorer_of_model(SimpleNamespace(model=name, base_url=url), **options)
        from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

        return OpenAICompletionsScorer(url, name, api_key, **options)
    if model is not None:
        from camab_rag.scorers.transformers_scorer import TransformersScorer

        return TransformersScorer(model, **options)
    raise ScorerUnavailableError(
        "no scorer: pass scorer=... or llm=<the chain's chat model> (scorer=None uses the "
        "chain's own model, which this step cannot see); scorer= takes e.g. "
        "camab_rag.default_scorer() or camab_rag.OpenAICompletionsScorer(...), and "
        "proxy= a scorer that scores for a model that cannot"
    )


@dataclass
class ScorerCache:
    """An integration object's scorers, each resolved once: ``scorer``, else ``llm``'s, else
    that of each model a call shows, with ``proxy`` whenever that model cannot score."""

    scorer: object = None
    llm: object = None
    proxy: object = None
    options: dict[str, Any] = field(default_factory=dict)
    _built: dict[Hashable, tuple[object, Any]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(
        self, model: object = None, build: Callable[..., Any] | None = None, key: Hashable = None
    ) -> Any:
        """The scorer given (or ``llm``'s); else ``model``'s, built by ``build(**options)``
        (default: the resolver's for ``llm=model``) once per ``key`` (default: per model)."""
        configured = self.scorer is not None or self.llm is not None
        configured = configured or (model is None and key is None)
        owner = None if configured or key is not None else model
        key = "configured" if configured else id(model) if key is None else key
        with self._lock:  # built under the lock: a model loads once
            hit = self._built.get(key)
            if hit is not None and hit[0] is owner:
                if isinstance(hit[1], ProxyFallbackScorer):
                    hit[1].recheck()  # an attribution starts: the own model may score again
                return hit[1]
            if configured or build is None:
                build = partial(resolve_scorer, self.scorer, llm=self.llm if configured else model)
            scorer = _own_or_proxy(lambda: build(**self.options), self.proxy)
            self._built[key] = (owner, scorer)
            return scorer
