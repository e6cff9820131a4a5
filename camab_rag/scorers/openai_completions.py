"""Scorer over HTTP: any OpenAI-compatible server that echoes prompt log-probabilities.

The server scores a given text through ``/v1/completions`` with ``echo`` + ``logprobs``
(vLLM, SGLang, llama-cpp-python) or vLLM's ``prompt_logprobs``; OpenAI's own chat models
cannot, and the first call says so. What is sent: :mod:`.request_plans`; how the echo is
read: :mod:`.echo`; retries and credentials: :mod:`.transport`.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from camab_rag.errors import InputError, ScorerError
from camab_rag.redaction import shown_url
from camab_rag.retry import RetryPolicy
from camab_rag.scorers.base import Prompt, ResponseLogprobs, ScoreRequest
from camab_rag.scorers.echo import (
    NoPromptLogprobsError as NoPromptLogprobsError,
)
from camab_rag.scorers.echo import (
    ResponseTokensMismatchError,
)
from camab_rag.scorers.request_plans import (
    ChatTemplateRenderer,
    Plan,
    RequestPlanner,
    answer_text,
    completion_body,
    parse_completion,
)
from camab_rag.scorers.transport import AsyncClients, HttpTransport, RequestClock
from camab_rag.steps import Steps, adrive, drive


class OpenAICompletionsScorer:
    """Score (and greedily generate) with an OpenAI-compatible completions server.

    Args:
        base_url: the server's OpenAI base URL (``"http://127.0.0.1:8000/v1"``); user-info
            is sent as basic auth and never shown.
        model: the served model name.
        api_key: the key, sent to this server only and never shown; ``None`` sends none
            (never ``$OPENAI_API_KEY``).
        max_concurrency: requests in flight; also :attr:`parallel_requests`.
        timeout: the most seconds one HTTP attempt may take, body included.
        max_retries: retries after a transient failure (timeout, connection, 429, 5xx).
        use_prompt_logprobs: ``True``: vLLM's ``prompt_logprobs``; ``False``: ``echo``;
            ``"auto"``: echo, falling back to ``prompt_logprobs``.
        tokenization: ``"server"`` (token ids from ``/tokenize``), ``"text"``, or ``"auto"``.
        chat_template_renderer, tokenizer: render chat prompts locally (a ``messages ->
            text`` function, or a local tokenizer directory) for servers without
            ``/tokenize``.
        backoff_base, backoff_max: first retry delay and longest delay (also the cap on
            ``Retry-After``), in seconds.
        retry_budget_s: the most seconds one request spends on retries after its first
            failure, so a request costs at most ``timeout + retry_budget_s`` (``None``: no
            limit beyond ``max_retries``; raise it for batch jobs).
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
            raise InputError(f"base_url must be an http(s) URL, got {shown_url(base_url)}")
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
        self._planner = RequestPlanner(
            self._http,
            tokenization=tokenization,
            renderer=chat_template_renderer,
            tokenizer_dir=tokenizer,
        )
        self._prompt_logprobs_mode: bool | None = (
            None if use_prompt_logprobs == "auto" else bool(use_prompt_logprobs)
        )

    def __repr__(self) -> str:
        key = "set" if self._http.has_api_key else "none"
        return (
            f"OpenAICompletionsScorer(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key=<{key}>, max_concurrency={self.max_concurrency})"
        )

    __str__ = __repr__

    @property
    def parallel_requests(self) -> int:
        """``max_concurrency``: a batching server answers them in about the time of one."""
        return self.max_concurrency

    # ------------------------------------------------------------------- HTTP plumbing

    @property
    def max_retries(self) -> int:
        return self.retry.max_retries

    @property
    def retry_budget_s(self) -> float | None:
        return self.retry.budget_s

    def render_prompt(self, prompt: Prompt) -> str:
        """Plain text verbatim; chat messages through ``chat_template_renderer`` or the
        local ``tokenizer`` (:class:`~camab_rag.scorers.echo.NoChatTemplateError` if none)."""
        return self._planner.render_prompt(prompt)

    # ----------------------------------------------------------------------- scoring

    def _score_steps(
        self, request: ScoreRequest, clients: AsyncClients | None
    ) -> Steps[ResponseLogprobs]:
        """One request's log-probs, as a generator of HTTP calls under one retry budget."""
        clock = RequestClock()
        plan = yield from self._planner.plan_steps(request, clients, clock)
        try:
            return (yield from self._score_plan_steps(plan, clients, clock))
        except ResponseTokensMismatchError:
            # The tokenizer alters a text tokenized alone (e.g. a SentencePiece prefix
            # space): score the joint text instead, as the in-process scorer does.
            if plan.prompt_ids is None or not self._planner.can_render_locally(request.prompt):
                raise
            text_plan = self._planner.text_plan(request)
            return (yield from self._score_plan_steps(text_plan, clients, clock))

    def _score_plan_steps(
        self, plan: Plan, clients: AsyncClients | None, clock: RequestClock
    ) -> Steps[ResponseLogprobs]:
        def attempt(prompt_logprobs: bool) -> Steps[ResponseLogprobs]:
            body = completion_body(self.model, plan, prompt_logprobs)
            return self._http.send(
                "completion",
                "completions",
                body,
                lambda raw: parse_completion(plan, raw),
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
        """Log-probs of each response, ``max_concurrency`` in flight; the first request runs
        alone, so a server that cannot score fails once, not once per request."""
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
            planner = self._planner
            if planner.probe_tokenize():
                sent = drive(planner.tokenize_steps(planner.prompt_payload(prompt), None))
            else:
                sent = planner.render_prompt(prompt)

            body = {
                "model": self.model,
                "prompt": sent,
                "max_tokens": max_new_tokens,
                "temperature": 0.0,
            }
            return drive(self._http.send("generation", "completions", body, answer_text, None))

        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(one, list(prompts)))

    def close(self) -> None:
        """Close the HTTP connection pool (the scorer reopens one if used again)."""
        self._http.close()
