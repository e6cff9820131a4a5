"""Conflicts: a source that states another value for a word of the answer.

A returns policy that says "45 days" explains most of the answer "return it within 30
days" (same topic, same wording), so its attribution score is high, yet it contradicts
the answer's key fact. The answer's own attribution cannot show that: it averages over
every token. Two pieces of evidence, no extra model call:

* **the model's**: each answer word gets its own attribution, refitted on the subsets the
  run already scored (the word's log-probability, the sum over its tokens, under each
  subset, as :mod:`camab_rag.statements` does per sentence). A segment *conflicts* with a
  word (:attr:`~camab_rag.AttributionResult.conflicts`) when the word carries content (not
  a function word, :data:`~camab_rag.groundedness.score.STOPWORDS`), the segment's text
  does not hold it, another segment backs it (raises its log-prob by at least
  :data:`BACKED_AT`) and the segment lowers it by at least :data:`CONFLICT_AT` nats;
* **the text's** (:func:`stated_value`): the source says something else *in the word's
  place*: next to the word's neighbours in the answer ("costs 49 euros" under "costs 59
  euros"), in a source about the same thing (it holds the sentence's other names and most
  of its content words).

A source *disputes* a number or a name of the answer (:func:`disputes`, what citations
show) when it states another value of the word's kind in the word's place: another
number for a number (:data:`LEXICAL_KINDS`), another name for a name when the model's
conflict agrees. Ordinary words or a year in a name's place state no other value, and a
source that merely lacks a word disputes nothing. Citations then show the source as
*disputed* for that sentence, never as its support. How well: BENCHMARKS.md,
"Conflicting sources"."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from camab_rag.groundedness.score import STOPWORDS
from camab_rag.groundedness.wordforms import LIGHT_WORDS, SAME_FORM, UNITS, form_set, forms
from camab_rag.methods import Method
from camab_rag.result import AttributionResult, Conflict
from camab_rag.rewards import sum_logprob
from camab_rag.scorers.base import ResponseLogprobs
from camab_rag.sentences import split_sentences
from camab_rag.statements import span_rewards

FloatArray = NDArray[np.float64]

CONFLICT_AT = 0.25
"""Nats by which a segment must lower a word's log-probability to argue against it (chosen
on HotpotQA dev examples: BENCHMARKS.md, "Conflicting sources")."""
BACKED_AT = 0.5
"""Nats a segment must add to a word's log-probability to count as backing it."""
LEXICAL_KINDS = frozenset({"number"})
"""The kinds of answer words that a source disputes by stating another value of the same
kind in their place, without the model's conflict (chosen on the dev rows: BENCHMARKS.md,
"Conflicting sources"); a name is disputed when the model agrees."""
SLOT_SLACK = 1
"""Extra words allowed between a neighbour and the word's place in the source ("costs just
49 euros" under "costs 59 euros")."""

_VALUED = ("number", "name")
"""The kinds of word that state a value (a number, date, price or name); an ordinary
word in a value's place ("a small house" under "based in Tartu") states none."""
_WORD = re.compile(r"\w+")
_NAME_WORD = re.compile(r"[^\W_]+")


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
    texts: Sequence[str],
    against_at: float = CONFLICT_AT,
) -> list[Conflict]:
    """The model's conflicts read from per-word coefficients (shape ``(n_words,
    n_segments)``, nats of each word's log-prob) and the segments' ``texts`` (module
    docstring); at most one per (word, segment), against the word's best backer. Whether
    a conflict is shown as a dispute is :func:`disputes`' decision."""
    found: list[Conflict] = []
    for (start, end), row in zip(words, np.asarray(coefficients, dtype=float)):
        if response[start:end].lower() in STOPWORDS:  # "it", "the": no fact to dispute
            continue
        backed_by = int(np.argmax(row))
        if row[backed_by] < BACKED_AT:
            continue
        for segment in np.flatnonzero(row <= -against_at):
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
    return conflicts_from_coefficients(source.response, words, coefficients, texts, against_at)


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


def _neighbour(words: Sequence[_Word], i: int, step: int) -> int | None:
    """The nearest content word before (``step=-1``) or after (``+1``) word ``i``, at most
    three words away."""
    j = i + step
    while 0 <= j < len(words) and abs(j - i) <= 3:
        if words[j].kind != "function":
            return j
        j += step
    return None


def _phrase(sentence: Sequence[_Word], i: int) -> range:
    """The run of names and numbers around word ``i`` ("Robert Erskine Childers DSC", "25
    June 1870"): one value, which a contradicting source replaces whole."""
    if sentence[i].kind not in _VALUED:
        return range(i, i + 1)
    start, end = i, i + 1
    while start > 0 and sentence[start - 1].kind in _VALUED:
        start -= 1
    while end < len(sentence) and sentence[end].kind in _VALUED:
        end += 1
    return range(start, end)


