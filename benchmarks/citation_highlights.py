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

from benchmarks._report import markdown_table, share
from camab_rag.citations import cite
from camab_rag.groundedness.score import informative_words, words
from camab_rag.result import AttributionResult

Picker = Callable[[Any, list[str], str], set[int]]
"""(the cited source, its paragraph's HotpotQA sentences, question + gold answer) -> the
indices of the sentences it marks."""


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


def ours(source: Any, sentences: list[str], _asked: str) -> set[int]:
    """The sentences ``cite()`` highlights in the source."""
    starts = sentence_starts(sentences)
    return {covered(h.start, h.end, starts) for h in source.highlights}


def strongest(source: Any, sentences: list[str], _asked: str) -> set[int]:
    """Its strongest highlight alone (one sentence, as the zero-call rules mark)."""
    if not source.highlights:
        return set()
    best = max(source.highlights, key=lambda h: h.score)
    return {covered(best.start, best.end, sentence_starts(sentences))}


def lead(_source: Any, sentences: list[str], _asked: str) -> set[int]:
    """Zero calls: the paragraph's first sentence."""
    return {0} if sentences else set()


def lexical(_source: Any, sentences: list[str], asked: str) -> set[int]:
    """Zero calls: the sentence sharing most informative words with the question and the
    gold answer (the first on a tie; none when no sentence shares one)."""
    wanted = set(informative_words(asked))
    shared = [len(wanted & set(words(s))) for s in sentences]
    best = max(shared, default=0)
    return {shared.index(best)} if best else set()


PICKERS: tuple[tuple[str, Picker], ...] = (
    ("cite()'s highlights (up to three a source)", ours),
    ("cite()'s strongest highlight", strongest),
    ("first sentence (no call)", lead),
    ("lexical: most question and answer words (no call)", lexical),
)


def paragraphs(stored: Sequence[dict[str, Any]], rows: dict[str, dict[str, Any]]) -> list[Any]:
    """Per cited gold paragraph of the stored rows: (the source, its HotpotQA sentences, the
    indices of its supporting-fact sentences, question + gold answer, the row's id)."""
    out = []
    for record in stored:
        row = rows[record["id"]]
        facts = {(title, k) for title, k in row["supporting_facts"]}
        result = AttributionResult.from_dict(record["result"])
        cited = cite(result, record["docs"])
        numbers = {n for s in cited.sentences for n in s.citations}
        for number in sorted(numbers):
            source = cited.source(number)
            if source.doc_index not in record["gold"]:
                continue
            title, sentences = row["context"][source.doc_index]
            assert record["docs"][source.doc_index]["title"] == title, record["id"]
            gold = {k for k in range(len(sentences)) if (title, k) in facts}
            asked = f"{record['question']} {record['gold_answer']}"
            out.append((source, list(sentences), gold, asked, record["id"]))
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


def counts(found: Sequence[Any]) -> dict[str, Counts]:
    """Per rule (:data:`PICKERS`), its :class:`Counts` over ``found``."""
    out = {}
    for name, pick in PICKERS:
        marked = [
            (pick(source, sentences, asked), gold) for source, sentences, gold, asked, _ in found
        ]
        out[name] = Counts(
            sum(len(m & g) for m, g in marked),
            sum(len(m) for m, _ in marked),
            sum(len(g) for _, g in marked),
            sum(not m for m, _ in marked),
        )
    return out


def table(found: Sequence[Any]) -> list[list[str]]:
    """One row per rule: paragraphs, sentences marked, precision, recall, paragraphs with
    no sentence marked."""
    n = str(len(found))
    return [
        [name, n, str(c.marked), share(c.hits, c.marked), share(c.hits, c.gold), str(c.none)]
        for name, c in counts(found).items()
    ]


HEADER = ["rule", "cited gold paragraphs", "sentences marked", "precision", "recall", "none marked"]


def section(held: Sequence[Any], every: Sequence[Any]) -> str:
    """The section's body: held-out rows, then all rows."""
    return "\n".join(
        [
            "Each cited source of the citations benchmark above that is a gold paragraph "
            "(HotpotQA supporting paragraph), with the highlights `cite()` shows in it "
            "(replayed from the stored rows: no model call). A highlight marks the HotpotQA "
            "sentence holding its middle character; HotpotQA's supporting-fact sentences "
            "(human labels) are the gold. Precision: marked gold sentences / marked "
            "sentences; recall: marked gold sentences / gold sentences of those paragraphs. "
            "Beside it, on the same paragraphs, two rules with no call: the paragraph's "
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
        ]
    )


def verdict(found: Sequence[Any]) -> str:
    """On all rows: the zero-call rules ahead of each of ``cite()``'s readings on
    precision and recall, and how often a highlight beyond a source's strongest marks a
    gold sentence."""
    found_counts = counts(found)
    said = []
    for mine in (PICKERS[0][0], PICKERS[1][0]):
        for what in ("precision", "recall"):
            ahead = [
                n
                for n, _ in PICKERS[2:]
                if _measure(found_counts[n], what) > _measure(found_counts[mine], what)
            ]
            if ahead:
                said.append(f"'{mine}' on {what}: " + " and ".join(f"'{a}'" for a in ahead))
    every, best = found_counts[PICKERS[0][0]], found_counts[PICKERS[1][0]]
    return (
        "Zero-call rules ahead of `cite()` on all rows: "
        + ("; ".join(said) if said else "none")
        + f". Highlights beyond a source's strongest mark {every.marked - best.marked} "
        f"sentences, {every.hits - best.hits} of them gold."
    )


def _measure(c: Counts, what: str) -> float:
    """Precision or recall of one rule's counts."""
    return c.ratio(c.marked if what == "precision" else c.gold)


def headline_rows(found: Sequence[Any]) -> list[list[str]]:
    """BENCHMARKS.md's rows (all rows): the highlights' precision and recall beside the
    zero-call rules' on the same paragraphs; no target."""
    rows = {r[0]: r for r in table(found)}
    free = [n for n, _ in PICKERS[2:]]
    out = []
    for column, what in ((3, "precision"), (4, "recall")):
        baseline = "; ".join(f"{n} {rows[n][column]}" for n in free)
        name = f"highlight {what} (HotpotQA supporting sentences), all rows (smollm2)"
        out.append([name, rows[PICKERS[0][0]][column], baseline, "–"])
    return out
