"""What every renderer shows, in words (notices, sentence notes, highlights), and the
cleaning that makes untrusted text safe."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from camab_rag.groundedness.score import STOPWORDS, words
from camab_rag.groundedness.wordforms import clock_times
from camab_rag.render.support import support_words
from camab_rag.sentences import split_sentences

if TYPE_CHECKING:  # the model imports the renderers
    from camab_rag.render.cited_answer import (
        CitedAnswer,
        CitedSentence,
        Highlight,
        Passage,
        Source,
    )

# controls but tab and line feed, characters that reorder or hide text, lone surrogates
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\ud800-\udfff]"
)
LEGEND_TEXT = "the highlight marks the passage that supports the answer; darker is stronger"
DISPUTED_MARK = "disputed by "  # before a disputing source's number
DISAGREES = "disagrees with the answer"  # a disputing source's passage saying otherwise


def answer_id(answer: CitedAnswer) -> str:
    """An id for one answer's anchors, from its text and sources (unique on a page)."""
    text = "".join([answer.answer, *(source.text for source in answer.sources)])
    return "camab-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def clean(text: str) -> str:
    """``text`` with line endings normalised and unsafe characters replaced by U+FFFD."""
    return _UNSAFE.sub("\ufffd", re.sub("\r\n?|[\u2028\u2029]", "\n", text))


M = TypeVar("M")


def _cut(text: str, marks: Sequence[tuple[int, int, M]]) -> list[tuple[str, M | None]]:
    """``text`` cut into plain (``None``) and marked pieces; overlaps ignored."""
    pieces: list[tuple[str, M | None]] = []
    cursor = 0
    for start, end, mark in sorted(marks, key=lambda m: m[0]):
        start, end = max(start, 0), min(end, len(text))
        if cursor <= start < end:
            pieces += [(text[cursor:start], None), (text[start:end], mark)]
            cursor = end
    return [piece for piece in [*pieces, (text[cursor:], None)] if piece[0]]


def split_highlights(
    answer: CitedAnswer, source: Source
) -> list[tuple[str, Highlight | Passage | None]]:
    """``source``'s text cut into plain pieces (``None``), its shown highlights and the
    passages where it states otherwise (a ``Passage``, with no score; a highlight wins a
    tie)."""
    marks: list[tuple[int, int, Highlight | Passage]] = [
        (h.start, h.end, h) for h in shown_highlights(answer, source)
    ]
    return _cut(source.text, marks + [(p.start, p.end, p) for p in source.disputing])


def unsupported_pieces(sentence: CitedSentence) -> list[tuple[str, bool]]:
    """A sentence's text cut into pieces, flagged when inside its unsupported spans."""
    marks = [(a - sentence.start, b - sentence.start, True) for a, b in sentence.unsupported_spans]
    return [(piece, mark is not None) for piece, mark in _cut(sentence.text, marks)]


def says_otherwise(answer: CitedAnswer) -> bool:
    """Whether a source shows a passage where it disagrees with the answer."""
    return any(source.disputing for source in answer.sources)


def informative_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS}


def supporting_sentence(text: str, sentence: str) -> tuple[int, int] | None:
    """The span of ``text``'s sentence sharing most content words with ``sentence`` (``None``:
    one sentence, or none shares a word)."""
    parts = split_sentences(text)
    wanted = informative_words(sentence)
    if len(parts) < 2 or not wanted:
        return None
    overlap = [len(wanted & set(words(text[a:b]))) for a, b in parts]
    best = max(overlap)
    return parts[overlap.index(best)] if best > 0 else None


def shown_highlights(answer: CitedAnswer, source: Any) -> list[Highlight]:
    """``source``'s highlights, narrowed to their sentences closest to those citing it."""
    citing = [s.text for s in answer.sentences if source.number in s.citations]
    shown: list[Highlight] = []
    for highlight in source.highlights:
        spans = {supporting_sentence(highlight.text, sentence) for sentence in citing}
        chosen = sorted(span for span in spans if span is not None)
        if not chosen:
            shown.append(highlight)
        for a, b in chosen:
            start, text = highlight.start + a, highlight.text[a:b]
            shown.append(replace(highlight, start=start, end=start + b - a, text=text))
    return shown


