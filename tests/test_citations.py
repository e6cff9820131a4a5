"""Citation rule, source list, and the Markdown / terminal / JSON renderers."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from html import unescape as html_unescape
from pathlib import Path

import numpy as np
import pytest
from fakes import KeywordScorer

from camab_rag import attribute
from camab_rag.citations import CitationRule, choose_sources, cite
from camab_rag.errors import InputError, WrongTypeError
from camab_rag.render.markdown import escape_markdown
from camab_rag.render.terminal import render_terminal, use_color
from camab_rag.render.text import answer_id, clean
from camab_rag.result import AttributionResult, StatementAttribution, ranking
from camab_rag.segments import Segment

DOCS = [
    {"title": "Eiffel Tower", "text": "The Eiffel Tower is in Paris. It was completed in 1889."},
    {"title": "Fruit", "text": "Bananas are yellow. Apples can be red."},
    {"title": "Company", "text": "Gustave Eiffel's company designed the tower. It was fast."},
]
SEGMENTS = [
    Segment("The Eiffel Tower is in Paris.", 0, 0, 29),
    Segment("It was completed in 1889.", 0, 30, 55),
    Segment("Bananas are yellow.", 1, 0, 19),
    Segment("Apples can be red.", 1, 20, 38),
    Segment("Gustave Eiffel's company designed the tower.", 2, 0, 44),
    Segment("It was fast.", 2, 45, 57),
]
RESPONSE = "It stands in Paris. Gustave Eiffel's company designed it."


def make_result(**changes: object) -> AttributionResult:
    fields: dict[str, object] = dict(
        scores=np.array([0.8, 0.1, -0.05, 0.0, 0.6, 0.02]),
        segments=SEGMENTS,
        question="Where is the tower and who designed it?",
        response=RESPONSE,
        n_documents=3,
        n_queries=12,
        statements=[
            StatementAttribution(
                "It stands in Paris.", 0, 19, np.array([0.9, 0.05, 0.0, -0.1, 0.1, 0.0])
            ),
            StatementAttribution(
                "Gustave Eiffel's company designed it.",
                20,
                57,
                np.array([0.05, 0.0, 0.0, 0.0, 0.7, 0.3]),
            ),
        ],
    )
    fields.update(changes)
    return AttributionResult(**fields)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- rule
def test_rule_top_k_threshold_and_relative():
    scores = [0.5, 0.1, 0.45, -0.2, 0.3]
    assert CitationRule(top_k=2).select(scores) == [0, 2]
    assert CitationRule(top_k=None).select(scores) == [0, 2, 4, 1]  # 0.1 clears 0.05
    assert CitationRule(top_k=None, threshold=0.11).select(scores) == [0, 2, 4]
    assert CitationRule(top_k=None, threshold=0.11, relative=0.25).select(scores) == [0, 2, 4]
    assert CitationRule(top_k=None, threshold=0.0, relative=0.0).select(scores) == [0, 2, 4, 1]
    assert CitationRule(top_k=None, relative=0.65).select(scores) == [0, 2]
    assert CitationRule(top_k=None, threshold=0.4).select(scores) == [0, 2]
    assert CitationRule(top_k=3).select([-1.0, -2.0]) == []  # nothing raised the answer
    assert CitationRule(top_k=3).select([0.0, 0.0]) == []  # nor here: no evidence, no citation
    assert CitationRule(top_k=3).select([0.0, 0.3]) == [1]
    assert CitationRule().select([]) == []


def test_float_noise_does_not_reorder_tied_scores():
    # 0.1 + 0.2 is 0.30000000000000004: last-bit noise a solver leaves, and BLAS builds
    # differ in it; the tie keeps index order in the ranking, top_k and the citations
    tied = [0.1, 0.3, 0.1 + 0.2, 0.05]
    assert ranking(tied) == [1, 2, 0, 3]
    assert make_result(scores=np.array(tied)).top_k(2) == [1, 2]
    assert CitationRule(top_k=1).select(tied) == [1]
    assert ranking([0.3, 0.3 + 1e-9]) == [1, 0]  # a real gap still counts
    assert ranking([2e9, 2e9 + 1e-4, 1.0]) == [0, 1, 2]  # the tolerance is relative
    assert ranking([]) == []


def test_the_citation_bar_is_absolute_and_tied_to_groundedness():
    """A source is cited on its own support, never because the others are weaker: a best
    source at +0.035 gets no marker for a sentence with no number or name, whatever else
    was retrieved; with a name, the source holding it is cited as long as its support is
    not below the unrelated sources' (issue 48, item 5). The citation bar (0.05, the dev
    choice) is not the word scale's "support" (0.11)."""
    from camab_rag.render.support import (
        CITE_ABOVE,
        CITE_AT,
        SUPPORT_UNIT,
        support_level,
        support_words,
    )

    assert CitationRule().threshold == CITE_ABOVE == 0.05
    assert CITE_AT == SUPPORT_UNIT / 2 == 0.11
    assert CitationRule().select([0.035, 0.01, -0.2]) == []
    assert CitationRule().select([1.2, 0.035]) == [0]
    assert [support_words(s) for s in (1.2, 0.3, 0.08, 0.035)] == [
        "strong support",
        "support",
        "weak support",
        "holds the answer",
    ]
    assert support_level(CITE_AT) == 2 > support_level(CITE_AT - 1e-9)
    weak = make_result(
        scores=np.array([0.02, 0.0, 0.0, 0.0, 0.035, 0.0]),
        statements=[
            StatementAttribution(
                "It stands in Paris.", 0, 19, np.array([0.02, 0.0, 0.0, 0.0, 0.0, 0.0])
            ),
            StatementAttribution(
                "Gustave Eiffel's company designed it.",
                20,
                57,
                np.array([0.0, 0.0, 0.0, 0.0, 0.035, 0.0]),
            ),
        ],
    )
    texts = [doc["text"] for doc in DOCS]
    assert (
        choose_sources("It stands there.", np.array([0.02, 0.0, 0.035]), texts, CitationRule())
        == []
    )
    cited = cite(weak, DOCS)  # "Paris", "Gustave Eiffel": their holders, at weak support
    assert [s.citations for s in cited.sentences] == [[1], [2]]
    assert [cited.source(n).doc_index for n in (1, 2)] == [0, 2]
    # a document's support is its best passage's: both below the unrelated ones, none
    below = replace(weak.statements[0], scores=np.array([-0.02, -0.01, 0.0, 0.0, 0.0, 0.0]))
    cited = cite(replace(weak, statements=[below, weak.statements[1]]), DOCS)
    assert [s.citations for s in cited.sentences] == [[], [1]]  # below the unrelated: none


