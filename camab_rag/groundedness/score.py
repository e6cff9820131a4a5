"""The gate's score, ``(L(C) - L(empty)) / -L(empty)`` of the answer's least supported
sentence (its tokens' summed log-prob under the full context and none), and the lexical
figures beside it: which informative words the context holds."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np
from numpy.typing import NDArray

from camab_rag.groundedness.wordforms import (
    CALENDAR,
    LIGHT_WORDS,
    ContextWords,
    answered_clauses,
    derived_values,
    form,
    forms,
    holds,
    implied_days,
    is_fact,
    is_number,
    misread_spans,
    unit_clashes,
    unled,
)
from camab_rag.groundedness.wordforms import STOPWORDS as STOPWORDS
from camab_rag.groundedness.wordforms import words as words
from camab_rag.sentences import split_sentences
from camab_rag.token_support import TokenSupport

SCORE_NAME = "min_sentence_absent"
REPLY_WORDS = frozenset({"yes", "no", "true", "false"}) | LIGHT_WORDS  # no context holds them
UNCHECKED = STOPWORDS | REPLY_WORDS


def informative_words(text: str) -> list[str]:
    """Content words, names and numbers: the words of ``text`` a reader would check."""
    return [w for w in words(text) if w not in UNCHECKED]


COURTESY_WORDS = frozenset(  # "Great question!", "I hope this helps.": they claim nothing
    """thank thanks hope helps help helpful happy glad great good question questions sure
    certainly absolutely course welcome pleasure hi hello hey let know need needs else
    anything further assist ask""".split()  # noqa: SIM905
)


def _informative_forms(text: str) -> list[tuple[int, int, str, str]]:
    found = [(a, b, informative_words(text[a:b])) for a, b in split_sentences(text)]
    polite = [(a, b) for a, b, w in found if w and COURTESY_WORDS.issuperset(w)]
    return [
        (s, e, w, f)
        for s, e, w, f in forms(unled(text))  # "Based on the context, ...": no claim
        if f and w not in UNCHECKED and not _inside(s, polite)
    ]


def _inside(start: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(a <= start < b for a, b in spans)


def _forms_of(present: Collection[str], text: str = "") -> frozenset[str]:
    if isinstance(present, ContextWords):
        return present.forms | derived_values(text, present)
    return frozenset(form(w) for w in present)


def _reading(
    text: str, present: Collection[str]
) -> tuple[list[tuple[int, int]], Callable[[int, str, str], bool]]:
    """The spans of ``text`` misreading ``present``; whether it holds ``(start, word, form)``."""
    misread = misread_spans(text, present)
    known = _forms_of(present, text)
    clashes = unit_clashes(text, present)  # "48 hours" where only "48 minutes" is stated
    spans = split_sentences(text) or [(0, len(text))]
    implied = [(a, b, implied_days(text[a:b], present)) for a, b in spans]  # "open daily"

    def held(start: int, word: str, value: str) -> bool:
        days = next((d for a, b, d in implied if a <= start < b), frozenset())
        stated = (word in present or holds(value, known) or value in days) and start not in clashes
        return stated and not _inside(start, misread)

    return misread, held


MISREAD_COVERAGE = 0.5  # the most coverage of a text that misreads the context


def coverage(text: str, present: Collection[str]) -> float:
    """The share of ``text``'s informative words ``present`` holds, by form (1.0 when there
    are none); a misread value or negation caps it at :data:`MISREAD_COVERAGE`."""
    needed = _informative_forms(text)
    misread, held = _reading(text, present)
    extra = [m for m in misread if not any(s == m[0] for s, *_ in needed)]
    total = len(needed) + len(extra)
    if not total:
        return 1.0
    share = sum(held(s, w, f) for s, _, w, f in needed) / total
    return min(share, MISREAD_COVERAGE) if misread else share


def claim_coverage(text: str, present: Collection[str]) -> float:
    """The least, over ``text``'s sentences, of the share of its informative words held by
    the one context clause holding most of them: scattered words make no claim."""
    if not isinstance(present, ContextWords) or not present.sentences:
        return coverage(text, present)
    misread = misread_spans(text, present)
    worked = derived_values(text, present)
    shares = []
    for start, end in split_sentences(text) or [(0, len(text))]:
        needed = [(start + s, f) for s, _, _, f in _informative_forms(text[start:end])]
        wrong = [m for m in misread if start <= m[0] < end]
        total = len(needed) + sum(not any(s == m[0] for s, _ in needed) for m in wrong)
        if not total:
            continue
        kept = {f for s, f in needed if not _inside(s, wrong)}
        best = max(
            present.sentences,
            key=lambda c: (
                sum(holds(f, c.forms | c.implied) for f in kept),
                len(present.asked & c.forms),
            ),
        )
        held = best.forms | best.implied
        share = sum(holds(f, held) or f in worked for s, f in needed if f in kept) / total
        shares.append(min(share, MISREAD_COVERAGE) if wrong else share)
    return min(shares, default=1.0)


def unchecked_facts(text: str, present: Collection[str]) -> list[str]:
    """The words of ``text`` stating a fact the context does not hold or gives another
    subject, and every checked word of a sentence it holds none of."""
    misread, held = _reading(text, present)
    # the question's weekdays and months are context too; not its names nor its numbers
    asked = present.asked & CALENDAR if isinstance(present, ContextWords) else frozenset()
    found: list[str] = []
    for start, end in split_sentences(text) or [(0, len(text))]:
        sentence = _informative_forms(text[start:end])
        needed = [(start + s, start + e, w, f) for s, e, w, f in sentence]
        oks = [held(s, w, f) for s, _, w, f in needed]
        wrong = [text[a:b] for a, b in misread if start <= a < end]
        whole = bool(needed) and not any(oks)
        found += wrong + [
            text[s:e]
            for (s, e, w, f), ok in zip(needed, oks)
            if not ok
            and (whole or (is_fact(text, s, w, f) and f not in asked))
            and text[s:e] not in wrong
        ]
    return list(dict.fromkeys(found))


def bare_reply(text: str) -> str | None:
    """``"yes"`` or ``"no"`` for a bare reply ("Yes.", "No, it isn't."): it says nothing
    the question did not; else ``None``."""
    said = words(unled(text))  # "Based on the context, yes."
    return said[0] if said[:1] in (["yes"], ["no"]) and not set(said) - UNCHECKED else None


def unasked_facts(answer: str, context: Collection[str]) -> list[str]:
    """The question's words no text holds, for an answer that is a bare "Yes." ("Yes, it
    does.") and where no page holds two of them: what "Yes." to "Does the pool have a
    sauna?" claims that no source states. None for "Yes." and an explanation after it."""
    if bare_reply(answer) != "yes" or not isinstance(context, ContextWords):
        return []
    if answered_clauses(context):
        return []
    subject = sorted(context.asked - CALENDAR - STOPWORDS)
    return [w for w in subject if not holds(w, context.forms)]


