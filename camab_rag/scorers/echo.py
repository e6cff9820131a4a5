"""Reading the log-probabilities a server echoes for a prompt + response.

The response's tokens are found by token ids (the last ``len(response_ids)``) or by text
offset, and must re-join to the response. Handles a null first log-prob, an extra echoed
generated entry and offsets that count a dropped BOS.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.errors import CannotScoreError, InputError, ScorerError
from camab_rag.retry import Retryable
from camab_rag.scorers.base import ResponseLogprobs

_LOGPROB_SLACK = 1e-4  # a log-probability above this is impossible, not rounding

PROXY_FIX = (
    "pass proxy=camab_rag.default_scorer() (in the LangChain and LlamaIndex integrations; "
    "--proxy smollm2 on the command line; camab_rag.ProxyFallbackScorer(scorer, proxy) in "
    "code) so that a local model scores in its place"
)
"""The fix for a model that cannot score: what its errors lead with."""
_NO_PROMPT_LOGPROBS_HELP = (
    "An attribution needs the log-probabilities of a given response, which only servers "
    "that score a given text can provide: vLLM, SGLang, llama-cpp-python's server, "
    "Together or Fireworks completions with echo=true and logprobs. OpenAI's own chat "
    "models cannot do this. To score with the model itself, serve an open model "
    "(`camab serve --model DIR`) or use camab_rag.TransformersScorer."
)


class NoPromptLogprobsError(CannotScoreError):
    """The server does not return log-probabilities of the prompt: ``cause`` says why; the
    message leads with the proxy fix."""

    def __init__(self, cause: str) -> None:
        super().__init__(f"{PROXY_FIX}: {cause}. {_NO_PROMPT_LOGPROBS_HELP}", reason=cause)


class NoChatTemplateError(InputError, CannotScoreError):
    """Chat messages but no chat template to render them (no ``/tokenize``, no local
    template): an input error for a text server, a model that cannot score for a chat API."""

    def __init__(self, cause: str) -> None:
        super().__init__(
            f"{PROXY_FIX}: {cause}. If the server does return prompt log-probabilities "
            "(vLLM, SGLang...), give OpenAICompletionsScorer chat_template_renderer=<messages "
            "-> text> or tokenizer=<local tokenizer dir>, or pass the prompt as plain text",
            reason=cause,
        )


class ResponseTokensMismatchError(ScorerError):
    """The echoed response tokens do not re-join to the response text."""


@dataclass(frozen=True)
class EchoEntry:
    """One echoed token: its text, log-prob (``None`` for the first) and text offset."""

    token: str
    logprob: float | None
    offset: int | None


def echo_entries(choice: Mapping[str, Any]) -> list[EchoEntry]:
    """The per-token entries of an echoed choice (``logprobs`` or vLLM ``prompt_logprobs``;
    :class:`NoPromptLogprobsError` when it has neither)."""
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
        "`logprobs.token_logprobs` and no `prompt_logprobs`)"
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
    """Cut the response's tokens out of one echoed completion (:class:`ScorerError` when they
    cannot be found or do not re-join to ``response``). Text mode: the response starts at
    character ``prompt_chars``; token-id mode: it is the last ``response_ids`` of
    ``prompt_ids + response_ids``; ``usage.prompt_tokens`` tells where generated tokens begin."""
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
    impossible = next(
        (i for i, v in enumerate(values) if v is not None and v > _LOGPROB_SLACK), None
    )
    if impossible is not None:
        raise Retryable(
            f"malformed response body: log-probability {values[impossible]:g} for token "
            f"{impossible} of the response (a log-probability is never above 0)"
        )
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
    if len(entries) <= 1 < n:  # only the generated token: no prompt log-probs offered
        raise NoPromptLogprobsError(
            f"the server echoed log-probs for {len(entries)} tokens but the prompt has {n}: "
            "it did not return the prompt's log-probabilities"
        )
    if len(entries) < n:  # a miscount, not a server that cannot score: try again
        raise Retryable(
            f"malformed response body: usage.prompt_tokens is {n} but {len(entries)} "
            "tokens were echoed"
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