def test_a_document_is_cited_on_its_best_passage_not_the_sum_of_its_passages():
    """Summed over passages, a long document's small lifts outweighed the one passage
    of a short document that states the answer (HotpotQA dev rows, issue 48)."""
    docs = [
        {"title": "Kerber", "text": "Angelique Kerber is a German tennis player."},
        {"title": "Doubles", "text": "The doubles event was tennis. A. won. B. lost. C. ran."},
    ]
    segments = [
        Segment("Angelique Kerber is a German tennis player.", 0, 0, 43),
        *(
            Segment(t, 1, docs[1]["text"].find(t), docs[1]["text"].find(t) + len(t))
            for t in ("The doubles event was tennis.", "A. won.", "B. lost.", "C. ran.")
        ),
    ]
    scores = np.array([0.18, 0.07, 0.06, 0.06, 0.06])  # doc 1 sums to 0.25
    result = AttributionResult(
        scores=scores,
        segments=segments,
        question="What sport does Kerber play?",
        response="The answer is tennis.",
        n_documents=2,
        n_queries=12,
        statements=[StatementAttribution("The answer is tennis.", 0, 21, scores)],
    )
    cited = cite(result, docs)
    assert [cited.source(n).doc_index for n in cited.sentences[0].citations] == [0]
    assert cited.sentences[0].scores == [pytest.approx(0.18)]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"top_k": 0},
        {"relative": 1.5},
        {"threshold": float("nan")},
        {"unit": "page"},
        {"new_words": 1},
    ],
)
def test_rule_rejects_bad_settings(kwargs):
    with pytest.raises(InputError):
        CitationRule(**kwargs)


# ----------------------------------------------------------------------------- cite
def test_document_citations_per_sentence_and_numbered_sources():
    cited = cite(make_result(), DOCS)
    # sentence 1: doc 0 (its best passage, 0.9) cites; doc 2 (0.1) is under the bar
    # sentence 2: doc 2 cites, doc 0 is under the bar
    assert [s.citations for s in cited.sentences] == [[1], [2]]
    assert [(s.number, s.doc_index, s.title) for s in cited.sources] == [
        (1, 0, "Eiffel Tower"),
        (2, 2, "Company"),
    ]
    assert cited.sentences[0].scores == pytest.approx([0.9])  # not 0.95, the passages' sum
    first = cited.sources[0]
    assert first.text == DOCS[0]["text"]
    assert first.score == pytest.approx(0.9)
    # highlights: segments with at least weak support (0.055) for the sentences citing the
    # source, strength on the absolute scale (1 from strong support, 0.44, up); segment 1
    # lifts the whole answer (0.1) but not sentence 1, the one citing doc 0 (0.05)
    assert [(h.segment_index, h.strength) for h in first.highlights] == [(0, pytest.approx(1.0))]
    assert cited.sources[1].highlights[0].strength == pytest.approx(1.0)  # 0.7 >= 0.44
    assert first.text[first.highlights[0].start : first.highlights[0].end] == SEGMENTS[0].text
    # one highlight a citing sentence: segment 5 lifts sentence 2 (0.3), but less than 4
    assert [h.segment_index for h in cited.sources[1].highlights] == [4]


def test_a_source_shows_the_strongest_segment_of_each_sentence_citing_it():
    first, second = make_result().statements
    first = replace(first, scores=np.array([0.9, 0.1, 0.0, -0.1, 0.0, 0.2]))
    rule = CitationRule(top_k=2, threshold=0.0, relative=0.0, new_words=False)
    cited = cite(make_result(statements=[first, second]), DOCS, rule=rule)
    assert [s.citations for s in cited.sentences] == [[1, 2], [2, 1]]
    shown = cited.source(2).highlights  # doc 2: segment 5 for sentence 1, 4 for sentence 2
    assert [(h.segment_index, h.score) for h in shown] == [(4, 0.7), (5, 0.3)]
    # doc 0: segment 1 lifts sentence 1 (0.1) under half its best (0.9): not shown
    assert [h.segment_index for h in cited.source(1).highlights] == [0]


def test_a_sentence_stating_two_facts_of_a_source_highlights_both():
    # near-ties: segment 5 at least half as strong as 4 for the sentence is shown with it,
    # where no segment holds a name or number of the sentence
    first, second = make_result().statements
    second = replace(second, text="The company designed it quickly.")
    for fifth, shown in ((0.35, [4, 5]), (0.34, [4])):
        scores = np.array([0.05, 0.0, 0.0, 0.0, 0.7, fifth])
        cited = cite(make_result(statements=[first, replace(second, scores=scores)]), DOCS)
        assert [h.segment_index for h in cited.source(2).highlights] == shown, fifth
    # where one holds them ("Gustave Eiffel's"), it alone is shown, however strong the rest
    named = replace(second, text="Gustave Eiffel's company designed it.", scores=scores)
    cited = cite(make_result(statements=[first, replace(named, scores=scores[::-1])]), DOCS)
    assert [h.segment_index for h in cited.source(2).highlights] == [4]


