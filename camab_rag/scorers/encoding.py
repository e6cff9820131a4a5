"""Token ids of score requests, split at the prompt/response boundary, many at a time.

The prompt is rendered and tokenized alone and the response tokenized alone and appended:
the sequence the model sees when it generates the response. Prompts of a call go in one
batched tokenizer call, responses are kept; tokenizers that alter a text tokenized alone
(a SentencePiece prefix space) fall back to the joint tokenization.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from camab_rag.errors import InputError, ScorerError
from camab_rag.scorers.base import Prompt, ScoreRequest
from camab_rag.text_gate import check_text

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class EncodedRequest:
    """The token ids of one request, split at the prompt/response boundary."""

    prompt_ids: tuple[int, ...]
    response_ids: tuple[int, ...]
    offsets: tuple[int, ...]
    """Character offset in the response where each response token starts."""
    tokens: tuple[str, ...]
    boundary_merged: bool
    """Whether tokenizing prompt + response jointly would merge tokens across the boundary."""


@dataclass(frozen=True)
class _ResponseTokens:
    ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]
    faithful: bool
    """Whether the ids decode back to the response (no prefix space added)."""


class Recent(Generic[K, V]):
    """At most ``size`` values, the least recently used dropped first; safe to share
    between threads (scorers encode outside their model lock)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values


def _usable(text: str, field: str) -> str:
    """``text``, or a :class:`~camab_rag.errors.TextError` naming ``field`` and the position
    of a lone surrogate (size and NUL are the gate's, upstream)."""
    return check_text(text, field, max_chars=sys.maxsize, nul=False)


