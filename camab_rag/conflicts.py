"""Conflicts: a source that states another value for a word of the answer.

A "45 days" returns policy explains most of the answer "return it within 30 days", so its
attribution is high, yet it contradicts the answer's key fact. Two pieces of evidence, no
extra model call: the model's (:func:`find_conflicts`: per-word attributions refitted on
the subsets already scored; a segment that lowers a content word another segment backs)
and the text's (:func:`stated_value`: another value in the word's place). A source
*disputes* a number when it states another number there, a name when the model's
conflict agrees too (:func:`disputes`); citations show it as disputing, never as
support. How well: BENCHMARKS.md, "Conflicting sources".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from camab_rag.groundedness.score import STOPWORDS
from camab_rag.groundedness.wordforms import (
    LIGHT_WORDS,
    SAME_FORM,
    UNITS,
    ContextWords,
    derived_values,
    form_set,
    forms,
    subject_forms,
)
from camab_rag.methods import Method
from camab_rag.result import AttributionResult, Conflict
from camab_rag.rewards import sum_logprob
from camab_rag.scorers.base import ResponseLogprobs
from camab_rag.segments import SourceDocument
from camab_rag.sentences import split_sentences
from camab_rag.statements import span_rewards

FloatArray = NDArray[np.float64]

CONFLICT_AT = 0.25
"""Nats by which a segment must lower a word's log-prob to argue against it (HotpotQA dev)."""
BACKED_AT = 0.5
"""Nats a segment must add to a word's log-probability to count as backing it."""
LEXICAL_KINDS = frozenset({"number"})
"""Kinds a source disputes by stating another value alone (dev rows); a name needs the model."""
SLOT_SLACK = 1
"""Extra words allowed between a neighbour and the word's place ("costs just 49 euros")."""

_VALUED = ("number", "name")
_WORD = re.compile(r"\w+")
_NAME_WORD = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+")
"""A word: an amount with decimals or grouped digits ("3.20", "1,500") is one number."""


class _LogprobSource(Protocol):
    response: str

    def logprobs(self, mask: NDArray[np.bool_]) -> ResponseLogprobs: ...


def word_logprobs(
    response: str, rows: Sequence[ResponseLogprobs]
) -> tuple[list[tuple[int, int]], FloatArray]:
    """The answer's words (character spans) and each word's log-prob (summed over the
    tokens that start in it) per scored subset: shape ``(len(rows), n_words)``."""
    spans = (match.span() for match in _WORD.finditer(response))
    return span_rewards(rows, spans, sum_logprob)


def conflicts_from_coefficients(
    response: str,
    words: Sequence[tuple[int, int]],
    coefficients: FloatArray,
    texts: Sequence[str],
    against_at: float = CONFLICT_AT,
) -> list[Conflict]:
    """The model's conflicts from per-word coefficients (``(n_words, n_segments)``, nats):
    a segment lowering a content word its text lacks by ``against_at`` while another
    segment backs it (``against_at``: the benchmark's dev sweep)."""
    found: list[Conflict] = []
    for (start, end), row in zip(words, np.asarray(coefficients, dtype=float)):
        if response[start:end].lower() in STOPWORDS:  # "it", "the": no fact to dispute
            continue
        backed_by = int(np.argmax(row))
        if row[backed_by] < BACKED_AT:
            continue
        for segment in np.flatnonzero(row <= -against_at):
            held = rf"(?<!\w){re.escape(response[start:end])}(?!\w)"
            if segment == backed_by or re.search(held, texts[int(segment)], re.IGNORECASE):
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
    texts: Sequence[str],
    seed: int = 0,
) -> list[Conflict]:
    """The conflicts of a run over segments with ``texts``: the method refitted once on
    every answer word's log-prob under the subsets it scored (no model call)."""
    if masks.shape[0] == 0 or masks.shape[1] < 2:
        return []
    words, rewards = word_logprobs(source.response, [source.logprobs(m) for m in masks])
    if not words:
        return []
    coefficients = method.fit_many(masks, rewards, seed)
    return conflicts_from_coefficients(source.response, words, coefficients, texts)


@dataclass(frozen=True)
class _Word:
    text: str
    lower: str
    kind: str  # "number", "name", "word" or "function"
    start: int
    end: int


