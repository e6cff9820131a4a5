"""Scorer over HTTP: any OpenAI-compatible server that echoes prompt log-probabilities.

The server must score a *given* text through ``/v1/completions`` with ``echo=true`` and
``logprobs`` (vLLM, SGLang, llama-cpp-python's server, Together, Fireworks), or with vLLM's
``prompt_logprobs`` extension. OpenAI's own chat models cannot do this; the first call then
fails with an error that says so.

How the response's tokens are found in the echoed prompt:

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

Requests run concurrently (``max_concurrency`` in flight), each with a timeout, retried with
exponential backoff and jitter on timeouts, connection errors, 429 (honouring
``Retry-After``), 5xx and malformed bodies. The API key is never logged or shown in a repr.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
import openai

from camab_rag.errors import CamabError, CannotScoreError, InputError, ScorerError
from camab_rag.scoring import ChatMessage, Prompt, ResponseLogprobs, ScoreRequest, check_messages

logger = logging.getLogger(__name__)

T = TypeVar("T")

ChatTemplateRenderer = Callable[[Sequence[ChatMessage]], str]
"""Renders chat messages to the model's prompt text, with the assistant header appended."""

_NO_PROMPT_LOGPROBS_HELP = (
    "An attribution needs the log-probabilities of a given response, which only servers "
    "that score a given text can provide: vLLM, SGLang, llama-cpp-python's server, "
    "Together or Fireworks completions with echo=true and logprobs. OpenAI's own chat "
    "models cannot do this; serve an open model (e.g. `python -m "
    "vllm.entrypoints.openai.api_server --model DIR`) or use camab_rag.TransformersScorer; "
    "or let a proxy model score in its place (proxy=camab_rag.default_scorer() in the "
    "integrations, --proxy smollm2 on the command line)."
)


class NoPromptLogprobsError(CannotScoreError):
    """The server does not return log-probabilities of the prompt (the message says why)."""


class NoChatTemplateError(InputError, CannotScoreError):
    """Chat messages to score, but no chat template to render them (the server has no
    ``/tokenize`` and no local template was given): an input error for a server that could
    score text, and a model that cannot score for a chat API (a proxy can)."""


class ResponseTokensMismatchError(ScorerError):
    """The echoed response tokens do not re-join to the response text."""


