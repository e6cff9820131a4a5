"""The cited answer: the answer's sentences with their citation numbers, the numbered
source list and the rule that decided them; built by :func:`camab_rag.citations.cite`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

import numpy as np

from camab_rag.errors import InputError
from camab_rag.groundedness.verdict import Verdict
from camab_rag.render.html import render_html
from camab_rag.render.markdown import render_markdown
from camab_rag.render.support import CITE_ABOVE, support_words
from camab_rag.render.terminal import render_terminal
from camab_rag.render.text import groundedness_report, verdict_name
from camab_rag.result import FloatArray, ranking, short_text
from camab_rag.scorers.base import ScoredBy

SourceUnit = Literal["document", "segment"]


@dataclass(frozen=True)
class CitationRule:
    """What counts as a citation of a sentence: a ``unit`` among its ``top_k`` (``None``:
    any), ``threshold`` nats per token above the best unit sharing none of its words, at
    least ``relative`` times the best and, with ``new_words``, adding a number or name.
    ``support_threshold``: the gate's bar for the sentence (``None``: the gate's own)."""

    top_k: int | None = 2
    threshold: float = CITE_ABOVE
    relative: float = 0.0
    unit: SourceUnit = "document"
    support_threshold: float | None = None
    new_words: bool = True

    def __post_init__(self) -> None:
        top_k, bar = self.top_k, self.support_threshold
        number = isinstance(bar, (int, float)) and not isinstance(bar, bool) and bar == bar
        for name, wanted, ok in (
            ("top_k", ">= 1 or None", lambda: top_k is None or (top_k >= 1 and top_k is not True)),
            ("threshold", "a finite number", lambda: np.isfinite(self.threshold)),
            ("relative", "in [0, 1]", lambda: 0.0 <= self.relative <= 1.0),
            ("new_words", "True or False", lambda: isinstance(self.new_words, bool)),
            ("unit", "'document' or 'segment'", lambda: self.unit in ("document", "segment")),
            ("support_threshold", "a number or None", lambda: bar is None or number),
        ):
            if not ok():
                raise InputError(f"{name} must be {wanted}, got {getattr(self, name)!r}")

    def select(self, scores: Sequence[float] | FloatArray) -> list[int]:
        """Indices of the cited units, best first."""
        values = np.asarray(scores, dtype=float)
        order = ranking(values)
        bar = max(self.threshold, self.relative * float(values[order[0]])) if order else 0.0
        chosen = [i for i in order if 0 < values[i] >= bar]
        return chosen if self.top_k is None else chosen[: self.top_k]


@dataclass(frozen=True)
class Highlight:
    """A supporting segment inside a source, with its strength for highlighting."""

    segment_index: int
    start: int
    end: int
    text: str
    score: float
    strength: float  # ``score`` on the support scale, in ``[0, 1]``


@dataclass(frozen=True)
class Passage:
    """A segment inside a source that states otherwise a word of the answer."""

    segment_index: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Source:
    """One numbered entry of the source list (a document or a segment)."""

    number: int
    kind: SourceUnit
    doc_index: int
    segment_index: int | None
    title: str | None
    text: str
    score: float
    highlights: list[Highlight] = field(default_factory=list)
    url: str | None = None  # an http(s) link from its ``url``/``source`` metadata
    disputes: list[str] = field(default_factory=list)  # answer words it argues against
    disputing: list[Passage] = field(default_factory=list)  # where it says so, when found
    position: int | None = None  # a segment's place among its document's (0-based)
    stale: bool = False  # its page marks itself out of date ("ARCHIVED PAGE", "Deprecated:")

    @property
    def support(self) -> float:
        """The score its words state: its strongest highlight's (its own without one), so
        that its entry reads as its best passage's bar, never stronger or weaker."""
        return max((h.score for h in self.highlights), default=self.score)

    @property
    def label(self) -> str:
        """Its title or "Document N"; a segment adds its place in that document ("segment
        2": the document's second), so two segments of one document read apart."""
        name = self.title or f"Document {self.doc_index + 1}"
        if self.kind != "segment":
            return name
        return f"{name}, segment {(self.position or 0) + 1}"


@dataclass(frozen=True)
class CitedSentence:
    """One answer sentence, the source numbers it cites (best first) and the gate's
    ``verdict`` on it (``"supported"``, ``"uncertain"``, ``"unsupported"``; ``None``: not
    judged) with its unsupported words' offsets."""

    text: str
    start: int
    end: int
    citations: list[int]
    scores: list[float]  # each cited source's score for this sentence (its best passage's)
    disputed: list[int] = field(default_factory=list)  # sources arguing against a word
    verdict: Verdict | None = None
    abstention: bool = False
    unsupported_spans: list[tuple[int, int]] = field(default_factory=list)
    support_from: tuple[str, ...] = ()

    @property
    def supported(self) -> bool | None:
        """``True`` when the gate finds it supported, ``False`` when it rejects it (it then
        cites nothing); ``None`` when it is ``uncertain`` or not judged."""
        return {"supported": True, "unsupported": False}.get(str(self.verdict))

    def judged(
        self,
        verdict: Verdict | None,
        abstention: bool,
        spans: Sequence[tuple[int, int]],
        support_from: Sequence[str] = (),
        misread: bool = False,
    ) -> CitedSentence:
        """A copy carrying a verdict (an unsupported or ``misread`` one, or an abstention,
        cites nothing: a source stating a value otherwise is no support)."""
        rejected = verdict == "unsupported"
        cites = not rejected and not abstention and not misread
        flagged = rejected and not abstention
        inside = [(a, b) for a, b in spans if flagged and self.start <= a < self.end]
        return replace(
            self,
            citations=list(self.citations) if cites else [],
            scores=list(self.scores) if cites else [],
            verdict=verdict,
            abstention=abstention,
            unsupported_spans=inside,
            support_from=tuple(support_from),
        )


