"""Do ``cite()``'s highlights mark the sentences HotpotQA's annotators marked as support?

Replayed from the citations benchmark's stored rows (no model call): in each cited source
that is a gold paragraph, the HotpotQA sentences its highlights cover, against the
supporting-fact sentences of that paragraph, beside two zero-call rules on the same
paragraphs (its first sentence; the sentence sharing most words with question and answer).
Written by ``python -m benchmarks citations --replay`` beside the citation figures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from benchmarks._report import markdown_table, share
from camab_rag.citations import _strongest, cite
from camab_rag.groundedness.score import informative_words, words
from camab_rag.groundedness.wordforms import ContextWords, misread_spans
from camab_rag.render.support import WEAK_AT
from camab_rag.result import AttributionResult

TESTED_FROM = 95
"""Rows from this one (the results file's order) were priced after session 60 wrote down
its test of the rule ``cite()`` ships (one highlight a citing sentence), before any of them
was read: the test reads them alone."""


class Paragraph(NamedTuple):
    """One cited source that is a gold paragraph: the source, its HotpotQA sentences, the
    indices of its supporting-fact sentences, question + gold answer, the row's id, its
    place in the results file, and the spans the rules before sessions 60 and 66
    highlighted."""

    source: Any
    sentences: list[str]
    gold: set[int]
    asked: str
    row_id: str
    position: int
    earlier: list[tuple[int, int]]
    scored: Sequence[tuple[int, int]] = ()


Picker = Callable[[Paragraph], set[int]]
"""A rule: the indices of the sentences it marks in a paragraph."""


def sentence_starts(sentences: Sequence[str]) -> list[int]:
    """Where each HotpotQA sentence starts in the paragraph the benchmark built from them
    (``" ".join`` of the stripped sentences, as :func:`bench_citations.hotpot_cases`)."""
    starts, at = [], 0
    for sentence in sentences:
        starts.append(at)
        at += len(sentence.strip()) + 1
    return starts


def covered(start: int, end: int, starts: Sequence[int]) -> int:
    """The sentence holding the middle character of ``start:end``."""
    middle = (start + end - 1) // 2
    return max(i for i, s in enumerate(starts) if s <= middle)


def ours(p: Paragraph) -> set[int]:
    """The sentences ``cite()`` highlights in the source."""
    starts = sentence_starts(p.sentences)
    return {covered(h.start, h.end, starts) for h in p.source.highlights}


def strongest(p: Paragraph) -> set[int]:
    """Its strongest highlight alone (one sentence, as the zero-call rules mark): the
    first candidate of session 60, without a citing sentence's near-ties."""
    if not p.source.highlights:
        return set()
    best = max(p.source.highlights, key=lambda h: h.score)
    return {covered(best.start, best.end, sentence_starts(p.sentences))}


def earlier(p: Paragraph) -> set[int]:
    """The sentences the rule before session 60 highlighted: up to three by support."""
    starts = sentence_starts(p.sentences)
    return {covered(start, end, starts) for start, end in p.earlier}


def scored(p: Paragraph) -> set[int]:
    """The sentences the rule before session 66 highlighted: the model's strongest and
    near-ties, whichever held the answer's names."""
    starts = sentence_starts(p.sentences)
    return {covered(start, end, starts) for start, end in p.scored}


def lead(p: Paragraph) -> set[int]:
    """Zero calls: the paragraph's first sentence."""
    return {0} if p.sentences else set()


def lexical(p: Paragraph) -> set[int]:
    """Zero calls: the sentence sharing most informative words with the question and the
    gold answer (the first on a tie; none when no sentence shares one)."""
    wanted = set(informative_words(p.asked))
    shared = [len(wanted & set(words(s))) for s in p.sentences]
    best = max(shared, default=0)
    return {shared.index(best)} if best else set()


PICKERS: tuple[tuple[str, Picker], ...] = (
    ("cite()'s highlights (the passages holding the sentence's names, else its strongest)", ours),
    ("cite()'s strongest highlight alone", strongest),
    ("the rule before session 60 (up to three a source)", earlier),
    ("the rule before session 66 (the model's strongest, and near-ties)", scored),
    ("first sentence (no call)", lead),
    ("lexical: most question and answer words (no call)", lexical),
)
OURS, ALONE, EARLIER = (name for name, _ in PICKERS[:3])
FREE = [name for name, _ in PICKERS[4:]]  # the zero-call rules


def earlier_spans(result: AttributionResult, doc_index: int) -> list[tuple[int, int]]:
    """Where the rule before session 60 highlighted a document cited by a one-sentence
    answer: its best three segments by support for the answer (at least weak support),
    none stating otherwise an answer word."""
    statements = result.statements
    scores = np.asarray(statements[0].scores if statements else result.scores, dtype=float)
    said = statements[0].text if statements else result.response.strip()
    spans = [
        i
        for i, segment in enumerate(result.segments)
        if segment.doc_index == doc_index
        and segment.end > segment.start
        and 0 < scores[i] >= WEAK_AT
        and not misread_spans(said, ContextWords.of([segment.text], result.question))
    ]
    best = sorted(spans, key=lambda i: -scores[i])[:3]
    return [(result.segments[i].start, result.segments[i].end) for i in best]


def scored_spans(result: AttributionResult, doc_index: int) -> list[tuple[int, int]]:
    """Where the rule before session 66 highlighted a document cited by a one-sentence
    answer: the model's strongest segment there and its near-ties (``cite()``'s rule where
    no segment holds the answer's numbers and names)."""
    statements = result.statements
    scores = np.asarray(statements[0].scores if statements else result.scores, dtype=float)
    said = statements[0].text if statements else result.response.strip()
    segments = result.segments
    spans = [
        i
        for i, segment in enumerate(segments)
        if segment.doc_index == doc_index
        and segment.end > segment.start
        and 0 < scores[i] >= WEAK_AT
    ]
    best = _strongest(spans, [(said, scores)], segments, result.asked or result.question)
    return [(segments[i].start, segments[i].end) for i in best]


def paragraphs(
    stored: Sequence[dict[str, Any]], rows: dict[str, dict[str, Any]]
) -> list[Paragraph]:
    """Each cited gold paragraph of the stored rows, as a :class:`Paragraph`."""
    out = []
    for position, record in enumerate(stored):
        row = rows[record["id"]]
        facts = {(title, k) for title, k in row["supporting_facts"]}
        result = AttributionResult.from_dict(record["result"])
        cited = cite(result, record["docs"])
        assert len(cited.sentences) == 1, record["id"]  # "The answer is X.": one sentence
        for number in sorted(cited.sentences[0].citations):
            source = cited.source(number)
            if source.doc_index not in record["gold"]:
                continue
            title, sentences = row["context"][source.doc_index]
            assert record["docs"][source.doc_index]["title"] == title, record["id"]
            gold = {k for k in range(len(sentences)) if (title, k) in facts}
            asked = f"{record['question']} {record['gold_answer']}"
            spans = earlier_spans(result, source.doc_index)
            before = scored_spans(result, source.doc_index)
            place = (record["id"], position, spans, before)
            out.append(Paragraph(source, list(sentences), gold, asked, *place))
    return out


class Counts(NamedTuple):
    """One rule's counts over the paragraphs: marked gold sentences, marked sentences,
    gold sentences, paragraphs with none marked."""

    hits: int
    marked: int
    gold: int
    none: int

    def ratio(self, of: int) -> float:
        """``hits / of`` (-1 when nothing was counted, below any ratio)."""
        return self.hits / of if of else -1.0


def counts(found: Sequence[Paragraph]) -> dict[str, Counts]:
    """Per rule (:data:`PICKERS`), its :class:`Counts` over ``found``."""
    out = {}
    for name, pick in PICKERS:
        marked = [(pick(p), p.gold) for p in found]
        out[name] = Counts(
            sum(len(m & g) for m, g in marked),
            sum(len(m) for m, _ in marked),
            sum(len(g) for _, g in marked),
            sum(not m for m, _ in marked),
        )
    return out


def table(found: Sequence[Paragraph]) -> list[list[str]]:
    """One row per rule: paragraphs, sentences marked, precision, recall, paragraphs with
    no sentence marked."""
    n = str(len(found))
    return [
        [name, n, str(c.marked), share(c.hits, c.marked), share(c.hits, c.gold), str(c.none)]
        for name, c in counts(found).items()
    ]


HEADER = ["rule", "cited gold paragraphs", "sentences marked", "precision", "recall", "none marked"]


def section(held: Sequence[Paragraph], every: Sequence[Paragraph]) -> str:
    """The section's body: held-out rows, then all rows."""
    return "\n".join(
        [
            "Each cited source of the citations benchmark above that is a gold paragraph "
            "(HotpotQA supporting paragraph), with the highlights `cite()` shows in it "
            "(replayed from the stored rows: no model call). A highlight marks the HotpotQA "
            "sentence holding its middle character; HotpotQA's supporting-fact sentences "
            "(human labels) are the gold. Precision: marked gold sentences / marked "
            "sentences; recall: marked gold sentences / gold sentences of those paragraphs. "
            "Beside it, on the same paragraphs, the rule `cite()` shipped before session 60 "
            "(replayed), and two rules with no call: the paragraph's "
            "first sentence, and the sentence sharing most informative words with the "
            "question and the gold answer. A distractor cited has no gold sentence: the "
            "citation figures above count those.",
            "",
            f"**Held-out rows** ({len(held)} cited gold paragraphs):",
            "",
            markdown_table(HEADER, table(held)),
            "",
            f"**All rows** ({len(every)} cited gold paragraphs):",
            "",
            markdown_table(HEADER, table(every)),
            "",
            verdict(every),
            "",
            against_scored(held, every),
            "",
            *tested(every),
        ]
    )


def verdict(found: Sequence[Paragraph]) -> str:
    """On all rows: the zero-call rules ahead of ``cite()``'s highlights, and of the rule
    before session 60, on precision and recall, and what that rule's extra marks held."""
    found_counts = counts(found)
    said = []
    for mine in (OURS, EARLIER):
        for what in ("precision", "recall"):
            ahead = [
                n
                for n in FREE
                if _measure(found_counts[n], what) > _measure(found_counts[mine], what)
            ]
            if ahead:
                said.append(f"'{mine}' on {what}: " + " and ".join(f"'{a}'" for a in ahead))
    now, before = found_counts[OURS], found_counts[EARLIER]
    return (
        "Zero-call rules ahead on all rows: "
        + ("; ".join(said) if said else "none")
        + f". `cite()`'s highlights mark {now.marked} sentences ({now.hits} gold), the rule "
        f"before session 60 {before.marked} ({before.hits} gold)."
    )


SCORED = PICKERS[3][0]
SCORED_RECALL_GIVEN = 0.01  # session 66's test: the most recall the new rule may give up


def against_scored(held: Sequence[Paragraph], every: Sequence[Paragraph]) -> str:
    """Session 66's test, written down before this replay was first run: ``cite()``'s
    highlights against the rule before it, precision at least that rule's and recall at
    most :data:`SCORED_RECALL_GIVEN` below it, on the held-out rows and on all rows."""
    passed = []
    for found in (held, every):
        c = counts(found)
        now, before = c[OURS], c[SCORED]
        precise = now.ratio(now.marked) >= before.ratio(before.marked)
        passed.append(
            precise and now.ratio(now.gold) >= before.ratio(before.gold) - SCORED_RECALL_GIVEN
        )
    outcome = "pass on both" if all(passed) else "fail"
    return (
        f"Session 66's test (written down before its first replay: against '{SCORED}', "
        f"precision at least its and recall at most {SCORED_RECALL_GIVEN} below, on the "
        f"held-out rows and on all rows): `cite()`'s highlights {outcome}."
    )


RECALL_GIVEN = 0.03  # the test's most recall a rule may give up against the earlier one
LEAST_TESTED = 10  # under this many paragraphs, the test is void


def _passes(rule: Counts, before: Counts) -> bool:
    """The test: precision at least the earlier rule's, recall at most :data:`RECALL_GIVEN`
    below it."""
    precise = rule.ratio(rule.marked) >= before.ratio(before.marked)
    return precise and rule.ratio(rule.gold) >= before.ratio(before.gold) - RECALL_GIVEN


def tested(found: Sequence[Paragraph]) -> list[str]:
    """The test of ``cite()``'s highlights (and of its strongest alone, the first
    candidate) against the rule before session 60, on the rows priced after both were
    written down (:data:`TESTED_FROM`) alone."""
    new = [p for p in found if p.position >= TESTED_FROM]
    c = counts(new)
    if len(new) < LEAST_TESTED:
        outcome = f"Under {LEAST_TESTED} paragraphs: the test is void."
    elif _passes(c[OURS], c[EARLIER]):
        outcome = "`cite()`'s highlights pass: it ships them."
    elif _passes(c[ALONE], c[EARLIER]):
        outcome = "`cite()`'s highlights fail; the strongest alone passes: that should ship."
    else:
        outcome = "Both fail: neither should ship."
    return [
        "**The test of the highlights `cite()` ships, on rows priced after it was written "
        f"down** (the results file's rows from the {TESTED_FROM + 1}th, {len(new)} cited gold "
        "paragraphs; written down before they were priced, with the strongest highlight "
        "alone as the first candidate: a rule passes if its precision is at least the "
        f"earlier rule's and its recall at most {RECALL_GIVEN} below it; `cite()`'s "
        "highlights ship if they pass, else the strongest alone if it passes; the test is "
        f"void under {LEAST_TESTED} paragraphs):",
        "",
        markdown_table(HEADER, table(new)),
        "",
        outcome,
    ]


def _measure(c: Counts, what: str) -> float:
    """Precision or recall of one rule's counts."""
    return c.ratio(c.marked if what == "precision" else c.gold)


def headline_rows(found: Sequence[Paragraph]) -> list[list[str]]:
    """BENCHMARKS.md's rows (all rows): the highlights' precision and recall beside the
    zero-call rules' on the same paragraphs; no target."""
    rows = {r[0]: r for r in table(found)}
    out = []
    for column, what in ((3, "precision"), (4, "recall")):
        baseline = "; ".join(f"{n} {rows[n][column]}" for n in FREE)
        name = f"highlight {what} (HotpotQA supporting sentences), all rows (smollm2)"
        out.append([name, rows[OURS][column], baseline, "–"])
    return out