class _Retryable(Exception):
    """A transient failure worth retrying; ``retry_after`` is the server's hint in seconds."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


# ---------------------------------------------------------------------- echo parsing


@dataclass(frozen=True)
class EchoEntry:
    """One echoed token: its text, log-prob (``None`` for the first) and text offset."""

    token: str
    logprob: float | None
    offset: int | None


def echo_entries(choice: Mapping[str, Any]) -> list[EchoEntry]:
    """The per-token entries of an echoed completion choice (``logprobs`` object or vLLM
    ``prompt_logprobs``).

    Raises:
        NoPromptLogprobsError: the choice has neither.
    """
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, Mapping) and logprobs.get("token_logprobs"):
        tokens = list(logprobs.get("tokens") or [])
        values = list(logprobs["token_logprobs"])
        offsets = list(logprobs.get("text_offset") or [None] * len(values))
        if not (len(tokens) == len(values) == len(offsets)):
            raise ScorerError(
                "the server's logprobs object has tokens, token_logprobs and text_offset of "
                f"different lengths ({len(tokens)}, {len(values)}, {len(offsets)})"
            )
        return [
            EchoEntry(str(t), None if v is None else float(v), None if o is None else int(o))
            for t, v, o in zip(tokens, values, offsets)
        ]
    prompt_logprobs = choice.get("prompt_logprobs")
    if isinstance(prompt_logprobs, list) and prompt_logprobs:
        entries = []
        for position in prompt_logprobs:
            if not position:
                entries.append(EchoEntry("", None, None))
                continue
            # {token_id: {"logprob", "rank", "decoded_token"}}: the prompt's own token comes
            # first (with prompt_logprobs=0 it is the only one).
            info = next(iter(position.values()))
            entries.append(EchoEntry(str(info.get("decoded_token") or ""), info["logprob"], None))
        return entries
    raise NoPromptLogprobsError(
        "the server returned no log-probabilities of the prompt (the completion has no "
        f"`logprobs.token_logprobs` and no `prompt_logprobs`). {_NO_PROMPT_LOGPROBS_HELP}"
    )


def parse_echo(
    choice: Mapping[str, Any],
    usage: Mapping[str, Any] | None,
    *,
    prompt_chars: int | None,
    response: str,
    prompt_ids: int | None = None,
    response_ids: int | None = None,
) -> ResponseLogprobs:
    """Cut the response's tokens out of one echoed completion.

    Args:
        choice: the completion choice (a JSON object).
        usage: the completion's ``usage`` object (``prompt_tokens`` tells where the echoed
            prompt ends and generated tokens begin).
        prompt_chars: text mode: length of the prompt text; the response starts at this
            character of ``prompt + response``.
        response: the response text the tokens must re-join to.
        prompt_ids: token-id mode: number of prompt token ids sent.
        response_ids: token-id mode: number of response token ids sent (the last ones).

    Raises:
        ScorerError: the tokens cannot be found or do not re-join to the response.
    """
    entries = echo_entries(choice)
    sent_total = None if prompt_ids is None or response_ids is None else prompt_ids + response_ids
    n_prompt = _echoed_prompt_length(entries, usage, sent_total)
    entries, generated = entries[:n_prompt], entries[n_prompt:]  # cut the generated token(s)
    text = choice.get("text")
    if sent_total is not None:
        assert response_ids is not None
        start = n_prompt - response_ids
        if start < 0:
            raise ScorerError(
                f"the server echoed {n_prompt} prompt tokens, fewer than the {response_ids} "
                "response tokens sent"
            )
        offsets = _offsets_in_response(entries, generated, start, text, response)
    else:
        if prompt_chars is None:
            raise ValueError("parse_echo: pass prompt_chars (text) or prompt_ids/response_ids")
        start, offsets = _text_mode_boundary(entries, text, prompt_chars, response)
    picked = entries[start:]
    values = [e.logprob for e in picked]
    if not picked:
        raise ScorerError("no response tokens were found in the echoed prompt")
    if values[0] is None:
        raise ScorerError(
            "the server gave no log-probability for the response's first token (it is the "
            "first token of the sequence): give the response a non-empty prompt"
        )
    if any(v is None for v in values):
        raise ScorerError("the server gave a null log-probability inside the response")
    return ResponseLogprobs(
        logprobs=np.asarray(values, dtype=np.float64),
        token_offsets=np.asarray(offsets, dtype=np.int64),
        tokens=tuple(e.token for e in picked),
        prompt_tokens=start,
    )


def _echoed_prompt_length(
    entries: Sequence[EchoEntry], usage: Mapping[str, Any] | None, sent_total: int | None
) -> int:
    """How many leading entries belong to the prompt (the rest were generated)."""
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
            "the server's response has no usage.prompt_tokens, so the echoed prompt cannot "
            "be told apart from generated tokens"
        )
    if len(entries) < n:
        raise NoPromptLogprobsError(
            f"the server echoed log-probs for {len(entries)} tokens but the prompt has {n}: "
            f"it did not return the prompt's log-probabilities. {_NO_PROMPT_LOGPROBS_HELP}"
        )
    return n


def _end_offset(entries: Sequence[EchoEntry]) -> int | None:
    last = entries[-1]
    return None if last.offset is None else last.offset + len(last.token)


def _text_mode_boundary(
    entries: Sequence[EchoEntry], text: object, prompt_chars: int, response: str
) -> tuple[int, list[int]]:
    """Text mode: index of the first response token and the response tokens' offsets."""
    full_len = prompt_chars + len(response)
    if all(e.offset is not None for e in entries):
        # Offsets may count text the echo dropped (a BOS): align the end with len(full).
        end = _end_offset(entries)
        assert end is not None
        shift = end - full_len
        offsets = [int(e.offset) - shift for e in entries]  # type: ignore[arg-type]
    else:  # prompt_logprobs: no offsets, accumulate the decoded tokens from the end
        offsets = [0] * len(entries)
        position = full_len
        for i in range(len(entries) - 1, -1, -1):
            position -= len(entries[i].token)
            offsets[i] = position
    start = next((i for i, o in enumerate(offsets) if o >= prompt_chars), len(entries))
    if start == len(entries) or offsets[start] != prompt_chars:
        span_start = offsets[start - 1] if start else 0
        span_end = offsets[start] if start < len(entries) else full_len
        raise ScorerError(
            "the response's first token merges with the end of the prompt in the server's "
            f"tokenization (one token spans characters {span_start}..{span_end} across the "
            f"boundary at {prompt_chars}); end the prompt with a space or newline, or use a "
            "server with a /tokenize endpoint (vLLM), which tokenizes prompt and response "
            "separately"
        )
    picked = entries[start:]
    joined = "".join(e.token for e in picked)
    if joined != response:
        echoed = text[prompt_chars:full_len] if isinstance(text, str) else None
        if echoed != response:
            raise ResponseTokensMismatchError(
                "the echoed response tokens do not re-join to the response: "
                f"{_clip(joined)!r} != {_clip(response)!r}"
            )
    return start, [o - prompt_chars for o in offsets[start:]]


