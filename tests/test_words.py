"""What end users see is words: no thresholds, nats or raw scores in the rendered answer
(tooltips and JSON keep them), the supporting sentence highlighted rather than the whole
chunk, no source shown as support for a sentence the gate rejects, the verdict carried by
``cite`` and ``with_groundedness``, short reprs, and one definition of the score (the
README's, computed here from the token log-probs, is the code's)."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from camab_rag import AttributionSettings, CitationRule, cite
from camab_rag.attributor import attribute
from camab_rag.citations import citation_pairs
from camab_rag.groundedness import GroundednessFilter
from camab_rag.groundedness.score import STOPWORDS, words
from camab_rag.render.text import WITHHELD
from camab_rag.result import AttributionResult
from camab_rag.sentences import split_sentences

ROOT = Path(__file__).resolve().parent.parent
DOCS = [
    "Lumora is a kitchenware shop in Tartu. All Lumora kettles come with a 2-year warranty. "
    "Teapots have a 1-year warranty against manufacturing defects. Returns are accepted "
    "within 30 days.",
    "The staff picnic is on Friday.",
    "Parking is free for customers.",
]
QUESTION = "How long is the teapot warranty?"
SUPPORTED = "Teapots have a 1-year warranty against manufacturing defects."
ANSWER = f"{SUPPORTED} They were designed by Kristjan Tamm in Narva."
FIGURES = re.compile(r"nats|threshold|score|\d\.\d\d")


@pytest.fixture(scope="module")
def result(smollm2_scorer: Any) -> AttributionResult:
    """One real attribution by chunk, with the anchors (8 calls)."""
    return attribute(
        QUESTION,
        DOCS,
        ANSWER,
        smollm2_scorer,
        budget=8,
        granularity="chunk",
        settings=AttributionSettings(anchors=True),
    )


def visible_html(page: str) -> str:
    """The text a reader sees: no style block, no tags (so no tooltips), entities decoded."""
    page = re.sub(r"<style>.*?</style>", "", page, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_renderers_show_words_not_thresholds_nats_or_scores(result: AttributionResult) -> None:
    cited = cite(result, DOCS).with_groundedness(GroundednessFilter().judge(result))
    page = cited.to_html(full_page=False)
    shown = {
        "terminal": cited.to_terminal(color=False),
        "markdown": cited.to_markdown(),
        "html": visible_html(page),
    }
    for name, text in shown.items():
        assert "Not supported by the sources; 1 sentence is not supported" in text, name
        assert "strong support" in text, name
        assert FIGURES.search(text) is None, (name, FIGURES.search(text))
        # the footer for developers ("auto attribution, 8 model calls") is not shown
        assert "model call" not in text and "attribution," not in text, name
    # the figures stay in the tooltips and the JSON
    assert re.search(r'title="P\(unsupported\) \d\.\d{2}; score [+-]\d\.\d{3}', page)
    assert re.search(r'class="camab-footer" title="[a-z]+ attribution, 8 model calls;', page)
    # a source can be cited below the support bar (it holds the sentence's numbers and names)
    assert "(cited)" not in page
    data = cited.to_dict()
    assert data["n_queries"] == 8 and data["method"] == result.method
    assert 0.0 <= data["groundedness"]["p_unsupported"] <= 1.0
    assert isinstance(data["sources"][0]["score"], float)


def test_the_supporting_sentence_is_highlighted_not_the_whole_chunk(
    result: AttributionResult,
) -> None:
    cited = cite(result, DOCS)
    marked = re.findall(r"<mark class=\"camab-hl[^>]*>(.*?)</mark>", cited.to_html())
    assert marked == [SUPPORTED]
    assert f"**{SUPPORTED}**" in cited.to_markdown()
    assert "Lumora is a kitchenware shop" not in cited.to_terminal(color=False)
    # the JSON keeps the attributed segment (the whole chunk)
    assert cited.to_dict()["sources"][0]["highlights"][0]["text"] == DOCS[0]
    # the frameworks' native citations (LangChain Citation.cited_text, LlamaIndex
    # CitationBlock) quote the supporting sentence too, not the chunk
    assert [pair.cited_text for pair in citation_pairs(result, DOCS)] == [SUPPORTED]


def test_a_sentence_the_gate_rejects_shows_no_source_as_support(
    result: AttributionResult,
) -> None:
    """A filter that rejects every sentence (no score reaches 1, read strictly:
    ``block_on="any"``): no sentence cites, and no source is listed as support (before, the
    list still said "strong support")."""
    strict = GroundednessFilter(threshold=1.0, block_on="any").judge(result)
    assert strict.report is not None and not any(s.supported for s in strict.report.sentences)
    cited = cite(result, DOCS).with_groundedness(strict)
    assert [s.citations for s in cited.sentences] == [[], []]
    assert cited.sources == []
    assert "support)" not in cited.to_terminal(color=False)
    # cite()'s own verdicts follow the default rule (block_on="facts"): under a score no
    # sentence reaches, the copied sentence (no unchecked fact) is only uncertain and keeps
    # its source; the invented one cites nothing
    ruled = cite(result, DOCS, rule=CitationRule(support_threshold=1.0))
    assert ruled.sentences[0].citations != [] and ruled.sentences[1].citations == []
    # the invented sentence of the default verdict cites nothing; every listed source is
    # cited by a sentence the gate accepts
    judged = cite(result, DOCS).with_groundedness(GroundednessFilter().judge(result))
    invented = judged.sentences[1]
    assert invented.supported is False and invented.citations == []
    accepted = {n for s in judged.sentences if s.supported for n in s.citations}
    assert {s.number for s in judged.sources} <= accepted | {
        n for s in judged.sentences for n in s.disputed
    }


def test_cite_carries_the_verdict_of_an_integration_result(result: AttributionResult) -> None:
    verdict = GroundednessFilter().judge(result)
    chained = replace(result, groundedness=verdict)
    cited = cite(chained, DOCS)
    assert cited.groundedness is verdict.report
    assert "Not supported by the sources" in cited.to_terminal(color=False)
    assert cite(result, DOCS).groundedness is None


def test_with_groundedness_takes_what_the_filter_returns(result: AttributionResult) -> None:
    verdict = GroundednessFilter().judge(result)
    cited = cite(result, DOCS).with_groundedness(verdict)
    assert cited.groundedness is verdict.report
    assert cited.sentences[1].supported is False
    failed = AttributionResult(scores=np.zeros(0), status="error", error="scorer down")
    unknown = GroundednessFilter().judge(failed)
    assert unknown.report is None
    shown = cite(result, DOCS).with_groundedness(unknown)
    assert "Support could not be checked" in shown.to_terminal(color=False)
    assert "Support could not be checked" in visible_html(shown.to_html())


def test_reprs_are_one_short_line(result: AttributionResult) -> None:
    cited = cite(result, DOCS).with_groundedness(GroundednessFilter().judge(result))
    chained = replace(result, groundedness=GroundednessFilter().judge(result))
    for text in (repr(result), str(result), repr(cited), repr(chained)):
        assert "\n" not in text and len(text) <= 200, text
    assert repr(result).startswith("AttributionResult('Teapots have a 1-year warranty")
    assert "n_queries=8" in repr(result) and "top={0: +" in repr(result)
    assert repr(cited).endswith("sentences=2 [1, -], sources=1, verdict='unsupported')")
    failed = AttributionResult(scores=np.zeros(0), status="error", error="scorer down")
    assert repr(failed) == "AttributionResult(status='error', error='scorer down')"


def score_definition(readme: str) -> str:
    text = readme.split("<!-- score:definition -->", 1)[1].split("<!-- /score:definition -->")[0]
    return " ".join(text.split())


def test_one_definition_of_the_score_in_every_readme_and_it_is_the_code(
    result: AttributionResult,
) -> None:
    """The same words in every README, and those words, step by step, on the report's
    token log-probs give the report's score: per sentence ``(L(C) - L(empty)) /
    -L(empty)`` summed over its tokens, a token of a content word the context lacks
    counting only when its gain is negative; the least supported sentence's share is the
    answer's."""
    readmes = [
        ROOT / "README.md",
        ROOT / "integrations" / "langchain-camab" / "README.md",
        ROOT / "integrations" / "llama-index-postprocessor-camab" / "README.md",
    ]
    definitions = {score_definition(path.read_text(encoding="utf-8")) for path in readmes}
    assert len(definitions) == 1
    (definition,) = definitions
    assert "(L(C) - L(empty)) / -L(empty)" in definition and "earlier turns" in definition
    report = GroundednessFilter().judge(result).report
    assert report is not None and report.token_support is not None
    support = report.token_support
    context = {w for text in DOCS + list(support.conversation) for w in words(text)}
    text = support.response
    absent_chars = np.zeros(len(text), dtype=bool)
    for match in re.finditer(r"[^\W_]+", text):
        word = match.group(0).lower()
        if word not in STOPWORDS and word not in context:
            absent_chars[match.start() : match.end()] = True
    shares = []
    for start, end in split_sentences(text):
        total_gain, surprisal = 0.0, 0.0
        for s, e, full, empty in zip(support.starts, support.ends, support.full, support.empty):
            visible = s + len(text[s:e]) - len(text[s:e].lstrip())
            if not start <= visible < end:
                continue
            gain = full - empty
            if absent_chars[s:e].any():
                gain = min(gain, 0.0)
            total_gain, surprisal = total_gain + gain, surprisal - empty
        shares.append(total_gain / surprisal)
    assert [s.score for s in report.sentences] == pytest.approx(shares, abs=1e-9)
    assert report.score == pytest.approx(min(shares), abs=1e-9)


