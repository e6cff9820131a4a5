"""Scorer over HTTP: any OpenAI-compatible server that echoes prompt log-probabilities.

The server must score a *given* text through ``/v1/completions`` with ``echo=true`` and
``logprobs`` (vLLM, SGLang, llama-cpp-python's server, Together, Fireworks), or with vLLM's
``prompt_logprobs`` extension. OpenAI's own chat models cannot do this; the first call then
fails with an error that says so.

How the response's tokens are found in the echoed prompt (parsing:
:mod:`camab_rag.scorers.echo`; retries: :class:`camab_rag.retry.RetryPolicy`):

* **Token ids** (servers with vLLM's ``/tokenize`` endpoint, found automatically): the
  prompt (chat messages rendered by the server's chat template with the generation prompt,
  or plain text verbatim) and the response are tokenized separately and sent as one token
  id list, exactly as :class:`~camab_rag.scorers.transformers_scorer.TransformersScorer`
  does; the response is the last ``len(response_ids)`` tokens.
* **Text** (any other server): ``prompt + response`` is sent as text, and the response
  starts at the first echoed token whose text offset reaches ``len(prompt)``. A token that
  straddles the boundary is an error (end the prompt with whitespace, or use a server with
  ``/tokenize``). Chat messages then need ``chat_template_renderer`` or ``tokenizer``.

Either way the decoded response tokens must re-join to the response, else a clear
:class:`~camab_rag.errors.ScorerError`; in token-id mode a mismatch (a tokenizer that alters
a text tokenized alone, e.g. a SentencePiece prefix space) first falls back to text mode
when the prompt can be rendered locally. Server quirks handled: a null first log-prob,
``usage.prompt_tokens + 1`` echoed entries (``max_tokens=1`` is sent because some servers
read 0 as "unlimited"; the generated entry is cut), and text offsets that count a BOS the
returned text drops.

Requests run concurrently (``max_concurrency`` in flight), each attempt with a total
timeout, retried with exponential backoff and jitter on timeouts, connection errors, 429
(honouring ``Retry-After``), 5xx and malformed bodies, within a retry budget
(:mod:`camab_rag.scorers.transport`). The API key and URL credentials are never logged or
shown, not even when a server echoes them.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from camab_rag.errors import (
    CredentialsRefusedError,
    DeadlineExceededError,
    InputError,
    ScorerError,
    TransientScorerError,
)
from camab_rag.retry import Retryable, RetryPolicy
from camab_rag.scorers.base import (
    ChatMessage,
    Prompt,
    ResponseLogprobs,
    ScoreRequest,
    check_messages,
)
from camab_rag.scorers.echo import (
    NoChatTemplateError,
    NoPromptLogprobsError,
    ResponseTokensMismatchError,
    parse_echo,
)
from camab_rag.scorers.transport import (
    AsyncClients,
    HttpTransport,
    RequestClock,
    as_dict,
    tokens_from,
)
from camab_rag.steps import BlockingCall, Steps, adrive, drive

logger = logging.getLogger(__name__)

__all__ = [
    "ChatTemplateRenderer",
    "NoChatTemplateError",
    "NoPromptLogprobsError",
    "OpenAICompletionsScorer",
    "ResponseTokensMismatchError",
]

T = TypeVar("T")

ChatTemplateRenderer = Callable[[Sequence[ChatMessage]], str]
"""Renders chat messages to the model's prompt text, with the assistant header appended."""

# --------------------------------------------------------------------------- scorer


@dataclass(frozen=True)
class _Plan:
    """What to send for one request."""

    prompt: str | list[int]
    response: str
    prompt_chars: int | None = None
    prompt_ids: int | None = None
    response_ids: int | None = None


