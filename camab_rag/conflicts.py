"""Conflicts: a source that supports the answer as a whole but argues against one word.

A returns policy that says "45 days" explains most of the answer "return it within 30
days" (same topic, same wording), so its attribution score is high, yet it contradicts
the answer's key fact. The answer's own attribution cannot show that: it averages over
every token. Here each answer word gets its own attribution, refitted on the subsets the
run already scored (the word's log-probability, the sum over its tokens, under each
subset, as :mod:`camab_rag.statements` does per sentence: no extra model call). A segment
*conflicts* with a word when

* the word carries content (not a function word such as "it" or "the",
  :data:`~camab_rag.groundedness.score.STOPWORDS`),
* the segment would be cited as support of the answer (a score of at least :data:`MIN_SUPPORT`),
* its text does not hold the word (a source cannot contradict what it says itself),
* another segment backs the word (raises its log-prob by at least :data:`BACKED_AT`), and
* it lowers the word's log-prob by at least :data:`CONFLICT_AT` nats.

Citations then show the segment's document as *disputed* for that sentence instead of
citing it as support. How often it catches a contradicting copy of the source, and how
often it flags a document that does not contradict: BENCHMARKS.md, "Conflicting sources".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from camab_rag.groundedness.score import STOPWORDS
from camab_rag.methods import Method
from camab_rag.result import AttributionResult, Conflict
from camab_rag.rewards import sum_logprob
from camab_rag.scorers.base import ResponseLogprobs
from camab_rag.statements import span_rewards

FloatArray = NDArray[np.float64]

CONFLICT_AT = 0.25
"""Nats by which a segment must lower a word's log-probability to argue against it (chosen
on HotpotQA dev examples: BENCHMARKS.md, "Conflicting sources")."""
BACKED_AT = 0.5
"""Nats a segment must add to a word's log-probability to count as backing it."""
MIN_SUPPORT = 0.11
"""The answer's score (nats per token) from which a segment would be cited as support: the
citation bar, :data:`camab_rag.render.support.CITE_AT`. Only such a segment can be shown
as support wrongly."""

_WORD = re.compile(r"\w+")


class _LogprobSource(Protocol):
    response: str

    def logprobs(self, mask: NDArray[np.bool_]) -> ResponseLogprobs: ...


def word_logprobs(
    response: str, rows: Sequence[ResponseLogprobs]
) -> tuple[list[tuple[int, int]], FloatArray]:
    """The answer's words (character spans) and, per scored subset, each word's
    log-probability (the sum over its tokens): shape ``(len(rows), n_words)``. A word owns
    the tokens whose first visible character falls inside it; words that own no token are
    left out."""
    spans = (match.span() for match in _WORD.finditer(response))
    return span_rewards(rows, spans, sum_logprob)


def _holds(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) is not None


def conflicts_from_coefficients(
    response: str,
    words: Sequence[tuple[int, int]],
    coefficients: FloatArray,
    scores: FloatArray,
    texts: Sequence[str],
    against_at: float = CONFLICT_AT,
) -> list[Conflict]:
    """The conflicts read from per-word coefficients (shape ``(n_words, n_segments)``, nats
    of each word's log-prob), the answer's segment ``scores`` and the segments' ``texts``
    (module docstring); at most one per (word, segment), against the word's best backer."""
    found: list[Conflict] = []
    citable = np.asarray(scores, dtype=float) >= MIN_SUPPORT
    for (start, end), row in zip(words, np.asarray(coefficients, dtype=float)):
        if response[start:end].lower() in STOPWORDS:  # "it", "the": no fact to dispute
            continue
        backed_by = int(np.argmax(row))
        if row[backed_by] < BACKED_AT:
            continue
        for segment in np.flatnonzero((row <= -against_at) & citable):
            if segment == backed_by or _holds(texts[int(segment)], response[start:end]):
                continue
            found.append(
                Conflict(
                    response[start:end],
                    start,
                    end,
                    int(segment),
                    backed_by,
                    float(row[segment]),
                    float(row[backed_by]),
                )
            )
    return found


def find_conflicts(
    method: Method,
    source: _LogprobSource,
    masks: NDArray[np.bool_],
    scores: FloatArray,
    texts: Sequence[str],
    seed: int = 0,
    against_at: float = CONFLICT_AT,
) -> list[Conflict]:
    """The conflicts of an attribution run over segments with ``texts``, from the token
    log-probs of the subsets it scored (``source.logprobs(mask)``): the method's estimator
    is refitted once for all answer words at once, no model call."""
    if masks.shape[0] == 0 or masks.shape[1] < 2:
        return []
    words, rewards = word_logprobs(source.response, [source.logprobs(m) for m in masks])
    if not words:
        return []
    coefficients = method.fit_many(masks, rewards, seed)
    return conflicts_from_coefficients(
        source.response, words, coefficients, scores, texts, against_at
    )


def disputes(
    result: AttributionResult, start: int = 0, end: int | None = None, unit: str = "document"
) -> dict[int, list[str]]:
    """The units (``"document"`` or ``"segment"`` indices) that argue against a word inside
    ``start:end`` of the answer (default: all of it), with those words, read from
    :attr:`~camab_rag.AttributionResult.conflicts`; a conflict between two segments of one
    document is no dispute of that document."""
    found: dict[int, list[str]] = {}
    for conflict in result.conflicts:
        if not start <= conflict.start < (len(result.response) if end is None else end):
            continue
        own, backer = conflict.segment, conflict.backed_by
        if unit == "document":
            own, backer = result.segments[own].doc_index, result.segments[backer].doc_index
        if own != backer and conflict.text not in found.setdefault(own, []):
            found[own].append(conflict.text)
    return {k: v for k, v in found.items() if v}