def has_highlights(answer: CitedAnswer) -> bool:
    return any(shown_highlights(answer, source) for source in answer.sources)


def score_text(score: float) -> str:  # for tooltips
    return f"score {float(score):+.3f}"


def groundedness_report(verdict: Any) -> Any:
    """The report of a ``FilteredAnswer``, or ``verdict`` itself."""
    wrapped = not hasattr(verdict, "sentences") and getattr(verdict, "report", None) is not None
    return verdict.report if wrapped else verdict


def verdict_name(report: Any) -> str | None:
    """The verdict of a report, ``"unknown"`` unjudged, ``None`` none."""
    if report is None:
        return None
    named = getattr(report, "verdict", None)
    if named in ("supported", "uncertain", "unsupported"):
        return str(named)
    grounded = getattr(report, "grounded", None)
    return "unknown" if grounded is None else "supported" if grounded else "unsupported"


_VERDICT_WORDS = {
    "supported": "Supported by the sources",
    "uncertain": "Worded differently from the sources: check this answer against them",
    "unsupported": "Not supported by the sources",
    "unknown": "Support could not be checked",
}


def _quoted(words: Iterable[str]) -> str:
    return ", ".join(f"\u201c{w}\u201d" for w in words)


def _doubts(
    report: Any, rivals: list[str], old: list[str], other: tuple[list[str], list[str]]
) -> list[str]:
    """What an ``uncertain`` answer should be checked for: values taken from an out-of-date
    page (``old``) or from pages about another kind of what is asked (``other``: the words
    and the kinds), values the sources differ on, facts they never state or state otherwise,
    else the words the model found unexplained."""
    facts, misread = (list(getattr(report, k, None) or ()) for k in ("unchecked_facts", "misread"))
    absent = [w for w in facts if w not in misread]
    reply = bool(misread) and not _not_replies(misread)  # a bare "Yes." the sources deny
    misread = _clock_whole(_not_replies(misread), report)
    spans = [w for s in getattr(report, "unsupported_spans", None) or [] if (w := _trimmed(s.text))]
    taken, kinds = other
    taken = [w for w in taken if w not in old]
    aside = old + taken  # said once: "from the page on the South district", not "differ on"
    rivals = [w for w in rivals if w not in aside]
    misread = [w for w in misread if w not in rivals + aside]  # said once: "differ on “4”"
    absent = [w for w in absent if w not in rivals + aside]  # not "out-of-date" and "not said"
    spans = [w for w in spans if w not in rivals + aside + misread]
    doubts = [f"{_quoted(old)} {'is' if len(old) == 1 else 'are'} from an out-of-date page"] * bool(
        old
    )
    pages = " and ".join(f"the {kind}" for kind in kinds)
    doubts += [
        f"{_quoted(taken)} {'is' if len(taken) == 1 else 'are'} from the "
        f"page{'s' if len(kinds) > 1 else ''} on {pages}"
    ] * bool(taken and kinds)
    doubts += [f"the sources differ on {_quoted(rivals)}"] * bool(rivals)
    doubts += [f"the sources do not state {_quoted(absent[:3])}"] * bool(absent)
    doubts += [f"the sources say something else about {_quoted(misread[:3])}"] * bool(misread)
    doubts += ["the sources say the opposite"] * reply
    if spans and not absent and not misread:
        doubts.append(f"the sources do not say {_quoted(dict.fromkeys(spans[:3]))}")
    if not doubts and (least := _least_explained(report)):
        doubts.append(f"the sources explain this sentence least: {_quoted([least])}")
    return doubts


_DECIMAL = re.compile(r"(?<![\d.,])\d+[.,]\d+(?![\d.,]*\d)")


