"""The gate's score: how much of its least supported sentence the context explains.

A sentence's score is the share of its surprisal that the context explains,
``explained = (L(C) - L(empty)) / -L(empty)``, with ``L`` the sentence tokens' summed
log-probability under the full context and under none: 1 means the context makes every
token certain, 0 that it changes nothing, below 0 that it makes the sentence less likely.
A token of a content word the context does not contain (a name, number or term the
answer brought in) explains nothing: its gain counts only when negative. Being a ratio
of two log-likelihoods of the same tokens it has no unit. The answer's score is its least
supported sentence's (abstaining sentences aside), so one invented sentence flags it.

Chosen on FRANK's ``valid`` rows among the candidates the two anchor calls and free text
features give (BENCHMARKS.md, "Groundedness gate on human-labelled answers (FRANK,
HaluEval)").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np
from numpy.typing import NDArray

from camab_rag.groundedness.wordforms import (
    LIGHT_WORDS,
    ContextWords,
    form,
    forms,
    holds,
    is_fact,
    is_number,
    misread_spans,
)
from camab_rag.groundedness.wordforms import STOPWORDS as STOPWORDS
from camab_rag.groundedness.wordforms import words as words
from camab_rag.sentences import split_sentences
from camab_rag.token_support import TokenSupport

SCORE_NAME = "min_sentence_absent"


REPLY_WORDS = frozenset({"yes", "no", "true", "false"}) | LIGHT_WORDS
"""Words that answer the question itself (a yes/no reply) and modal or light verbs
(:data:`~camab_rag.groundedness.wordforms.LIGHT_WORDS`): no context needs to hold them."""


def informative_words(text: str) -> list[str]:
    """The words of ``text`` a reader would check against the sources: content words,
    names and numbers (stop words and yes/no replies left out)."""
    return [w for w in words(text) if w not in STOPWORDS and w not in REPLY_WORDS]


def _informative_forms(text: str) -> list[tuple[int, int, str, str]]:
    return [
        (s, e, w, f)
        for s, e, w, f in forms(text)
        if f and w not in STOPWORDS and w not in REPLY_WORDS
    ]


def _forms_of(present: Collection[str]) -> frozenset[str]:
    """The normalised forms of the context's words (a :class:`ContextWords` holds them)."""
    if isinstance(present, ContextWords):
        return present.forms
    return frozenset(form(w) for w in present)


def _known(word: str, value: str, present: Collection[str], known: Collection[str]) -> bool:
    """Whether the context (``present``: its words; ``known``: their forms) holds the
    word, as written or in its normalised form."""
    return word in present or holds(value, known)


MISREAD_COVERAGE = 0.5
"""The most coverage a text gets when it states a value the context gives for another
subject, or a negation the context does not make
(:func:`~camab_rag.groundedness.wordforms.misread_spans`): each of its words may be in the
context, but its claim contradicts it, so at most half of it is held."""


def coverage(text: str, present: Collection[str]) -> float:
    """The share of ``text``'s informative words (:func:`informative_words`; a currency or
    percent sign counts as a word) that the context holds (``present``: its
    :func:`words`, or :class:`~camab_rag.groundedness.wordforms.ContextWords`), compared
    by normalised form (:func:`~camab_rag.groundedness.wordforms.forms`: ``grinders``
    matches ``grinder``, ``€29`` matches ``29 euros``); 1.0 when ``text`` has none. A
    name, number or term the answer brought in lowers it; a value the context gives for
    another subject, or a negation it does not make, counts as a word the context lacks
    and caps it at :data:`MISREAD_COVERAGE`."""
    needed = _informative_forms(text)
    misread = misread_spans(text, present, STOPWORDS)
    extra = [m for m in misread if not any(s == m[0] for s, *_ in needed)]
    total = len(needed) + len(extra)
    if not total:
        return 1.0
    known = _forms_of(present)
    held = sum(
        _known(w, f, present, known) and not any(a <= s < b for a, b in misread)
        for s, _, w, f in needed
    )
    share = held / total
    return min(share, MISREAD_COVERAGE) if misread else share