def test_the_tooltip_words_the_score_as_the_report_does(result: AttributionResult) -> None:
    """The verdict tooltip said "share of the answer's surprisal", the report "the share
    of its least supported sentence's surprisal": one definition, worded the same."""
    from camab_rag.groundedness.report import GroundednessReport

    phrase = "the share of its least supported sentence's surprisal that the context explains"
    documented = " ".join((GroundednessReport.__doc__ or "").split())
    assert phrase in documented
    page = cite(result, DOCS).with_groundedness(GroundednessFilter().judge(result)).to_html()
    tips = [" ".join(html.unescape(t).split()) for t in re.findall(r'title="([^"]*)"', page)]
    assert any(phrase in tip for tip in tips), tips


def test_a_blocked_answer_renders_the_fallback_not_what_was_blocked(
    result: AttributionResult,
) -> None:
    """Fresh-user review: ``with_groundedness`` of a blocking filter's answer still rendered
    the blocked answer, invented name included; only ``FilteredAnswer.answer`` held the
    fallback."""
    blocked = GroundednessFilter(mode="block").judge(result)
    assert blocked.blocked and "Kristjan" not in blocked.answer
    cited = cite(result, DOCS).with_groundedness(blocked)
    assert cited.answer == blocked.answer and cited.sources == []
    for text in (cited.to_markdown(), cited.to_terminal(color=False), cited.to_html()):
        assert "Kristjan" not in text and "Narva" not in text
        assert " ".join(blocked.answer.split()) in " ".join(html.unescape(text).split())
        assert WITHHELD in text and "Not supported" not in text and "No source" not in text