class RequestEncoder:
    """Encodes score requests with a fast tokenizer (offsets needed); ``render`` turns a prompt
    into the model's text; ``kept_responses`` distinct responses are kept between calls."""

    def __init__(
        self, tokenizer: Any, render: Callable[[Prompt], str], *, kept_responses: int = 64
    ) -> None:
        self.tokenizer = tokenizer
        self.render = render
        self._responses: Recent[str, _ResponseTokens] = Recent(kept_responses)
        self._tails: Recent[tuple[str, str], bool] = Recent(kept_responses)
        self._splitters = _splitting_tokens(tokenizer)

    def prompt_ids(self, prompts: Sequence[Prompt]) -> list[list[int]]:
        """Token ids of each rendered prompt (an empty prompt is the BOS token alone)."""
        texts = [_usable(self.render(p), f"prompt {i}") for i, p in enumerate(prompts)]
        return self._prompt_ids(texts, [isinstance(p, str) for p in prompts])

    def encode(self, requests: Sequence[ScoreRequest]) -> list[EncodedRequest]:
        """Prompt and response token ids of each request (a
        :class:`~camab_rag.errors.TextError` for a lone surrogate in one)."""
        for i, request in enumerate(requests):
            if not isinstance(request.response, str) or not request.response:
                raise InputError("ScoreRequest.response must be a non-empty string")
            _usable(request.response, f"request {i}'s response")
        if not requests:
            return []
        texts = [
            _usable(self.render(r.prompt), f"request {i}'s prompt") for i, r in enumerate(requests)
        ]
        plain = [isinstance(r.prompt, str) for r in requests]
        prompts = self._prompt_ids(texts, plain)
        alone = [self._response(r.response) for r in requests]
        merged = [
            self._merged_at_tail(text, r.response) if tokens.faithful else None
            for text, r, tokens in zip(texts, requests, alone)
        ]
        # The whole joint text is tokenized only where the tail cannot tell.
        whole = [i for i, m in enumerate(merged) if m is None]
        joints: list[dict[str, Any] | None] = [None] * len(requests)
        tokenized = self._tokenize(
            [texts[i] + requests[i].response for i in whole],
            [plain[i] for i in whole],
            offsets=True,
        )
        for i, joint in zip(whole, tokenized):
            joints[i] = joint
        return [
            self._split(*parts)
            for parts in zip(texts, prompts, alone, merged, joints, (r.response for r in requests))
        ]

    def _merged_at_tail(self, text: str, response: str) -> bool | None:
        """Whether a joint tokenization merges across the boundary, read from the prompt's text
        after its last special token (``None`` when it holds none); kept per (tail, response)."""
        ends = [at + len(s) for s in self._splitters if (at := text.rfind(s)) >= 0]
        if not ends:
            return None
        tail = text[max(ends) :]
        key = (tail, response)
        known = self._tails.get(key)
        if known is not None:
            return known
        enc = self.tokenizer(tail + response, add_special_tokens=False, return_offsets_mapping=True)
        cut = len(tail)
        merged = any(int(a) < cut < int(b) for a, b in enc["offset_mapping"])
        self._tails.put(key, merged)
        return merged

    # ------------------------------------------------------------------ pieces
    def _tokenize(
        self, texts: Sequence[str], plain: Sequence[bool], *, offsets: bool
    ) -> list[dict[str, Any]]:
        """One batched tokenizer call per kind of text (with or without the tokenizer's
        own special tokens); results in the order of ``texts``."""
        out: list[dict[str, Any]] = [{} for _ in texts]
        for special in (True, False):
            where = [i for i, p in enumerate(plain) if p is special]
            if not where:
                continue
            batch = self.tokenizer(
                [texts[i] for i in where],
                add_special_tokens=special,
                return_offsets_mapping=offsets,
            )
            for k, i in enumerate(where):
                out[i] = {key: batch[key][k] for key in batch}
        return out

    def _prompt_ids(self, texts: Sequence[str], plain: Sequence[bool]) -> list[list[int]]:
        encoded = self._tokenize(texts, plain, offsets=False)
        ids = [[int(i) for i in e["input_ids"]] for e in encoded]
        for row in ids:
            if not row:
                bos = self.tokenizer.bos_token_id
                if bos is None:
                    raise InputError(
                        "the prompt is empty and the model has no BOS token to start from"
                    )
                row.append(int(bos))
        return ids

    def _response(self, response: str) -> _ResponseTokens:
        kept = self._responses.get(response)
        if kept is not None:
            return kept
        enc = self.tokenizer(response, add_special_tokens=False, return_offsets_mapping=True)
        ids = tuple(int(i) for i in enc["input_ids"])
        decoded = self.tokenizer.decode(
            list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False
        )
        spans = tuple((int(a), int(b)) for a, b in enc["offset_mapping"])
        kept = _ResponseTokens(ids, spans, decoded == response)
        self._responses.put(response, kept)
        return kept

    @staticmethod
    def _split(
        text: str,
        prompt_ids: list[int],
        alone: _ResponseTokens,
        merged: bool | None,
        joint: dict[str, Any] | None,
        response: str,
    ) -> EncodedRequest:
        cut = len(text)
        joint_spans = [(int(a), int(b)) for a, b in joint["offset_mapping"]] if joint else []
        if merged is None:
            merged = any(a < cut < b for a, b in joint_spans)
        response_ids, spans = list(alone.ids), list(alone.spans)
        if not alone.faithful and joint is not None:
            # The tokenizer changes a text tokenized alone (e.g. a SentencePiece prefix
            # space): take the response tokens from the joint tokenization instead.
            if merged:
                raise ScorerError(
                    "cannot split the response's tokens from the prompt's: the tokenizer "
                    "merges the prompt's last characters with the response's first ones and "
                    "alters the response when tokenized alone"
                )
            ids = [int(i) for i in joint["input_ids"]]
            first = next(
                (k for k, (a, b) in enumerate(joint_spans) if a >= cut and b > a), len(ids)
            )
            response_ids = ids[first:]
            spans = [(a - cut, b - cut) for a, b in joint_spans[first:]]
            prompt_ids = ids[:first] or prompt_ids
        if not response_ids:
            raise InputError("the response has no tokens to score")
        offsets = tuple(max(0, min(a, len(response))) for a, _ in spans)
        tokens = tuple(response[a:b] for a, b in spans)
        return EncodedRequest(tuple(prompt_ids), tuple(response_ids), offsets, tokens, merged)


def _splitting_tokens(tokenizer: Any) -> tuple[str, ...]:
    """The special tokens a fast tokenizer splits off the raw text first (verbatim, no
    stripping, not whole-word), so the text after one tokenizes as on its own."""
    if getattr(tokenizer, "split_special_tokens", False):
        return ()  # special-token text is tokenized as text: no clean cut after it
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    return tuple(
        str(token.content)
        for token in added.values()
        if getattr(token, "special", False)
        and not getattr(token, "normalized", True)
        and not getattr(token, "rstrip", True)
        and not getattr(token, "single_word", True)
        and token.content
    )
