"""Scorer over HTTP: any OpenAI-compatible server that echoes prompt log-probabilities
(``/v1/completions`` with ``echo`` + ``logprobs``), as token ids from vLLM's ``/tokenize``
(probed once) or as one text. Transient failures are retried; credentials go to this server
only and are masked in every message."""

from __future__ import annotations

import asyncio
import contextvars
import copy
import functools
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx

from camab_rag import deadline
from camab_rag.errors import (
    CamabError,
    CredentialsRefusedError,
    InputError,
    ModelNotServedError,
    ScorerError,
    ServerNotFoundError,
    ServerRefusedError,
    TextError,
    TransientScorerError,
)
from camab_rag.redaction import Secrets, carries_credential, public_url, query_parameters, shown_url
from camab_rag.retry import RetryPolicy
from camab_rag.scorers.base import (
    ChatMessage,
    Prompt,
    ResponseLogprobs,
    ScoreRequest,
    check_messages,
)
from camab_rag.scorers.models import set_offline_flags
from camab_rag.scorers.transport import (
    ApiCall,
    Endpoint,
    NoChatTemplateError,
    NoPromptLogprobsError,
    Plan,
    RedirectRefusedError,
    RequestClock,
    ResponseTokensMismatchError,
    _choice,
    _clip,
    _error_message,
    context_too_long,
    parse_echo,
    retry_after,
    tokens_from,
)
from camab_rag.steps import BlockingCall, Sleep, Steps, adrive, drive

logger = logging.getLogger(__name__)
T = TypeVar("T")
_CHECK_V1 = "check base_url, which ends with /v1 (http://127.0.0.1:8000/v1 for vLLM)"
_ENDPOINTS = ("/chat/completions", "/completions", "/models", "/tokenize", "/embeddings")