def _plain(value: Any) -> Any:
    """A part of a cited answer as JSON data, each score beside its support in words."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "to_dict"):  # a groundedness report, a ScoredBy
        return value.to_dict()
    if not isinstance(value, (CitationRule, Highlight, Source, CitedSentence, Passage)):
        return value
    data = {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Source):
        data["label"] = value.label
    if isinstance(value, CitedSentence):
        data["support"] = [support_words(score) for score in value.scores]
        data["supported"] = value.supported
    elif isinstance(value, Source):  # a source that only disputes supports nothing
        shown = value.highlights or not value.disputes
        data["support"] = support_words(value.support) if shown else "disputes the answer"
    elif isinstance(value, Highlight):
        data["support"] = support_words(value.score)
    return data


def judged_sentences(sentences: Sequence[CitedSentence], report: Any) -> list[CitedSentence]:
    """``sentences``, each with the verdict of the report sentence overlapping it most."""
    verdicts = list(getattr(report, "sentences", []) or [])
    spans = [(int(s.start), int(s.end)) for s in getattr(report, "unsupported_spans", []) or []]
    judged = []
    for sentence in sentences:
        overlap = [(min(sentence.end, v.end) - max(sentence.start, v.start), v) for v in verdicts]
        size, v = max([(0, None), *overlap], key=lambda pair: pair[0])
        if size > 0:
            support_from = tuple(getattr(v, "support_from", ()) or ())
            abstention = bool(getattr(v, "abstention", 0))
            misread = bool(getattr(v, "misread", ()))
            verdict: Verdict = getattr(v, "verdict", None) or (
                "supported" if v.supported else "unsupported"
            )
            sentence = sentence.judged(verdict, abstention, spans, support_from, misread)
        judged.append(sentence)
    return judged


@dataclass(frozen=True)
class CitedAnswer:
    """An answer with per-sentence citations, its source list, and optionally its
    groundedness verdict, scoring model and why the scores carry no information."""

    answer: str
    question: str
    sentences: list[CitedSentence]
    sources: list[Source]
    rule: CitationRule
    method: str = "auto"
    n_queries: int = 0
    groundedness: Any = None
    scored_by: ScoredBy | None = None
    uninformative: str | None = None
    withheld: bool = False  # blocked: ``answer`` is the fallback shown in its place

    def source(self, number: int) -> Source:
        return {source.number: source for source in self.sources}[number]

    def with_groundedness(self, verdict: Any) -> CitedAnswer:
        """A copy carrying a groundedness report or a filter's ``FilteredAnswer``: rejected
        sentences and abstentions cite nothing; a blocked answer shows its fallback alone."""
        report = groundedness_report(verdict)
        fallback = getattr(verdict, "answer", None)
        if getattr(verdict, "blocked", False) is True and isinstance(fallback, str):
            shown = [CitedSentence(fallback, 0, len(fallback), [], [])]
            blocked = replace(self, answer=fallback, sentences=shown, sources=[], withheld=True)
            return replace(blocked, groundedness=report)

        sentences = judged_sentences(self.sentences, report)
        rejected = any(s.supported is False for s in sentences)
        if verdict_name(report) == "unsupported" and not rejected:  # none says which: none cites
            sentences = [
                s if s.abstention else s.judged("unsupported", False, []) for s in sentences
            ]
        return replace(self, groundedness=report, sentences=sentences).pruned()

    def pruned(self) -> CitedAnswer:
        """A copy listing only the sources a sentence cites or disputes, renumbered."""
        cited = {n for s in self.sentences for n in s.citations}
        disputing = {n for s in self.sentences for n in s.disputed}
        kept = [src for src in self.sources if src.number in cited | disputing]
        renumber = {src.number: k + 1 for k, src in enumerate(kept)}
        sources = [
            replace(
                s,
                number=renumber[s.number],
                highlights=s.highlights * (s.number in cited),
                disputing=s.disputing * (s.number in disputing),
            )
            for s in kept
        ]

        def moved(numbers: list[int]) -> list[int]:
            return [renumber[n] for n in numbers if n in renumber]

        sentences = [
            replace(s, citations=moved(s.citations), disputed=moved(s.disputed))
            for s in self.sentences
        ]
        return replace(self, sources=sources, sentences=sentences)

    def __repr__(self) -> str:
        verdict = verdict_name(self.groundedness)
        cites = ", ".join(f"{'+'.join(str(n) for n in s.citations) or '-'}" for s in self.sentences)
        return (
            f"CitedAnswer({short_text(self.answer)!r}, sentences={len(self.sentences)} "
            f"[{cites}], sources={len(self.sources)}"
            + (f", verdict={verdict!r}" if verdict is not None else "")
            + ")"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON for front ends (everything as data; the front end must escape)."""
        data = {f.name: _plain(getattr(self, f.name)) for f in fields(self)}
        return {"question": self.question, **data}  # the question first, as a reader reads

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON, with ``<``, ``>``, ``&`` and the JavaScript line
        separators ``\\u``-escaped so it can sit in an HTML ``<script>`` block."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=indent, allow_nan=False)
        for raw in "<>&\u2028\u2029":
            text = text.replace(raw, f"\\u{ord(raw):04x}")
        return text

    to_markdown = render_markdown
    to_html = render_html
    to_terminal = render_terminal

    def _repr_html_(self) -> str:
        return self.to_html(full_page=False)

    def __str__(self) -> str:
        return self.to_terminal(color=False)
