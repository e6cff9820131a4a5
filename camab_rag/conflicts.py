"""Conflicts: a source that states another value for a word of the answer (a "45 days"
policy under "within 30 days"). With no extra model call, a source disputes a number when
it states another in its place (:func:`stated_value`), a name when the model agrees too."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from camab_rag.groundedness.score import STOPWORDS
from camab_rag.groundedness.wordforms import (
    LIGHT_WORDS,
    SAME_FORM,
    UNITS,
    ContextWords,
    bare_amount,
    clock_time,
    closest_texts,
    derived_values,
    form_set,
    forms,
    is_number,
    misread_spans,
    name_number_starts,
    narrower_page,
    numbered_names,
    price_disputes,
    rivals,
    subject_forms,
    unit_clashes,
)
from camab_rag.methods import Method
from camab_rag.result import AttributionResult, Conflict, FloatArray
from camab_rag.rewards import ScorerOracle, sum_logprob
from camab_rag.scorers.base import ResponseLogprobs
from camab_rag.segments import SourceDocument
from camab_rag.sentences import split_sentences
from camab_rag.statements import span_rewards

CONFLICT_AT = 0.25  # nats a segment lowers a word's log-prob by to argue against it
BACKED_AT = 0.5  # nats a segment adds to a word's log-prob to back it
SLOT_SLACK = 1  # extra words between a neighbour and the word's place ("costs just 49")

_VALUED = ("number", "name")
_NAME_WORD = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+")  # "3.20", "1,500": one number


def word_logprobs(
    response: str, rows: Sequence[ResponseLogprobs]
) -> tuple[list[tuple[int, int]], FloatArray]:
    """The answer's word spans and each word's log-prob per scored subset (``rows``)."""
    spans = (match.span() for match in re.finditer(r"\w+", response))
    return span_rewards(rows, spans, sum_logprob)


def conflicts_from_coefficients(
    response: str,
    words: Sequence[tuple[int, int]],
    coefficients: FloatArray,
    texts: Sequence[str],
    against_at: float = CONFLICT_AT,
) -> list[Conflict]:
    """Per-word coefficients ``(n_words, n_segments)`` to conflicts: a segment lowering a
    content word its text lacks by ``against_at`` while another backs it."""
    found: list[Conflict] = []
    for (start, end), row in zip(words, np.asarray(coefficients, dtype=float)):
        word, backed_by = response[start:end], int(np.argmax(row))
        if word.lower() in STOPWORDS or row[backed_by] < BACKED_AT:
            continue
        held = rf"(?<!\w){re.escape(word)}(?!\w)"
        for segment in np.flatnonzero(row <= -against_at):
            if segment == backed_by or re.search(held, texts[int(segment)], re.IGNORECASE):
                continue
            scores = (int(segment), backed_by, float(row[segment]), float(row[backed_by]))
            found.append(Conflict(word, start, end, *scores))
    return found


def find_conflicts(
    method: Method,
    source: ScorerOracle,
    masks: NDArray[np.bool_],
    texts: Sequence[str],
    seed: int = 0,
) -> list[Conflict]:
    """A run's conflicts: the method refitted on each answer word's log-prob (no model call)."""
    if masks.shape[0] == 0 or masks.shape[1] < 2:
        return []
    words, rewards = word_logprobs(source.response, [source.logprobs(m) for m in masks])
    if not words:
        return []
    coefficients = method.fit_many(masks, rewards, seed)
    return conflicts_from_coefficients(source.response, words, coefficients, texts)


class _Word(NamedTuple):
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
    return [_Word(m[0], m[0].lower(), _kind(m[0]), *m.span()) for m in _NAME_WORD.finditer(text)]


def _neighbour(words: Sequence[_Word], i: int, step: int, reach: int = 3) -> int | None:
    """The nearest content word ``step`` (-1 or +1) from ``i``, at most ``reach`` away."""
    stop = min(i + reach + 1, len(words)) if step > 0 else max(i - reach - 1, -1)
    return next((j for j in range(i + step, stop, step) if words[j].kind != "function"), None)


def _phrase(sentence: Sequence[_Word], i: int) -> range:
    """The run of names and numbers around word ``i`` ("25 June 1870"): one value."""
    if sentence[i].kind not in _VALUED:
        return range(i, i + 1)
    kinds = [w.kind in _VALUED for w in sentence]
    start = i - kinds[i::-1].index(False) + 1 if False in kinds[:i] else 0
    end = i + kinds[i:].index(False) if False in kinds[i:] else len(sentence)
    return range(start, end)


def stated_value(
    sentence: str, span: tuple[int, int], text: str, *, question: str = ""
) -> str | None:
    """What ``text`` states in the place of the answer's number or name at ``span`` ("49"
    of "costs 49 euros" under "costs 59 euros"), found from the word's neighbours, when
    ``text`` lacks the word, speaks of the same subject and the value is of its kind."""
    words = _sentence_words(_words(sentence), 0, len(sentence))
    index = next((k for k, w in enumerate(words) if w.start <= span[0] < w.end), None)
    if index is None or words[index].kind not in _VALUED:
        return None
    target, own = words[index], _words(text)
    plain = plain_number(target.lower)
    if any(plain_number(w.lower) == plain for w in own):  # "the 5th" holds "5"
        return None
    value_form = next((f for a, _, _, f in forms(sentence) if a == target.start), "")
    if value_form and value_form in form_set([text]):  # "5 pm" under "17:00"
        return None
    sides = [(j, step) for step in (-1, 1) if (j := _neighbour(words, index, step)) is not None]
    lines = [_sentence_words(own, a, b) for a, b in split_sentences(text)]
    phrase = _phrase(words, index)
    others = [w for k, w in enumerate(words) if k not in phrase and w.kind != "function"]
    names = {w.lower for w in others if w.kind == "name" and w.lower != target.lower}
    rest = [w.lower for w in others if w.kind != "name"]
    pool = [w for k, w in enumerate(words) if k not in phrase] + _words(question)
    skip = {words[k].lower for k in phrase} | set(SAME_FORM) | LIGHT_WORDS | set(UNITS)
    subject = {w.lower for w in pool if w.kind in ("word", "name")} - skip  # answer and question
    for number, line in enumerate(lines):
        context = {w.lower for w in line + (lines[number - 1] if number else [])}
        if names - context or 2 * sum(w in context for w in rest) < len(rest):
            continue  # another subject: it lacks another name or half the other words
        for anchor, side in sides:
            subjects = subject - {words[anchor].lower}
            if subjects and not subjects & context:
                continue
            value = _in_place(line, words[anchor].lower, -side, abs(index - anchor) + SLOT_SLACK)
            if value and value.kind == target.kind and plain_number(value.lower) != plain:
                return value.text
    return None


def _shown(sentence: str, at: int) -> str:
    """The answer's word at ``at`` as a reader knows it: a clock time whole ("7:45", not
    the "45" the checks read)."""
    return clock_time(sentence, at) or next(
        w.text for w in _words(sentence) if w.start <= at < w.end
    )


def plain_number(word: str) -> str:
    """A lower-cased word with an ordinal's suffix dropped ("5th" is "5")."""
    return re.sub(r"^(\d+)(?:st|nd|rd|th)$", r"\1", word)