def claim_coverage(text: str, present: Collection[str]) -> float:
    """The claim-level check: per sentence of ``text``, the share of its informative
    words (:func:`coverage`'s, compared by form) that one context clause holds: the
    clause (:func:`~camab_rag.groundedness.wordforms.clauses`, with the subject it
    borrows) that holds most of them (ties: most of the question's subject,
    :attr:`~camab_rag.groundedness.wordforms.ContextWords.asked`); the least of the
    sentences. Why: words scattered over several documents do not make a claim, and a
    short answer's numbers and names must come from the clause about its subject. A
    misread value caps it at :data:`MISREAD_COVERAGE`; :func:`coverage` when the context's
    clauses are unknown (a plain word set)."""
    if not isinstance(present, ContextWords) or not present.sentences:
        return coverage(text, present)
    misread = misread_spans(text, present, STOPWORDS)
    shares = []
    for start, end in split_sentences(text) or [(0, len(text))]:
        needed = [(start + s, f) for s, _, _, f in _informative_forms(text[start:end])]
        wrong = [m for m in misread if start <= m[0] < end]
        total = len(needed) + sum(not any(s == m[0] for s, _ in needed) for m in wrong)
        if not total:
            continue
        kept = {f for s, f in needed if not any(a <= s < b for a, b in wrong)}
        best = max(
            present.sentences,
            key=lambda c: (sum(holds(f, c.forms) for f in kept), len(present.asked & c.forms)),
        )
        share = sum(holds(f, best.forms) for s, f in needed if f in kept) / total
        shares.append(min(share, MISREAD_COVERAGE) if wrong else share)
    return min(shares, default=1.0)


def unchecked_facts(text: str, present: Collection[str]) -> list[str]:
    """The words of ``text`` that state a fact (:func:`~camab_rag.groundedness.wordforms.
    is_fact`: a number, date, negation or name) the context (``present``) does not hold,
    or a value it states for another subject; and every checked word of a sentence the
    context holds none of (a sentence made up whole). What ``block_on="facts"`` blocks on:
    a reworded content word alone is no such word."""
    misread = misread_spans(text, present, STOPWORDS)
    known = _forms_of(present)
    found: list[str] = []
    for start, end in split_sentences(text) or [(0, len(text))]:
        sentence = _informative_forms(text[start:end])
        needed = [(start + s, start + e, w, f) for s, e, w, f in sentence]
        held = [
            _known(w, f, present, known) and not any(a <= s < b for a, b in misread)
            for s, _, w, f in needed
        ]
        wrong = [text[a:b] for a, b in misread if start <= a < end]
        whole = bool(needed) and not any(held)
        found += wrong + [
            text[s:e]
            for (s, e, w, f), ok in zip(needed, held)
            if not ok and (whole or is_fact(text, s, w, f)) and text[s:e] not in wrong
        ]
    return list(dict.fromkeys(found))


def checked_coverage(text: str, present: Collection[str]) -> float:
    """The lexical figure of the verdict: the mean of :func:`coverage` (the share of the
    answer's informative words the whole context holds) and :func:`claim_coverage` (the
    share one clause about its subject holds)."""
    return (coverage(text, present) + claim_coverage(text, present)) / 2


def absent_pieces(support: TokenSupport, present: Collection[str]) -> NDArray[np.bool_]:
    """Which pieces of ``support`` lie in a content word (not a stop word) that is not in
    ``present`` (the context's :func:`words`, compared by normalised form), or in a value
    or negation the context does not state for this subject
    (:func:`~camab_rag.groundedness.wordforms.misread_spans`)."""
    misread = misread_spans(support.response, present, STOPWORDS)
    known = _forms_of(present)
    return _pieces_in(
        support,
        lambda s, w, f: (
            any(a <= s < b for a, b in misread)
            or (
                bool(f)
                and w not in STOPWORDS
                and w not in REPLY_WORDS
                and not _known(w, f, present, known)
            )
        ),
    )


def taken_pieces(support: TokenSupport, present: Collection[str]) -> NDArray[np.bool_]:
    """Which pieces of ``support`` lie in a content word that ``present`` holds (a word
    the answer took from the context) and states for this subject, or in a number it
    holds written another way (:func:`reformed_pieces`: the ``pm`` of ``5 pm``)."""
    misread = misread_spans(support.response, present, STOPWORDS)
    known = _forms_of(present)
    return reformed_pieces(support, present) | _pieces_in(
        support,
        lambda s, w, f: (
            bool(f)
            and w not in STOPWORDS
            and _known(w, f, present, known)
            and not any(a <= s < b for a, b in misread)
        ),
    )