class OpenAICompletionsScorer:
    """Score (and greedily generate) with an OpenAI-compatible completions server.

    Args:
        base_url: the server's OpenAI base URL, e.g. ``"http://127.0.0.1:8000/v1"``
            (user-info such as ``http://user:password@host/v1`` is sent as basic auth and
            never shown: :attr:`base_url` and every message drop it).
        model: the served model name.
        api_key: the key, if the server needs one (sent to this server only, never
            logged or shown, masked even when the server echoes it back). ``None`` sends
            no key, never ``$OPENAI_API_KEY``, so a key meant for OpenAI does not leak to
            another server.
        max_concurrency: requests in flight at once; also :attr:`parallel_requests`, so
            ``method="auto"`` sends several Thompson draws per round (up to 2) to a
            server that batches them (vLLM, SGLang).
        timeout: the most seconds one HTTP attempt may take, its whole response
            included (a body that trickles in is cut off).
        max_retries: retries of a request after a transient failure (timeout, connection
            error, 429, 5xx, malformed body).
        use_prompt_logprobs: ``True`` asks vLLM's ``prompt_logprobs`` instead of
            ``echo`` + ``logprobs``; ``False`` never does; ``"auto"`` uses echo and falls
            back to ``prompt_logprobs`` if the echo carries no prompt log-probs.
        tokenization: ``"server"`` sends token ids from the server's ``/tokenize``,
            ``"text"`` sends text, ``"auto"`` uses ``/tokenize`` where the server has it.
        chat_template_renderer: renders chat messages to prompt text (needed for chat
            prompts on servers without ``/tokenize``).
        tokenizer: a local Hugging Face tokenizer directory whose chat template renders
            chat prompts (alternative to ``chat_template_renderer``; needs transformers).
        backoff_base: first retry delay in seconds (doubled each retry, with jitter).
        backoff_max: longest delay between retries, also the cap on ``Retry-After``.
        retry_budget_s: the most seconds one request may spend on retries after its
            first failure, the pauses and the further attempts (its ``/tokenize`` probe
            and calls included) all counted; so one request costs at most ``timeout +
            retry_budget_s`` (default 3: a server that refuses connections costs an
            answer about 3 s; a hung one ``timeout`` + 3 s, and the integrations'
            attribution deadline caps that). ``None``: no limit beyond ``max_retries``.
            Raise it for batch jobs against a busy server.
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
        use_prompt_logprobs: bool | Literal["auto"] = "auto",
        tokenization: Literal["auto", "server", "text"] = "auto",
        chat_template_renderer: ChatTemplateRenderer | None = None,
        tokenizer: str | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        retry_budget_s: float | None = 3.0,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InputError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(model, str) or not model:
            raise InputError("model must be the served model's name (a non-empty string)")
        if max_concurrency < 1:
            raise InputError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if timeout <= 0:
            raise InputError(f"timeout must be positive, got {timeout}")
        retry = RetryPolicy(max_retries, backoff_base, backoff_max, retry_budget_s)
        if use_prompt_logprobs not in (True, False, "auto"):
            raise InputError("use_prompt_logprobs must be True, False or 'auto'")
        if tokenization not in ("auto", "server", "text"):
            raise InputError("tokenization must be 'auto', 'server' or 'text'")
        self._http = HttpTransport(
            base_url, model, api_key, timeout=timeout, retry=retry, headers=default_headers
        )
        self.base_url = self._http.base_url
        self.model = model
        self.max_concurrency = max_concurrency
        self.timeout = float(timeout)
        self.retry = retry
        self.use_prompt_logprobs = use_prompt_logprobs
        self.tokenization = tokenization
        self._renderer = chat_template_renderer
        self._tokenizer_dir = tokenizer
        self._hf_tokenizer: Any = None
        self._lock = threading.Lock()
        self._has_tokenize: bool | None = (
            None if tokenization == "auto" else (tokenization == "server")
        )
        self._prompt_logprobs_mode: bool | None = (
            None if use_prompt_logprobs == "auto" else bool(use_prompt_logprobs)
        )
        self._id_cache: OrderedDict[tuple[str, str], list[int]] = OrderedDict()

    def __repr__(self) -> str:
        key = "set" if self._http.has_api_key else "none"
        return (
            f"OpenAICompletionsScorer(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key=<{key}>, max_concurrency={self.max_concurrency})"
        )

    __str__ = __repr__

    @property
    def parallel_requests(self) -> int:
        """Requests in flight at once (``max_concurrency``): a batching server (vLLM,
        SGLang) answers them in about the time of one."""
        return self.max_concurrency

    # ------------------------------------------------------------------- HTTP plumbing

    @property
    def max_retries(self) -> int:
        return self.retry.max_retries

    @property
    def retry_budget_s(self) -> float | None:
        return self.retry.budget_s

    # ------------------------------------------------------------------ tokenization

    def _tokenize_steps(
        self,
        payload: Mapping[str, Any],
        clients: AsyncClients | None,
        clock: RequestClock | None = None,
    ) -> Steps[list[int]]:
        body = {"model": self.model, **payload}
        return (
            yield from self._http.send("tokenize", "tokenize", body, tokens_from, clients, clock)
        )

    def _probe_tokenize(self, clock: RequestClock | None = None) -> bool:
        """Whether the server has a vLLM-style ``/tokenize`` endpoint (asked once; its
        time counts against the retry budget of the request that asks, ``clock``)."""
        if self._has_tokenize is None:
            try:
                probe = {"prompt": "probe", "add_special_tokens": False}
                ids = drive(self._tokenize_steps(probe, None, clock))
                self._has_tokenize = bool(ids)
            except (CredentialsRefusedError, DeadlineExceededError):
                raise  # a refused key or the deadline: not a sign that /tokenize is missing
            except TransientScorerError as error:
                if error.unreachable:
                    raise  # the server is unreachable: say so rather than guess a mode
                self._has_tokenize = False
            except ScorerError:
                self._has_tokenize = False  # no usable endpoint (404, other API): text mode
            logger.debug("server /tokenize available: %s", self._has_tokenize)
        return self._has_tokenize

    def _cached_ids(self, key: tuple[str, str]) -> list[int] | None:
        with self._lock:
            ids = self._id_cache.get(key)
            if ids is not None:
                self._id_cache.move_to_end(key)
            return ids

    def _store_ids(self, key: tuple[str, str], ids: list[int]) -> None:
        with self._lock:
            self._id_cache[key] = ids
            while len(self._id_cache) > 256:
                self._id_cache.popitem(last=False)

    def render_prompt(self, prompt: Prompt) -> str:
        """Plain text verbatim; chat messages through ``chat_template_renderer`` or the
        local ``tokenizer``'s chat template.

        Raises:
            NoChatTemplateError: chat messages but no way to render them locally.
        """
        if isinstance(prompt, str):
            return prompt
        messages = check_messages(prompt)
        if self._renderer is not None:
            return str(self._renderer(messages))
        if self._tokenizer_dir is not None:
            if self._hf_tokenizer is None:
                from camab_rag.scorers.models import set_offline_flags

                set_offline_flags()
                from transformers import AutoTokenizer

                self._hf_tokenizer = AutoTokenizer.from_pretrained(
                    self._tokenizer_dir, local_files_only=True
                )
            text = self._hf_tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return str(text)
        raise NoChatTemplateError(
            f"the server at {self.base_url} cannot score chat prompts: it has no /tokenize "
            "endpoint to apply the model's chat template (a hosted chat API cannot score a "
            "given text at all)"
        )

    def _prompt_payload(self, prompt: Prompt) -> dict[str, Any]:
        if isinstance(prompt, str) or self._renderer is not None or self._tokenizer_dir:
            text = self.render_prompt(prompt)
            return {"prompt": text, "add_special_tokens": isinstance(prompt, str)}
        return {
            "messages": check_messages(prompt),
            "add_generation_prompt": True,
            "add_special_tokens": False,
        }

    def _tokenize_payloads(self, request: ScoreRequest) -> list[tuple[str, dict[str, Any]]]:
        """Cache key and ``/tokenize`` payload of the prompt, then of the response."""
        payloads = [
            self._prompt_payload(request.prompt),
            {"prompt": request.response, "add_special_tokens": False},
        ]
        return [(json.dumps(p, sort_keys=True), p) for p in payloads]

    def _text_plan(self, request: ScoreRequest) -> _Plan:
        text = self.render_prompt(request.prompt)
        return _Plan(text + request.response, request.response, prompt_chars=len(text))

    def _can_render_locally(self, prompt: Prompt) -> bool:
        return isinstance(prompt, str) or self._renderer is not None or bool(self._tokenizer_dir)

    def _plan_steps(
        self, request: ScoreRequest, clients: AsyncClients | None, clock: RequestClock
    ) -> Steps[_Plan]:
        _check_request(request)
        if not (yield BlockingCall(lambda: self._probe_tokenize(clock))):
            return self._text_plan(request)
        ids = []
        for key, payload in self._tokenize_payloads(request):
            cached = self._cached_ids(("t", key))
            if cached is None:
                cached = yield from self._tokenize_steps(payload, clients, clock)
                self._store_ids(("t", key), cached)
            ids.append(cached)
        return _id_plan(request.response, ids[0], ids[1])

    # ----------------------------------------------------------------------- scoring

    def _completion_kwargs(self, plan: _Plan, prompt_logprobs: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "prompt": plan.prompt,
            # 1, not 0: some servers read max_tokens=0 as "no limit"; the generated token
            # is cut from the echo.
            "max_tokens": 1,
            "temperature": 0.0,
        }
        if prompt_logprobs:
            kwargs["prompt_logprobs"] = 0  # vLLM's extension of the completions API
        else:
            kwargs["echo"] = True
            kwargs["logprobs"] = 0
        return kwargs

    def _parse(self, plan: _Plan, body: Mapping[str, Any]) -> ResponseLogprobs:
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise Retryable("malformed response body: no choices")
        return parse_echo(
            choices[0],
            body.get("usage"),
            prompt_chars=plan.prompt_chars,
            response=plan.response,
            prompt_ids=plan.prompt_ids,
            response_ids=plan.response_ids,
        )

    def _score_steps(
        self, request: ScoreRequest, clients: AsyncClients | None
    ) -> Steps[ResponseLogprobs]:
        """One request's log-probs, as a generator of HTTP calls (all of them, probe and
        fallbacks included, under one retry budget)."""
        clock = RequestClock()
        plan = yield from self._plan_steps(request, clients, clock)
        try:
            return (yield from self._score_plan_steps(plan, clients, clock))
        except ResponseTokensMismatchError:
            # The tokenizer alters a text tokenized alone (e.g. a SentencePiece prefix
            # space): score the joint text instead, as the in-process scorer does.
            if plan.prompt_ids is None or not self._can_render_locally(request.prompt):
                raise
            return (yield from self._score_plan_steps(self._text_plan(request), clients, clock))

    def _score_plan_steps(
        self, plan: _Plan, clients: AsyncClients | None, clock: RequestClock
    ) -> Steps[ResponseLogprobs]:
        def attempt(prompt_logprobs: bool) -> Steps[ResponseLogprobs]:
            body = self._completion_kwargs(plan, prompt_logprobs)
            return self._http.send(
                "completion",
                "completions",
                body,
                lambda raw: self._parse(plan, as_dict(raw)),
                clients,
                clock,
            )

        mode = self._prompt_logprobs_mode
        if mode is not None:
            return (yield from attempt(mode))
        try:
            result = yield from attempt(False)
        except NoPromptLogprobsError as echo_error:
            try:
                result = yield from attempt(True)
            except ScorerError:
                raise echo_error from None
            self._prompt_logprobs_mode = True
            return result
        self._prompt_logprobs_mode = False
        return result

    def _score_one(self, request: ScoreRequest) -> ResponseLogprobs:
        return drive(self._score_steps(request, None))

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Log-probs of each response under its prompt, ``max_concurrency`` in flight.

        The first request runs alone, so a server that cannot score a given text fails
        once with a clear error instead of once per request.
        """
        requests = list(requests)
        if not requests:
            return []
        first = self._score_one(requests[0])
        if len(requests) == 1:
            return [first]
        # each worker runs in a copy of the caller's context: an attribution's deadline
        # (camab_rag.deadline) bounds its requests too
        contexts = [contextvars.copy_context() for _ in requests[1:]]
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            rest = list(pool.map(lambda c, r: c.run(self._score_one, r), contexts, requests[1:]))
        return [first, *rest]

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Async :meth:`score`: ``max_concurrency`` requests in flight on this event loop."""
        requests = list(requests)
        if not requests:
            return []
        semaphore = asyncio.Semaphore(self.max_concurrency)
        async with self._http.async_clients() as clients:

            async def one(request: ScoreRequest) -> ResponseLogprobs:
                async with semaphore:
                    return await adrive(self._score_steps(request, clients))

            first = await one(requests[0])
            rest = await asyncio.gather(*(one(r) for r in requests[1:]))
        return [first, *rest]

    # -------------------------------------------------------------------- generation

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]:
        """Greedy answers (temperature 0) to ``prompts`` through ``/v1/completions``,
        whitespace stripped."""
        if max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be at least 1, got {max_new_tokens}")

        def one(prompt: Prompt) -> str:
            sent: str | list[int]
            if self._probe_tokenize():
                sent = drive(self._tokenize_steps(self._prompt_payload(prompt), None))
            else:
                sent = self.render_prompt(prompt)

            body = {
                "model": self.model,
                "prompt": sent,
                "max_tokens": max_new_tokens,
                "temperature": 0.0,
            }
            return drive(self._http.send("generation", "completions", body, _answer_text, None))

        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(one, list(prompts)))

    def close(self) -> None:
        """Close the HTTP connection pool (the scorer reopens one if used again)."""
        self._http.close()


# -------------------------------------------------------------------------- helpers


def _id_plan(response: str, prompt_ids: list[int], response_ids: list[int]) -> _Plan:
    if not response_ids:
        raise InputError("the response has no tokens to score")
    if not prompt_ids:
        raise InputError("the prompt is empty: the response's first token cannot be scored")
    return _Plan(
        [*prompt_ids, *response_ids],
        response,
        prompt_ids=len(prompt_ids),
        response_ids=len(response_ids),
    )


def _answer_text(raw: Any) -> str:
    body = as_dict(raw)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise Retryable("malformed response body: no choices")
    return str(choices[0].get("text") or "").strip()


def _check_request(request: ScoreRequest) -> None:
    if not isinstance(request, ScoreRequest):
        raise InputError(f"expected a ScoreRequest, got {type(request).__name__}")
    if not isinstance(request.response, str) or not request.response:
        raise InputError("ScoreRequest.response must be a non-empty string")
    if not isinstance(request.prompt, str):
        check_messages(request.prompt)