def _sentence_words(words: Sequence[_Word], start: int, end: int) -> list[_Word]:
    """The ``words`` in ``start:end``; the first is no name for its capital alone."""
    line = [w for w in words if start <= w.start < end]
    if line and line[0].kind == "name":
        line[0] = line[0]._replace(kind="word")
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
    """Each citation unit's text (a document's from ``docs``, else its segments joined)."""
    if unit == "segment":
        return [segment.text for segment in result.segments]
    if docs is not None:
        return [doc.text for doc in docs]
    n = max(result.n_documents, max((s.doc_index for s in result.segments), default=-1) + 1)
    return [" ".join(s.text for s in result.segments if s.doc_index == d) for d in range(n)]


def disputes(
    result: AttributionResult, start: int = 0, end: int | None = None, unit: str = "document"
) -> dict[int, list[str]]:
    """The units (document or segment indices) disputing a word in ``start:end`` of the
    answer, with those words (:func:`stated_value`; a name only when a conflict agrees)."""
    response = result.response
    end = len(response) if end is None else end
    texts = unit_texts(result, unit)
    sentences = split_sentences(response) or [(0, len(response))]
    model: list[tuple[int, int]] = []  # (unit, word) the model's conflicts name
    for conflict in result.conflicts:
        own, backer = conflict.segment, conflict.backed_by
        if unit == "document":
            own, backer = result.segments[own].doc_index, result.segments[backer].doc_index
        if own != backer and start <= conflict.start < end:
            model.append((own, conflict.start))
    claims: list[tuple[int, int, int, int]] = []  # (unit, sentence start and end, word)
    question = result.asked or result.question  # a follow-up with the question before it
    pages = [s.doc_index for s in result.segments] if unit == "segment" else None
    every = ContextWords.of(texts, question, pages)  # a page's banner marks its segments
    titles = [numbered_names(text) for text in texts]  # "line 14" of the Line 14 page
    for a, b in sentences:
        # a bare amount ("25 days.") is of what the question asks: the units it points at
        bare = bare_amount(response[a:b])
        units = sorted(closest_texts(response[a:b], every)) if bare else range(len(texts))
        # "Line 14 runs every 15 minutes.": its 14 is a name, and Line 4's page is of another
        named = numbered_names(response[a:b], every.named)
        on_name = [not named or bool(named & title) for title in titles]
        units = [u for u in units if on_name[u]]
        skipped = {a + at for at in name_number_starts(response[a:b], every.named)}
        claims += [  # the model's own, read as the words are
            (own, a, b, at)
            for own, at in model
            if a <= at < b and at not in skipped and on_name[own]
        ]
        for word in _words(response[a:b]) if a < end and b > start else []:
            at = a + word.start
            if word.kind == "number" and start <= at < end and at not in skipped:
                claims += [(own, a, b, at) for own in units]
    found: dict[int, list[str]] = {}
    worked = derived_values(response, every)
    known = [form_set([text]) for text in texts]
    asked = subject_forms(question)
    for own, a, b, at in claims:
        sentence, span = response[a:b], (at - a, at - a + 1)
        if stated_value(sentence, span, texts[own], question=question):
            value = next((f for s, e, _, f in forms(sentence) if s <= span[0] < e), "")
            if value in worked or _off_subject(value, own, known, asked):  # a sum
                continue
            if narrower_page(own, value, sentence, every):  # the Student card's limit
                continue
            text = _shown(sentence, at - a)
            if text not in found.setdefault(own, []):
                found[own].append(text)
    for k, (a, b) in enumerate(sentences) if start < len(response) else []:
        before = response[slice(*sentences[k - 1])] if k else ""  # "They ...": its subject
        for (x, y), against in (
            rivals(response[a:b], every, before) if a < end and b > start else []
        ):
            claimed = response[a + x : a + y]
            for own in sorted(against) if start <= a + x < end else []:  # the gate's rivals
                words = found.setdefault(own, [])
                words += [claimed] if claimed not in words else []
    for a, b in sentences if start < len(response) else []:
        if a < end and b > start:
            for own, words in _opposing(response[a:b], texts, every, question).items():
                words = [w for w in words if not _off_subject(_form(w), own, known, asked)]
                if words:
                    found.setdefault(own, []).extend(w for w in words if w not in found[own])
            for own, words in price_disputes(response[a:b], every).items():  # "is free"
                found.setdefault(own, []).extend(w for w in words if w not in found[own])
    current = [u for u in range(len(texts)) if u not in every.stale]
    for a, b in sentences if start < len(response) else []:
        if a < end and b > start:  # a misread number no page was found disputing
            disputed = {w for u, words in found.items() if u in current for w in words}
            lines = numbered_names(response[a:b], every.named) or numbered_names(
                question, every.named
            )  # Line 14's page, not Line 4's; for "Every 10 minutes.", the line asked of
            pages = [u for u in current if not lines or lines & titles[u]]
            unclaimed = _misread_numbers(
                response[a:b], texts, every, (question, asked, known), disputed, pages
            )
            for own, words in unclaimed.items():
                found.setdefault(own, []).extend(w for w in words if w not in found[own])
    return {  # an archived page's other value, where a current page states the answer's
        own: words
        for own, words in found.items()
        if own in current
        or not all(any(w in texts[u] or _form(w) in known[u] for u in current) for w in words)
    }