def _about_the_same(sentence: Sequence[_Word], i: int, held: set[str]) -> bool:
    """The source (its words ``held``) holds every other name of the sentence (outside the
    word's own name or date) and at least half of its other content words: it speaks of
    the same thing."""
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
    same_kind: bool = True,
    question: str = "",
) -> str | None:
    """What ``text`` states in the place of the answer word ``sentence[span[0]:span[1]]``,
    when that differs from the word; else ``None``.

    The word's place is found from its neighbours in the answer sentence (the nearest
    content words before and after it): in a sentence of ``text`` that holds a neighbour,
    the first content word past it towards the word ("costs **49** euros" under "costs 59
    euros"). Only a number or a name has a value to state ("answer" or "based" has
    none). It counts only when ``text`` never holds the word itself, the sentence (with
    the one before it, a heading) speaks of the same thing (every other name of the answer
    sentence, half of its content words: "The Aero kettle costs 49 euros." says nothing of
    the Glass teapot's price), the value is itself a number or a name (not the first word
    of its sentence for its capital alone; "a small house" states no place) and, with
    ``same_kind``, the value is of the word's kind (a number for a number, a name for a
    name). The source's sentence must also hold a *subject word*: a content word of the
    answer sentence or of ``question`` other than the value and the neighbour that finds
    its place (the unit): under "45 euros." for "How much does a check-up cost?", "a fee
    of 20 euros" says nothing of the check-up's price, though it shares "euros"."""
    words = _words(sentence)
    if words and words[0].kind == "name":  # a capital at the start says nothing of a name
        words[0] = replace(words[0], kind="word")
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
    sides = [(j, -1) for j in [_neighbour(words, index, -1)] if j is not None]
    sides += [(j, +1) for j in [_neighbour(words, index, +1)] if j is not None]
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
                and value.kind in _VALUED
                and (not same_kind or value.kind == target.kind)
            ):
                return value.text
    return None


_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")


def plain_number(word: str) -> str:
    """A lower-cased word with an ordinal's suffix dropped ("5th" is "5"): the same
    number to a reader."""
    match = _ORDINAL.fullmatch(word)
    return match.group(1) if match else word


RELATION_WORDS = frozenset(SAME_FORM) | LIGHT_WORDS | frozenset(UNITS)


def _subject_words(sentence: Sequence[_Word], i: int, anchor: int, question: str) -> set[str]:
    """The words that say what the value of word ``i`` is about: the content words of the
    answer ``sentence`` and the ``question`` other than numbers, the word's own value, the
    ``anchor`` that finds its place, units ("euros") and words of the relation itself
    ("costs", "sells", "gets"): any price list holds those."""
    skip = {sentence[k].lower for k in [*_phrase(sentence, i), anchor]} | RELATION_WORDS
    pool = [w for k, w in enumerate(sentence) if k not in _phrase(sentence, i)]
    pool += _words(question)
    return {w.lower for w in pool if w.kind in ("word", "name")} - skip


def _sentence_words(words: Sequence[_Word], start: int, end: int) -> list[_Word]:
    """The ``words`` inside one sentence (``start:end``); its first word is no name for
    its capital alone."""
    line = [w for w in words if start <= w.start < end]
    if line and line[0].kind == "name":
        line[0] = replace(line[0], kind="word")
    return line


def _in_place(line: Sequence[_Word], anchor: str, step: int, reach: int) -> _Word | None:
    """The first content word after (``step=+1``) or before (``-1``) an occurrence of
    ``anchor`` in ``line``, at most ``reach`` words from it."""
    for p, word in enumerate(line):
        if word.lower != anchor:
            continue
        q = p + step
        while 0 <= q < len(line) and abs(q - p) <= reach:
            if line[q].kind != "function":
                return line[q]
            q += step
    return None


def _unit_texts(result: AttributionResult, unit: str) -> list[str]:
    if unit == "segment":
        return [segment.text for segment in result.segments]
    texts: dict[int, list[str]] = {}
    for segment in result.segments:
        texts.setdefault(segment.doc_index, []).append(segment.text)
    n = max(texts, default=-1) + 1
    return [" ".join(texts.get(d, [])) for d in range(n)]


def disputes(
    result: AttributionResult, start: int = 0, end: int | None = None, unit: str = "document"
) -> dict[int, list[str]]:
    """The units (``"document"`` or ``"segment"`` indices) that dispute a word inside
    ``start:end`` of the answer (default: all of it), with those words.

    A unit disputes a number or a name when it states another value in the word's place
    (:func:`stated_value`, a value of the word's kind): for a :data:`LEXICAL_KINDS` word
    (a number) always, for a name when the model's
    :attr:`~camab_rag.AttributionResult.conflicts` find the unit lowering the word (a
    conflict between two segments of one document is no dispute of that document).
    A unit that only lacks the word disputes nothing."""
    response = result.response
    end = len(response) if end is None else end
    texts = _unit_texts(result, unit)
    sentences = split_sentences(response) or [(0, len(response))]

    def sentence_of(position: int) -> tuple[int, int]:
        return next(((a, b) for a, b in sentences if a <= position < b), (0, len(response)))

    found: dict[int, list[str]] = {}

    def add(own: int, word: str) -> None:
        known = found.setdefault(own, [])
        if word not in known:
            known.append(word)

    for conflict in result.conflicts:
        if not start <= conflict.start < end:
            continue
        own, backer = conflict.segment, conflict.backed_by
        if unit == "document":
            own, backer = result.segments[own].doc_index, result.segments[backer].doc_index
        a, b = sentence_of(conflict.start)
        span = (conflict.start - a, conflict.end - a)
        question = result.question
        if own != backer and stated_value(response[a:b], span, texts[own], question=question):
            add(own, conflict.text)
    for a, b in sentences:
        if b <= start or a >= end:
            continue
        for word in _words(response[a:b]):
            if word.kind not in LEXICAL_KINDS or not start <= a + word.start < end:
                continue
            for own, text in enumerate(texts):
                span = (word.start, word.end)
                if stated_value(response[a:b], span, text, question=result.question):
                    add(own, word.text)
    return {k: v for k, v in found.items() if v}