def test_a_source_highlights_the_passage_holding_the_sentences_value():
    # the review's "It opens at 9:00." under a shop page: the model's strongest segment
    # there was "It is closed on Sundays."; the passage stating 9:00 is the support
    text = "The shop is open Monday to Saturday from 9:00 to 18:00. It is closed on Sundays."
    response = "It opens at 9:00. It closes at 18:00 on Saturdays."
    result, docs = _two_sentences(text, response, 17, [0.01, 0.5, 0.0], [0.02, 0.4, 0.0])
    cited = cite(result, docs, rule=CitationRule(threshold=0.0, relative=0.0, new_words=False))
    assert [s.citations for s in cited.sentences] == [[1], [1]]
    (shown,) = cited.source(1).highlights
    assert shown.text.startswith("The shop is open Monday to Saturday")
    # the model's support is under the weakest bar: shown as "holds the answer"
    shown_text = " ".join(cited.to_terminal().split())
    assert "holds the answer The shop is open" in shown_text
    assert "no bar: the passage holds the answer" in shown_text  # the legend says so
    # a sentence's first word is no name: "Use" does not pick the passage opening "Use"
    text = "Use --host to connect to a remote server. The --ttl option sets an expiry."
    response = "Use the --ttl flag for an expiry. It is in seconds."
    result, docs = _two_sentences(text, response, 33, [0.0, 0.5, 0.0], [0.0, 0.4, 0.0])
    cited = cite(result, docs, rule=CitationRule(threshold=0.0, relative=0.0, new_words=False))
    assert [h.text for h in cited.source(1).highlights] == ["The --ttl option sets an expiry."]


def _two_sentences(
    text: str, response: str, cut: int, first: list[float], second: list[float]
) -> tuple[AttributionResult, list[dict[str, str]]]:
    """A two-sentence answer (split at ``cut``), each sentence with its scores, over the
    sentences of ``text`` (document 0) and one unrelated document; and the documents."""
    docs = [{"title": "Source", "text": text}, {"title": "Other", "text": "The shop sells hats."}]
    parts = re.split(r"(?<=\.) ", text)
    segments = [Segment(t, 0, text.index(t), text.index(t) + len(t)) for t in parts]
    segments.append(Segment(docs[1]["text"], 1, 0, len(docs[1]["text"])))
    result = AttributionResult(
        scores=np.maximum(first, second),
        segments=segments,
        question="When and how?",
        response=response,
        n_documents=2,
        n_queries=8,
        statements=[
            StatementAttribution(response[:cut], 0, cut, np.array(first)),
            StatementAttribution(response[cut + 1 :], cut + 1, len(response), np.array(second)),
        ],
    )
    return result, docs


def test_a_segment_stating_otherwise_another_sentence_still_supports_its_own():
    text = "Returns are accepted within 45 days. Refunds take 7 days."
    response = "You can return items within 45 days. Your refund takes 7 days."
    result, docs = _two_sentences(text, response, 36, [0.6, 0.1, 0.0], [0.1, 0.6, 0.0])
    cited = cite(result, docs)
    assert [s.citations for s in cited.sentences] == [[1], [1]]
    # "45 days" and "7 days" state otherwise each other's sentence, but each supports its own
    assert [h.segment_index for h in cited.source(1).highlights] == [0, 1]


def test_sources_are_numbered_in_order_of_first_citation():
    rule = CitationRule(top_k=2, threshold=0.0, relative=0.0, new_words=False)
    cited = cite(make_result(), DOCS, rule=rule)
    assert [s.citations for s in cited.sentences] == [[1, 2], [2, 1]]
    assert [s.doc_index for s in cited.sources] == [0, 2]


def test_segment_citations():
    cited = cite(make_result(), DOCS, rule=CitationRule(unit="segment", top_k=1))
    assert [s.citations for s in cited.sentences] == [[1], [2]]
    assert [(s.kind, s.segment_index, s.text) for s in cited.sources] == [
        ("segment", 0, SEGMENTS[0].text),
        ("segment", 4, SEGMENTS[4].text),
    ]
    assert cited.sources[1].highlights[0].start == 0
    assert cited.sources[1].highlights[0].end == len(SEGMENTS[4].text)


def test_a_segment_is_labelled_by_its_place_in_its_document():
    """Segment 3 of the context is the second sentence of the second document; without
    the documents' titles it reads "Document 2, segment 2", with them the title's."""
    scores = np.array([0.0, 0.0, 0.1, 0.9, 0.0, 0.0])
    answer = "Apples can be red."
    one = [StatementAttribution(answer, 0, len(answer), scores)]
    result = make_result(scores=scores, statements=one, response=answer)
    rule = CitationRule(unit="segment", top_k=1)
    plain = cite(result, rule=rule).sources[0]
    assert (plain.segment_index, plain.position, plain.label) == (3, 1, "Document 2, segment 2")
    titled = cite(result, DOCS, rule=rule)
    assert titled.sources[0].label == "Fruit, segment 2"
    assert titled.to_dict()["sources"][0]["label"] == "Fruit, segment 2"


def test_without_documents_sources_show_their_segments():
    cited = cite(make_result())
    assert cited.sources[0].title is None
    assert cited.sources[0].label == "Document 1"
    assert cited.sources[0].text == "The Eiffel Tower is in Paris. It was completed in 1889."


def test_without_statements_the_whole_answer_is_one_sentence():
    cited = cite(make_result(statements=[]), DOCS)
    assert len(cited.sentences) == 1
    assert cited.sentences[0].text == RESPONSE
    assert cited.sentences[0].citations == [1, 2]  # docs 0 (0.9) and 2 (0.62)


def test_an_answer_no_document_supports_says_so_in_every_renderer():
    """Second fresh-user review: with nothing cited the renderers printed the question
    and answer only, so "no source supports this" looked like "attribution did not run"."""
    cited = cite(make_result(scores=-np.abs(make_result().scores), statements=[]), DOCS)
    assert cited.sources == []
    line = "No single document stands out as the source of this answer."
    for text in (cited.to_markdown(), cited.to_terminal(color=False), cited.to_html()):
        assert line in " ".join(text.split())
    assert line not in cite(make_result(), DOCS).to_markdown()