def _kind(word: str) -> str:
    if any(ch.isdigit() for ch in word):
        return "number"
    if word.lower() in STOPWORDS:
        return "function"
    return "name" if word[0].isupper() else "word"


def _words(text: str) -> list[_Word]:
    return [
        _Word(m.group(), m.group().lower(), _kind(m.group()), m.start(), m.end())
        for m in _NAME_WORD.finditer(text)
    ]


def _neighbour(words: Sequence[_Word], i: int, step: int, reach: int = 3) -> int | None:
    """The nearest content word before (-1) or after (+1) word ``i``, at most ``reach`` away."""
    j = i + step
    while 0 <= j < len(words) and abs(j - i) <= reach:
        if words[j].kind != "function":
            return j
        j += step
    return None


def _phrase(sentence: Sequence[_Word], i: int) -> range:
    """The run of names and numbers around word ``i`` ("25 June 1870"): one value."""
    if sentence[i].kind not in _VALUED:
        return range(i, i + 1)
    start, end = i, i + 1
    while start > 0 and sentence[start - 1].kind in _VALUED:
        start -= 1
    while end < len(sentence) and sentence[end].kind in _VALUED:
        end += 1
    return range(start, end)


def _about_the_same(sentence: Sequence[_Word], i: int, held: set[str]) -> bool:
    """The source's words ``held`` hold the sentence's other names and half its other
    content words: it speaks of the same thing."""
    own = _phrase(sentence, i)
    others = [w for k, w in enumerate(sentence) if k not in own and w.kind != "function"]
    names = [w for w in others if w.kind == "name" and w.lower != sentence[i].lower]
    if any(w.lower not in held for w in names):
        return False
    rest = [w for w in others if w.kind != "name"]
    return not rest or 2 * sum(w.lower in held for w in rest) >= len(rest)


def stated_value(
    sentence: str,
    span: tuple[int, int],
    text: str,
    *,
    question: str = "",
) -> str | None:
    """What ``text`` states in the place of the answer word ``sentence[span[0]:span[1]]``
    (a number or a name) when that differs from the word; else ``None``.

    The place is found from the word's nearest content neighbours in the answer ("costs
    **49** euros" under "costs 59 euros"). It counts only when ``text`` never holds the
    word (in any written form), its sentence speaks of the same thing (every other name,
    half the content words) and holds a subject word of the answer or ``question`` beyond
    the unit, and the value is of the word's kind (a number for a number).
    """
    words = _sentence_words(_words(sentence), 0, len(sentence))
    index = next((k for k, w in enumerate(words) if w.start <= span[0] < w.end), None)
    if index is None or words[index].kind not in ("number", "name"):
        return None
    target = words[index]
    own = _words(text)
    if any(
        plain_number(w.lower) == plain_number(target.lower) for w in own
    ):  # "5 January": "the 5th"
        return None
    value_form = next((f for a, _, _, f in forms(sentence) if a == target.start), "")
    if value_form and value_form in form_set([text]):  # "5 pm" under "17:00"
        return None
    sides = [(j, step) for step in (-1, 1) if (j := _neighbour(words, index, step)) is not None]
    lines = [_sentence_words(own, a, b) for a, b in split_sentences(text)]
    for number, line in enumerate(lines):
        context = {w.lower for w in line + (lines[number - 1] if number else [])}
        if not _about_the_same(words, index, context):
            continue
        for anchor, side in sides:
            subjects = _subject_words(words, index, anchor, question)
            if subjects and not subjects & context:
                continue
            value = _in_place(line, words[anchor].lower, -side, abs(index - anchor) + SLOT_SLACK)
            if (
                value is not None
                and plain_number(value.lower) != plain_number(target.lower)
                and value.kind == target.kind
            ):
                return value.text
    return None


_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")


def plain_number(word: str) -> str:
    """A lower-cased word with an ordinal's suffix dropped ("5th" is "5")."""
    match = _ORDINAL.fullmatch(word)
    return match.group(1) if match else word


RELATION_WORDS = frozenset(SAME_FORM) | LIGHT_WORDS | frozenset(UNITS)


