"""The HTTP client of the OpenAI-compatible scorer: bounded requests, retries of transient
failures under a :class:`~camab_rag.retry.RetryPolicy`, and what a failed call means.
Credentials go to this server only and are masked in every message."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import email.utils
import json
import logging
import re
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx

from camab_rag import deadline
from camab_rag.errors import (
    CamabError,
    CannotScoreError,
    CredentialsRefusedError,
    InputError,
    ModelNotServedError,
    ScorerError,
    ServerRefusedError,
    TextError,
    TransientScorerError,
)
from camab_rag.redaction import Secrets, carries_credential, public_url, query_parameters
from camab_rag.retry import Retryable, RetryPolicy
from camab_rag.steps import Sleep, Steps

logger = logging.getLogger(__name__)
T = TypeVar("T")
E = TypeVar("E", bound=BaseException)
Endpoint = Literal["completions", "tokenize", "models"]

_ENDPOINTS = ("/chat/completions", "/completions", "/models", "/tokenize", "/embeddings")

PROXY_FIX = (
    "pass proxy=camab_rag.default_scorer() (in the LangChain and LlamaIndex integrations; "
    "--proxy smollm2 on the command line; camab_rag.ProxyFallbackScorer(scorer, proxy) in "
    "code) so that a local model scores in its place"
)


class NoPromptLogprobsError(CannotScoreError):
    """The server does not return the prompt's log-probabilities."""

    def __init__(self, cause: str) -> None:
        super().__init__(
            f"{PROXY_FIX}: {cause}. An attribution needs a server that scores a given text "
            "(vLLM, SGLang, llama-cpp-python, Together or Fireworks completions with echo=true "
            "and logprobs); OpenAI's own chat models cannot do this. To score with the model "
            "itself, serve it (`camab serve --model DIR`) or use camab_rag.TransformersScorer.",
            reason=cause,
        )


class NoChatTemplateError(InputError, CannotScoreError):
    """Chat messages but no chat template to render them."""

    def __init__(self, cause: str) -> None:
        super().__init__(
            f"{PROXY_FIX}: {cause}. If the server does return prompt log-probabilities "
            "(vLLM, SGLang...), give OpenAICompletionsScorer chat_template_renderer=<messages "
            "-> text> or tokenizer=<local tokenizer dir>, or pass the prompt as plain text",
            reason=cause,
        )


class ResponseTokensMismatchError(ScorerError):
    """The echoed response tokens do not re-join to the response."""


class RedirectRefusedError(ScorerError):
    """A redirect, never followed (no credential goes elsewhere)."""


@dataclass
class RequestClock:
    """The retry budget of one scorer request, shared by every HTTP call it makes."""

    first_failure: float | None = None
    first_error: str = ""
    timed_out: bool = False

    def spent(self) -> float:
        return 0.0 if self.first_failure is None else time.monotonic() - self.first_failure


@dataclass(frozen=True)
class ApiCall:
    """One HTTP attempt of at most ``limit`` seconds, body included (``GET`` without a body)."""

    transport: HttpTransport
    clients: httpx.AsyncClient | None
    endpoint: Endpoint
    body: dict[str, Any] | None
    limit: float

    def run(self) -> httpx.Response:
        client, url = self.transport.client(), self.transport.url(self.endpoint)
        end = time.monotonic() + self.limit  # from the client's first use on (it loads CAs)
        method = "GET" if self.body is None else "POST"
        request = client.build_request(method, url, json=self.body, timeout=self.limit)
        response = client.send(request, stream=True)
        # at the deadline a timer shuts the socket, so a read on a stalling server returns
        stream = response.extensions.get("network_stream")
        sock: Any = stream.get_extra_info("socket") if stream is not None else None
        lock, done, fired = threading.Lock(), threading.Event(), threading.Event()

        def cut() -> None:
            with lock:
                if not done.is_set():
                    fired.set()
                    # the plain socket's shutdown (an SSL socket's own would drop its state)
                    with contextlib.suppress(OSError):
                        socket.socket.shutdown(sock, socket.SHUT_RDWR)

        timer = threading.Timer(max(end - time.monotonic(), 0.0), cut)
        timer.daemon = True
        if isinstance(sock, socket.socket):
            timer.start()
        chunks: list[bytes] = []
        overdue = False
        try:
            for chunk in response.iter_raw():  # decoded once, below
                chunks.append(chunk)
                if overdue := time.monotonic() > end:
                    break
        except httpx.TransportError:
            if not fired.is_set():
                raise
            overdue = True
        finally:
            with lock:
                done.set()
            timer.cancel()
            response.close()
        if overdue:
            raise httpx.ReadTimeout("the response did not end in time", request=request)
        return httpx.Response(
            response.status_code, headers=response.headers, content=b"".join(chunks)
        )

    async def arun(self) -> httpx.Response:
        http, url, limit = self.clients, self.transport.url(self.endpoint), self.limit
        assert http is not None  # the client of async_client()
        method = "GET" if self.body is None else "POST"

        async def attempt() -> httpx.Response:
            async with http.stream(method, url, json=self.body, timeout=limit) as response:
                content = b"".join([chunk async for chunk in response.aiter_raw()])
                return httpx.Response(
                    response.status_code, headers=response.headers, content=content
                )

        try:
            return await asyncio.wait_for(attempt(), limit)
        except asyncio.TimeoutError:
            raise httpx.ReadTimeout("the response did not end in time") from None