def test_cite_refuses_mismatched_documents_and_failed_results():
    with pytest.raises(
        InputError,
        match=r"Document 1 \(documents\[0\]\) does not hold .* segment 0, counted from 0",
    ):
        cite(make_result(), [DOCS[1], DOCS[0], DOCS[2]])
    with pytest.raises(InputError, match="3 documents, 2 were given"):
        cite(make_result(), DOCS[:2])
    attributed = attribute("Where?", DOCS, "Paris is big.", KeywordScorer(), budget=8)
    with pytest.raises(InputError, match="3 documents, 4 were given"):
        cite(attributed, [*DOCS, "An extra document."])
    with pytest.raises(InputError, match="failed"):
        cite(AttributionResult.failed("scorer is down"))
    for wrong in (None, "x"):  # review 16: it was an AttributeError on .status
        with pytest.raises(WrongTypeError, match="cite\\(\\) needs an AttributionResult"):
            cite(wrong)  # type: ignore[arg-type]


@pytest.mark.parametrize("granularity", ["sentence", "chunk"])
def test_cite_takes_the_documents_as_the_application_holds_them(granularity):
    """Attributed on decorated texts (as a LlamaIndex prompt shows a node: its metadata
    lines, then its text), cited from the plain documents with their titles."""
    plain = [
        {"text": "The Eiffel Tower is in Paris. It opened in 1889.", "title": "Tower"},
        {"text": "Bananas are yellow.", "title": "Fruit"},
    ]
    decorated = [f"title: {d['title']}\n\n{d['text']}" for d in plain]
    result = attribute(
        "Where?",
        decorated,
        "It is in Paris.",
        KeywordScorer(),
        budget=8,
        granularity=granularity,
    )
    cited = cite(result, plain)
    source = cited.source(1)  # the best-supported document is cited first
    assert source.title == "Tower" and source.text == plain[0]["text"]
    for highlight in source.highlights:
        assert plain[0]["text"][highlight.start : highlight.end] == highlight.text
    assert any("Paris" in h.text for h in source.highlights)


@pytest.mark.parametrize("granularity", ["sentence", "chunk"])
def test_cite_refuses_a_document_edited_since_it_was_attributed(granularity):
    """Fresh-user review (session 60): a changed sentence was shown nowhere, silently,
    while reordered documents raised."""
    texts = ["The tower opened in 1889. It is 330 m tall. It is in Paris.", "Bananas are yellow."]
    result = attribute(
        "How tall?", texts, "It is 330 m tall.", KeywordScorer(), budget=8, granularity=granularity
    )
    edited = [texts[0].replace("330", "300"), texts[1]]
    with pytest.raises(
        InputError, match=r"Document 1 \(documents\[0\]\) does not hold .* unchanged"
    ):
        cite(result, edited)
    assert cite(result, texts).sources[0].doc_index == 0


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace(" It is 330 m tall.", ""),  # a sentence deleted between two
        lambda t: t.replace("It is 330 m tall.", "330 m tall."),  # words cut from its start
        lambda t: t.replace("It is in Paris.", "It is in Lyon."),  # the last one changed
    ],
)
def test_cite_refuses_deleted_or_cut_text(edit):
    """Second review (session 61): a deleted sentence and a cut one passed as decoration."""
    texts = ["The tower opened in 1889. It is 330 m tall. It is in Paris.", "Bananas are yellow."]
    result = attribute("How tall?", texts, "It is 330 m tall.", KeywordScorer(), budget=8)
    with pytest.raises(InputError, match=r"Document 1 \(documents\[0\]\) does not hold"):
        cite(result, [edit(texts[0]), texts[1]])


@pytest.mark.parametrize("granularity", ["sentence", "chunk"])
def test_cite_places_segments_of_a_reflowed_document(granularity):
    """Second review (session 61): a prompt that re-flows line breaks (text from a PDF)
    lost the highlights, or put one on the wrong sentence."""
    held = ["The tower opened\nin 1889. Tickets  cost 12 euros\nfor adults. It is in Paris.", "Hi."]
    flowed = [" ".join(text.split()) for text in held]
    answer = "Tickets cost 12 euros."
    result = attribute("Price?", flowed, answer, KeywordScorer(), budget=8, granularity=granularity)
    source = cite(result, held).sources[0]
    assert source.highlights, "no highlight on the re-flowed document"
    for highlight in source.highlights:
        assert held[0][highlight.start : highlight.end] == highlight.text
    assert any("12 euros" in h.text for h in source.highlights)


def test_the_error_names_the_edited_sentence_not_a_title_line():
    plain = ["Tickets cost 12 euros. Children enter free."]
    decorated = [f"title: Visiting\n\n{plain[0]}"]
    result = attribute("Price?", decorated, "Tickets cost 12 euros.", KeywordScorer(), budget=8)
    with pytest.raises(
        InputError, match=r"Document 1 \(documents\[0\]\) does not hold 'Tickets cost 12 euros\.'"
    ):
        cite(result, [plain[0].replace("12", "14")])


def test_cite_places_a_sentence_that_carries_a_metadata_prefix():
    """A prompt's decoration can join a document's first sentence ("Content: ..."): that
    segment is placed on the sentence, and the metadata line alone is shown nowhere."""
    plain = ["Bananas are yellow. They grow in bunches.", "The Eiffel Tower is in Paris."]
    decorated = [f"Source: farm.txt\nContent: {plain[0]}", plain[1]]
    result = attribute(
        "What colour are bananas?", decorated, "Bananas are yellow.", KeywordScorer(), budget=8
    )
    assert result.segments[1].text == "Content: Bananas are yellow."
    cited = cite(result, plain)
    source = next(s for s in cited.sources if s.doc_index == 0)
    assert [h.text for h in source.highlights] == ["Bananas are yellow."]
    assert source.highlights[0].start == 0


def test_cite_a_real_attribution_run():
    context = [d["text"] for d in DOCS]
    result = attribute("Where and who?", context, RESPONSE, KeywordScorer(), budget=40)
    cited = cite(result, context)
    assert [s.text for s in cited.sentences] == [
        "It stands in Paris.",
        "Gustave Eiffel's company designed it.",
    ]
    labels = {n: cited.source(n).doc_index for s in cited.sentences for n in s.citations}
    assert labels[cited.sentences[0].citations[0]] == 0
    assert labels[cited.sentences[1].citations[0]] == 2
    assert 1 not in labels.values()  # the fruit document is never cited