class OpenAICompletionsScorer:
    """Score (and greedily generate) with an OpenAI-compatible completions server.

    Args:
        base_url: the server's OpenAI base URL (``"http://127.0.0.1:8000/v1"``).
        model: the served model name.
        api_key: sent to this server only, never shown; ``None`` sends none.
        max_concurrency: requests in flight; also :attr:`parallel_requests`.
        timeout: the most seconds one HTTP attempt may take, body included.
        max_retries, backoff_base, backoff_max, retry_budget_s: retries of a transient
            failure, the first and the longest pause (also the cap on ``Retry-After``), and the
            most seconds spent retrying after the first failure (``None``: no limit), in seconds.
        chat_template_renderer, tokenizer: render chat prompts locally (``messages -> text``
            with the assistant header, or a local tokenizer dir) for servers without ``/tokenize``.
        default_headers: extra HTTP headers for every request.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        max_concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 5,
        chat_template_renderer: Callable[[Sequence[ChatMessage]], str] | None = None,
        tokenizer: str | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        retry_budget_s: float | None = 3.0,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InputError(f"base_url must be an http(s) URL, got {shown_url(base_url)}")
        if not isinstance(model, str) or not model:
            raise InputError("model must be the served model's name (a non-empty string)")
        if max_concurrency < 1:
            raise InputError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if timeout <= 0:
            raise InputError(f"timeout must be positive, got {timeout}")
        self.retry = RetryPolicy(max_retries, backoff_base, backoff_max, retry_budget_s)
        parts = urlsplit(base_url)
        if in_query := [k for k, _ in query_parameters(base_url) if carries_credential(k)]:
            raise InputError(
                f"base_url {public_url(base_url)} carries a credential in its query string "
                f"({', '.join(in_query)}), and HTTP clients log URLs: send it as a header "
                f"(default_headers={{{in_query[0]!r}: ...}}) or as api_key=... for a Bearer key"
            )
        path = parts.path.rstrip("/")
        self._url = public_url(urlunsplit((parts.scheme, parts.netloc, path, "", "")))
        if endpoint := next((e for e in _ENDPOINTS if path.endswith(e)), None):
            raise InputError(
                f"base_url {public_url(base_url)} ends with the endpoint {endpoint}: pass the "
                f"server's base URL, which ends with /v1 ({self._url.removesuffix(endpoint)})"
            )
        self.base_url = public_url(urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")))
        self.model, self.timeout = model, float(timeout)
        self.max_concurrency = self.parallel_requests = max_concurrency
        headers = {str(k): str(v) for k, v in (default_headers or {}).items()}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.secrets = Secrets.of(base_url, api_key, headers)
        user, password = parts.username, unquote(parts.password or "")
        auth = None if user is None else httpx.BasicAuth(unquote(user), password)
        params = httpx.QueryParams(parts.query)  # sent after each request's path
        self._options: dict[str, Any] = dict(headers=headers, auth=auth, params=params)
        self._options["timeout"] = self.timeout
        self._lock = threading.Lock()
        self._sync_client: httpx.Client | None = None
        self._renderer = chat_template_renderer
        self._tokenizer_dir = tokenizer
        self._hf_tokenizer: Any = None
        self._has_tokenize: bool | None = None  # probed once
        self._ids: dict[str, list[int]] = {}  # up to 256 token id lists, then cleared
        self._probe_failure: TransientScorerError | None = None

    def __repr__(self) -> str:
        key = "set" if "Authorization" in self._options["headers"] else "none"
        return (
            f"OpenAICompletionsScorer(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key=<{key}>, max_concurrency={self.max_concurrency})"
        )

    def render_prompt(self, prompt: Prompt) -> str:
        """Plain text verbatim; chat messages through ``chat_template_renderer`` or the
        local ``tokenizer``."""
        if isinstance(prompt, str):
            return prompt
        messages = check_messages(prompt)
        if self._renderer is not None:
            return str(self._renderer(messages))
        if self._tokenizer_dir is not None:
            if self._hf_tokenizer is None:
                set_offline_flags()
                from transformers import AutoTokenizer

                directory = self._tokenizer_dir
                self._hf_tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
            template = self._hf_tokenizer.apply_chat_template
            return str(template(messages, tokenize=False, add_generation_prompt=True))
        failure, url = self._probe_failure, self.base_url
        if failure is not None:  # /tokenize is there but failing: not a reason for a proxy
            raise TransientScorerError(
                f"the server at {url} is failing now: its /tokenize failed ({failure}); this "
                "prompt is chat messages, which it renders; nothing was scored: try again later",
                status_code=failure.status_code,
                retry_after=failure.retry_after,
            )
        # a base URL without /v1 is likelier wrong than a server without /tokenize
        check = "" if self._url.endswith("/v1") else f"{_CHECK_V1}; if it is right, "
        raise NoChatTemplateError(
            f"the server at {url} cannot score chat prompts: {check}it has no /tokenize "
            "endpoint to apply the model's chat template"
        )

    def _renders_locally(self, prompt: Prompt) -> bool:
        return isinstance(prompt, str) or self._renderer is not None or bool(self._tokenizer_dir)

    def _prompt_payload(self, prompt: Prompt) -> dict[str, Any]:
        if self._renders_locally(prompt):
            text = self.render_prompt(prompt)
            return {"prompt": text, "add_special_tokens": isinstance(prompt, str)}
        return {
            "messages": check_messages(prompt),
            "add_generation_prompt": True,
            "add_special_tokens": False,
        }

    def _tokenize_steps(self, payload: dict[str, Any], clients: Any, clock: Any) -> Steps[Any]:
        return self._send("tokenize", "tokenize", payload, tokens_from, clients, clock)

    def _probe_tokenize(self, clock: RequestClock | None = None) -> bool:
        """Whether the server has a vLLM-style ``/tokenize`` (asked once)."""
        if self._has_tokenize is None:
            try:
                probe = {"prompt": "probe", "add_special_tokens": False}
                self._has_tokenize = bool(drive(self._tokenize_steps(probe, None, clock)))
            except TransientScorerError as error:
                if error.unreachable:
                    raise  # the server is unreachable: say so rather than guess a mode
                self._probe_failure = error  # failing now (5xx, 429): text mode, probe again
                return False
            except (CredentialsRefusedError, RedirectRefusedError, ModelNotServedError):
                raise  # not a missing /tokenize
            except ScorerError:
                if drive(self._served_models(None, clock or RequestClock()))[0] == 404:
                    raise ServerNotFoundError(  # a 404 everywhere: not a missing feature
                        f"no OpenAI-compatible server at {self.base_url}: its /models answers "
                        f"HTTP 404 and its /tokenize fails too (a wrong URL?): {_CHECK_V1}"
                    ) from None
                self._has_tokenize = False  # no usable endpoint (404, other API): text mode
            self._probe_failure = None
        return bool(self._has_tokenize)

    def _text_plan(self, request: ScoreRequest) -> Plan:
        text = self.render_prompt(request.prompt)
        return Plan(text + request.response, request.response, prompt_chars=len(text))

    def _plan_steps(
        self, request: ScoreRequest, clients: httpx.AsyncClient | None, clock: RequestClock
    ) -> Steps[Plan]:
        if not isinstance(request, ScoreRequest):
            raise InputError(f"expected a ScoreRequest, got {type(request).__name__}")
        if not isinstance(request.response, str) or not request.response:
            raise InputError("ScoreRequest.response must be a non-empty string")
        if not isinstance(request.prompt, str):
            check_messages(request.prompt)
        if not (yield BlockingCall(lambda: self._probe_tokenize(clock))):
            return self._text_plan(request)
        ids = []
        for payload in (
            self._prompt_payload(request.prompt),
            {"prompt": request.response, "add_special_tokens": False},
        ):
            key = json.dumps(payload, sort_keys=True)
            cached = self._ids.get(key)
            if cached is None:
                cached = yield from self._tokenize_steps(payload, clients, clock)
                if len(self._ids) >= 256:
                    self._ids.clear()
                self._ids[key] = cached
            ids.append(cached)
        prompt_ids, response_ids = ids
        if not response_ids:
            raise InputError("the response has no tokens to score")
        if not prompt_ids:
            raise InputError("the prompt is empty: the response's first token cannot be scored")
        return Plan([*prompt_ids, *response_ids], request.response, response_ids=len(response_ids))

    def _score_steps(
        self, request: ScoreRequest, clients: httpx.AsyncClient | None
    ) -> Steps[ResponseLogprobs]:
        clock = RequestClock()
        plan = yield from self._plan_steps(request, clients, clock)

        def echoed(plan: Plan) -> Steps[ResponseLogprobs]:
            # max_tokens 1, not 0 (read as "no limit" by some); the token is cut from the echo
            body: dict[str, Any] = {"prompt": plan.prompt, "max_tokens": 1, "echo": True}
            body.update(logprobs=0, temperature=0.0)
            parse = functools.partial(parse_echo, plan=plan)
            return self._send("completion", "completions", body, parse, clients, clock)

        try:
            return (yield from echoed(plan))
        except ResponseTokensMismatchError:
            # the tokenizer alters a text tokenized alone (a SentencePiece prefix space)
            if plan.response_ids is None or not self._renders_locally(request.prompt):
                raise
            return (yield from echoed(self._text_plan(request)))

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Log-probs of each response, ``max_concurrency`` in flight; the first runs alone, so
        a server that cannot score fails once."""
        requests = list(requests)
        first = [drive(self._score_steps(r, None)) for r in requests[:1]]
        return first + self._map(lambda r: drive(self._score_steps(r, None)), requests[1:])

    def _map(self, one: Callable[[Any], T], items: list[Any]) -> list[T]:
        """``one`` over ``items`` on threads, each in a copy of the caller's context."""
        contexts = [contextvars.copy_context() for _ in items]
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(lambda c, x: c.run(one, x), contexts, items))

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Async :meth:`score`: ``max_concurrency`` requests in flight on this event loop."""
        requests = list(requests)
        semaphore = asyncio.Semaphore(self.max_concurrency)
        async with httpx.AsyncClient(**self._options) as clients:

            async def one(request: ScoreRequest) -> ResponseLogprobs:
                async with semaphore:
                    return await adrive(self._score_steps(request, clients))

            first = [await one(r) for r in requests[:1]]
            rest = await asyncio.gather(*(one(r) for r in requests[1:]))
        return [*first, *rest]

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]:
        """Greedy answers to ``prompts`` through ``/v1/completions``, whitespace stripped."""
        if max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be at least 1, got {max_new_tokens}")

        def text(raw: Any) -> str:
            return str(_choice(raw).get("text") or "").strip()

        def one(prompt: Prompt) -> str:
            sent: str | list[int]
            if self._probe_tokenize():
                sent = drive(self._tokenize_steps(self._prompt_payload(prompt), None, None))
            else:
                sent = self.render_prompt(prompt)
            body = {"prompt": sent, "max_tokens": max_new_tokens, "temperature": 0.0}
            return str(drive(self._send("generation", "completions", body, text, None)))

        return self._map(one, list(prompts))

    def _endpoint_url(self, endpoint: Endpoint) -> str:
        if endpoint in ("completions", "models"):
            return f"{self._url}/{endpoint}"
        return f"{self._url.removesuffix('/v1')}/tokenize"  # /tokenize lives beside /v1

    def _http_client(self) -> httpx.Client:
        """The blocking client (one pool), closed by :meth:`close` or garbage collection."""
        with self._lock:
            if self._sync_client is None:
                self._sync_client = httpx.Client(**self._options)
                weakref.finalize(self, self._sync_client.close)
            return self._sync_client

    def close(self) -> None:
        with self._lock:
            client, self._sync_client = self._sync_client, None
        if client is not None:
            client.close()

    def _send(
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
            try:
                reply = yield ApiCall(self, clients, endpoint, body, limit)
                return parse(self._json(reply, endpoint))
            except Exception as exc:
                failure = exc
            # decided outside the except block: a raised error chains no client exception
            error = self._classify(failure, limit)
            if isinstance(error, ModelNotServedError) and endpoint != "models":
                error = self._not_served((yield from self._served_models(clients, clock))[1])
            clock.timed_out |= isinstance(failure, httpx.TimeoutException)
            delay = self._retry_delay(what, attempt, clock, error)
            yield Sleep(delay)
        raise AssertionError("unreachable")

    def _served_models(
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
        deadline.check()
        limit, left = self.timeout, deadline.remaining()
        if clock.first_failure is not None and self.retry.budget_s is not None:
            limit = min(limit, self.retry.budget_s - clock.spent())
        return max(limit if left is None else min(limit, left), 0.001)

    def _retry_delay(
        self, what: str, attempt: int, clock: RequestClock, error: BaseException
    ) -> float:
        """The pause before attempt ``attempt + 1``, or the final error to raise."""
        if not isinstance(error, TransientScorerError):
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
            refused = isinstance(error, ServerRefusedError)
            if refused:  # nothing listens there: no later request will fare better
                cause += "; nothing accepts connections there: is it running? check base_url"
            raise (ServerRefusedError if refused else TransientScorerError)(
                self.secrets.clean(f"{what} {stop}: {cause}"),
                status_code=error.status_code,
                retry_after=error.retry_after,
                unreachable=error.unreachable,
            )
        logger.info("%s: %s; retrying in %.2f s", what, error, delay)
        return delay

    def _json(self, reply: httpx.Response, endpoint: Endpoint) -> Any:
        path, status = urlsplit(self._endpoint_url(endpoint)).path, reply.status_code
        if status >= 400 or status < 200:
            raise self._status_error(reply, path)
        if 300 <= status < 400:
            target = self.secrets.clean(public_url(reply.headers.get("location", "another URL")))
            raise RedirectRefusedError(
                f"the server at {self.base_url} redirected {path} to {target} (HTTP {status}), "
                "not followed (no credential goes elsewhere): pass that URL as base_url"
            )
        return json.loads(reply.content)  # a ValueError is a malformed body: retried

    def _scrub(self, error: BaseException) -> BaseException:
        if (clean := self.secrets.clean(str(error))) == str(error):
            return error
        scrubbed = copy.copy(error)
        scrubbed.args = (clean,)
        scrubbed.__cause__ = scrubbed.__context__ = None
        return scrubbed

    def _classify(self, exc: BaseException, limit: float) -> BaseException:
        """Map a failed attempt to a ``TransientScorerError`` (retried) or a final error."""
        if isinstance(exc, httpx.TimeoutException):
            return TransientScorerError(f"request timed out after {limit:g} s", unreachable=True)
        if isinstance(exc, httpx.TransportError):
            cause = exc.__cause__ or exc.__context__
            text = str(exc) or type(exc).__name__
            text = f"{text} ({type(cause).__name__}: {cause})" if cause else text
            refused = isinstance(exc, httpx.ConnectError)
            message = self.secrets.clean(f"connection error at {self.base_url}: {text}")
            return (ServerRefusedError if refused else TransientScorerError)(
                message, unreachable=refused
            )
        if isinstance(exc, UnicodeEncodeError):
            return TextError(
                "the request holds text that cannot be encoded as UTF-8 (a lone surrogate): "
                "the input is at fault, not the server; camab_rag.text_gate.check_text "
                "names the field and position",
                reason="surrogate",
            )
        if isinstance(exc, ValueError) and not isinstance(exc, CamabError):  # a malformed body
            return TransientScorerError(
                self.secrets.clean(f"malformed response body: {type(exc).__name__}: {exc}")
            )
        return self._scrub(exc)

    def _not_served(self, served: tuple[str, ...]) -> ModelNotServedError:
        listed = f" (it serves: {', '.join(served)})" if served else ""
        message = f"model {self.model!r} is not served at {self.base_url}{listed}: pass "
        return ModelNotServedError(
            self.secrets.clean(message + "model= one of the names its /v1/models lists"), served
        )

    def _status_error(self, reply: httpx.Response, path: str) -> BaseException:
        status, message = reply.status_code, self.secrets.clean(_error_message(reply.content))
        server, clipped = f"the server at {self.base_url}", _clip(message, 200)
        lowered = message.lower()
        if status in (408, 429) or (status >= 500 and status != 501):  # 501: never retried
            after = retry_after(reply.headers)
            return TransientScorerError(
                f"HTTP {status}: {clipped}", retry_after=after, status_code=status
            )
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
