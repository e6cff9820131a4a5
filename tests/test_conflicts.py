"""Conflicting sources: a source that supports the answer but argues against one word.

The rule on hand-set coefficients, the word rewards on hand-made token log-probs, the
citations and summaries that read the conflicts, and the issue's case with the real
embedded model: "within 30 days" over a 30-day and a 45-day returns policy.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from camab_rag import attribute, cite
from camab_rag.citations import CitationRule, citation_pairs
from camab_rag.conflicts import (
    BACKED_AT,
    CONFLICT_AT,
    conflicts_from_coefficients,
    disputes,
    stated_value,
    word_logprobs,
)
from camab_rag.groundedness.wordforms import ContextWords, is_stale, rivals
from camab_rag.integration import document_summary
from camab_rag.render.text import answer_id
from camab_rag.result import AttributionResult, Conflict, StatementAttribution
from camab_rag.scorers.base import ResponseLogprobs
from camab_rag.segments import Segment

ANSWER = "Return it within 30 days."
WORDS = [(0, 6), (7, 9), (10, 16), (17, 19), (20, 24)]  # Return it within 30 days
TEXTS = ["Within 30 days.", "Within 45 days.", "Shipping is free."]


def test_a_source_that_lowers_a_backed_word_it_lacks_conflicts() -> None:
    """The model's conflicts, whatever the source's own score (a stale source's score
    falls as documents are added; whether it is shown as disputing is :func:`disputes`')."""
    coefficients = np.zeros((5, 3))
    coefficients[3] = [1.2, -0.9, -0.9]  # "30": source 0 backs it, sources 1 and 2 lower it
    coefficients[0] = [0.4, -2.0, 0.0]  # "Return": nobody backs it (0.4 < BACKED_AT)
    found = conflicts_from_coefficients(ANSWER, WORDS, coefficients, TEXTS)
    assert found == [
        Conflict("30", 17, 19, 1, 0, -0.9, 1.2),
        Conflict("30", 17, 19, 2, 0, -0.9, 1.2),
    ]
    said = ["Within 30 days.", "Within 30 days, or 45 for members.", "30 days"]
    assert conflicts_from_coefficients(ANSWER, WORDS, coefficients, said) == []


def test_a_function_word_is_never_disputed() -> None:
    """The fresh-user review: with a prior's few target calls, "it" was backed by "It is in
    Nepal." and lowered by the true source, which was then shown as disputing the answer.
    A function word carries no fact to contradict."""
    coefficients = np.zeros((5, 3))
    coefficients[1] = [-1.0, 0.0, 1.5]  # "it": source 2 backs it, source 0 lowers it
    coefficients[3] = [-1.0, 0.0, 1.5]  # "30": the same numbers on a content word
    found = conflicts_from_coefficients(ANSWER, WORDS, coefficients, ["", "", ""])
    assert [c.text for c in found] == ["30"]


def test_the_thresholds_are_inclusive() -> None:
    coefficients = np.zeros((5, 2))
    coefficients[3] = [BACKED_AT, -CONFLICT_AT + 0.01]
    assert conflicts_from_coefficients(ANSWER, WORDS, coefficients, TEXTS[:2]) == []
    coefficients[3, 1] = -CONFLICT_AT
    assert len(conflicts_from_coefficients(ANSWER, WORDS, coefficients, TEXTS[:2])) == 1
    coefficients[3, 0] = BACKED_AT - 0.01
    assert conflicts_from_coefficients(ANSWER, WORDS, coefficients, TEXTS[:2]) == []


def test_word_logprobs_sum_the_tokens_that_start_in_each_word() -> None:
    # tokens: "Return", " it", " with", "in", " 3", "0", " days", "."
    offsets = np.array([0, 6, 9, 14, 16, 18, 19, 24])
    tokens = ("Return", " it", " with", "in", " 3", "0", " days", ".")
    row = ResponseLogprobs(
        np.array([-1.0, -2.0, -3.0, -5.0, -4.0, -6.0, -0.5, -0.1]), offsets, tokens
    )
    words, rewards = word_logprobs(ANSWER, [row, row])
    assert words == WORDS  # "." is no word
    assert rewards.shape == (2, 5)
    np.testing.assert_allclose(rewards[0], [-1.0, -2.0, -8.0, -10.0, -0.5])


SEGMENTS = [
    Segment("Returns within 30 days.", 0, 0, 23),
    Segment("Returns within 45 days.", 1, 0, 23),
    Segment("Shipping takes two days.", 2, 0, 24),
]
DOCS = [s.text for s in SEGMENTS]


def _result(conflicts: list[Conflict]) -> AttributionResult:
    return AttributionResult(
        scores=np.array([0.7, 0.5, 0.0]),
        segments=SEGMENTS,
        question="How long?",
        response=ANSWER,
        n_documents=3,
        statements=[StatementAttribution(ANSWER, 0, len(ANSWER), np.array([0.7, 0.5, 0.0]))],
        conflicts=conflicts,
    )


def test_a_disputing_source_is_listed_as_disputed_never_as_support() -> None:
    result = _result([Conflict("30", 17, 19, 1, 0, -0.3, 1.2)])
    cited = cite(result, DOCS)
    sentence = cited.sentences[0]
    assert sentence.citations == [1] and sentence.disputed == [2]
    disputing = cited.source(2)
    assert disputing.doc_index == 1 and disputing.disputes == ["30"]
    assert disputing.highlights == []  # nothing of it is shown as support
    assert [(p.source.number, p.cited_text) for p in citation_pairs(result, DOCS)] == [
        (1, "Returns within 30 days.")
    ]
    markdown = cited.to_markdown()  # review 48: words an end user reads, not "[\u22602]"
    assert f"[\\[disputed by 2\\]](#{answer_id(cited)}-src-2)" in markdown
    assert "(disagrees with the answer on \u201c30\u201d)" in markdown
    html = cited.to_html()
    assert 'class="camab-marker camab-disputed"' in html and ">[disputed by 2]</a>" in html
    assert "disagrees with the answer on \u201c30\u201d" in html  # the tooltip
    shown = [markdown, html] + [cited.to_terminal(color=color) for color in (False, True)]
    assert "[disputed\u00a0by\u00a02]" in shown[2]  # the terminal never wraps it apart
    assert "Returns within 45 days." in shown[2]  # review 59: what the disputing source says
    assert [p.text for p in disputing.disputing] == ["Returns within 45 days."]
    assert "disagrees with the answer: Returns within 45 days." in shown[2]
    # no passage found where it says so: up to three dimmed lines of its text instead
    stale = replace(disputing, text="Stale. " * 80, disputing=[])
    long = replace(cited, sources=[*cited.sources[:1], stale])
    said = [line for line in long.to_terminal(color=False).splitlines() if "Stale." in line]
    assert len(said) == 3 and said[-1].endswith("[...]")  # three lines at most
    shown = [s.replace("\\", "").replace("\u00a0", " ") for s in shown]  # the terminal's: unbroken
    assert all("[disputed by 2]" in s and "\u2260" not in s for s in shown)
    data = json.loads(json.dumps(cited.to_dict()))
    assert data["sentences"][0]["disputed"] == [2]
    assert data["sources"][1]["disputes"] == ["30"]
    assert data["sources"][1]["support"] == "disputes the answer"  # review 56: no support word
    summary = document_summary(result, 3)
    assert summary[1]["disputes"] == ["30"] and summary[0]["disputes"] == []
    assert summary[0]["supporting_sentences"] == [ANSWER]
    assert AttributionResult.from_dict(result.to_dict()).conflicts == result.conflicts


def test_a_number_stated_otherwise_disputes_without_the_models_conflict() -> None:
    """ "45 days" in the place of the answer's "30 days" is a dispute whatever the model's
    word attribution says (with more documents a stale source's coefficients fade)."""
    assert disputes(_result([])) == {1: ["30"]}
    cited = cite(_result([]), DOCS)
    assert cited.sentences[0].citations == [1] and cited.sentences[0].disputed == [2]


def test_without_another_value_citations_are_unchanged() -> None:
    docs = ["Returns within 30 days.", "Returns within 30 days, or 45 for members.", "Ship."]
    segments = [Segment(text, i, 0, len(text)) for i, text in enumerate(docs)]
    result = replace(_result([Conflict("30", 17, 19, 1, 0, -0.3, 1.2)]), segments=segments)
    assert disputes(result) == {}  # it holds "30": it cannot contradict it
    cited = cite(result, docs, rule=CitationRule(new_words=False))
    assert cited.sentences[0].citations == [1, 2] and cited.sentences[0].disputed == []


def test_stated_value_finds_another_value_in_the_words_place() -> None:
    answer = "The Aero kettle costs 59 euros."
    span = (22, 24)  # "59"
    assert stated_value(answer, span, "Price update: the Aero kettle now costs 59 euros.") is None
    assert stated_value(answer, span, "The Aero electric kettle costs 49 euros.") == "49"
    assert stated_value(answer, span, "Aero kettle. Costs just 49 euros, in white.") == "49"
    # another product: the same wording is no statement about the Aero kettle
    assert stated_value(answer, span, "The Glass teapot costs 29 euros.") is None
    # nothing in the word's place; an ordinary word or a name states no number
    assert stated_value(answer, span, "The Aero kettle was on sale in 2024.") is None
    assert stated_value(answer, span, "The Aero kettle costs many euros.") is None
    assert stated_value(answer, span, "The Aero kettle costs Ten euros.") is None


def test_a_value_the_source_writes_another_way_is_not_disputed() -> None:
    """A fresh user's museum case: "closes at 5 pm" under "from 10:00 to 17:00" was shown
    as disputed (by the "closes at 16:00" of the Sunday sentence); the source holds 17,
    the same hour written another way. Another hour is still disputed."""
    hours = (
        "The museum is open Tuesday to Saturday from 10:00 to 17:00. "
        "On Sundays it opens at 12:00 and closes at 16:00."
    )
    assert stated_value("It closes at 5 pm on Saturday.", (13, 14), hours) is None
    assert stated_value("It closes at 5pm on Saturday.", (13, 16), hours) is None
    assert stated_value("It closes at 6 pm on Saturday.", (13, 14), hours) == "16"


def test_an_ordinal_is_the_number_it_counts() -> None:
    """FRESH_MULTI (dev): "On Monday the 5th of January." was shown as disputed by the
    term-dates page that says "Monday 5 January 2026" (its source). Another day is still
    disputed, in either form."""
    page = "Term dates 2025/26: the spring term starts on Monday 5 January 2026."
    answer = "On Monday the 5th of January."
    assert stated_value(answer, (14, 17), page) is None
    assert stated_value(answer, (14, 17), page.replace("5 January", "6 January")) == "6"
    assert stated_value("On Monday 6 January.", (10, 11), page.replace(" 5 ", " 5th ")) == "5th"


def test_a_source_that_only_lacks_a_word_disputes_nothing() -> None:
    """The issue's false dispute: an answer copied from the About page was marked as
    disputed by a product page that lacks "based". A source disputes a word only when it
    says something else in its place."""
    answer = "Lumora is based in Tartu."
    about, kettle = "Lumora is based in Tartu.", "The Aero kettle costs 49 euros."
    riga = "Lumora is based in Riga."
    for other, expected in ((kettle, {}), (riga, {1: ["Tartu"]})):
        result = AttributionResult(
            scores=np.array([0.9, 0.3]),
            segments=[Segment(about, 0, 0, len(about)), Segment(other, 1, 0, len(other))],
            question="Where is Lumora based?",
            response=answer,
            n_documents=2,
            conflicts=[
                Conflict("based", 10, 15, 1, 0, -0.5, 2.0),
                Conflict("Tartu", 19, 24, 1, 0, -0.5, 2.0),
            ],
        )
        assert disputes(result) == expected


POLICIES = [
    "Returns policy (2024). Customers may return any unused item within 30 days of purchase "
    "for a full refund. Refunds are issued to the original payment method.",
    "Returns policy (2022, archived). Customers may return any unused item within 45 days of "
    "purchase for a full refund. Refunds are issued to the original payment method.",
    "Shipping. Orders ship within two business days from our warehouse in Leeds. Express "
    "delivery costs 9 euros.",
    "Review: Terrible company, the support line never answers and the founder is a crook.",
]


@pytest.mark.model
def test_the_45_day_policy_disputes_an_answer_of_30_days(smollm2_scorer) -> None:
    """The first-day issue's case with the embedded model: both policies score as support
    of the answer as a whole; only the conflict check tells them apart (no extra call)."""
    answer = "You can return an unused item within 30 days of purchase for a full refund."
    result = attribute(
        "How long do I have to return an item?",
        POLICIES,
        answer,
        smollm2_scorer,
        granularity="chunk",
    )
    assert result.n_queries == 16
    assert result.document_scores[1] > 0.2  # the old policy explains most of the answer
    assert disputes(result) == {1: ["30"]}
    cited = cite(result, POLICIES)
    assert cited.sentences[0].citations == [1]
    assert cited.source(cited.sentences[0].disputed[0]).doc_index == 1


@pytest.mark.model
@pytest.mark.parametrize(
    ("question", "docs", "answer", "word"),
    [
        (
            "Where is Lumora based?",
            ["Lumora is based in Tartu, Estonia.", "Lumora is based in a small wooden house."],
            "Lumora is based in Tartu.",
            "Tartu",
        ),
        (
            "Who founded Lumora?",
            ["Lumora was founded by Mari Kask in Tartu.", "Lumora was founded in 2019."],
            "Lumora was founded by Mari Kask.",
            "Mari",
        ),
    ],
    ids=["ordinary-words", "a-year-for-a-name"],
)
def test_no_value_of_the_names_kind_disputes_nothing(
    smollm2_scorer, question: str, docs: list[str], answer: str, word: str
) -> None:
    """Review finding, by chunk: a page that says "based in a small wooden house" (or
    "founded in 2019") lowers the answer's "Tartu" ("Mari": the model's conflict), yet
    states no other place (founder): no dispute, and the first page stays the citation."""
    result = attribute(question, docs, answer, smollm2_scorer, granularity="chunk")
    assert result.n_queries == 4
    assert (word, 1) in [(c.text, c.segment) for c in result.conflicts]  # the model's
    assert disputes(result) == {}
    cited = cite(result, docs)
    assert [cited.source(n).doc_index for n in cited.sentences[0].citations] == [0]
    assert cited.sentences[0].disputed == []
    assert [(s.doc_index, s.disputes) for s in cited.sources] == [(0, [])]


def test_a_name_replaced_whole_is_disputed_when_the_model_agrees() -> None:
    """A stale copy that names someone else in the answer's place disputes the name, even
    though it lacks every word of the answer's name (the name is one value); a name needs
    the model's conflict, a number does not."""
    answer = "Robert Erskine Childers DSC was a British writer."
    copy = "Pedro Rodríguez was a British writer and a sailor."
    assert stated_value(answer, (24, 27), copy) == "Rodríguez"  # "DSC"
    assert stated_value(answer, (24, 27), "Mary Shelley was an English novelist.") is None
    docs = [answer, copy]
    result = AttributionResult(
        scores=np.array([0.9, 0.6]),
        segments=[Segment(text, i, 0, len(text)) for i, text in enumerate(docs)],
        question="Who was a British writer?",
        response=answer,
        n_documents=2,
    )
    assert disputes(result) == {}
    agreed = replace(result, conflicts=[Conflict("DSC", 24, 27, 1, 0, -0.4, 1.0)])
    assert disputes(agreed) == {1: ["DSC"]}


def test_the_stale_warranty_page_disputes_the_updated_number() -> None:
    """Issue 48: the answer copies the stale page's wording and takes the number from the
    update; the stale page states another number in its place, the update does not."""
    answer = "All e-bikes come with a 3-year warranty."
    stale = "All Lumora e-bikes come with a 2-year warranty against defects."
    update = "Update: from June, e-bikes come with 3 years of warranty instead of two."
    span = (answer.index("3"), answer.index("3") + 1)
    assert stated_value(answer, span, stale) == "2"
    assert stated_value(answer, span, update) is None
    docs = [stale, update]
    result = AttributionResult(
        scores=np.array([0.6, 0.4]),
        segments=[Segment(text, i, 0, len(text)) for i, text in enumerate(docs)],
        question="How long is the e-bike warranty?",
        response=answer,
        n_documents=2,
        statements=[StatementAttribution(answer, 0, len(answer), np.array([0.6, 0.4]))],
    )
    cited = cite(result, docs)
    assert [cited.source(n).doc_index for n in cited.sentences[0].disputed] == [0]
    assert [cited.source(n).doc_index for n in cited.sentences[0].citations] == [1]


CLINIC = [
    "A routine check-up costs 45 euros. A professional teeth cleaning costs 70 euros.",
    "Patients must cancel an appointment at least 24 hours in advance; otherwise a fee of "
    "20 euros is charged.",
]


def test_another_amount_about_another_subject_disputes_nothing() -> None:
    """Review 5: "45 euros." for "How much does a check-up cost?" was shown as disputed
    by the cancellation fee ("a fee of 20 euros"): the same unit, another subject. A
    dispute needs a subject word of the answer or question ("check-up") beside the value;
    a wrong price is still disputed by the price list."""
    question = "How much does a check-up cost?"
    for answer, expected in (("45 euros.", {}), ("55 euros.", {0: ["55"]})):
        result = AttributionResult(
            scores=np.array([0.9, 0.2]),
            segments=[Segment(text, i, 0, len(text)) for i, text in enumerate(CLINIC)],
            question=question,
            response=answer,
            n_documents=2,
        )
        assert disputes(result) == expected
    assert cite(replace(result, response="45 euros."), CLINIC).sentences[0].disputed == []
    assert stated_value("A check-up is 45 euros.", (14, 16), CLINIC[1]) is None
    assert stated_value("A check-up is 55 euros.", (14, 16), CLINIC[0]) == "45"
    assert stated_value("45 euros.", (0, 2), CLINIC[1], question=question) is None
    assert stated_value("55 euros.", (0, 2), CLINIC[0], question=question) == "45"


def test_a_price_list_does_not_dispute_a_fee_it_does_not_mention() -> None:
    """Review 6: "After that it costs 3 euros per day." (the storage fee) was shown as
    disputed by a repair price list ("costs 45 euros"): "costs" and "euros" are the relation
    and the unit, which any price list holds, not the fee's subject."""
    prices = "A basic tune-up costs 45 euros. A wheel truing costs 20 euros."
    answer = "After that it costs 3 euros per day."
    at = answer.index("3")
    question = "What is the fee after that?"
    assert stated_value(answer, (at, at + 1), prices, question=question) is None
    late = "A basic tune-up costs 60 euros."
    assert stated_value(late, (late.index("60"), late.index("60") + 2), prices) == "45"


def test_a_disputed_amount_is_named_whole_not_by_its_parts() -> None:
    """Fresh-user review 10: the stale price list "disagrees with the answer on “3”,
    “20”" for "3.20 euros"; the label names the amount as the answer wrote it."""
    docs = [
        "Prices 2026. A child ticket (under 16) costs 3.20 euros.",
        "Prices 2024. A child ticket costs 2.50 euros.",  # (a page not marked out of date)
    ]
    segments = [Segment(text, k, 0, len(text)) for k, text in enumerate(docs)]
    result = AttributionResult(
        scores=np.zeros(2),
        segments=segments,
        n_documents=2,
        question="How much is a child ticket?",
        response="A child ticket costs 3.20 euros.",
    )
    assert disputes(result) == {1: ["3.20"]}


def test_a_total_worked_out_from_a_stated_rate_is_not_disputed() -> None:
    """Fresh-user review 11: "3 days late at 0.25 euros a day comes to 0.75 euros" passed
    the gate (a worked-out total) but the fines page was shown disputing "0.75"; a wrong
    total is still disputed."""
    docs = [
        "Fines (2025 list). Overdue books cost a fine of 0.25 euros per day.",
        "Fine list 2023 (replaced). Overdue DVDs cost 1 euro per day.",
    ]

    def result(answer: str) -> AttributionResult:
        return _over(docs, "I returned a book 3 days late. How much do I owe?", answer)

    assert disputes(result("3 days late at 0.25 euros a day comes to 0.75 euros.")) == {}
    assert disputes(result("3 days late at 0.25 euros a day comes to 0.95 euros.")) == {0: ["0.95"]}


def _over(docs: list[str], question: str, answer: str) -> AttributionResult:
    """A result over ``docs`` (one segment each) with no scores: what the text rules read."""
    segments = [Segment(text, k, 0, len(text)) for k, text in enumerate(docs)]
    return AttributionResult(
        scores=np.zeros(len(docs)),
        segments=segments,
        n_documents=len(docs),
        question=question,
        response=answer,
    )


def test_a_page_of_another_subject_does_not_dispute_a_value_a_page_states():
    """Fresh-user review 11: "0.25 euros." (the daily fine for a book, stated by the fines
    page) was shown disputed by a 2023 list of DVD and printing prices; a page that speaks
    of the question's subject less than the page stating the value disputes nothing. A
    value no page states is still disputed."""
    docs = [
        "Fines (2025 list). Overdue books cost a fine of 0.25 euros per day.",
        "Fine list 2023 (replaced). Overdue DVDs cost 1 euro per day. Printing costs 0.10 "
        "euros per page.",
    ]

    def result(answer: str) -> AttributionResult:
        return _over(docs, "How much is the fine per day for an overdue book?", answer)

    assert disputes(result("0.25 euros.")) == {}
    # the page the question points at (books, not DVDs) disputes it (session 67: a bare
    # amount is read on those pages only)
    assert disputes(result("0.30 euros.")) == {0: ["0.30"]}
    # the model's conflict on the amount's decimals ("25" of "0.25") is read the same
    lowered = Conflict(text="25", start=2, end=4, segment=1, backed_by=0, against=-0.8, backing=4.8)
    assert disputes(replace(result("0.25 euros."), conflicts=[lowered])) == {}


def test_a_page_stating_the_opposite_of_an_answer_word_disputes_it() -> None:
    """Review 22: "Dogs are allowed in all flats." over a pets page saying "Dogs are not
    permitted" was uncertain (the word misread), but no page was shown disputing it. The
    page stating the opposite, read alone, now disputes the word; an unrelated page and a
    page that agrees do not."""
    pets = "Cats are allowed with consent. Dogs are not permitted in flats above the ground floor."
    run = "Our team ran the Brighton 10K and raised £2,340."
    answer = "Dogs are allowed in all flats."
    result = _over([pets, run], "Can I have a dog?", answer)
    assert disputes(result) == {0: ["allowed"]}
    agreed = replace(result, response="Dogs are not allowed above the ground floor.")
    assert disputes(agreed) == {}


def test_a_page_on_another_subject_does_not_dispute_an_opposite_word() -> None:
    """Review 62: "No, the pool is closed on Sundays." beside a stale pool page (open on
    Sunday) listed the library's and the recycling centre's opening days as disputing
    "closed" too. An opposite word is now disputed, as a number is, only by a page sharing
    at least as many of the question's subject words as a page stating the word itself."""
    pages = [
        "Harbour Pool opening hours (2025): Monday to Friday 6:30 to 21:00, closed on Sunday.",
        "Harbour Pool opening hours (2021): Saturday and Sunday 9:00 to 17:00.",
        "The town library is open Tuesday to Saturday from 10:00 to 18:00.",
    ]
    answer = "No, the pool is closed on Sundays."
    assert disputes(_over(pages, "Is the pool open on Sunday?", answer)) == {1: ["closed", "No"]}


def test_the_sources_the_gate_finds_disagreeing_are_shown_disputing():
    """Review 56: "1994" rendered "the sources disagree on “1994” (which one is current?)"
    with only the current profile listed: the rule of :func:`stated_value` found no value in
    the press kit's place, so the reader could not see which source disagreed. A source the
    gate's rival rule reads as stating another value in the answer's place disputes it."""
    docs = [
        "Quillon Labs was founded in 1994 at Stanford University by Dr. Elena Marsh.",
        "Quillon Labs was founded in 1991 at MIT by Dr. Elena Marsh.",
        "Quill & Ink Stationery was founded in 1989 in Portland.",
    ]
    question = "In what year was Quillon Labs founded?"
    assert disputes(_over(docs, question, "1994")) == {1: ["1994"]}
    assert disputes(_over(docs, question, "Quillon Labs was founded in 1991 at MIT.")) == {
        0: ["1991", "MIT"]
    }
    cited = cite(_over(docs, question, "1991"), docs, rule=CitationRule(threshold=-1.0))
    assert [(s.doc_index, s.disputes) for s in cited.sources if s.disputes] == [(0, ["1991"])]
    # the same price in other words: disputed alike ("It costs $310." read no subject)
    pages = ["The Q5 sensor costs 310 dollars.", "The Q5 sensor sells for 260 dollars."]
    asked = "How much does the Q5 sensor cost?"
    for answer in ("It costs $310.", "310 dollars", "The Q5 costs 310 dollars."):
        assert disputes(_over(pages, asked, answer)) == {1: ["310"]}, answer


def test_a_disputed_clock_time_is_shown_whole() -> None:
    """Fresh-user review (session 61): "leaves at 7:45" under "leaves at 7:15" was shown
    as disagreeing on "45"."""
    docs = ["The first train to Brook leaves Alden at 7:15 on weekdays.", "Bananas are yellow."]
    question = "When does the first train to Brook leave Alden?"
    found = disputes(_over(docs, question, "The first train leaves at 7:45."))
    assert found == {0: ["7:45"]}
    assert disputes(_over(docs, question, "The first train leaves at 7:15.")) == {}


def test_a_pronoun_led_sentence_is_disputed_as_the_one_before_it() -> None:
    """Review finding: "They close at 21:00." (the galleries, on Thursdays) was shown
    disputed by the museum shop's "10:00 to 17:00"; only a page giving the galleries'
    Thursday hour otherwise disputes it."""
    answer = "On Thursdays the galleries stay open late. They close at 21:00."
    docs = [
        "On Thursdays the galleries stay open until 21:00.",
        "The museum shop is open weekdays only, from 10:00 to 17:00.",
        "On Thursdays the galleries stay open until 20:00.",
    ]
    result = AttributionResult(
        scores=np.array([0.9, 0.2, 0.4]),
        segments=[Segment(text, i, 0, len(text)) for i, text in enumerate(docs)],
        question="How late is the museum open on Thursdays?",
        response=answer,
        n_documents=3,
    )
    assert disputes(result) == {2: ["21:00"]}


def test_two_disputing_sources_share_one_mark_in_every_format() -> None:
    """Review 64: HTML and Markdown wrote "[disputed by 1][disputed by 2]" where the
    terminal writes "[disputed by 1, 2]"; each number still links to its source."""
    docs = ["Returns within 30 days.", "Returns within 45 days.", "Returns within 60 days."]
    segments = [Segment(text, i, 0, len(text)) for i, text in enumerate(docs)]
    cited = cite(replace(_result([]), segments=segments), docs)
    assert cited.sentences[0].citations == [1] and cited.sentences[0].disputed == [2, 3]
    page = answer_id(cited)
    markdown = cited.to_markdown()
    assert f"\\[disputed by [2](#{page}-src-2), [3](#{page}-src-3)\\]" in markdown
    html = cited.to_html()
    assert html.count('class="camab-marker camab-disputed"') == 1 and "[disputed by <a" in html
    assert f'href="#{page}-src-2"' in html and f'href="#{page}-src-3"' in html
    assert "disagrees with the answer on \u201c30\u201d" in html  # each number's tooltip
    assert "[disputed\u00a0by\u00a02,\u00a03]" in cited.to_terminal(color=False)


def test_an_archived_page_does_not_dispute_the_current_pages_value() -> None:
    """Review 1 (session 64): "6 euros." for the pool (its current page) was shown as
    "the sources disagree on “6” (which one is current?)" beside a page headed "ARCHIVED
    PAGE (2022)" saying 5 euros. The archived value still loses to the current page."""
    docs = [
        "Riverside Pool prices (updated March 2025). Adult single entry: 6 euros.",
        "ARCHIVED PAGE (2022) - Riverside Pool prices. Adult single entry: 5 euros. This page "
        "may be out of date.",
        "Riverside Pool cafe. A coffee costs 3 euros.",
    ]
    question = "How much is an adult single entry at Riverside Pool?"
    context = ContextWords.of(docs, question)
    assert context.stale == {1} and is_stale("Archived newspapers are upstairs.") is False
    assert rivals("6 euros.", context) == [] and disputes(_over(docs, question, "6 euros.")) == {}
    assert [d for _, d in rivals("5 euros.", context)] == [{0}]
    assert disputes(_over(docs, question, "5 euros.")) == {0: ["5"]}
    # no current page states the value: the archived page still disputes it
    assert disputes(_over(docs, question, "7 euros."))[1] == ["7"]
