"""Citations: :func:`cite` turns an attribution into a :class:`CitedAnswer`, each answer
sentence with ``[n]`` markers into a numbered source list chosen by a :class:`CitationRule`,
and a source stating another value for an answer word shown as disputing it."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlparse

import numpy as np

from camab_rag.conflicts import disputes, unit_texts
from camab_rag.errors import InputError, WrongTypeError
from camab_rag.groundedness.abstention import is_abstention
from camab_rag.groundedness.report import read_by, support_report
from camab_rag.groundedness.score import REPLY_WORDS, STOPWORDS, bare_reply
from camab_rag.groundedness.score import words as score_words
from camab_rag.groundedness.wordforms import (
    UNIT_FORMS,
    ContextWords,
    Sentence,
    agreeing,
    answered_clauses,
    clock_hours,
    derived_values,
    form,
    form_set,
    forms,
    is_fact,
    is_number,
    is_stale,
    misread_spans,
    of_the_past,
    quantities,
    unled,
)
from camab_rag.render.cited_answer import CitationRule as CitationRule
from camab_rag.render.cited_answer import CitedAnswer as CitedAnswer
from camab_rag.render.cited_answer import (
    CitedSentence,
    Highlight,
    Passage,
    Source,
    judged_sentences,
)
from camab_rag.render.support import STRONG_AT, WEAK_AT
from camab_rag.render.text import groundedness_report, informative_words, supporting_sentence
from camab_rag.result import AttributionResult, FloatArray
from camab_rag.segments import Segment, SourceDocument, to_documents

SOURCE_KEYS = ("url", "source", "file_path")  # metadata keys locating a source (first wins)
NEAR_STRONGEST = 0.5  # a citing sentence's segment this share as strong as its best: shown
REPLY_SOURCES = 2  # at most this many sources for a bare "Yes." or "No."


def source_location(metadata: Mapping[str, Any]) -> str | None:
    """Where a document comes from: its first non-empty :data:`SOURCE_KEYS` value."""
    return next((str(metadata[k]) for k in SOURCE_KEYS if metadata.get(k)), None)


def source_link(metadata: Mapping[str, Any]) -> str | None:
    """The first :data:`SOURCE_KEYS` value that is an http(s) URL with a host."""
    for value in map(metadata.get, SOURCE_KEYS):
        if isinstance(value, str) and value.isprintable() and len(value.split()) == 1:
            url = urlparse(value)
            if url.scheme in ("http", "https") and url.netloc:
                return value
    return None


def _documents_for(
    result: AttributionResult, documents: object | None
) -> tuple[AttributionResult, list[SourceDocument] | None]:
    """The documents, and the result with its segments found in them (maybe decorated)."""
    if documents is None:
        return result, None
    docs = to_documents(documents)
    n_needed = max((s.doc_index for s in result.segments), default=-1) + 1
    if len(docs) < n_needed or (result.n_documents and len(docs) != result.n_documents):
        raise InputError(
            f"the attribution was of {max(result.n_documents, n_needed)} documents, "
            f"{len(docs)} were given (pass the documents it attributed, in order)"
        )
    placed: list[Segment | None] = []
    cursors: dict[int, int] = {}
    for segment in result.segments:
        text = docs[segment.doc_index].text
        spot = None
        if text[segment.start : segment.end] == segment.text:
            spot = segment
        elif (found := text.find(segment.text, cursors.get(segment.doc_index, 0))) >= 0:
            spot = replace(segment, start=found, end=found + len(segment.text))
        elif hit := _loose_match(segment.text, text, cursors.get(segment.doc_index, 0)):
            spot = Segment(hit.group(), segment.doc_index, hit.start(), hit.end())
        placed.append(spot)
        if spot is not None:
            cursors[segment.doc_index] = spot.end
    by_doc: dict[int, list[tuple[int, Segment]]] = {}
    for i, segment in enumerate(result.segments):
        by_doc.setdefault(segment.doc_index, []).append((i, segment))
    for doc_index, mine in sorted(by_doc.items()):
        _fill_gaps(mine, placed, docs[doc_index].text)
    segments = [s for s in placed if s is not None]  # every one placed by now
    return replace(result, segments=segments), docs


def _loose_match(part: str, text: str, start: int = 0) -> re.Match[str] | None:
    """``part`` in ``text`` from ``start``, any run of whitespace matching any other (a
    prompt may re-flow a document's line breaks)."""
    words = part.split()
    if not words:
        return None
    return re.compile(r"\s+".join(map(re.escape, words))).search(text, start)


def _decorated(segment: str, core: str) -> bool:
    """Whether ``segment`` is ``core`` with decoration around it: set off by a line break
    or a label's colon ("title: X\n\n...", "Content: ..."), not a word cut."""
    hit = _loose_match(core, segment)
    if hit is None:
        return False
    before, after = segment[: hit.start()].rstrip(" \t"), segment[hit.end() :].lstrip(" \t")
    return (not before or before.endswith(("\n", ":"))) and (not after or after[0] == "\n")


def _fill_gaps(
    mine: Sequence[tuple[int, Segment]], placed: list[Segment | None], text: str
) -> None:
    """Place, in place, one document's segments not found in its ``text``, each run of
    them against the text between its found neighbours: a blank one before the first or
    after the last is decoration the document lacks (a metadata line: shown nowhere); a
    run holding that text with decoration around it is placed on it; anything else (text
    deleted between sentences, a word changed or cut) means the document changed."""
    k = 0
    while k < len(mine):
        if placed[mine[k][0]] is not None:
            k += 1
            continue
        run = [mine[k]]
        while k + len(run) < len(mine) and placed[mine[k + len(run)][0]] is None:
            run.append(mine[k + len(run)])
        before = [p.end for i, _ in mine[:k] if (p := placed[i]) is not None and p.end]
        later = [p.start for i, _ in mine[k + len(run) :] if (p := placed[i]) is not None]
        low, high = max(before, default=0), min(later, default=len(text))
        core = text[low:high].strip()
        holder = None
        for i, segment in run if core else ():
            if _decorated(segment.text, core):
                start = text.index(core, low)
                holder = i
                placed[i] = Segment(core, segment.doc_index, start, start + len(core))
                break
        if (core and holder is None) or (not core and before and later):
            shared = set(core.split())
            i, segment = max(run, key=lambda item: len(shared & set(item[1].text.split())))
            d = segment.doc_index
            raise InputError(
                f"Document {d + 1} (documents[{d}]) does not hold {segment.text[:40]!r} (the "
                f"attribution's segment {i}, counted from 0): pass the documents that were "
                "attributed, unchanged and in the same order"
            )
        for i, segment in run:
            if i != holder:
                placed[i] = Segment("", segment.doc_index, 0, 0)
        k += len(run)


def cite(
    result: AttributionResult, documents: object | None = None, *, rule: CitationRule | None = None
) -> CitedAnswer:
    """Each answer sentence's citations and the numbered source list (in order of first
    citation or dispute), each source with its strongest segments for each sentence citing
    it (up to three); a source disputing an answer word is never shown as support, a
    rejected sentence cites nothing.
    ``documents``: the attributed documents in order, to show full texts and titles."""
    if not isinstance(result, AttributionResult):
        raise WrongTypeError(f"cite() needs an AttributionResult, got {type(result).__name__}")
    if result.status != "ok":
        raise InputError(f"the attribution failed ({result.error}); there is nothing to cite")
    if not result.segments:
        raise InputError("the attribution has no segments (attribute_fn results cannot be cited)")
    rule = rule or CitationRule()
    by_doc = rule.unit == "document"
    result, docs = _documents_for(result, documents)
    segments = result.segments
    owner = [segment.doc_index for segment in segments]
    answer_scores = np.asarray(result.scores, dtype=float)
    texts = unit_texts(result, rule.unit, docs)
    asked = result.asked or result.question  # a chat follow-up: with the question before
    read = [ContextWords.of([text], asked) for text in texts]  # once, for each sentence
    numbers: dict[int, int] = {}  # unit index -> source number
    disputed_words: dict[int, list[str]] = {}  # unit index -> answer words it disputes
    disputed_at: dict[int, list[int]] = {}  # unit index -> its segments stating otherwise
    readings: dict[int, list[tuple[str, FloatArray]]] = {}  # unit -> (citing sentence, scores)
    sentences: list[CitedSentence] = []
    pinned: dict[int, list[Sentence]] = {}  # unit -> the clauses a bare reply answers there
    joint: ContextWords | None = None  # all units' clauses, for a bare reply
    rows = [(s.text, s.start, s.end, np.asarray(s.scores, float)) for s in result.statements]
    if not rows:  # one statement: the whole answer
        stripped = result.response.strip()
        start = result.response.find(stripped) if stripped else 0
        rows = [(stripped, start, start + len(stripped), np.asarray(result.scores, float))]
    for text, start, end, scores in rows:
        per_segment = scores
        if by_doc:
            scores = _best_passage(owner, scores, len(texts))
        disputing = disputes(result, start, end, rule.unit)
        chosen = choose_sources(text, scores, texts, rule, disputing, read=read)
        reply = bare_reply(text) if result.question else None
        if reply:  # the model's scores of a bare "No." say little: the question's words do
            joint = joint or ContextWords.of(texts, asked)
            agreed = agreeing(answered_clauses(joint), reply, joint)
            clauses = [c for c in agreed if c.doc not in disputing]
            chosen = list(dict.fromkeys(c.doc for c in clauses))[: rule.top_k or REPLY_SOURCES]
            for clause in (c for c in clauses if c.doc in chosen):
                pinned.setdefault(clause.doc, []).append(clause)
        for unit in chosen + list(disputing):
            numbers.setdefault(unit, len(numbers) + 1)
        for unit, words in disputing.items():
            known = disputed_words.setdefault(unit, [])
            known += [w for w in _in_order(text, words) if w not in known]
        if disputing:  # where each disputing unit says so: its segments read alone
            for i in disputes(result, start, end, "segment") if by_doc else disputing:
                unit = owner[i] if by_doc else i
                if unit in disputing and i not in disputed_at.setdefault(unit, []):
                    disputed_at[unit].append(i)
        for unit in () if reply else chosen:
            readings.setdefault(unit, []).append((text, per_segment))
        cites = [numbers[u] for u in chosen]
        shown = CitedSentence(text, start, end, cites, [float(scores[u]) for u in chosen])
        sentences.append(replace(shown, disputed=[numbers[u] for u in disputing]))

    doc_scores = result.document_scores
    sources: list[Source] = []
    for unit, number in numbers.items():
        doc_index = unit if by_doc else segments[unit].doc_index
        document = docs[doc_index] if docs is not None else None
        members = [i for i, d in enumerate(owner) if d == unit] if by_doc else [unit]
        joined = by_doc and document is None  # no document text: its segments rebuilt
        base = segments[members[0]].start if not by_doc or joined else 0
        score = float(doc_scores[unit] if by_doc else answer_scores[unit])
        text = _joined(segments, members, base) if joined else texts[unit]
        spans = [i for i in members if segments[i].end > segments[i].start]
        cited_by = readings.get(unit, [])  # the sentences citing it; its best score for them
        lift = np.max([scores for _, scores in cited_by], axis=0) if cited_by else answer_scores
        cut = [i for i in spans if 0 < lift[i] >= WEAK_AT]  # a cheap first cut
        strong: list[int] = []
        alone: dict[int, ContextWords] = {}  # its segments read alone, once for all readings
        for reading in cited_by:  # its passages holding the values, else the model's best
            found = _holding(spans, reading, segments, asked, alone)
            strong += found or _strongest(cut, [reading], segments, asked, alone)
        strong = list(dict.fromkeys(strong))[:3]
        strong += [i for i in _stating(pinned.get(unit, []), members, segments) if i not in strong]
        highlights = [
            Highlight(i, seg.start - base, seg.end - base, seg.text, v, _strength(v))
            for i in sorted(strong, key=lambda i: segments[i].start)
            for seg, v in [(segments[i], float(lift[i]))]
        ]
        title, url = (document.title, source_link(document.metadata)) if document else (None, None)
        place = (number, rule.unit, doc_index, None if by_doc else unit, title, text, score)
        passages = [
            Passage(i, seg.start - base, seg.end - base, seg.text)
            for i in sorted(disputed_at.get(unit, []))
            for seg in [segments[i]]
            if seg.end > seg.start
        ]
        said = disputed_words.get(unit, [])
        shown_before = [s for s in segments[:unit] if s.doc_index == doc_index and s.end > s.start]
        position = None if by_doc else len(shown_before)  # decoration shown nowhere: not counted
        stale = is_stale(document.text if document is not None else text)  # the whole page's
        sources.append(Source(*place, highlights, url, said, passages, position, stale))
    verdict = result.groundedness
    carried = getattr(groundedness_report(verdict), "sentences", None)  # an integration's filter
    if not carried and result.token_support is not None:  # the rule's gate judges
        report = support_report(result.token_support, rule.support_threshold, result=result)
        sentences = judged_sentences(sentences, read_by(report))  # the default rule's verdicts
    elif not carried:  # no verdict: abstentions unmarked
        sentences = [s.judged(None, True, []) if is_abstention(s.text) else s for s in sentences]
    answer = (result.response, result.question, sentences, sources, rule, result.method)
    cited = CitedAnswer(*answer, result.n_queries, None, result.scored_by, result.uninformative)
    return cited.with_groundedness(verdict) if verdict is not None else cited.pruned()


def _strongest(
    spans: Sequence[int],
    readings: Sequence[tuple[str, FloatArray]],
    segments: Sequence[Segment],
    question: str,
    alone: dict[int, ContextWords] | None = None,
) -> list[int]:
    """The segments to highlight in a source: for each sentence citing it, its strongest
    segment (at least :data:`WEAK_AT`) and any at least :data:`NEAR_STRONGEST` as strong
    (two facts of one sentence), at most three a source; never one stating otherwise a
    word of that sentence ("Lunch is not included." under "..., lunch included"). A
    source's weaker segments were rarely support against HotpotQA's supporting sentences
    (BENCHMARKS.md, citations: 'Highlights inside cited sources'). ``alone``: the segments
    read alone so far (:func:`_read_alone`)."""
    alone = {} if alone is None else alone
    read = {i: _read_alone(alone, segments, i, question) for i in spans}
    chosen: list[int] = []
    for sentence, scores in readings:
        kept = [i for i in spans if not misread_spans(sentence, read[i])]
        kept.sort(key=lambda i: -scores[i])  # stable: the earlier segment on a tie
        if kept and scores[kept[0]] >= WEAK_AT:
            bar = max(WEAK_AT, NEAR_STRONGEST * scores[kept[0]])
            chosen += [i for i in kept[:3] if scores[i] >= bar and i not in chosen]
    return chosen[:3]


def _holding(
    spans: Sequence[int],
    reading: tuple[str, FloatArray],
    segments: Sequence[Segment],
    question: str,
    alone: dict[int, ContextWords],
) -> list[int]:
    """The segments of ``spans`` holding the citing sentence's numbers and names: the one
    holding most (the strongest on a tie), then any holding one the first does not, none
    misreading the sentence. Where a segment holds them, the model's strongest one
    elsewhere in the source was often no support ("It is closed on Sundays." highlighted
    under "It opens at 9:00.")."""
    sentence, scores = reading
    keys = {k: v for k, v in facts(sentence).items() if v or k[:1].isupper()}  # not "Use"
    if not keys:
        return []
    held = {i: _holds(segments[i].text, keys, form_set([segments[i].text])) for i in spans}
    left = [
        i
        for i in spans
        if held[i] and not misread_spans(sentence, _read_alone(alone, segments, i, question))
    ]
    chosen: list[int] = []
    covered: set[str] = set()
    while left:
        best = max(left, key=lambda i: (len(held[i] - covered), scores[i]))
        if not held[best] - covered:
            break
        covered |= held[best]
        chosen.append(best)
        left.remove(best)
    return chosen


def _read_alone(
    alone: dict[int, ContextWords], segments: Sequence[Segment], i: int, question: str
) -> ContextWords:
    """Segment ``i`` read alone with ``question``, kept in ``alone`` (a source's segments
    are read once for all the sentences citing it, its misreadings memoised there)."""
    if i not in alone:
        alone[i] = ContextWords.of([segments[i].text], question)
    return alone[i]


def _strength(score: float) -> float:
    return min(max(score / STRONG_AT, 0.0), 1.0)


def _stating(
    clauses: Sequence[Sentence], members: Sequence[int], segments: Sequence[Segment]
) -> list[int]:
    """For each of ``clauses``, the shown segment of ``members`` holding most of its words
    (the passage a bare reply answers)."""
    shown = [i for i in members if segments[i].end > segments[i].start]
    held = {i: form_set([segments[i].text]) - STOPWORDS for i in shown}
    found = [max(shown, key=lambda i: len(held[i] & c.forms), default=None) for c in clauses]
    kept = (i for i, c in zip(found, clauses) if i is not None and held[i] & c.forms)
    return list(dict.fromkeys(kept))


def _in_order(sentence: str, words: Sequence[str]) -> list[str]:
    """``words`` in the order ``sentence`` says them (any it does not hold, last)."""
    said = sentence.casefold()
    return sorted(words, key=lambda w: said.find(w.casefold()) % (len(said) + 1))


def _best_passage(owner: Sequence[int], scores: FloatArray, n_units: int) -> FloatArray:
    """Each document's support for a sentence: its best passage's score (0 when it has
    none). Summed over its passages, a long unrelated document's small lifts added up to
    more than the one passage of a short document that states the answer (issue 48)."""
    best = np.full(n_units, -np.inf)
    np.maximum.at(best, np.asarray(owner, dtype=np.int64), np.asarray(scores, dtype=float))
    return np.where(np.isfinite(best), best, 0.0)


_TOKEN = re.compile(r"[^\W_]+")


def facts(sentence: str) -> dict[str, str]:
    """The numbers, names and dates of ``sentence``, each with the form a source may state
    it in ("the 5th" is "5"; ``""`` for a name, kept as written)."""
    found: dict[str, str] = {}
    claimed = unled(sentence)  # "Based on the context, ...": no name of the claim
    for start, end, word, value in forms(sentence):
        written = sentence[start:end]
        if not claimed[start:end].strip():
            continue
        if is_fact(sentence, start, word, value):
            named = written[:1].isupper() and not is_number(value)  # "Fourteen" is 14
            found.update({written: ""} if named else {word: value})
        elif written[:1].isupper() and word not in STOPWORDS | REPLY_WORDS:
            found[word] = ""
    return found


def _holds(
    text: str,
    keys: Mapping[str, str],
    known: Collection[str],
    measured: Collection[str] = (),
    clock: Collection[str] = (),
) -> set[str]:
    """The ``keys`` that ``text`` (forms ``known``) holds, as written or in another form; a
    ``measured`` number ("14 days") is not held by a clock time, a ``clock`` hour only by one."""
    written = set(_TOKEN.findall(text))
    lowered = {word.lower() for word in written}
    clockless = form_set([_CLOCK_TIME.sub(" ", text)]) if measured else known
    hours = clock_hours(text) if clock else frozenset()
    return {
        key
        for key, value in keys.items()
        if (
            value in hours
            if value in clock
            else key in written
            or (key.islower() and key in lowered)
            or (not value and key[:1].isupper() and form(key.lower()) in known)
            or (value and value in (clockless if value in measured else known))
        )
    }


_CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")


def _unrelated_bar(unrelated: FloatArray) -> float:
    """The best score of the units sharing no informative word (at least 0)."""
    return max(float(unrelated.max()), 0.0) if unrelated.size else 0.0


def _holder_floor(unrelated: FloatArray) -> float:
    """The median score of the units sharing no informative word (0 when none)."""
    return float(np.median(unrelated)) if unrelated.size else 0.0


def choose_sources(
    sentence: str,
    scores: FloatArray,
    texts: list[str],
    rule: CitationRule,
    excluded: Collection[int] = (),
    *,
    read: Sequence[ContextWords] | None = None,
) -> list[int]:
    """The units cited for ``sentence``, best first: ``rule``'s bars above the best unit
    sharing none of its words, each adding a key word; else the best unit holding its
    numbers and names. ``read``: ``ContextWords.of([text])`` of each of ``texts``."""
    values = np.asarray(scores, dtype=float)
    wanted = informative_words(unled(sentence))  # not "Based on the context"
    stated = {f for _, _, w, f in forms(sentence) if f and (w in wanted or w[:1].isdigit())}
    # a number worked out from a unit's amounts ("24 euros": two at 12) is the unit's too
    read = read if read is not None else [ContextWords.of([text]) for text in texts]
    worked = [derived_values(sentence, words) for words in read]
    known = [form_set([text]) | w for text, w in zip(texts, worked)]
    unit_words = [set(score_words(text)) for text in texts]
    shared = [len(wanted & got) for got in unit_words]
    # related: a word shared, or a value in another form ("9 pm": "21:00")
    related = np.array([bool(n or stated & k) for n, k in zip(shared, known)], dtype=bool)
    found = facts(sentence)
    measured = frozenset(q.value for _, q in quantities(sentence) if q.unit)  # "14" of "14 days"
    clock = clock_hours(sentence)

    def holds_of(keys: Mapping[str, str]) -> list[set[str]]:
        return [
            _holds(text, keys, k, measured, clock) | {key for key, v in keys.items() if v in w}
            for text, k, w in zip(texts, known, worked)
        ]

    keys = found or dict.fromkeys(wanted, "")
    held = holds_of(keys)
    # a name every unit holds (the shop's), or a currency, marks none out: alone it cites none
    every = set.intersection(*held) if len(held) > 1 else set()
    common = {key for key in every if key in found and not found[key]}
    common |= {key for key, value in found.items() if value and not is_number(value)}
    if found and common >= set(found):  # only names every unit holds ("Dr Priya Shah ..."):
        rest = dict.fromkeys(wanted - set(score_words(" ".join(found))), "")
        if any(rest_held := holds_of(rest)):  # its other words ("neutering") decide
            found, common, keys, held = {}, set(), rest, rest_held
    unrelated = values[~related] if related.any() else values[:0]
    baseline = _unrelated_bar(unrelated)
    floor = _holder_floor(unrelated)
    standing = np.where(values - baseline >= rule.threshold, values, 0.0)
    # a unit holding the sentence's values but none of its words, where another holds both
    # ("£6" of an old price list, for "£6 for three extra photos" the photo page works out)
    said = {w for w in wanted if not w[:1].isdigit()}
    worded = [len(said & got) for got in unit_words]
    outworded = {
        u
        for u, got in enumerate(held)
        if got and not worded[u] and any(worded[v] and got <= held[v] for v in range(len(held)))
    }
    unasked: set[int] = set()  # a bare value ("23 kg."): the question's words decide
    if read and not {form(w) for w in said} - UNIT_FORMS:
        asked = [len(r.asked & k) for r, k in zip(read, known)]
        citable = [v for v in range(len(held)) if values[v] >= floor]
        unasked = {
            u
            for u, got in enumerate(held)
            if got and any(asked[v] > asked[u] and got <= held[v] for v in citable)
        }
        outworded |= unasked
    # an out-of-date unit holding no more of the sentence than a current one, unless the
    # sentence speaks of the past ("4 tablets." cites the 2026 leaflet, not the 2023 one)
    old = {u for u, alone in enumerate(read) if alone.stale}
    amounts = {(q.value, q.unit) for _, q in quantities(sentence) if q.unit}  # "12 tablets"
    exact = [{a for a in amounts if any(a in c.amounts for c in r.sentences)} for r in read]
    passed = old | set(excluded)  # no successor: out of date or disputing the sentence
    successors = {
        u: [
            v
            for v in range(len(held))
            if v not in passed
            and held[u] <= held[v]
            and exact[u] <= exact[v]
            and worded[v] >= worded[u]
        ]
        for u in ([] if of_the_past(sentence) else old)
        if held[u]
    }
    outworded |= {u for u, current in successors.items() if current}
    # a current holder stands where the out-of-date one it replaces would have
    lifted = values.copy()
    for u, current in successors.items():
        lifted[current] = np.maximum(lifted[current], values[u])
    covered: set[str] = set()
    chosen: list[int] = []
    valued = any(key != key.lower() or is_number(value) for key, value in found.items())
    checked = rule.new_words and (valued or any(held))  # a number or name none holds: none
    for unit in replace(rule, top_k=None).select(standing):
        if unit in excluded or unit in outworded or (checked and not held[unit] - covered - common):
            continue
        chosen.append(unit)
        covered |= held[unit]
        if rule.top_k is not None and len(chosen) == rule.top_k:
            return chosen
    # the holders: units holding every number and name, of those sharing the most words
    full = [
        u
        for u, got in enumerate(held)
        if valued and len(got) == len(keys) > len(common) and u not in outworded & old | unasked
    ]
    holding = [u for u in full if shared[u] == max(shared[v] for v in full)]
    for unit in sorted(holding, key=lambda u: -values[u]):
        if rule.top_k is not None and len(chosen) == rule.top_k:
            break
        if rule.new_words and any(u in holding for u in chosen):
            break  # a cited unit holds them all already
        if unit not in excluded and unit not in chosen and lifted[unit] >= floor:
            chosen.append(unit)
    return chosen


@dataclass(frozen=True)
class CitationPair:
    """One answer sentence citing one source, its best segment narrowed to the sentence."""

    sentence: CitedSentence
    source: Source
    cited_text: str
    score: float


def citation_pairs(
    result: AttributionResult, documents: object | None = None, *, rule: CitationRule | None = None
) -> list[CitationPair]:
    """Every (answer sentence, cited source) pair :func:`cite` decides, in answer order."""
    cited = cite(result, documents, rule=rule)
    placed, _ = _documents_for(result, documents)
    statements = {(s.start, s.end): np.asarray(s.scores, float) for s in result.statements}
    shown = [i for i, segment in enumerate(placed.segments) if segment.end > segment.start]
    pairs = []
    for sentence in cited.sentences:
        scores = statements.get((sentence.start, sentence.end), np.asarray(result.scores))
        for number, score in zip(sentence.citations, sentence.scores):
            source = cited.source(number)
            members = [i for i in shown if placed.segments[i].doc_index == source.doc_index]
            members = [i for i in members if source.segment_index in (None, i)]
            best = max(members, key=lambda i: scores[i], default=None)
            text = placed.segments[best].text if best is not None else source.text
            span = supporting_sentence(text, sentence.text)
            text = text[span[0] : span[1]] if span is not None else text
            pairs.append(CitationPair(sentence, source, text.strip(), float(score)))
    return pairs


def _joined(segments: Sequence[Segment], members: list[int], base: int) -> str:
    """A document's text rebuilt from its segments, gaps filled with spaces."""
    pieces: list[str] = []
    for i in sorted(members, key=lambda i: segments[i].start):
        pieces.append(" " * (segments[i].start - base) + segments[i].text)
        base = segments[i].end
    return "".join(pieces)