def misread_words(text: str, present: Collection[str]) -> tuple[str, ...]:
    """Words of ``text`` the context states otherwise (another subject's number, an opposite):
    they never block (``read_by``), unlike a number the context never states."""
    known, clashes = _forms_of(present, text), unit_clashes(text, present)
    found = [text[a:b] for a, b in misread_spans(text, present) if a not in clashes]
    held = [w for w in found if all(holds(f, known) for *_, f in forms(w) if is_number(f))]
    return tuple(dict.fromkeys(held))


def checked_coverage(text: str, present: Collection[str]) -> float:
    """The verdict's lexical figure: the mean of :func:`coverage` and :func:`claim_coverage`."""
    return (coverage(text, present) + claim_coverage(text, present)) / 2


def absent_pieces(support: TokenSupport, present: Collection[str]) -> NDArray[np.bool_]:
    """Which pieces of ``support`` lie in a content word, value or negation ``present`` lacks."""
    misread, held = _reading(support.response, present)
    return _pieces_in(
        support,
        lambda s, w, f: (
            _inside(s, misread) or (bool(f) and w not in UNCHECKED and not held(s, w, f))
        ),
    )


def taken_pieces(support: TokenSupport, present: Collection[str]) -> NDArray[np.bool_]:
    """Which pieces of ``support`` lie in a content word or number ``present`` holds."""
    _, held = _reading(support.response, present)
    return reformed_pieces(support, present) | _pieces_in(
        support, lambda s, w, f: bool(f) and w not in STOPWORDS and held(s, w, f)
    )


def reformed_pieces(support: TokenSupport, present: Collection[str]) -> NDArray[np.bool_]:
    """Which pieces lie in a number the context writes another way ("5 pm", "17:00")."""
    misread = misread_spans(support.response, present)
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
                and not _inside(start, misread)
            )
        if previous:
            starts.add(start)
    return _pieces_in(support, lambda s, w, f: s in starts)


def _pieces_in(support: TokenSupport, chosen: Callable[[int, str, str], bool]) -> NDArray[np.bool_]:
    text = support.response
    marked = np.zeros(len(text) + 1, dtype=np.int64)
    for start, end, word, value in forms(unled(text)):  # a lead-in's pieces: none chosen
        if chosen(start, word, value):
            marked[start] += 1
            marked[end] -= 1
    covered = np.concatenate([[0], np.cumsum(np.cumsum(marked)[: len(text)] > 0)])
    return np.array(
        [covered[e] > covered[s] for s, e in zip(support.starts, support.ends)], dtype=bool
    )


def explained(full: float, empty: float) -> float:
    """``(full - empty) / -empty`` for mean log-probs; 0 when ``empty`` is certain."""
    return _share(float(full) - float(empty), -float(empty))


def _share(gain: float, surprisal: float) -> float:
    return gain / surprisal if surprisal > 1e-9 else 0.0


def _gains(
    support: TokenSupport, present: Collection[str] | None
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Per-piece gains (absent words' at most 0, reformed numbers' at least 0), the absent."""
    gain = support.full - support.empty
    if present is None:
        return gain, np.zeros(gain.shape, dtype=bool)
    absent = absent_pieces(support, present)
    gain = np.where(absent, np.minimum(gain, 0.0), gain)
    return np.where(reformed_pieces(support, present), np.maximum(gain, 0.0), gain), absent


def support_score(support: TokenSupport, present: Collection[str] | None = None) -> float:
    """The explained share of ``support``'s tokens; absent content words explain nothing."""
    gain, _ = _gains(support, present)
    return _share(float(gain.sum()), -float(support.empty.sum()))


def informative_score(support: TokenSupport, present: Collection[str] | None) -> float:
    """:func:`support_score` of the tokens in informative words only (all when none)."""
    gain, absent = _gains(support, present)
    chosen = absent | _pieces_in(support, lambda s, w, f: bool(f) and w not in UNCHECKED)
    if not chosen.any():
        chosen = np.ones_like(chosen)
    return _share(float(gain[chosen].sum()), -float(support.empty[chosen].sum()))


def answer_score(sentence_scores: Sequence[float], whole: float) -> float:
    """The least of the claiming sentences' scores (``whole`` when none claims)."""
    return float(min(sentence_scores)) if len(sentence_scores) else float(whole)