# ----------------------------------------------------------------------------- JSON
def test_json_is_plain_data_and_html_safe():
    docs = [dict(d) for d in DOCS]
    docs[0]["title"] = "</script><script>alert(1)</script>"
    text = cite(make_result(), docs).to_json()
    assert "<" not in text and ">" not in text
    data = json.loads(text)
    assert data["sources"][0]["title"] == "</script><script>alert(1)</script>"
    assert data["sentences"][0]["citations"] == [1]
    assert data["rule"] == {
        "top_k": 2,
        "threshold": 0.05,
        "relative": 0.0,
        "unit": "document",
        "support_threshold": None,
        "new_words": True,
    }
    assert set(data["sources"][0]) >= {"number", "doc_index", "text", "score", "highlights"}
    # words for the reader, raw numbers for the front end
    assert data["sources"][0]["support"] == "strong support" and data["sources"][0]["url"] is None
    assert data["sentences"][1]["support"] == ["strong support"]
    assert data["sources"][1]["highlights"][0]["support"] == "strong support"
    first, second = make_result().statements
    weaker = replace(second, scores=np.array([0.05, 0.0, 0.0, 0.0, 0.3, 0.0]))
    data = json.loads(cite(make_result(statements=[first, weaker]), DOCS).to_json())
    assert data["sources"][1]["highlights"][0]["support"] == "support"  # 0.3: under 0.44


# ----------------------------------------------------------------------------- Markdown
def test_markdown_escapes_every_special_character():
    hostile = "[click](javascript:alert(1)) **bold** <img src=x onerror=alert(1)> `code` # h"
    escaped = escape_markdown(hostile)
    assert re.search(r"(?<!\\)[\[\]*<>`]", escaped) is None
    assert escaped.replace("\\", "") == hostile
    assert escape_markdown("# Title\n- item\n2. step\n+ x") == (
        "\\# Title\n\\- item\n2\\. step\n\\+ x"
    )


@pytest.mark.parametrize(
    "text",
    [
        "Is the Lighthouse open? Yes, its panels, lamps and lenses date from 1889.",
        "Costs: 3.5 m (about 12 ft); see p. 4 - or ask!",
        "# Not a heading\n1. not a list\n> not a quote",
        "a_b*c* [x](y) <i>z</i> &amp; `q` | ~~s~~ $x$ \\ end",
    ],
)
def test_markdown_escapes_only_what_would_change_the_rendering(text):
    markdown_it = pytest.importorskip("markdown_it")
    escaped = escape_markdown(text)
    for harmless in "?,;:!()'/":  # plain prose reads as written: no "\?" or "\,"
        assert "\\" + harmless not in escaped
    html = markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough")
    rendered = html.render(escaped)
    inner = re.sub(r"</?p>|\n$", "", rendered).replace("<br />", "")
    assert "<" not in re.sub(r"&lt;", "", inner.replace("\n", " "))  # no tags made
    assert html_unescape(inner).replace("\n", " ") == text.replace("\n", " ")