class HttpTransport:
    """Client, retries and failure meaning for one OpenAI-compatible server."""

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
        parts = urlsplit(base_url)
        if in_query := [k for k, _ in query_parameters(base_url) if carries_credential(k)]:
            raise InputError(
                f"base_url {public_url(base_url)} carries a credential in its query string "
                f"({', '.join(in_query)}), and HTTP clients log URLs: send it as a header "
                f"(default_headers={{{in_query[0]!r}: ...}}) or as api_key=... for a Bearer key"
            )
        path = parts.path.rstrip("/")
        if endpoint := next((e for e in _ENDPOINTS if path.endswith(e)), None):
            root = urlunsplit((parts.scheme, parts.netloc, path[: -len(endpoint)], "", ""))
            raise InputError(
                f"base_url {public_url(base_url)} ends with the endpoint {endpoint}: pass the "
                f"server's base URL, which ends with /v1 ({public_url(root)})"
            )
        self._url = public_url(urlunsplit((parts.scheme, parts.netloc, path, "", "")))
        self.base_url = public_url(urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")))
        self.model = model
        self.timeout = float(timeout)
        self.retry = retry
        self._headers = {str(k): str(v) for k, v in (headers or {}).items()}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self.secrets = Secrets.of(base_url, api_key, self._headers)
        self.has_api_key = bool(api_key)
        self._lock = threading.Lock()
        self._sync_client: httpx.Client | None = None
        user, password = parts.username, unquote(parts.password or "")
        auth = None if user is None else httpx.BasicAuth(unquote(user), password)
        params = httpx.QueryParams(parts.query)  # sent after each request's path
        self._options: dict[str, Any] = dict(headers=self._headers, auth=auth, params=params)
        self._options["timeout"] = self.timeout

    def url(self, endpoint: Endpoint) -> str:
        if endpoint in ("completions", "models"):
            return f"{self._url}/{endpoint}"
        root = self._url[: -len("/v1")] if self._url.endswith("/v1") else self._url
        return f"{root}/tokenize"  # /tokenize lives beside /v1

    def client(self) -> httpx.Client:
        """The blocking client (one pool), closed by :meth:`close` or garbage collection."""
        with self._lock:
            if self._sync_client is None:
                self._sync_client = httpx.Client(**self._options)
                weakref.finalize(self, self._sync_client.close)
            return self._sync_client

    def async_client(self) -> httpx.AsyncClient:
        """An async client for one batch (``async with`` closes it)."""
        return httpx.AsyncClient(**self._options)

    def close(self) -> None:
        with self._lock:
            client, self._sync_client = self._sync_client, None
        if client is not None:
            client.close()

    def send(
        self,
        what: str,
        endpoint: Endpoint,
        body: dict[str, Any],
        parse: Callable[[Any], T],
        clients: httpx.AsyncClient | None,
        clock: RequestClock | None = None,
    ) -> Steps[T]:
        """The parsed answer to one request, retried under the policy and ``clock``."""
        clock = clock or RequestClock()
        body = {"model": self.model, **body}
        for attempt in range(self.retry.max_retries + 1):
            limit = self._limit(clock)
            failure: Exception
            try:
                reply = yield ApiCall(self, clients, endpoint, body, limit)
                return parse(self._json(reply, endpoint))
            except Exception as exc:
                failure = exc
            # decided outside the except block: a raised error chains no client exception
            error = self._classify(failure, limit)
            if isinstance(error, ModelNotServedError) and endpoint != "models":
                error = self._not_served((yield from self.models(clients, clock))[1])
            clock.timed_out |= isinstance(failure, httpx.TimeoutException)
            delay = self._retry_delay(what, attempt, clock, error)
            yield Sleep(delay)
        raise AssertionError("unreachable")

    def models(
        self, clients: Any, clock: RequestClock
    ) -> Steps[tuple[int | None, tuple[str, ...]]]:
        """One attempt at ``/v1/models``: its HTTP status (``None``: no answer) and model ids."""
        status: int | None = None
        ids: list[object] = []
        try:
            reply = yield ApiCall(self, clients, "models", None, self._limit(clock))
            status = reply.status_code
            ids = [e.get("id") for e in self._json(reply, "models")["data"]]
        except Exception as exc:  # the not-found error then stands without the list
            logger.debug("listing the served models failed: %s", self.secrets.clean(str(exc)))
        return status, tuple(_clip(i, 80) for i in ids if isinstance(i, str))[:20]

    def _limit(self, clock: RequestClock) -> float:
        limit = self.timeout
        if clock.first_failure is not None and self.retry.budget_s is not None:
            limit = min(limit, self.retry.budget_s - clock.spent())
        left = deadline.remaining()
        if left is not None:
            if left <= 0:
                raise deadline.expired()
            limit = min(limit, left)
        return max(limit, 0.001)

    def _retry_delay(
        self, what: str, attempt: int, clock: RequestClock, error: BaseException
    ) -> float:
        """The pause before attempt ``attempt + 1``, or the final error to raise."""
        if not isinstance(error, Retryable):
            raise self._scrub(error)
        if clock.first_failure is None:
            clock.first_failure, clock.first_error = time.monotonic(), str(error)
        delay, cause = self.retry.delay(attempt + 1, error.retry_after), str(error)
        if clock.first_error not in ("", cause):
            cause += f" (first: {clock.first_error})"
        left = deadline.remaining()
        if left is not None and delay >= left:
            raise deadline.expired(self.secrets.clean(f"{what}, {cause}"))
        stop = self.retry.why_stop(attempt, clock.spent(), delay)
        if stop is not None:
            if clock.timed_out:  # the knob that bounds a silent server's wait
                cause += f"; each attempt waits up to timeout={self.timeout:g} s (the scorer's "
                cause += "request timeout): pass a lower OpenAICompletionsScorer(timeout=...)"
            kind = ServerRefusedError if error.refused else TransientScorerError
            if error.refused:  # nothing listens there: no later request will fare better
                cause += "; nothing accepts connections there: is it running? check base_url"
            raise kind(
                self.secrets.clean(f"{what} {stop}: {cause}"),
                status_code=error.status_code,
                retry_after=error.retry_after,
                unreachable=error.unreachable,
            )
        logger.info("%s: %s; retrying in %.2f s", what, error, delay)
        return delay

    def _json(self, reply: httpx.Response, endpoint: Endpoint) -> Any:
        path = urlsplit(self.url(endpoint)).path
        status, headers = reply.status_code, reply.headers
        if status >= 400 or status < 200:
            message = self.secrets.clean(_error_message(reply.content))
            raise self._status_error(status, headers, message, path)
        if 300 <= status < 400:
            target = self.secrets.clean(public_url(headers.get("location", "another URL")))
            raise RedirectRefusedError(
                f"the server at {self.base_url} redirected {path} to {target} (HTTP {status}), "
                "not followed (no credential goes elsewhere): pass that URL as base_url"
            )
        return json.loads(reply.content)  # a ValueError is a malformed body: retried

    def _scrub(self, error: E) -> E:
        if (clean := self.secrets.clean(str(error))) == str(error):
            return error
        scrubbed = copy.copy(error)
        scrubbed.args = (clean,)
        scrubbed.__cause__ = scrubbed.__context__ = None
        return scrubbed

    def _classify(self, exc: BaseException, limit: float) -> BaseException:
        """Map a failed attempt to ``Retryable`` or a final error."""
        if isinstance(exc, CamabError):
            return self._scrub(exc)
        if isinstance(exc, httpx.TimeoutException):
            return Retryable(f"request timed out after {limit:g} s", unreachable=True)
        if isinstance(exc, httpx.TransportError):
            cause = exc.__cause__ or exc.__context__
            text = str(exc) or type(exc).__name__
            text = f"{text} ({type(cause).__name__}: {cause})" if cause else text
            refused = isinstance(exc, httpx.ConnectError)
            message = self.secrets.clean(f"connection error at {self.base_url}: {text}")
            return Retryable(message, unreachable=refused, refused=refused)
        if isinstance(exc, UnicodeEncodeError):
            return TextError(
                "the request holds text that cannot be encoded as UTF-8 (a lone surrogate): "
                "the input is at fault, not the server; camab_rag.text_gate.check_text "
                "names the field and position",
                reason="surrogate",
            )
        if isinstance(exc, ValueError):  # a malformed JSON body or echo
            return Retryable(
                self.secrets.clean(f"malformed response body: {type(exc).__name__}: {exc}")
            )
        return self._scrub(exc)

    def _not_served(self, served: tuple[str, ...]) -> ModelNotServedError:
        listed = f" (it serves: {', '.join(served)})" if served else ""
        message = f"model {self.model!r} is not served at {self.base_url}{listed}: pass "
        return ModelNotServedError(
            self.secrets.clean(message + "model= one of the names its /v1/models lists"), served
        )

    def _status_error(
        self, status: int, headers: Mapping[str, str], message: str, path: str
    ) -> BaseException:
        server, clipped = f"the server at {self.base_url}", _clip(message, 200)
        lowered = message.lower()
        if status == 429 or status == 408 or status >= 500:
            return Retryable(f"HTTP {status}: {clipped}", retry_after(headers), status_code=status)
        if status in (401, 403):
            return CredentialsRefusedError(
                f"{server} refused the request (HTTP {status}): check the api_key"
            )
        if status == 404 and "not supported" in lowered:  # a chat-only model (OpenAI)
            return NoPromptLogprobsError(
                f"{server} does not serve {path} for model {self.model!r} (HTTP 404: {clipped})"
            )
        # vLLM, OpenAI: "The model `x` does not exist", others: "model 'x' not found"
        missing = "does not exist" in lowered or "not found" in lowered
        if status == 404 and missing and "model" in lowered:
            return self._not_served(())
        if status == 404:
            return ScorerError(
                f"HTTP 404 from {path}: {clipped} (check base_url ends with /v1 and that model "
                f"{self.model!r} is served)"
            )
        if too_long := context_too_long(message):
            return too_long
        if any(w in lowered for w in ("echo", "logprobs", "prompt_logprobs")):
            why = f"(HTTP {status}: {clipped})"
            return NoPromptLogprobsError(
                f"the server rejected a request for prompt log-probabilities {why}"
            )
        return ScorerError(f"HTTP {status} from {self.base_url}: {_clip(message, 300)}")


_CONTEXT = re.compile(r"maximum context length is (\d+) tokens\D*?(at least )?(\d+)")


def context_too_long(message: str) -> InputError | None:
    """The input error for a server's "maximum context length" refusal, else ``None``."""
    if found := _CONTEXT.search(message):
        limit, at_least, total = found.groups()
        return InputError(
            f"a request has {at_least or ''}{total} tokens, more than the model's limit {limit}"
        )
    if "max_tokens must be at least 1, got 0" in message:  # vLLM: the prompt fills the context
        return InputError("a request and the token to generate are more than the model's limit")
    return None


def tokens_from(body: object) -> list[int]:
    tokens = body.get("tokens") if isinstance(body, dict) else None
    if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
        raise ScorerError("malformed /tokenize response: no integer 'tokens' list")
    return tokens


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), or None."""
    with contextlib.suppress(KeyError, ValueError):
        return float(headers["retry-after-ms"]) / 1000.0
    value = headers.get("retry-after") or ""
    with contextlib.suppress(ValueError):
        return float(value)
    with contextlib.suppress(ValueError, TypeError):
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    return None


def _error_message(content: bytes) -> str:
    text = content.decode("utf-8", errors="replace").strip()
    with contextlib.suppress(ValueError):
        body = json.loads(text)
        error = body.get("error", body) if isinstance(body, Mapping) else None
        if isinstance(error, str):
            return error
        for key in ("message", "detail"):
            if isinstance(error, Mapping) and key in error:
                return str(error[key])
    return text or "(empty body)"


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