def _clock_whole(found: list[str], report: Any) -> list[str]:
    """``found`` with each clock time or decimal of the answer whose first part it holds
    named whole ("8:30", "1.7", not the "8", "30" or "1", "7" the checks read apart)."""
    said = " ".join(str(getattr(s, "text", "")) for s in getattr(report, "sentences", None) or [])
    wholes = [(c, c.split(":")) for c in clock_times(said)]
    wholes += [(d, re.split(r"[.,]", d)) for d in _DECIMAL.findall(said)]
    wholes = [(shown, parts) for shown, parts in wholes if parts[0] in found]
    out: list[str] = []
    for word in found:
        out += [shown for shown, parts in wholes if parts[0] == word]
        if not any(word in parts for _, parts in wholes):
            out.append(word)
    return list(dict.fromkeys(out))


def _trimmed(span: str) -> str:
    """``span`` without the small words at its ends ("single" of "and a single")."""
    words = span.split()
    while words and words[0].lower().strip(".,;:!?") in STOPWORDS:
        words.pop(0)
    while words and words[-1].lower().strip(".,;:!?") in STOPWORDS:
        words.pop()
    return " ".join(words)


def _least_explained(report: Any, most: int = 80) -> str | None:
    """The claim sentence the verdict doubts most (highest ``p_unsupported``, else lowest
    ``score``), cut to ``most`` characters; ``None`` for an answer of one claim."""
    claims = [
        s
        for s in getattr(report, "sentences", None) or []
        if not getattr(s, "abstention", False) and str(getattr(s, "text", "")).strip()
    ]
    doubted = [getattr(s, "p_unsupported", None) for s in claims]
    if None in doubted:  # the threshold decided: the lowest score is the least explained
        scores = [getattr(s, "score", None) for s in claims]
        doubted = [None if v is None else -float(v) for v in scores]
    ranks = [float(v) for v in doubted if v is not None]
    if len(claims) < 2 or len(ranks) < len(claims):
        return None
    text = " ".join(str(claims[ranks.index(max(ranks))].text).split())
    return text if len(text) <= most else text[: most - 1].rstrip() + "\u2026"


def verdict_text(report: Any) -> str | None:
    """One line in words on a groundedness verdict."""
    name = verdict_name(report)
    if name is None:
        return None
    sentences = getattr(report, "sentences", []) or []
    rivals, old, taken, kinds = (
        list(dict.fromkeys(w for s in sentences for w in getattr(s, key, ()) or ()))
        for key in ("contested", "outdated", "elsewhere", "elsewhere_kinds")
    )
    if getattr(report, "abstained", False):
        line = "The answer declines to answer: no claim to check"
    elif name == "uncertain" and (doubts := _doubts(report, rivals, old, (taken, kinds))):
        line = "Check this answer: " + "; ".join(doubts)
    else:
        line = _VERDICT_WORDS[name]
    count = len(getattr(report, "unsupported_sentences", []) or [])
    if count and count < len(sentences):
        line += f"; {count} sentence{' is' if count == 1 else 's are'} not supported"
    if name == "supported" and any(
        "conversation" in (getattr(s, "support_from", ()) or ()) for s in sentences
    ):
        line += " (partly from the conversation)"
    judge = getattr(report, "scored_by", None)
    if judge is not None and getattr(judge, "proxy", False):
        line += f"; judged by a proxy model ({judge.model}), not the model that wrote it"
    return line


def verdict_detail(report: Any) -> str | None:
    """The figures behind :func:`verdict_text`, for a tooltip: the score, what decided,
    and how many earlier chat messages the context held (end users read the verdict's
    words; the count is for developers)."""
    score, threshold = getattr(report, "score", None), getattr(report, "threshold", None)
    if score is None or threshold is None:
        return getattr(report, "error", None)
    explained = (
        f"score {float(score):+.3f} (the share of its least supported sentence's surprisal "
        "that the context explains)"
    )
    probability = getattr(report, "p_unsupported", None)
    if probability is not None:  # the calibrated verdict decided: the threshold did not
        detail = f"P(unsupported) {float(probability):.2f}; {explained}"
    else:
        detail = f"{explained}, threshold {float(threshold):.3f}"
    if turns := int(getattr(report, "earlier_turns", 0) or 0):
        detail += f"; context includes {turns} earlier chat message{'s' if turns > 1 else ''}"
    return detail


