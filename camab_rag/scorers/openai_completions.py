"""Scorer over HTTP: any OpenAI-compatible server that echoes prompt log-probabilities
(``/v1/completions`` with ``echo`` + ``logprobs``). With vLLM's ``/tokenize`` (probed once)
prompt and response are sent as separately tokenized ids, as the in-process scorer does;
otherwise as one text, the response found by character offset."""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import httpx
import numpy as np

from camab_rag.errors import (
    CredentialsRefusedError,
    InputError,
    ModelNotServedError,
    ScorerError,
    ServerNotFoundError,
    TransientScorerError,
)
from camab_rag.redaction import shown_url
from camab_rag.retry import Retryable, RetryPolicy
from camab_rag.scorers.base import (
    ChatMessage,
    Prompt,
    ResponseLogprobs,
    ScoreRequest,
    check_messages,
)
from camab_rag.scorers.models import set_offline_flags
from camab_rag.scorers.transport import (
    HttpTransport,
    RedirectRefusedError,
    RequestClock,
    ResponseTokensMismatchError,
    _clip,
    tokens_from,
)
from camab_rag.scorers.transport import NoChatTemplateError as NoChatTemplateError
from camab_rag.scorers.transport import NoPromptLogprobsError as NoPromptLogprobsError
from camab_rag.steps import BlockingCall, Steps, adrive, drive

T = TypeVar("T")
_LOGPROB_SLACK = 1e-4  # a log-probability above this is impossible, not rounding
_CHECK_V1 = "check base_url, which ends with /v1 (http://127.0.0.1:8000/v1 for vLLM)"

ChatTemplateRenderer = Callable[[Sequence[ChatMessage]], str]  # with the assistant header


@dataclass(frozen=True)
class Plan:
    """Token ids, the last ``response_ids`` the response's, or one text, the prompt its first
    ``prompt_chars`` characters."""

    prompt: str | list[int]
    response: str
    prompt_chars: int = 0
    response_ids: int | None = None


