"""HTTP transport of the OpenAI-compatible scorer: clients, retries and error meanings.

A request is one step of a generator (:mod:`camab_rag.rounds`): :meth:`HttpTransport.send`
yields the call, parses the answer, and on a transient failure (timeout, connection error,
429 honouring ``Retry-After``, 408, 5xx, malformed body) yields a backoff pause and tries
again under the scorer's :class:`~camab_rag.retry.RetryPolicy`; any other failure becomes
a clear, final error. The same generator serves the blocking clients (:func:`drive`) and
the async ones (:func:`adrive`). The API key is never logged or shown.
"""

from __future__ import annotations

import email.utils
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import openai

from camab_rag.errors import CamabError, CredentialsRefusedError, ScorerError
from camab_rag.retry import Retryable, RetryPolicy
from camab_rag.rounds import Sleep, Steps
from camab_rag.scorers.echo import _NO_PROMPT_LOGPROBS_HELP, NoPromptLogprobsError, _clip

logger = logging.getLogger(__name__)
T = TypeVar("T")
Endpoint = Literal["completions", "tokenize"]


@dataclass(frozen=True)
class AsyncClients:
    """The async clients of one :meth:`~HttpTransport.async_clients` block."""

    v1: openai.AsyncOpenAI
    """The client of the OpenAI base URL (``.../v1``)."""
    root: openai.AsyncOpenAI
    """The client of the server root (``/tokenize``)."""


@dataclass(frozen=True)
class ApiCall:
    """One HTTP request: with the transport's blocking clients, or the async ones."""

    transport: HttpTransport
    clients: AsyncClients | None
    endpoint: Endpoint
    body: dict[str, Any]

    def run(self) -> Any:
        if self.endpoint == "tokenize":
            return self.transport.root_client().post("/tokenize", body=self.body, cast_to=object)
        return self.transport.client().completions.create(**self.body)

    async def arun(self) -> Any:
        if self.clients is None:
            raise RuntimeError("an async request needs the clients of async_clients()")
        if self.endpoint == "tokenize":
            return await self.clients.root.post("/tokenize", body=self.body, cast_to=object)
        return await self.clients.v1.completions.create(**self.body)


