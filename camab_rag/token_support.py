"""Per-token support: each answer token's log-prob with the context and without it, from
which the gain of any range, each sentence's and the unsupported spans follow (no model call)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.scorers.base import ResponseLogprobs
from camab_rag.sentences import split_sentences

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
_ARRAYS = ("starts", "ends", "full", "empty", "counts")
_ALNUM_RUN = re.compile(  # "Wi-Fi" is one word; "5" of "5-year" and "17" of "9-17" stand alone
    r"[^\W\d_]+(?:[-\u2010\u2011][^\W\d_]+)+|[^\W_]+"
)
UNLIKELY_LOGPROB = math.log(0.5)  # a token is *unlikely* below this log-prob with the context


@dataclass(frozen=True)
class Span:
    """A character range of the answer, its mean per-token context gain
    (``log p(t | C) - log p(t | empty)``) and its token count."""

    text: str
    start: int
    end: int
    gain: float
    n_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, eq=False)
class TokenSupport:
    """The answer's tokens (or pieces where two tokenisations agree) as character ranges
    ``starts``/``ends`` with log-prob sums ``full``/``empty`` over ``counts`` tokens;
    ``earlier_turns`` the empty anchor left out, ``conversation`` their evidence, ``told``
    the user's own statements in them (their numbers count as the question's do)."""

    response: str
    starts: IntArray
    ends: IntArray
    full: FloatArray
    empty: FloatArray
    counts: IntArray
    earlier_turns: int = 0
    conversation: tuple[str, ...] = ()
    told: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = self.starts.shape[0]
        if n == 0 or {getattr(self, name).shape for name in _ARRAYS} != {(n,)}:
            raise InputError("token support needs equal-length, non-empty per-token arrays")
        if not (np.all(np.isfinite(self.full)) and np.all(np.isfinite(self.empty))):
            raise InputError("token support: a log-probability is not finite")
        if np.any(self.counts < 1):
            raise InputError("token support: every piece holds at least one token")

    def __eq__(self, other: object) -> bool:  # unhashable, as it defines no __hash__
        return isinstance(other, TokenSupport) and self.to_dict() == other.to_dict()

    @classmethod
    def from_logprobs(
        cls,
        response: str,
        full: ResponseLogprobs,
        empty: ResponseLogprobs,
        earlier_turns: int = 0,
        conversation: Sequence[str] = (),
        told: Sequence[str] = (),
    ) -> TokenSupport:
        """Align the two anchor calls' token log-probs of ``response``."""
        a, b = (np.asarray(side.token_offsets, dtype=np.int64) for side in (full, empty))
        bounds, counts = a, np.ones(a.shape[0], dtype=np.int64)
        full_sums, empty_sums = (np.asarray(side.logprobs, dtype=float) for side in (full, empty))
        if a.shape != b.shape or not np.array_equal(a, b):
            first = min(int(a[0]), int(b[0]))
            bounds = np.array(sorted(set(a.tolist()) & set(b.tolist())), dtype=np.int64)
            if bounds.size == 0 or bounds[0] > first:
                bounds = np.insert(bounds, 0, first)
            piece_a, piece_b = (
                np.clip(np.searchsorted(bounds, x, "right") - 1, 0, None) for x in (a, b)
            )
            counts = np.bincount(piece_a, minlength=bounds.size)
            keep = counts > 0
            full_sums, empty_sums = (
                np.bincount(piece, weights=sums, minlength=bounds.size)[keep]
                for piece, sums in ((piece_a, full_sums), (piece_b, empty_sums))
            )
            bounds, counts = bounds[keep], counts[keep]
        ends = np.append(bounds[1:], len(response))
        arrays = (bounds.astype(np.int64), ends.astype(np.int64), full_sums, empty_sums)
        turns = (earlier_turns, tuple(conversation), tuple(told))
        return cls(response, *arrays, counts.astype(np.int64), *turns)

    def _inside(self, start: int, end: int) -> NDArray[np.bool_]:
        pieces = [(s, self.response[s:e]) for s, e in zip(self.starts.tolist(), self.ends.tolist())]
        visible = np.array([s + len(p) - len(p.lstrip()) for s, p in pieces])
        return (visible >= start) & (visible < end)

    def _mean(self, values: FloatArray, start: int, end: int | None) -> float:
        inside = self._inside(start, len(self.response) if end is None else end)
        count = int(self.counts[inside].sum())
        return float(values[inside].sum() / count) if count else float("nan")

    def gain(self, start: int = 0, end: int | None = None) -> float:
        """Mean per-token context gain of the tokens starting in ``[start, end)``."""
        return self._mean(self.full - self.empty, start, end)

    def mean_logprob(self, which: str = "full", start: int = 0, end: int | None = None) -> float:
        """Mean per-token log-prob under one anchor (``"full"`` or ``"empty"``)."""
        return self._mean(self.full if which == "full" else self.empty, start, end)

    def within(self, ranges: Sequence[tuple[int, int]]) -> TokenSupport:
        """The pieces whose visible text starts inside one of ``ranges``."""
        keep = np.zeros(self.starts.shape[0], dtype=bool)
        for start, end in ranges:
            keep |= self._inside(start, end)
        if not keep.any():
            raise InputError("no answer token starts in the given ranges")
        return replace(self, **{name: getattr(self, name)[keep] for name in _ARRAYS})

    def span(self, start: int, end: int) -> Span:
        count = int(self.counts[self._inside(start, end)].sum())
        return Span(self.response[start:end], start, end, self.gain(start, end), count)

    def sentences(self) -> list[Span]:
        """Each answer sentence that owns a token, with its gain."""
        spans = [self.span(s, e) for s, e in split_sentences(self.response)]
        return [s for s in spans if s.n_tokens]

    def unsupported_spans(
        self,
        *,
        unlikely: float = UNLIKELY_LOGPROB,
        taken: NDArray[np.bool_] | None = None,
        absent: NDArray[np.bool_] | None = None,
    ) -> list[Span]:
        """Maximal runs, inside one sentence and widened to whole words, of pieces unlikely
        with the context (per token below ``unlikely``) that it does not make likelier
        (gain ``<= 0``); a ``taken`` piece never counts, an ``absent`` one whatever its gain."""
        unlikely_ = self.full / self.counts < unlikely
        mask = unlikely_ & (self.full <= self.empty) & (True if taken is None else ~taken)
        if absent is not None:
            mask |= unlikely_ & absent
        sentence_of = np.full(mask.size, -1)
        for k, (start, end) in enumerate(split_sentences(self.response)):
            sentence_of[self._inside(start, end)] = k
        runs: list[tuple[int, int]] = []
        for index in np.flatnonzero(mask):
            if runs and runs[-1][1] == index - 1 and sentence_of[index] == sentence_of[index - 1]:
                runs[-1] = (runs[-1][0], int(index))
            else:
                runs.append((int(index), int(index)))
        words = [m.span() for m in _ALNUM_RUN.finditer(self.response)]
        spans: list[Span] = []
        for first, last in runs:
            a, b = int(self.starts[first]), int(self.ends[last])
            held = [w for w in words if w[1] > a and w[0] < b]  # widened to whole words
            if not held:  # a quote or a stop
                continue
            start, end = held[0][0], held[-1][1]
            if spans and start < spans[-1].end:  # widened into the previous span
                start = spans.pop().start
            spans.append(self.span(start, end))
        return spans

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON; :meth:`from_dict` restores it exactly."""
        arrays = {name: getattr(self, name).tolist() for name in _ARRAYS}
        turns = {"earlier_turns": self.earlier_turns, "conversation": list(self.conversation)}
        told = {"told": list(self.told)} if self.told else {}
        return {"response": self.response, **arrays, **turns, **told}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], response: str | None = None) -> TokenSupport:
        """Inverse of :meth:`to_dict` (``response`` when the data lacks it)."""
        starts, ends, full, empty, counts = (
            np.asarray(data[k], float if k in ("full", "empty") else np.int64) for k in _ARRAYS
        )
        conversation, told = (tuple(map(str, data.get(k) or ())) for k in ("conversation", "told"))
        text = str(data["response"]) if response is None else response
        turns = int(data.get("earlier_turns", 0))
        return cls(text, starts, ends, full, empty, counts, turns, conversation, told)
