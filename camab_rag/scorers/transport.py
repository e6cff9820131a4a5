"""The HTTP scorer's wire: one bounded HTTP attempt (:class:`ApiCall`), what a reply's
errors mean, and the response's log-probs cut out of an echoed completion."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import itertools
import json
import re
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import httpx
import numpy as np

from camab_rag.errors import (
    CannotScoreError,
    ContextTooLongError,
    InputError,
    ScorerError,
    TransientScorerError,
)
from camab_rag.scorers.base import ResponseLogprobs

if TYPE_CHECKING:
    from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

Endpoint = Literal["completions", "tokenize", "models"]
_LOGPROB_SLACK = 1e-4  # a log-probability above this is impossible, not rounding

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

    scorer: OpenAICompletionsScorer
    clients: httpx.AsyncClient | None
    endpoint: Endpoint
    body: dict[str, Any] | None
    limit: float

    def run(self) -> httpx.Response:
        client, url = self.scorer._http_client(), self.scorer._endpoint_url(self.endpoint)
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
        http, url, limit = self.clients, self.scorer._endpoint_url(self.endpoint), self.limit
        assert http is not None  # the client of async_client()
        method = "GET" if self.body is None else "POST"
        request = http.request(method, url, json=self.body, timeout=limit)
        try:
            return await asyncio.wait_for(request, limit)  # the body included
        except asyncio.TimeoutError:
            raise httpx.ReadTimeout("the response did not end in time") from None


_CONTEXT = re.compile(r"maximum context length is (\d+) tokens\D*?(at least )?(\d+)")


def context_too_long(message: str) -> ContextTooLongError | None:
    """The input error for a server's "maximum context length" refusal, else ``None``."""
    if found := _CONTEXT.search(message):
        limit, at_least, total = found.groups()
        return ContextTooLongError(
            f"a request has {at_least or ''}{total} tokens, more than the model's limit {limit}"
        )
    if "max_tokens must be at least 1, got 0" in message:  # vLLM: the prompt fills the context
        return ContextTooLongError(
            "a request and the token to generate are more than the model's limit"
        )
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


@dataclass(frozen=True)
class Plan:
    """Token ids, the last ``response_ids`` the response's, or one text, the prompt its first
    ``prompt_chars`` characters."""

    prompt: str | list[int]
    response: str
    prompt_chars: int = 0
    response_ids: int | None = None


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
        raise TransientScorerError(
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
        raise TransientScorerError(
            f"malformed response body: {n} prompt tokens, {len(entries)} echoed"
        )
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
    joined = "".join(e.token for e in entries[start:])
    echoed = text[prompt_chars:full_len] if isinstance(text, str) else None
    if response not in (joined, echoed):
        raise _mismatch(joined, response)
    return start, [o - prompt_chars for o in offsets[start:]]


def _offsets_in_response(
    picked: Sequence[EchoEntry], generated: Sequence[EchoEntry], text: object, response: str
) -> list[int]:
    """Token-id mode: character offsets of the response tokens, checked to re-join."""
    joined = "".join(e.token for e in picked)
    # tokens may split a character (an emoji): the echoed text must end with the response
    body = text.removesuffix("".join(e.token for e in generated)) if isinstance(text, str) else ""
    if joined != response and not body.endswith(response):
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
        raise TransientScorerError("malformed response body: no choices")
    return choices[0]


def _mismatch(joined: str, response: str) -> ResponseTokensMismatchError:
    return ResponseTokensMismatchError(
        "the echoed response tokens do not re-join to the response: "
        f"{_clip(joined)!r} != {_clip(response)!r}"
    )