def _subject_words(sentence: Sequence[_Word], i: int, anchor: int, question: str) -> set[str]:
    """The content words of the answer and ``question`` that say what word ``i``'s value
    is about: not its value, the ``anchor``, units or relation words ("costs")."""
    skip = {sentence[k].lower for k in [*_phrase(sentence, i), anchor]} | RELATION_WORDS
    pool = [w for k, w in enumerate(sentence) if k not in _phrase(sentence, i)]
    pool += _words(question)
    return {w.lower for w in pool if w.kind in ("word", "name")} - skip


def _sentence_words(words: Sequence[_Word], start: int, end: int) -> list[_Word]:
    """The ``words`` in ``start:end``; the first is no name for its capital alone."""
    line = [w for w in words if start <= w.start < end]
    if line and line[0].kind == "name":
        line[0] = replace(line[0], kind="word")
    return line


def _in_place(line: Sequence[_Word], anchor: str, step: int, reach: int) -> _Word | None:
    """The first content word ``step`` from ``anchor`` in ``line``, within ``reach``."""
    for p, word in enumerate(line):
        if word.lower == anchor and (q := _neighbour(line, p, step, reach)) is not None:
            return line[q]
    return None


def unit_texts(
    result: AttributionResult, unit: str, docs: Sequence[SourceDocument] | None = None
) -> list[str]:
    """Each citation unit's text: a segment's, else its document's (from ``docs``, or its
    segments joined)."""
    if unit == "segment":
        return [segment.text for segment in result.segments]
    if docs is not None:
        return [doc.text for doc in docs]
    n = max(result.n_documents, max((s.doc_index for s in result.segments), default=-1) + 1)
    parts: list[list[str]] = [[] for _ in range(n)]
    for segment in result.segments:
        parts[segment.doc_index].append(segment.text)
    return [" ".join(part) for part in parts]


def disputes(
    result: AttributionResult, start: int = 0, end: int | None = None, unit: str = "document"
) -> dict[int, list[str]]:
    """The units (document or segment indices) that dispute a word inside ``start:end``
    of the answer, with those words: another value in the word's place
    (:func:`stated_value`) for a number always, for a name when the model's conflicts
    agree. A unit that only lacks the word disputes nothing."""
    response = result.response
    end = len(response) if end is None else end
    texts = unit_texts(result, unit)
    sentences = split_sentences(response) or [(0, len(response))]
    claims: list[tuple[int, int, int, int]] = []  # (unit, sentence start and end, word)
    for conflict in result.conflicts:
        own, backer = conflict.segment, conflict.backed_by
        if unit == "document":
            own, backer = result.segments[own].doc_index, result.segments[backer].doc_index
        if own != backer and start <= conflict.start < end:
            a, b = next(((a, b) for a, b in sentences if a <= conflict.start < b), (0, 0))
            claims.append((own, a, b, conflict.start))
    for a, b in sentences:
        for word in _words(response[a:b]) if a < end and b > start else []:
            if word.kind in LEXICAL_KINDS and start <= a + word.start < end:
                claims += [(own, a, b, a + word.start) for own in range(len(texts))]
    found: dict[int, list[str]] = {}
    worked = derived_values(response, ContextWords.of(texts, result.question))
    known = [form_set([text]) for text in texts]
    asked = subject_forms(result.question)
    for own, a, b, at in claims:
        sentence, span = response[a:b], (at - a, at - a + 1)
        if stated_value(sentence, span, texts[own], question=result.question):
            value = next((f for s, e, _, f in forms(sentence) if s <= span[0] < e), "")
            # a total the answer works out is no other value; nor is a page's of another subject
            if value in worked or _off_subject(own, value, known, asked):
                continue
            text = next(w.text for w in _words(sentence) if w.start <= at - a < w.end)
            if text not in found.setdefault(own, []):
                found[own].append(text)
    return found


def _off_subject(
    unit: int, value: str, known: Sequence[frozenset[str]], asked: frozenset[str]
) -> bool:
    """Whether ``unit`` speaks of the question's subject less than a unit that states the
    answer's ``value`` (``known``: each unit's forms; ``asked``: the question's subject
    forms): then it is about something else and disputes nothing (a 2023 list of DVD
    fines beside the page of book fines the answer took "0.25" from)."""
    holding = [u for u, held in enumerate(known) if value and value in held]
    if not holding or not asked:
        return False
    return len(asked & known[unit]) < max(len(asked & known[u]) for u in holding)