def reformed_pieces(support: TokenSupport, present: Collection[str]) -> NDArray[np.bool_]:
    """Which pieces of ``support`` lie in a number the context holds written another way
    ("5 pm" under "17:00", "nine" under "9", "noon" under "12:00"; the ``pm`` included):
    the words were checked by form, and a small model's doubt there is about the
    spelling, not the fact."""
    misread = misread_spans(support.response, present, STOPWORDS)
    known = _forms_of(present)
    starts: set[int] = set()
    previous = False
    for start, _, word, value in forms(support.response):
        if value:
            previous = (
                is_number(value)
                and word != value
                and value in known
                and word not in present
                and not any(a <= start < b for a, b in misread)
            )
        if previous:
            starts.add(start)
    return _pieces_in(support, lambda s, w, f: s in starts)


def _pieces_in(support: TokenSupport, chosen: Callable[[int, str, str], bool]) -> NDArray[np.bool_]:
    """Which pieces overlap a word (``chosen(start, word, form)``) of the response."""
    text = support.response
    marked = np.zeros(len(text) + 1, dtype=np.int64)
    for start, end, word, value in forms(text):
        if chosen(start, word, value):
            marked[start] += 1
            marked[end] -= 1
    covered = np.concatenate([[0], np.cumsum(np.cumsum(marked)[: len(text)] > 0)])
    return np.array(
        [covered[e] > covered[s] for s, e in zip(support.starts, support.ends)], dtype=bool
    )


def explained(full: float, empty: float) -> float:
    """``(full - empty) / -empty`` for mean log-probs (or rewards) ``full`` and ``empty``;
    0 when the answer is already certain without the context (nothing to explain)."""
    surprisal = -float(empty)
    if surprisal <= 1e-9:
        return 0.0
    return (float(full) - float(empty)) / surprisal


def support_score(support: TokenSupport, present: Collection[str] | None = None) -> float:
    """The explained share of the tokens in ``support`` (one sentence's
    :meth:`~camab_rag.token_support.TokenSupport.within`, or the whole answer's); with
    ``present`` (the context's words), tokens of absent content words explain nothing.
    Higher = better supported."""
    gain = support.full - support.empty
    if present is not None:
        gain = np.where(absent_pieces(support, present), np.minimum(gain, 0.0), gain)
        gain = np.where(reformed_pieces(support, present), np.maximum(gain, 0.0), gain)
    surprisal = -float(support.empty.sum())
    return float(gain.sum()) / surprisal if surprisal > 1e-9 else 0.0


def informative_score(support: TokenSupport, present: Collection[str] | None) -> float:
    """The explained share of the tokens in ``support`` that lie in informative words
    (content words, names, numbers: :func:`informative_words`; every token when there is
    none), a word the context lacks (``present``) explaining nothing: what a reader would
    check, without the tokens any fluent text gets right. Higher = better supported."""
    chosen = _pieces_in(
        support, lambda s, w, f: bool(f) and w not in STOPWORDS and w not in REPLY_WORDS
    )
    if present is not None:  # a misread value or negation is checked like a content word
        chosen |= absent_pieces(support, present)
    if not chosen.any():
        chosen = np.ones_like(chosen)
    gain = support.full - support.empty
    if present is not None:
        gain = np.where(absent_pieces(support, present), np.minimum(gain, 0.0), gain)
        gain = np.where(reformed_pieces(support, present), np.maximum(gain, 0.0), gain)
    surprisal = -float(support.empty[chosen].sum())
    return float(gain[chosen].sum()) / surprisal if surprisal > 1e-9 else 0.0


def answer_score(sentence_scores: Sequence[float], whole: float) -> float:
    """The answer's score from its claiming sentences' scores: the least supported one
    (``whole``, the score of all its tokens, when no sentence claims anything)."""
    return float(min(sentence_scores)) if len(sentence_scores) else float(whole)