def no_sources_text(answer: Any) -> str | None:
    """One line on why no document is cited (the gate rejected the answer or sentences, or
    none stands out); ``None`` when one is."""
    if answer.sources or answer.uninformative:
        return None
    claims = [s for s in answer.sentences if not s.abstention]
    if answer.sentences and not claims:
        return None
    rejected = [s for s in claims if s.supported is False]
    answer_rejected = verdict_name(answer.groundedness) == "unsupported" and not any(
        s.supported is not False for s in claims
    )
    if answer_rejected or (claims and len(rejected) == len(claims)):
        return "No source is cited: the sources do not support this answer."
    if rejected:
        n, total = len(rejected), len(claims)
        other = "the other" if total - n == 1 else "the others"
        return (
            f"No source is cited: the sources do not support {n} of its {total} sentences, "
            f"and no single document stands out for {other}."
        )
    return "No single document stands out as the source of this answer."


WITHHELD = "The answer was withheld: the sources do not support it"


def notices(answer: CitedAnswer) -> list[tuple[str, str]]:
    """The lines every renderer shows under the answer, each with its kind (``"pass"``,
    ``"check"`` for an uncertain verdict, ``"fail"``, ``"proxy"``, ``"empty"``,
    ``"uncited"``), unsafe characters replaced."""
    found: list[tuple[str, str]] = []
    verdict = verdict_text(answer.groundedness)
    if answer.withheld:  # the fallback is shown: the verdict was on the answer it replaced
        found.append(("fail", WITHHELD))
    elif verdict is not None:
        abstained = getattr(answer.groundedness, "abstained", False)
        name = "supported" if abstained else verdict_name(answer.groundedness)
        found.append(({"supported": "pass", "uncertain": "check"}.get(str(name), "fail"), verdict))
    by = answer.scored_by
    if by is not None and by.proxy:
        proxy = f"Attributed by a proxy model ({by.model}), not by the model that wrote the answer"
        found.append(("proxy", proxy))
    if answer.uninformative:
        found.append(("empty", f"These citations carry no information: {answer.uninformative}"))
    uncited = None if answer.withheld else no_sources_text(answer)
    if uncited is not None:
        found.append(("uncited", uncited))
    return [(kind, clean(line)) for kind, line in found]  # they quote the answer's words


def _not_replies(words: Sequence[str]) -> list[str]:
    """``words`` but a reply's "Yes" or "No" (quoted, it tells a reader nothing)."""
    return [w for w in words if w.lower() not in ("yes", "no")]


def dispute_text(words: Sequence[str]) -> str:
    quoted = _not_replies(words)
    return "disagrees with the answer" + (" on " + _quoted(quoted) if quoted else "")


STALE_NOTE = "an out-of-date page"


def source_note(source: Any) -> str:
    """A source list entry's note: its support in words, any dispute, and whether its page
    marks itself out of date (so its support for an answer is history)."""
    stale = f"; {STALE_NOTE}" if getattr(source, "stale", False) else ""
    if not source.disputes:
        return f"{support_words(source.support)}{stale}"
    dispute = dispute_text(source.disputes)
    shown = f"{support_words(source.support)}; {dispute}" if source.highlights else dispute
    return shown + stale


def sentence_note(sentence: CitedSentence) -> str | None:
    """The note after a sentence: its unsupported words quoted, or that it rests on the
    conversation."""
    if sentence.supported is not False:
        chat = not sentence.citations and "conversation" in sentence.support_from
        return "(from the conversation)" if chat else None
    words = [piece for piece, flagged in unsupported_pieces(sentence) if flagged]
    quoted = _quoted(" ".join(w.split()) for w in words if w.strip())
    return "(not supported by the sources" + (f": {quoted})" if quoted else ")")