def _form(word: str) -> str:
    """A word's form as :func:`forms` reads it ("" for none)."""
    return next((f for _, _, _, f in forms(word)), "")


def _off_subject(
    value: str, own: int, known: Sequence[frozenset[str]], asked: frozenset[str]
) -> bool:
    """Whether unit ``own`` shares fewer of the question's subject words (``asked``) than a
    unit stating the form ``value`` itself (another item's price; a library's hours beside
    the pool page that says "closed"): such a unit does not dispute it."""
    holding = [u for u, held in enumerate(known) if value and value in held]
    closest = max((len(asked & known[u]) for u in holding), default=0)
    return len(asked & known[own]) < closest


def _misread_numbers(
    sentence: str,
    texts: Sequence[str],
    every: ContextWords,
    asking: tuple[str, frozenset[str], Sequence[frozenset[str]]],
    claimed: set[str],
    current: Sequence[int],
) -> dict[int, list[str]]:
    """For each number ``sentence`` misreads against all the texts that no unit was found
    disputing (``claimed``): the current units that, read alone, misread it too and name
    most of the question (the checked baggage page for "Two checked bags" of a Standard
    fare, whose Flex clause holds the two; the check-in page for the desks' "1 hour").
    ``asking``: the question, its subject forms and each text's forms."""
    question, asked, known = asking
    clashes = unit_clashes(sentence, every)  # a number never stated: no page disputes it
    spans = [
        (span, shown)
        for span in misread_spans(sentence, every)
        if (shown := _shown(sentence, span[0])) not in claimed
        and span[0] not in clashes
        and (numbers := [f for *_, f in forms(sentence[slice(*span)]) if is_number(f)])
        and all(f in every.forms for f in numbers)  # stated somewhere: "80" never is
    ]
    if not spans:
        return {}
    alone = {u: misread_spans(sentence, ContextWords.of([texts[u]], question)) for u in current}
    named = {u: len(asked & known[u]) for u in current}
    out: dict[int, list[str]] = {}
    for span, shown in spans:  # shown: a clock time whole, "23:40"
        holders = [u for u in current if span in alone[u]]
        best = max((named[u] for u in holders), default=0)
        for u in (u for u in holders if named[u] == best):
            out.setdefault(u, []).extend([shown] if shown not in out.get(u, []) else [])
    return out


def _opposing(
    sentence: str, texts: Sequence[str], every: ContextWords, question: str
) -> dict[int, list[str]]:
    """The units stating, read alone, the opposite of a word ``sentence`` misreads against
    all of them ("allowed" where a page says "Dogs are not permitted"; a "Yes" it denies)."""
    wrong = {
        span
        for span in misread_spans(sentence, every)
        if not any(ch.isdigit() for ch in sentence[slice(*span)])
    }
    out: dict[int, list[str]] = {}
    near = closest_texts(sentence, every) if wrong else frozenset()  # not any negated page
    for own in sorted(near):
        text = texts[own]
        alone = misread_spans(sentence, ContextWords.of([text], question))
        out.update({own: [sentence[a:b] for a, b in alone if (a, b) in wrong]})
    return {own: words for own, words in out.items() if words}