class OpenAICompletionsScorer:
    """Score (and greedily generate) with an OpenAI-compatible completions server.

    Args:
        base_url: the server's OpenAI base URL (``"http://127.0.0.1:8000/v1"``).
        model: the served model name.
        api_key: sent to this server only, never shown; ``None`` sends none.
        max_concurrency: requests in flight; also :attr:`parallel_requests`.
        timeout: the most seconds one HTTP attempt may take, body included.
        max_retries, backoff_base, backoff_max: retries of a transient failure, the first
            and the longest pause (also the cap on ``Retry-After``), in seconds.
        chat_template_renderer, tokenizer: render chat prompts locally (``messages -> text``,
            or a local tokenizer directory) for servers without ``/tokenize``.
        retry_budget_s: the most seconds one request spends on retries after its first
            failure (``None``: no limit beyond ``max_retries``).
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
        self._http = HttpTransport(
            base_url, model, api_key, timeout=timeout, retry=retry, headers=default_headers
        )
        self.base_url, self.model, self.timeout = self._http.base_url, model, float(timeout)
        self.max_concurrency, self.retry = max_concurrency, retry
        self._renderer = chat_template_renderer
        self._tokenizer_dir = tokenizer
        self._hf_tokenizer: Any = None
        self._has_tokenize: bool | None = None  # probed once
        self._ids: dict[str, list[int]] = {}  # up to 256 token id lists, then cleared
        self._probe_failure: TransientScorerError | None = None

    def __repr__(self) -> str:
        key = "set" if self._http.has_api_key else "none"
        return (
            f"OpenAICompletionsScorer(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key=<{key}>, max_concurrency={self.max_concurrency})"
        )

    @property
    def parallel_requests(self) -> int:
        return self.max_concurrency

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
        v1 = self._http.url("models").endswith("/v1/models")
        check = "" if v1 else f"{_CHECK_V1}; if it is right, "
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
        return self._http.send("tokenize", "tokenize", payload, tokens_from, clients, clock)

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
                if drive(self._http.models(None, clock or RequestClock()))[0] == 404:
                    raise ServerNotFoundError(  # a 404 everywhere: not a missing feature
                        f"no OpenAI-compatible server at {self.base_url}: its /models and "
                        f"/tokenize answer HTTP 404 (a wrong URL?): {_CHECK_V1}"
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
            body = {"prompt": plan.prompt, "max_tokens": 1, "echo": True, "logprobs": 0}
            return self._completion_steps(body, lambda raw: parse_echo(raw, plan), clients, clock)

        try:
            return (yield from echoed(plan))
        except ResponseTokensMismatchError:
            # the tokenizer alters a text tokenized alone (a SentencePiece prefix space)
            if plan.response_ids is None or not self._renders_locally(request.prompt):
                raise
            return (yield from echoed(self._text_plan(request)))

    def _completion_steps(
        self, body: dict[str, Any], parse: Callable[[Any], Any], clients: Any, clock: Any = None
    ) -> Steps[Any]:
        what = "completion" if body.get("echo") else "generation"
        body = {**body, "temperature": 0.0}
        return self._http.send(what, "completions", body, parse, clients, clock)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Log-probs of each response, ``max_concurrency`` in flight; the first runs alone, so
        a server that cannot score fails once."""
        requests = list(requests)
        if not requests:
            return []
        first = drive(self._score_steps(requests[0], None))
        return [first, *self._map(lambda r: drive(self._score_steps(r, None)), requests[1:])]

    def _map(self, one: Callable[[Any], T], items: list[Any]) -> list[T]:
        """``one`` over ``items`` on ``max_concurrency`` threads, each in a copy of the
        caller's context (under its deadline)."""
        contexts = [contextvars.copy_context() for _ in items]
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(lambda c, x: c.run(one, x), contexts, items))

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Async :meth:`score`: ``max_concurrency`` requests in flight on this event loop."""
        requests = list(requests)
        if not requests:
            return []
        semaphore = asyncio.Semaphore(self.max_concurrency)
        async with self._http.async_client() as clients:

            async def one(request: ScoreRequest) -> ResponseLogprobs:
                async with semaphore:
                    return await adrive(self._score_steps(request, clients))

            first = await one(requests[0])
            rest = await asyncio.gather(*(one(r) for r in requests[1:]))
        return [first, *rest]

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
            body = {"prompt": sent, "max_tokens": max_new_tokens}
            return str(drive(self._completion_steps(body, text, None)))

        return self._map(one, list(prompts))

    def close(self) -> None:
        self._http.close()


class EchoEntry(NamedTuple):
    """One echoed token: its text, log-prob (``None`` for the first) and text offset."""

    token: str
    logprob: float | None
    offset: int | None


def echo_entries(choice: Mapping[str, Any]) -> list[EchoEntry]:
    """The per-token entries of an echoed choice."""
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, Mapping) or not logprobs.get("token_logprobs"):
        raise NoPromptLogprobsError(
            "the server returned no log-probabilities of the prompt (no `logprobs.token_logprobs`)"
        )
    values = list(logprobs["token_logprobs"])
    tokens = list(logprobs.get("tokens") or [])
    offsets = list(logprobs.get("text_offset") or [None] * len(values))
    if not len(tokens) == len(values) == len(offsets):
        raise ScorerError(
            "the server's logprobs object has tokens, token_logprobs and text_offset of "
            f"different lengths ({len(tokens)}, {len(values)}, {len(offsets)})"
        )
    return [
        EchoEntry(str(t), None if v is None else float(v), None if o is None else int(o))
        for t, v, o in zip(tokens, values, offsets)
    ]


def parse_echo(raw: Any, plan: Plan) -> ResponseLogprobs:
    """The response's log-probs cut out of a completion that echoes ``plan``'s prompt."""
    choice = _choice(raw)
    entries = echo_entries(choice)
    sent = None if plan.response_ids is None else len(plan.prompt)
    n_prompt = _echoed_prompt_length(entries, raw.get("usage"), sent)
    entries, generated = entries[:n_prompt], entries[n_prompt:]  # cut the generated token(s)
    text, response = choice.get("text"), plan.response
    if plan.response_ids is not None:
        start = n_prompt - plan.response_ids
        offsets = _offsets_in_response(entries[start:], generated, text, response)
    else:
        start, offsets = _text_mode_boundary(entries, text, plan.prompt_chars, response)
    picked = entries[start:]  # never empty: both modes find at least one response token
    values = [e.logprob for e in picked]
    if values[0] is None:
        raise ScorerError(
            "the server gave no log-probability for the response's first token (the first of "
            "the sequence): give the response a non-empty prompt"
        )
    if None in values:
        raise ScorerError("the server gave a null log-probability inside the response")
    impossible = next((i for i, v in enumerate(values) if v and v > _LOGPROB_SLACK), None)
    if impossible is not None:
        raise Retryable(
            f"malformed response body: log-probability {values[impossible]:g} for token "
            f"{impossible} of the response (a log-probability is never above 0)"
        )
    logprobs, tokens = np.asarray(values, np.float64), tuple(e.token for e in picked)
    return ResponseLogprobs(logprobs, np.asarray(offsets, np.int64), tokens, prompt_tokens=start)


def _echoed_prompt_length(
    entries: Sequence[EchoEntry], usage: Mapping[str, Any] | None, sent_total: int | None
) -> int:
    reported = usage.get("prompt_tokens") if usage else None
    if sent_total is not None:
        if isinstance(reported, int) and reported != sent_total:
            raise ScorerError(
                f"the server counted {reported} prompt tokens but {sent_total} token ids "
                "were sent: it does not score token-id prompts as given"
            )
        n = sent_total
    elif isinstance(reported, int) and reported > 0:
        n = reported
    else:
        raise ScorerError(
            "the server's response has no usage.prompt_tokens to tell the echoed prompt apart"
        )
    if len(entries) <= 1 < n:  # only the generated token: no prompt log-probs offered
        raise NoPromptLogprobsError(
            f"the server echoed log-probs for {len(entries)} tokens but the prompt has {n}: "
            "it did not return the prompt's log-probabilities"
        )
    if len(entries) < n:  # a miscount, not a server that cannot score: try again
        raise Retryable(f"malformed response body: {n} prompt tokens, {len(entries)} echoed")
    return n


def _text_mode_boundary(
    entries: Sequence[EchoEntry], text: object, prompt_chars: int, response: str
) -> tuple[int, list[int]]:
    """Text mode: the first response token's index and the response tokens' offsets."""
    full_len = prompt_chars + len(response)
    if all(e.offset is not None for e in entries):
        # offsets may count text the echo dropped (a BOS): align the end with len(full)
        offsets = [int(e.offset or 0) for e in entries]
        shift = offsets[-1] + len(entries[-1].token) - full_len
        offsets = [o - shift for o in offsets]
    else:  # no text offsets: accumulate the tokens' lengths from the end
        ends = itertools.accumulate(len(e.token) for e in reversed(entries))
        offsets = [full_len - n for n in ends][::-1]
    start = next((i for i, o in enumerate(offsets) if o >= prompt_chars), len(entries))
    if start == len(entries) or offsets[start] != prompt_chars:
        span_start = offsets[start - 1] if start else 0
        span_end = offsets[start] if start < len(entries) else full_len
        raise ScorerError(
            "the response's first token merges with the end of the prompt in the server's "
            f"tokenization (a token spans characters {span_start}..{span_end} across the "
            f"boundary at {prompt_chars}): end the prompt with a space or newline, or use a "
            "server with a /tokenize endpoint (vLLM)"
        )
    picked = entries[start:]
    joined = "".join(e.token for e in picked)
    if joined != response:
        echoed = text[prompt_chars:full_len] if isinstance(text, str) else None
        if echoed != response:
            raise _mismatch(joined, response)
    return start, [o - prompt_chars for o in offsets[start:]]


def _offsets_in_response(
    picked: Sequence[EchoEntry], generated: Sequence[EchoEntry], text: object, response: str
) -> list[int]:
    """Token-id mode: character offsets of the response tokens, checked to re-join."""
    joined = "".join(e.token for e in picked)
    rejoins = joined == response
    if not rejoins and isinstance(text, str):
        # tokens may split a character (an emoji): the echoed text must end with the response
        tail = "".join(e.token for e in generated)
        body = text[: len(text) - len(tail)] if tail and text.endswith(tail) else text
        rejoins = body.endswith(response)
    if not rejoins:
        raise _mismatch(joined, response)
    if all(e.offset is not None for e in picked):
        starts = [int(e.offset or 0) for e in picked]
        if starts[-1] + len(picked[-1].token) - starts[0] == len(response):
            return [o - starts[0] for o in starts]
    if joined != response:
        raise ScorerError(
            "cannot place the response tokens in the response: the server gave no text "
            "offsets and the token strings do not re-join to the response"
        )
    return list(itertools.accumulate((len(e.token) for e in picked[:-1]), initial=0))


def _choice(raw: Any) -> Mapping[str, Any]:
    choices = raw.get("choices") if isinstance(raw, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise Retryable("malformed response body: no choices")
    return choices[0]


def _mismatch(joined: str, response: str) -> ResponseTokensMismatchError:
    return ResponseTokensMismatchError(
        "the echoed response tokens do not re-join to the response: "
        f"{_clip(joined)!r} != {_clip(response)!r}"
    )