class HttpTransport:
    """Clients and retries for one OpenAI-compatible server (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        timeout: float,
        retry: RetryPolicy,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = float(timeout)
        self.retry = retry
        self._api_key = api_key
        self._headers = dict(headers or {})
        self._lock = threading.Lock()
        self._sync_client: openai.OpenAI | None = None
        self._sync_root: openai.OpenAI | None = None

    @property
    def has_api_key(self) -> bool:
        return bool(self._api_key)

    @property
    def root_url(self) -> str:
        """The server root (``/tokenize`` lives beside ``/v1``)."""
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    # ------------------------------------------------------------------------ clients

    def client(self) -> openai.OpenAI:
        with self._lock:
            if self._sync_client is None:
                self._sync_client = self._new(openai.OpenAI, self.base_url)
            return self._sync_client

    def root_client(self) -> openai.OpenAI:
        with self._lock:
            if self._sync_root is None:
                self._sync_root = self._new(openai.OpenAI, self.root_url)
            return self._sync_root

    @asynccontextmanager
    async def async_clients(self) -> AsyncIterator[AsyncClients]:
        """Async clients for one batch, closed when the block ends."""
        async with (
            self._new(openai.AsyncOpenAI, self.base_url) as v1,
            self._new(openai.AsyncOpenAI, self.root_url) as root,
        ):
            yield AsyncClients(v1, root)

    def _new(self, kind: Callable[..., T], base_url: str) -> T:
        return kind(
            base_url=base_url,
            api_key=self._api_key or "EMPTY",
            timeout=self.timeout,
            max_retries=0,  # retries are ours: backoff, jitter, Retry-After cap
            default_headers=self._headers or None,
        )

    def close(self) -> None:
        """Close the blocking clients' connection pools (reopened if used again)."""
        with self._lock:
            clients = (self._sync_client, self._sync_root)
            self._sync_client = self._sync_root = None
        for client in clients:
            if client is not None:
                client.close()

    # ------------------------------------------------------------------------ requests

    def send(
        self,
        what: str,
        endpoint: Endpoint,
        body: dict[str, Any],
        parse: Callable[[Any], T],
        clients: AsyncClients | None,
    ) -> Steps[T]:
        """The parsed answer to one request, retried under the policy (a generator of
        calls: run it with :func:`~camab_rag.rounds.drive` or ``adrive``)."""
        waited = 0.0
        for attempt in range(self.retry.max_retries + 1):
            try:
                raw = yield ApiCall(self, clients, endpoint, body)
                return parse(raw)
            except Exception as exc:
                delay = self._retry_delay(what, attempt, waited, exc)
            yield Sleep(delay)
            waited += delay
        raise AssertionError("unreachable")

    def _retry_delay(self, what: str, attempt: int, waited: float, exc: Exception) -> float:
        """The pause before attempt ``attempt + 1`` after ``exc``; raises instead when the
        failure is not transient, the retries are used up, or the pause would take the
        time spent waiting past the policy's budget."""
        error = self.classify(exc)
        if not isinstance(error, Retryable):
            raise error from exc
        delay = self.retry.delay(attempt + 1, error.retry_after)
        stop = self.retry.why_stop(attempt, waited, delay)
        if stop is not None:
            raise ScorerError(f"{what} {stop}: {error}") from exc
        logger.info("%s: %s; retrying in %.2f s", what, error, delay)
        return delay

    def classify(self, exc: BaseException) -> BaseException:
        """Map a client exception to ``Retryable`` or a clear, final error."""
        if isinstance(exc, (Retryable, CamabError)):
            return exc
        if isinstance(exc, openai.APITimeoutError):
            return Retryable(f"request timed out after {self.timeout:g} s")
        if isinstance(exc, openai.APIConnectionError):
            return Retryable(f"connection error: {_describe(exc)}")
        if isinstance(exc, openai.APIStatusError):
            return self.status_error(
                exc.status_code, exc.response.headers, _api_message(exc), exc.request.url.path
            )
        if isinstance(exc, ValueError):  # a truncated or malformed JSON body
            return Retryable(f"malformed response body: {type(exc).__name__}: {exc}")
        return exc

    def status_error(
        self, status: int, headers: Mapping[str, str], message: str, path: str
    ) -> BaseException:
        """What an HTTP error status means for a scorer."""
        retry_after = _retry_after(headers)
        if status == 429 or status == 408 or status >= 500:
            return Retryable(f"HTTP {status}: {_clip(message, 200)}", retry_after)
        if status in (401, 403):
            return CredentialsRefusedError(
                f"the server at {self.base_url} refused the request (HTTP {status}): check "
                "the api_key"
            )
        if status == 404 and "not supported" in message.lower():
            # a chat-only model behind /v1/completions (OpenAI: "This is a chat model and
            # not supported in the v1/completions endpoint")
            return NoPromptLogprobsError(
                f"the server at {self.base_url} does not serve {path} for model "
                f"{self.model!r} (HTTP 404: {_clip(message, 200)}). {_NO_PROMPT_LOGPROBS_HELP}"
            )
        if status == 404:
            return ScorerError(
                f"HTTP 404 from {path}: {_clip(message, 200)} (check "
                f"base_url ends with /v1 and that model {self.model!r} is served)"
            )
        lowered = message.lower()
        if any(w in lowered for w in ("echo", "logprobs", "prompt_logprobs")):
            return NoPromptLogprobsError(
                f"the server rejected a request for prompt log-probabilities (HTTP {status}: "
                f"{_clip(message, 200)}). {_NO_PROMPT_LOGPROBS_HELP}"
            )
        return ScorerError(f"HTTP {status} from {self.base_url}: {_clip(message, 300)}")


def as_dict(raw: Any) -> dict[str, Any]:
    """A completion as plain JSON data (extra fields such as prompt_logprobs kept)."""
    if isinstance(raw, dict):
        return raw
    if hasattr(raw, "to_dict"):
        data = raw.to_dict()
        if isinstance(data, dict):
            return data
    raise Retryable(f"malformed response body: {type(raw).__name__}")


def tokens_from(body: object) -> list[int]:
    """The token ids of a ``/tokenize`` answer."""
    tokens = body.get("tokens") if isinstance(body, dict) else None
    if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
        raise ScorerError("malformed /tokenize response: no integer 'tokens' list")
    return tokens


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _api_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and "message" in error:
            return str(error["message"])
        if "message" in body:
            return str(body["message"])
    return str(exc.message)


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f"{exc} ({type(cause).__name__}: {cause})" if cause else str(exc)


__all__ = ["ApiCall", "AsyncClients", "HttpTransport", "as_dict", "tokens_from"]