def test_markdown_output_renders_to_inert_html():
    markdown_it = pytest.importorskip("markdown_it")
    docs = [dict(d) for d in DOCS]
    docs[0]["title"] = "[x](javascript:alert(1))"
    docs[0]["text"] = "The Eiffel Tower is in Paris. <script>alert(1)</script> in 1889."
    segments = [
        Segment("The Eiffel Tower is in Paris.", 0, 0, 29),
        Segment("<script>alert(1)</script> in 1889.", 0, 30, 64),
        *SEGMENTS[2:],
    ]
    result = make_result(segments=segments, response="It is in Paris <b>onerror</b>.")
    md = cite(result, docs).to_markdown()
    html = markdown_it.MarkdownIt("commonmark").render(md)
    assert "<script" not in html and "<b>" not in html
    # the only links are the markers, to their entries in the source list
    page = answer_id(cite(result, docs))  # one answer's anchors: never another answer's
    assert re.findall(r'href="([^"]*)"', html) == [f"#{page}-src-1", f"#{page}-src-2"]
    assert f'<a id="{page}-src-1">' in md
    assert "javascript" not in html.replace("[x](javascript:alert(1))", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert ">[1]</a>" in html  # the marker shows literally, as a link
    assert "**The Eiffel Tower is in Paris.**" in md  # strong support is bold


# ----------------------------------------------------------------------------- terminal
def test_terminal_plain_and_coloured():
    cited = cite(make_result(), DOCS)
    plain = cited.to_terminal(color=False)
    assert "\x1b" not in plain
    assert "It stands in Paris.[1] Gustave Eiffel's company designed it.[2]" in plain
    assert "[1] Eiffel Tower (strong support)" in plain
    assert "[########] strong support The Eiffel Tower is in Paris." in plain
    assert "+0.8" not in plain  # words for the reader; numbers are in the JSON
    first, second = make_result().statements
    both = replace(second, scores=np.array([0.05, 0.0, 0.0, 0.0, 0.3, 0.6]))
    both = replace(both, text="The company designed it.")  # no name: the model's two best
    shown = cite(make_result(statements=[first, both]), DOCS).to_terminal(color=False)
    # in the source's order, as Markdown and HTML show them, not by strength (0.3, 0.6)
    assert shown.index("] support        Gustave Eiffel's") < shown.index("] strong support It was")
    coloured = cited.to_terminal(color=True)
    assert "\x1b[1m\x1b[36m[1]\x1b[0m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured).count("The Eiffel Tower is in Paris.") == 1


def test_terminal_neutralises_escape_sequences_from_documents():
    docs = [dict(d) for d in DOCS]
    docs[0]["title"] = "evil\x1b]0;pwned\x07\x1b[2J title\u202eexe.txt"
    text = render_terminal(cite(make_result(), docs), color=True)
    assert "\x1b]0;" not in text and "\x1b[2J" not in text and "\u202e" not in text
    assert "evil\ufffd]0;pwned\ufffd\ufffd[2J title\ufffdexe.txt" in text
    assert clean("a\r\nb\rc\u2028d") == "a\nb\nc\nd"


def test_use_color_follows_tty_and_no_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color(Tty()) is True
    assert use_color(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(Tty()) is False
    cited = cite(make_result(), DOCS)
    assert "\x1b" not in cited.to_terminal(stream=Tty())
    monkeypatch.delenv("NO_COLOR")
    assert "\x1b" in cited.to_terminal(stream=Tty())


# ----------------------------------------------------------------------------- plots
def test_attribution_bar_chart_marks_gold_and_cited():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.colors import to_hex
    from matplotlib.patches import Rectangle

    from camab_rag.plots import plot_attribution

    result = make_result()
    ax = plot_attribution(result, gold=[0, 4], cited=[0], top=4)
    bars = [patch for patch in ax.patches if isinstance(patch, Rectangle)]
    assert len(bars) == len(ax.patches) == 4
    assert [round(b.get_width(), 3) for b in bars] == [0.8, 0.6, 0.1, 0.02]
    assert [to_hex(b.get_facecolor()) for b in bars[:3]] == ["#e0a800", "#e0a800", "#4c78a8"]
    assert bars[0].get_linewidth() == 2.0 and bars[1].get_linewidth() != 2.0
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("★ 0: The Eiffel Tower")

    import matplotlib.pyplot as plt

    plt.close("all")


def test_citation_pairs_name_the_segment_behind_each_sentence():
    from camab_rag.citations import citation_pairs

    context = [d["text"] for d in DOCS]
    result = attribute("Where and who?", context, RESPONSE, KeywordScorer(), budget=40)
    pairs = citation_pairs(result, context)
    cited = cite(result, context)
    assert [(p.sentence.text, p.source.number) for p in pairs] == [
        (s.text, n) for s in cited.sentences for n in s.citations
    ]
    for pair in pairs:
        assert pair.cited_text in context[pair.source.doc_index]
    assert any("Paris" in p.cited_text for p in pairs if "Paris" in p.sentence.text)


def test_renderers_do_not_import_the_citation_logic() -> None:
    """citations -> render, never back: the renderers draw the cited-answer model only."""
    import ast

    import camab_rag.render

    folder = Path(camab_rag.render.__file__).parent
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.module != "camab_rag.citations", path.name


def test_sources_link_to_their_http_url_escaped():
    """A source's url/source metadata (the keys both integrations read) becomes a link
    when it is an http(s) URL, escaped in every format; anything else is not linked."""
    markdown_it = pytest.importorskip("markdown_it")
    from camab_rag.citations import SOURCE_KEYS, source_link

    assert SOURCE_KEYS[:2] == ("url", "source")
    url = "https://example.org/tower?a=1&b=%22<x>'"
    docs = [dict(d) for d in DOCS]
    docs[0]["url"] = url
    docs[2]["source"] = "javascript:alert(1)"
    cited = cite(make_result(), docs)
    assert cited.source(1).url == url and cited.source(2).url is None
    for bad in ("javascript:alert(1)", "https://", "ftp://x.org/a", "https://x.org/a b", 7):
        assert source_link({"url": bad}) is None
    assert source_link({"file_path": "/tmp/a.txt", "source": "http://x.org/"}) == "http://x.org/"
    html = cited.to_html()
    assert (
        '<a href="https://example.org/tower?a=1&amp;b=%22&lt;x&gt;&#x27;" '
        'rel="noopener noreferrer nofollow">Eiffel Tower</a>'
    ) in html
    assert "javascript:" not in html
    # Markdown: the marker and the title link to the URL, percent-encoded where it could
    # end the destination; the other marker to its entry in the list
    rendered = markdown_it.MarkdownIt("commonmark").render(cited.to_markdown())
    hrefs = re.findall(r'href="([^"]*)"', rendered)
    encoded = "https://example.org/tower?a=1&amp;b=%22%3Cx%3E'"
    assert hrefs == [encoded, f"#{answer_id(cited)}-src-2", encoded]
    plain = cited.to_terminal(color=False)
    assert url in plain.replace("\n", "")


def test_two_answers_in_one_markdown_page_link_to_their_own_sources() -> None:
    """`camab attribute --format markdown` writes several records on one page: a marker
    of the second answer used to jump to the first answer's source."""
    first = cite(make_result(), DOCS)
    second = cite(make_result(response="The tower is in Paris."), DOCS)
    page = first.to_markdown() + "\n" + second.to_markdown()
    assert answer_id(first) != answer_id(second)
    for cited in (first, second):
        assert page.count(f'<a id="{answer_id(cited)}-src-1">') == 1


def _verdict(verdict: str, sentences: list[tuple[int, int, bool]]) -> object:
    """A report as the filter gives it (pure logic: the fields the renderers read)."""
    from types import SimpleNamespace

    judged = [
        SimpleNamespace(start=a, end=b, supported=ok, abstention=False, support_from=())
        for a, b, ok in sentences
    ]
    return SimpleNamespace(
        verdict=verdict,
        grounded=verdict != "unsupported",
        sentences=judged,
        unsupported_spans=[],
        unsupported_sentences=[s for s in judged if not s.supported],
        score=0.3,
        threshold=0.5,
        p_unsupported=0.8 if verdict == "unsupported" else 0.1,
    )


def test_an_unsupported_answer_shows_no_source_as_support_whichever_sentence_failed():
    """Issue 48: "an answer marked not grounded still lists sources as support". The
    answer's figures are its sentences' least (a low score in one, low coverage in the
    other), so the answer can be unsupported while no sentence verdict is; a surrogate
    report has no sentence verdicts at all. Under "Not supported" nothing is support."""
    cited = cite(make_result(), DOCS)
    assert [s.citations for s in cited.sentences] == [[1], [2]]
    for report in (
        _verdict("unsupported", [(0, 19, True), (20, 57, True)]),
        _verdict("unsupported", []),
    ):
        judged = cited.with_groundedness(report)
        assert [s.citations for s in judged.sentences] == [[], []]
        assert [s.supported for s in judged.sentences] == [False, False]
        assert judged.sources == []
        shown = judged.to_terminal(color=False)
        assert "Not supported by the sources" in shown and "support)" not in shown
    # a sentence verdict that names the failing sentence keeps the other's source
    named = cited.with_groundedness(_verdict("unsupported", [(0, 19, True), (20, 57, False)]))
    assert [s.citations for s in named.sentences] == [[1], []]
    # a supported answer keeps both
    kept = cited.with_groundedness(_verdict("supported", [(0, 19, True), (20, 57, True)]))
    assert [s.citations for s in kept.sentences] == [[1], [2]]


def test_an_answer_the_gate_rejects_says_the_sources_do_not_support_it() -> None:
    """Fresh-user review 3: a sentence the gate judged unsupported cites nothing, and the
    renderers then said "No single document stands out", which reads as a tie between
    sources. They say what happened: the sources do not support it."""
    from types import SimpleNamespace

    cited = cite(make_result(), DOCS)
    rejected = cited.with_groundedness(_verdict("unsupported", [(0, 19, False), (20, 57, False)]))
    blocked = cited.with_groundedness(
        SimpleNamespace(
            blocked=True, answer="I cannot answer that.", report=_verdict("unsupported", [])
        )
    )
    half = cited.with_groundedness(_verdict("unsupported", [(0, 19, True), (20, 57, False)]))
    half = replace(half, sentences=[replace(s, citations=[], scores=[]) for s in half.sentences])
    half = half.pruned()
    partly = "the sources do not support 1 of its 2 sentences, and no single document stands "
    for judged, line in (
        (rejected, "No source is cited: the sources do not support this answer."),
        (blocked, "The answer was withheld: the sources do not support it"),
        (half, f"No source is cited: {partly}out for the other."),
    ):
        assert judged.sources == []
        for text in (judged.to_markdown(), judged.to_terminal(color=False), judged.to_html()):
            flat = " ".join(text.split())
            assert line in flat
            assert flat.count("stands out") == line.count("stands out")
    # scores that tie (no verdict): still "no single document stands out"
    tied = cite(make_result(scores=-np.abs(make_result().scores), statements=[]), DOCS)
    assert "No single document stands out as the source of this answer." in tied.to_markdown()


def test_the_legend_shows_only_with_highlights_and_every_score_rounds_alike() -> None:
    """Fresh-user review 11: the terminal printed its bar legend under a source list with
    no bar (a source that only disputes), and an HTML highlight's tooltip read
    "score +0.8000" where its source's heading read "score +0.800"."""
    from camab_rag.render.terminal import BAR_LEGEND
    from camab_rag.render.text import LEGEND_TEXT

    legends = (f"bar: {BAR_LEGEND}", "*Bold: the passage that supports", LEGEND_TEXT)
    cited = cite(make_result(), DOCS)
    shown = (cited.to_terminal(color=False), cited.to_markdown(), cited.to_html())
    assert all(legend in text for legend, text in zip(legends, shown))
    only_disputes = replace(
        cited,
        sentences=[
            replace(s, citations=[], scores=[], disputed=[1] if i == 0 else [])
            for i, s in enumerate(cited.sentences)
        ],
        sources=[replace(cited.sources[0], disputes=["Paris"]), *cited.sources[1:]],
    ).pruned()
    assert [s.number for s in only_disputes.sources] == [1]
    assert only_disputes.sources[0].highlights == []
    plain = only_disputes.to_terminal(color=False)
    assert "disagrees with the answer on" in plain and "Sources" in plain
    shown = (plain, only_disputes.to_markdown(), only_disputes.to_html())
    for legend, text in zip(legends, shown):
        assert legend not in text
    decimals = re.findall(r"score [+-]\d+\.(\d+)", cited.to_html())
    assert len(decimals) >= 4 and {len(d) for d in decimals} == {3}
    # the head's tooltip says whose score it is (to_dict()'s "score" is the whole source's)
    assert "score +0.900 nats per answer token (its strongest passage)" in cited.to_html()
    assert "(the whole source)" in only_disputes.to_html()


def test_a_number_word_is_cited_from_the_page_stating_its_value() -> None:
    """Fresh-user review 11: "Fourteen days." was cited from the van and fines pages the
    model lifted, not the renewal page stating "14 days": a number word is read by its
    value, and a clock time ("14:00") does not hold a number of days."""
    texts = [
        "Fines. Overdue books cost a fine of 0.25 euros per day.",
        "Renewing loans. Each renewal extends the loan by 14 days.",
        "Mobile library van. The van stops at Hill Farm School on Wednesday from 13:00 to 14:00.",
    ]
    scores = np.array([0.5, 0.3, 0.6])
    assert choose_sources("Fourteen days.", scores, texts, CitationRule()) == [1]


def test_a_name_every_source_holds_leaves_the_sentences_other_words_to_decide():
    """Every page named the senior vet, so no page added a name the others lacked and the
    page stating the sentence word for word went uncited, though the attribution singled
    out its passage (fresh-user review 24, scores from its run)."""
    docs = [
        {"title": "Team", "text": "Dr Priya Shah is our senior vet. Dr Tom Okafor sees exotics."},
        {
            "title": "Neutering",
            "text": "Cat spay costs £95. Dr Priya Shah performs most neutering operations.",
        },
        {"title": "Dog walk", "text": "Staff walked 10 km with Dr Priya Shah's spaniel."},
    ]
    sentences = [
        (0, "Dr Priya Shah is our senior vet."),
        (0, "Dr Tom Okafor sees exotics."),
        (1, "Cat spay costs £95."),
        (1, "Dr Priya Shah performs most neutering operations."),
        (2, docs[2]["text"]),
    ]
    segments = [
        Segment(t, d, docs[d]["text"].find(t), docs[d]["text"].find(t) + len(t))
        for d, t in sentences
    ]
    scores = np.array([0.031, 0.031, 0.029, 0.629, 0.0])
    answer = "Dr Priya Shah performs most neutering operations."
    result = AttributionResult(
        scores=scores,
        segments=segments,
        question="Who performs neutering?",
        response=answer,
        n_documents=3,
        n_queries=12,
        statements=[StatementAttribution(answer, 0, len(answer), scores)],
    )
    cited = cite(result, docs)
    assert [cited.source(n).title for n in cited.sentences[0].citations] == ["Neutering"]
    # the name alone still marks no page out: nothing cited when no other word decides
    plain = replace(
        result,
        response="Dr Priya Shah.",
        statements=[StatementAttribution("Dr Priya Shah.", 0, 14, scores)],
    )
    assert cite(plain, docs).sentences[0].citations == []


def test_a_source_never_reads_weaker_than_the_passage_it_highlights():
    """Review 55: a source's entry read "support" (its document score) beside its highlight
    bar's "strong support" (the passage's); review 56 the reverse. Every renderer now
    states its strongest highlight's; the developer's ``score`` stays the document's."""
    cited = cite(make_result(), DOCS)
    source = cited.sources[0]
    passage = max(h.score for h in source.highlights)
    assert passage >= 0.44  # the highlight reads "strong support"
    weaker = replace(source, score=0.2)  # a document score that alone reads "support"
    shown = replace(cited, sources=[weaker, *cited.sources[1:]])
    assert weaker.support == pytest.approx(passage)
    head = f"{weaker.label} (strong support)"
    assert head in render_terminal(shown, color=False)
    assert "(support)" not in render_terminal(shown, color=False)
    assert "strong support" in shown.to_html() and ">support<" not in shown.to_html()
    data = shown.to_dict()["sources"][0]
    assert (data["score"], data["support"]) == (0.2, "strong support")
    assert replace(weaker, highlights=[]).support == 0.2  # no passage: the document's own
    marks = [replace(h, score=0.2) for h in source.highlights]  # passages read "support"
    stronger = replace(source, score=0.9, highlights=marks)
    plain = render_terminal(replace(cited, sources=[stronger, *cited.sources[1:]]), color=False)
    assert f"{stronger.label} (support)" in plain and f"{stronger.label} (strong" not in plain


def _clinic() -> tuple[AttributionResult, list[dict[str, str]]]:
    """A source supporting one answer sentence and stating otherwise the next."""
    text = "The clinic opens at 9:00 on Saturdays. It is closed on Sundays <b>now</b>."
    response = "The clinic opens at 9:00 on Saturdays. It is open on Sundays."
    return _two_sentences(text, response, 38, [0.8, 0.0, 0.0], [0.2, 0.1, 0.0])


def test_a_disputing_source_shows_where_it_says_otherwise():
    """Fresh-user review (session 60): a source supporting one sentence and disputing the
    next listed "disagrees with the answer on 'open'" but marked no passage saying so."""
    result, docs = _clinic()
    cited = cite(result, docs)
    assert [(s.citations, s.disputed) for s in cited.sentences] == [([1], []), ([], [1])]
    source = cited.source(1)
    assert source.disputes == ["open"]
    assert [(p.segment_index, p.text) for p in source.disputing] == [
        (1, "It is closed on Sundays <b>now</b>.")
    ]
    assert docs[0]["text"][source.disputing[0].start : source.disputing[0].end].startswith("It is")
    assert [h.segment_index for h in source.highlights] == [0]
    assert cited.to_dict()["sources"][0]["disputing"] == [
        {"segment_index": 1, "start": 39, "end": 74, "text": "It is closed on Sundays <b>now</b>."}
    ]
    plain = cited.to_terminal(color=False)
    assert "disagrees with the answer: It is closed on Sundays <b>now</b>." in plain
    # in the source's order: its first sentence's highlight, then the passage disputing
    assert plain.index("support The clinic opens") < plain.index("disagrees with the answer: ")
    md = cited.to_markdown()
    assert "\u26a0 \u201cIt is closed on Sundays \\<b\\>now\\</b\\>.\u201d" in md
    assert "weak support; \u26a0 \u201c\u2026\u201d: where a source says otherwise.*" in md
    html = cited.to_html()
    assert (
        '<mark class="camab-hl camab-hl-disputes" title="disagrees with the answer">'
        "It is closed on Sundays &lt;b&gt;now&lt;/b&gt;.</mark>"
    ) in html
    assert "red marks where a source says otherwise" in html
    # a source that only disputes: its passage and the legend still say so
    wrong = replace(result, response=result.response[39:], statements=[])
    alone = cite(wrong, docs)
    assert [(s.citations, s.disputed) for s in alone.sentences] == [([], [1])]
    assert not alone.source(1).highlights and len(alone.source(1).disputing) == 1
    assert "*\u26a0 \u201c\u2026\u201d: where a source says otherwise.*" in alone.to_markdown()
    assert ">red marks where a source says otherwise</p>" in alone.to_html()
    # a source that disputes nothing marks no such passage, and says nothing of them
    calm = cite(
        replace(result, response=result.response[:38], statements=result.statements[:1]), docs
    )
    assert all(not s.disputing for s in calm.sources)
    assert "says otherwise" not in calm.to_markdown() + calm.to_html()


def test_a_disputing_source_names_the_words_in_the_answer_order():
    """Review (session 60): "Yes, ... open on Sundays." was said to be disputed on
    "open", "Yes", the order the checks found them in."""
    text = "The bakery opens at 7 am. It is closed on Sundays."
    response = "It opens at 7 am. Yes, the bakery is open on Sundays."
    result, docs = _two_sentences(text, response, 17, [0.8, 0.0, 0.0], [0.2, 0.1, 0.0])
    cited = cite(replace(result, question="Is the bakery open on Sundays?"), docs)
    assert cited.source(1).disputes == ["Yes", "open"]
    assert "disagrees with the answer on \u201copen\u201d" in cited.to_markdown()  # not "Yes"