def test_an_uncertain_answer_says_why_in_words() -> None:
    """Fresh-user review 3: a correct reworded answer with a strong source read "Possibly
    not supported"; the mark now says whether the answer is only worded differently or
    leaves a fact the sources do not state."""
    from types import SimpleNamespace

    from camab_rag.render.text import verdict_text

    def report(
        facts: tuple[str, ...], misread: tuple[str, ...] = (), spans: Any = (), rivals: Any = ()
    ) -> Any:
        one = SimpleNamespace(unchecked_facts=facts, contested=rivals)
        return SimpleNamespace(
            verdict="uncertain",
            sentences=[one],
            unsupported_sentences=[],
            unchecked_facts=facts,
            misread=misread,
            unsupported_spans=list(spans),
        )

    reworded = verdict_text(report(()))
    assert reworded == "Worded differently from the sources: check this answer against them"
    assert (
        verdict_text(report(("9",))) == "Check this answer: the sources do not state \u201c9\u201d"
    )
    # reviews 16-17: words the model found unexplained are named (true of a rewording and
    # of an invention alike); a misread value says so, its "Yes" left out; all are said
    named = verdict_text(report((), spans=[SimpleNamespace(text=" free ")]))
    assert named == "Check this answer: the sources do not say \u201cfree\u201d"
    # review 56: a span's small words at its ends are not quoted; one of them alone is not
    edges = [SimpleNamespace(text="and a single"), SimpleNamespace(text=" the ")]
    assert verdict_text(report((), spans=edges)) == (
        "Check this answer: the sources do not say \u201csingle\u201d"
    )
    misread = verdict_text(report(("Yes", "open"), misread=("Yes", "open")))
    assert misread == "Check this answer: the sources say something else about \u201copen\u201d"
    # review 17: a stale price did not hide an invented clause ("free towels")
    towels = verdict_text(report((), spans=[SimpleNamespace(text="free towels")], rivals=("65",)))
    assert towels == (
        "Check this answer: the sources differ on \u201c65\u201d; "
        "the sources do not say \u201cfree towels\u201d"
    )
    # review 68: a value the sources differ on is not also "something else about" it
    twice = verdict_text(report(("4",), misread=("4",), rivals=("4",)))
    assert twice == "Check this answer: the sources differ on \u201c4\u201d"
    # review 55: a two-sentence answer flagged with no word named; the sentence the
    # verdict doubts most is named (p_unsupported, else the lowest score), cut at 80
    first = SimpleNamespace(text="Bell was born in Edinburgh.", p_unsupported=0.2, score=0.9)
    later = "He moved to Canada " + "and then on " * 8 + "in 1870."
    second = SimpleNamespace(text=later, p_unsupported=0.6, score=0.4)
    two = SimpleNamespace(**{**vars(report(())), "sentences": [first, second]})
    named = verdict_text(two)
    assert named is not None and named.startswith(
        "Check this answer: the sources explain this sentence least: \u201cHe moved to Canada"
    )
    assert named.endswith("\u2026\u201d") and len(named) < 160
    first.p_unsupported = second.p_unsupported = None  # the threshold's verdict: the score
    first.score = 0.1
    assert "least: \u201cBell was born in Edinburgh.\u201d" in str(verdict_text(two))
    # every renderer's notice lines are cleaned: a named sentence carries no escape
    second.score, second.text = 0.0, "He left.\x1b[31m"
    from camab_rag.render.text import notices

    answer = SimpleNamespace(
        groundedness=two, withheld=False, scored_by=None, uninformative=None, sources=[1]
    )
    [(kind, line)] = notices(answer)  # type: ignore[arg-type]
    assert kind == "check" and "\x1b" not in line and "He left.\ufffd[31m" in line
    second.score = None  # a sentence with no figure: nothing to rank, the general words
    assert verdict_text(two) == reworded
    both = verdict_text(report(("59", "Tamm"), misread=("59",)))
    assert both == (
        "Check this answer: the sources do not state \u201cTamm\u201d; "
        "the sources say something else about \u201c59\u201d"
    )