def _offsets_in_response(
    entries: Sequence[EchoEntry],
    generated: Sequence[EchoEntry],
    start: int,
    text: object,
    response: str,
) -> list[int]:
    """Token-id mode: character offsets of the response tokens, checked to re-join."""
    picked = entries[start:]
    joined = "".join(e.token for e in picked)
    rejoins = joined == response
    if not rejoins and isinstance(text, str):
        # Per-token strings can split a character (e.g. an emoji over two tokens); the
        # echoed text, less the generated tokens, must then end with the response.
        tail = "".join(e.token for e in generated)
        body = text[: len(text) - len(tail)] if tail and text.endswith(tail) else text
        rejoins = body.endswith(response)
    if not rejoins:
        raise ResponseTokensMismatchError(
            "the echoed response tokens do not re-join to the response: "
            f"{_clip(joined)!r} != {_clip(response)!r}"
        )
    end = _end_offset(entries)
    if picked[0].offset is not None and end is not None:
        first = picked[0].offset
        if end - first == len(response) and all(e.offset is not None for e in picked):
            return [int(e.offset) - first for e in picked]  # type: ignore[arg-type]
    if joined != response:
        raise ScorerError(
            "cannot place the response tokens in the response: the server gave no text "
            "offsets and the token strings do not re-join to the response"
        )
    offsets, position = [], 0
    for e in picked:
        offsets.append(position)
        position += len(e.token)
    return offsets


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        base_url: the server's OpenAI base URL, e.g. ``"http://127.0.0.1:8000/v1"``.
        model: the served model name.
        api_key: the key, if the server needs one (never logged or shown in a repr).
            ``None`` sends a placeholder, never ``$OPENAI_API_KEY``, so a key meant for
            OpenAI does not leak to another server.
        max_concurrency: requests in flight at once.
        timeout: seconds per HTTP request.
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
        retry_budget_s: the most seconds one request may spend waiting to be retried
            (default 3: inside a chat, an answer whose attribution cannot be scored comes
            back within seconds, with the error in its metadata); ``None``: no limit
            beyond ``max_retries``. Raise it for batch jobs against a busy server.
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
        if max_retries < 0:
            raise InputError(f"max_retries must be >= 0, got {max_retries}")
        if retry_budget_s is not None and not retry_budget_s >= 0:
            raise InputError(f"retry_budget_s must be >= 0 or None, got {retry_budget_s}")
        if use_prompt_logprobs not in (True, False, "auto"):
            raise InputError("use_prompt_logprobs must be True, False or 'auto'")
        if tokenization not in ("auto", "server", "text"):
            raise InputError("tokenization must be 'auto', 'server' or 'text'")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_concurrency = max_concurrency
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.use_prompt_logprobs = use_prompt_logprobs
        self.tokenization = tokenization
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_budget_s = retry_budget_s
        self._api_key = api_key
        self._headers = dict(default_headers or {})
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
        self._sync_client: openai.OpenAI | None = None
        self._sync_root: openai.OpenAI | None = None

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return (
            f"OpenAICompletionsScorer(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key=<{key}>, max_concurrency={self.max_concurrency})"
        )

    __str__ = __repr__

    # ------------------------------------------------------------------- HTTP plumbing

    @property
    def _root_url(self) -> str:
        """The server root (``/tokenize`` lives beside ``/v1``)."""
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    def _client(self) -> openai.OpenAI:
        with self._lock:
            if self._sync_client is None:
                self._sync_client = self._new_client(self.base_url)
            return self._sync_client

    def _root_client(self) -> openai.OpenAI:
        with self._lock:
            if self._sync_root is None:
                self._sync_root = self._new_client(self._root_url)
            return self._sync_root

    def _new_client(self, base_url: str) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=base_url,
            api_key=self._api_key or "EMPTY",
            timeout=self.timeout,
            max_retries=0,  # retries are ours: backoff, jitter, Retry-After cap
            default_headers=self._headers or None,
        )

    def _new_async_client(self, base_url: str) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=base_url,
            api_key=self._api_key or "EMPTY",
            timeout=self.timeout,
            max_retries=0,
            default_headers=self._headers or None,
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max)
        base = min(float(self.backoff_max), float(self.backoff_base) * (2.0**attempt))
        return base * (0.5 + random.random() / 2)  # jitter: 50-100% of the backoff

    def _classify(self, exc: BaseException) -> BaseException:
        """Map a client exception to ``_Retryable`` or a clear, final error."""
        if isinstance(exc, (_Retryable, CamabError)):
            return exc
        if isinstance(exc, openai.APITimeoutError):
            return _Retryable(f"request timed out after {self.timeout:g} s")
        if isinstance(exc, openai.APIConnectionError):
            return _Retryable(f"connection error: {_describe(exc)}")
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(
                exc.status_code, exc.response.headers, _api_message(exc), exc.request.url.path
            )
        if isinstance(exc, ValueError):  # a truncated or malformed JSON body
            return _Retryable(f"malformed response body: {type(exc).__name__}: {exc}")
        return exc

    def _status_error(
        self, status: int, headers: Mapping[str, str], message: str, path: str
    ) -> BaseException:
        retry_after = _retry_after(headers)
        if status == 429 or status == 408 or status >= 500:
            return _Retryable(f"HTTP {status}: {_clip(message, 200)}", retry_after)
        if status in (401, 403):
            return ScorerError(
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

    def _retry_delay(self, what: str, attempt: int, waited: float, exc: Exception) -> float:
        """The pause before attempt ``attempt + 1`` after ``exc``; raises instead when the
        failure is not transient, the retries are used up, or the pause would take the
        time spent waiting past ``retry_budget_s``."""
        error = self._classify(exc)
        if not isinstance(error, _Retryable):
            raise error from exc
        if attempt == self.max_retries:
            raise ScorerError(f"{what} failed after {attempt + 1} attempts: {error}") from exc
        delay = self._delay(attempt, error.retry_after)
        if self.retry_budget_s is not None and waited + delay > self.retry_budget_s:
            raise ScorerError(
                f"{what} failed after {attempt + 1} attempts (retry budget of "
                f"{self.retry_budget_s:g} s spent): {error}"
            ) from exc
        logger.info("%s: %s; retrying in %.2f s", what, error, delay)
        return delay

    def _with_retries(self, what: str, call: Callable[[], T]) -> T:
        waited = 0.0
        for attempt in range(self.max_retries + 1):
            try:
                return call()
            except Exception as exc:
                delay = self._retry_delay(what, attempt, waited, exc)
            time.sleep(delay)
            waited += delay
        raise AssertionError("unreachable")

    async def _awith_retries(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        waited = 0.0
        for attempt in range(self.max_retries + 1):
            try:
                return await call()
            except Exception as exc:
                delay = self._retry_delay(what, attempt, waited, exc)
            await asyncio.sleep(delay)
            waited += delay
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ tokenization

    def _tokenize(self, payload: Mapping[str, Any]) -> list[int]:
        body = {"model": self.model, **payload}
        return self._with_retries(
            "tokenize",
            lambda: _tokens_from(self._root_client().post("/tokenize", body=body, cast_to=object)),
        )

    async def _atokenize(self, root: openai.AsyncOpenAI, payload: Mapping[str, Any]) -> list[int]:
        body = {"model": self.model, **payload}

        async def call() -> list[int]:
            return _tokens_from(await root.post("/tokenize", body=body, cast_to=object))

        return await self._awith_retries("tokenize", call)

    def _probe_tokenize(self) -> bool:
        """Whether the server has a vLLM-style ``/tokenize`` endpoint (asked once)."""
        if self._has_tokenize is None:
            try:
                ids = self._tokenize({"prompt": "probe", "add_special_tokens": False})
                self._has_tokenize = bool(ids)
            except ScorerError as error:
                cause = error.__cause__
                if isinstance(cause, (openai.APIConnectionError, openai.APITimeoutError)):
                    raise  # the server is unreachable: say so rather than guess a mode
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
            "chat-message prompts need the model's chat template, and the server at "
            f"{self.base_url} has no /tokenize endpoint to apply it: pass "
            "chat_template_renderer=<messages -> text> or tokenizer=<local tokenizer dir> "
            "to OpenAICompletionsScorer, or pass the prompt as plain text; a chat API that "
            "cannot score at all can be replaced by a proxy model (proxy=... in the "
            "integrations, --proxy on the command line)"
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

    def _plan(self, request: ScoreRequest) -> _Plan:
        _check_request(request)
        if not self._probe_tokenize():
            return self._text_plan(request)
        ids = []
        for key, payload in self._tokenize_payloads(request):
            cached = self._cached_ids(("t", key))
            if cached is None:
                cached = self._tokenize(payload)
                self._store_ids(("t", key), cached)
            ids.append(cached)
        return _id_plan(request.response, ids[0], ids[1])

    async def _aplan(self, root: openai.AsyncOpenAI, request: ScoreRequest) -> _Plan:
        _check_request(request)
        if not await asyncio.to_thread(self._probe_tokenize):
            return self._text_plan(request)
        ids = []
        for key, payload in self._tokenize_payloads(request):
            cached = self._cached_ids(("t", key))
            if cached is None:
                cached = await self._atokenize(root, payload)
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
            kwargs["extra_body"] = {"prompt_logprobs": 0}
        else:
            kwargs["echo"] = True
            kwargs["logprobs"] = 0
        return kwargs

    def _parse(self, plan: _Plan, body: Mapping[str, Any]) -> ResponseLogprobs:
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise _Retryable("malformed response body: no choices")
        return parse_echo(
            choices[0],
            body.get("usage"),
            prompt_chars=plan.prompt_chars,
            response=plan.response,
            prompt_ids=plan.prompt_ids,
            response_ids=plan.response_ids,
        )

    def _score_one(self, request: ScoreRequest) -> ResponseLogprobs:
        plan = self._plan(request)
        try:
            return self._score_plan(plan)
        except ResponseTokensMismatchError:
            # The tokenizer alters a text tokenized alone (e.g. a SentencePiece prefix
            # space): score the joint text instead, as the in-process scorer does.
            if plan.prompt_ids is None or not self._can_render_locally(request.prompt):
                raise
            return self._score_plan(self._text_plan(request))

    def _score_plan(self, plan: _Plan) -> ResponseLogprobs:
        def call(prompt_logprobs: bool) -> Callable[[], ResponseLogprobs]:
            def run() -> ResponseLogprobs:
                raw = self._client().completions.create(
                    **self._completion_kwargs(plan, prompt_logprobs)
                )
                return self._parse(plan, _as_dict(raw))

            return run

        mode = self._prompt_logprobs_mode
        if mode is not None:
            return self._with_retries("completion", call(mode))
        try:
            result = self._with_retries("completion", call(False))
        except NoPromptLogprobsError as echo_error:
            try:
                result = self._with_retries("completion", call(True))
            except ScorerError:
                raise echo_error from None
            self._prompt_logprobs_mode = True
            return result
        self._prompt_logprobs_mode = False
        return result

    async def _ascore_one(
        self, client: openai.AsyncOpenAI, root: openai.AsyncOpenAI, request: ScoreRequest
    ) -> ResponseLogprobs:
        plan = await self._aplan(root, request)
        try:
            return await self._ascore_plan(client, plan)
        except ResponseTokensMismatchError:
            if plan.prompt_ids is None or not self._can_render_locally(request.prompt):
                raise
            return await self._ascore_plan(client, self._text_plan(request))

    async def _ascore_plan(self, client: openai.AsyncOpenAI, plan: _Plan) -> ResponseLogprobs:
        def call(prompt_logprobs: bool) -> Callable[[], Awaitable[ResponseLogprobs]]:
            async def run() -> ResponseLogprobs:
                raw = await client.completions.create(
                    **self._completion_kwargs(plan, prompt_logprobs)
                )
                return self._parse(plan, _as_dict(raw))

            return run

        mode = self._prompt_logprobs_mode
        if mode is not None:
            return await self._awith_retries("completion", call(mode))
        try:
            result = await self._awith_retries("completion", call(False))
        except NoPromptLogprobsError as echo_error:
            try:
                result = await self._awith_retries("completion", call(True))
            except ScorerError:
                raise echo_error from None
            self._prompt_logprobs_mode = True
            return result
        self._prompt_logprobs_mode = False
        return result

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
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            rest = list(pool.map(self._score_one, requests[1:]))
        return [first, *rest]

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Async :meth:`score`: ``max_concurrency`` requests in flight on this event loop."""
        requests = list(requests)
        if not requests:
            return []
        semaphore = asyncio.Semaphore(self.max_concurrency)
        async with (
            self._new_async_client(self.base_url) as client,
            self._new_async_client(self._root_url) as root,
        ):

            async def one(request: ScoreRequest) -> ResponseLogprobs:
                async with semaphore:
                    return await self._ascore_one(client, root, request)

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
                payload = self._prompt_payload(prompt)
                sent = self._tokenize(payload)
            else:
                sent = self.render_prompt(prompt)

            def run() -> str:
                raw = self._client().completions.create(
                    model=self.model, prompt=sent, max_tokens=max_new_tokens, temperature=0.0
                )
                body = _as_dict(raw)
                choices = body.get("choices")
                if not isinstance(choices, list) or not choices:
                    raise _Retryable("malformed response body: no choices")
                return str(choices[0].get("text") or "").strip()

            return self._with_retries("generation", run)

        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(one, list(prompts)))

    def close(self) -> None:
        """Close the HTTP connection pool (the scorer reopens one if used again)."""
        with self._lock:
            clients = (self._sync_client, self._sync_root)
            self._sync_client = self._sync_root = None
        for client in clients:
            if client is not None:
                client.close()


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


def _tokens_from(body: object) -> list[int]:
    tokens = body.get("tokens") if isinstance(body, dict) else None
    if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
        raise ScorerError("malformed /tokenize response: no integer 'tokens' list")
    return tokens


def _as_dict(raw: Any) -> dict[str, Any]:
    """The completion as plain JSON data (extra fields such as prompt_logprobs kept)."""
    if isinstance(raw, dict):
        return raw
    if hasattr(raw, "to_dict"):
        data = raw.to_dict()
        if isinstance(data, dict):
            return data
    raise _Retryable(f"malformed response body: {type(raw).__name__}")


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


def _check_request(request: ScoreRequest) -> None:
    if not isinstance(request, ScoreRequest):
        raise InputError(f"expected a ScoreRequest, got {type(request).__name__}")
    if not isinstance(request.response, str) or not request.response:
        raise InputError("ScoreRequest.response must be a non-empty string")
    if not isinstance(request.prompt, str):
        check_messages(request.prompt)
