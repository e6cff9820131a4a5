"""How the gate reads a bank's pages (fresh-user review, session 68): a product named
narrower than the question ("the Student debit card") beside the plain one, a limit
written after its number ("aged 21 or over"), and a model's lead-in naming the sources
("Based on the context information, yes.")."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from fakes import KeywordScorer, over_sentences

from camab_rag import assess_groundedness, attribute, cite
from camab_rag.conflicts import disputes
from camab_rag.groundedness.score import bare_reply, coverage, misread_words, unchecked_facts
from camab_rag.groundedness.wordforms import (
    ContextWords,
    limits,
    misread_spans,
    rivals,
    unled,
)
from camab_rag.render.text import verdict_text

CLASSIC = (
    "Debit card limits for the Classic current account. You can withdraw up to 600 euros "
    "per day at ATMs with your debit card. Card payments in shops and online are limited to "
    "2,500 euros per day."
)
STUDENT = (
    "The Student account is free of monthly fees for customers aged 18 to 26 who are "
    "enrolled at a university. With the Student debit card you can withdraw up to 300 euros "
    "per day at ATMs, and card payments are limited to 1,000 euros per day."
)
OVERDRAFT = (
    "Overdraft rules. An arranged overdraft is available on the Classic current account to "
    "customers aged 21 or over with a regular monthly income."
)
PAGES = [CLASSIC, STUDENT, OVERDRAFT]
ATM = "How much can I withdraw at an ATM per day with my debit card?"


def _read(
    answer: str, question: str
) -> tuple[list[str], list[tuple[str, list[int]]], dict[int, list[str]]]:
    context = ContextWords.of(PAGES, question)
    misread = [answer[a:b] for a, b in misread_spans(answer, context)]
    rival = [(answer[a:b], sorted(docs)) for (a, b), docs in rivals(answer, context)]
    result = over_sentences(PAGES, question, answer, lambda s: np.zeros(len(s)))
    return misread, rival, disputes(result)


@pytest.mark.parametrize(
    "answer",
    [
        "600 euros.",
        "You can withdraw no more than 600 euros per day at ATMs.",
        "Card payments are capped at 2,500 euros a day.",
    ],
)
def test_the_student_cards_limits_do_not_dispute_the_plain_cards(answer):
    # review 5 c01, c02, c04: "the sources differ on “600”", the Student card's page disputing
    assert _read(answer, ATM) == ([], [], {})


def test_the_student_cards_limit_still_rivals_where_students_are_asked():
    asked = "How much can students withdraw at an ATM per day?"
    assert _read("Students can withdraw at most 300 euros per day.", asked) == ([], [], {})
    misread, rival, disputed = _read("Students can withdraw up to 600 euros per day.", asked)
    assert misread == ["600"] and rival == [("600", [1])] and disputed == {1: ["600"]}
    assert _read("300 euros.", ATM)[1] == [("300", [0])]  # and the plain card's for a 300


def test_a_limit_written_after_its_number_is_read():
    assert [b for _, b in limits("customers aged 21 or over")] == [("least", "21", "")]
    assert [b for _, b in limits("children aged 12 and over")] == [("least", "12", "")]
    assert [b for _, b in limits("children 6 years or younger")] == [("most", "6", "year")]
    # review 5 c26: "at least 18" (the Student account's age) passed unmarked
    question = "How old do I have to be for an overdraft?"
    assert _read("You must be at least 18.", question)[0] == ["18"]
    assert _read("You must be at least 21.", question)[0] == []


def test_an_out_of_date_value_is_not_also_said_to_be_absent():
    # review 5 c17: "“500” is from an out-of-date page; the sources do not state “500”"
    report = SimpleNamespace(
        verdict="uncertain",
        unchecked_facts=("500",),
        misread=(),
        unsupported_spans=[],
        sentences=[SimpleNamespace(text="Up to 500 euros.", outdated=("500",), contested=("500",))],
        contested=("500",),
        outdated=("500",),
    )
    assert verdict_text(report) == "Check this answer: \u201c500\u201d is from an out-of-date page"
    # nor unexplained by the model (review 5 c16, c17: "... the sources do not say “500”")
    report.unchecked_facts, report.unsupported_spans = (), [SimpleNamespace(text=" 500")]
    assert verdict_text(report) == "Check this answer: \u201c500\u201d is from an out-of-date page"


HOURS = (
    "Branch opening hours. Our branches are open Monday to Friday from 9:00 to 17:30. On "
    "Saturdays they open from 9:30 to 13:00. All branches are closed on Sundays and public "
    "holidays."
)
FEES = "Credit card fees. The Gold credit card has an annual fee of 45 euros."
SUNDAYS = "Are branches open on Sundays?"


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Based on the context information, yes.", "yes."),
        ("According to the provided documents, the fee is 45 euros.", "the fee is 45 euros."),
        ("Based on the information provided, the answer is 45 euros.", "45 euros."),
        (
            "Given the context, it is free. From the sources, it costs nothing.",
            "it is free. it costs nothing.",
        ),
        ("From Monday to Friday, yes.", "From Monday to Friday, yes."),
        ("According to the 2022 fee schedule, it was 35 euros.", None),
    ],
)
def test_a_lead_in_naming_the_sources_claims_nothing(text, claimed):
    # review 5 (LlamaIndex): SmolLM2 echoed its prompt, "Based on the context information,
    # yes."; the gate read "the sources do not say “Based”, “information”"
    blanked = unled(text)
    assert len(blanked) == len(text)  # offsets kept
    assert " ".join(blanked.split()) == (claimed or text)
    assert bare_reply(text) == ("yes" if claimed == "yes." else None)


def test_a_lead_in_before_a_reply_is_read_as_the_reply():
    context = ContextWords.of([HOURS, FEES], SUNDAYS)
    right, wrong = "Based on the context information, no.", "Based on the context information, yes."
    assert misread_spans(right, context) == [] and unchecked_facts(right, context) == []
    assert [wrong[a:b] for a, b in misread_spans(wrong, context)] == ["yes"]
    fee = "According to the provided context, the Gold credit card has an annual fee of 45 euros."
    assert coverage(fee, context) == 1.0 and unchecked_facts(fee, context) == []
    for answer, cited, disputed in [(right, [[1]], [[]]), (wrong, [[]], [[1]])]:
        result = over_sentences([HOURS, FEES], SUNDAYS, answer, lambda s: np.zeros(len(s)))
        shown = cite(result, [HOURS, FEES])
        assert [s.citations for s in shown.sentences] == cited
        assert [s.disputed for s in shown.sentences] == disputed


def test_a_lead_in_is_not_named_as_unexplained():
    # the keyword fake finds "Based on the context information" unlikely with any context
    answer = "Based on the context information, the Gold credit card has an annual fee of 45 euros."
    question = "What does the Gold credit card cost?"
    scorer = KeywordScorer()
    result = attribute(question, [HOURS, FEES], answer, scorer, budget=6, method="loo")
    report = assess_groundedness(result, context=[HOURS, FEES], scorer=scorer)
    assert [s.text for s in report.unsupported_spans] == []
    assert report.verdict == "supported"


def test_a_clock_times_minutes_state_no_measure():
    # review 5 c23: "suspended for 30 days" (invented) found its "30" in "9:30" and "17:30"
    # and read "the sources say something else about “30”"
    question = "What happens if I pay my credit card late?"
    late = "If the monthly repayment arrives late, a late payment fee of 25 euros is charged."
    context = ContextWords.of([HOURS, FEES + " " + late], question)
    assert context.clocked == {"9", "13", "17", "30"}
    answer = "You pay a late payment fee of 25 euros and the card is suspended for 30 days."
    assert unchecked_facts(answer, context) == ["30"] and misread_words(answer, context) == ()
    for right in ["On Saturdays branches open at 9:30.", "They open at 9 am on Saturdays."]:
        assert unchecked_facts(right, context) == [] and coverage(right, context) == 1.0
    every = ContextWords.of([HOURS, "Transfers take 30 days."], question)
    assert "30" not in every.clocked and unchecked_facts("It takes 30 days.", every) == []
    # a span clock times state, or a clause about the same thing, is no clash
    assert unchecked_facts("On Saturdays branches open 30 minutes later.", context) == []
    noon = ContextWords.of(["The card is suspended at 17:30 on the due date."], question)
    assert unchecked_facts("The card is suspended for 30 days.", noon) == []


LOST = (
    "If your card is lost or stolen, block it immediately. Blocking a card is free of charge, "
    "and a replacement card costs 10 euros. You can also block the card yourself in the app."
)


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        ("Yes, blocking a card costs 10 euros.", ["10"]),  # review 5 c22: passed
        ("It costs 10 euros to block a card.", ["10"]),
        ("Yes, it costs 10 euros.", ["10"]),  # the question names what is priced
        ("A replacement card is free.", ["free"]),
        ("No, blocking a card is free of charge.", []),
        ("No, blocking is free, but a replacement card costs 10 euros.", []),
        ("A replacement card costs 10 euros.", []),
        ("No, there is no fee for blocking a card.", []),
    ],
)
def test_a_price_is_read_on_the_clause_naming_what_is_priced(answer, misread):
    context = ContextWords.of([LOST], "Does it cost anything to block a lost card?")
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread


@pytest.mark.parametrize(
    ("page", "answer"),
    [
        (  # a price and its exception in one answer sentence
            "Delivery of a sofa costs 20 euros; if you order two sofas, delivery is free.",
            "Yes, there's a 20 euro delivery fee, unless you order two sofas, in which case "
            "delivery is free.",
        ),
        (  # a clause pricing one thing and including another
            "Frames start at 39 dollars and come with lenses included. If the glasses break, we "
            "replace them once for free.",
            "Frames start at 39 dollars, and lenses come included at no extra charge.",
        ),
        (  # an amount worked out: two table fees
            "Adults pay a table fee of 7 euros. Children under 10 play for free.",
            "It would be 14 euros for the two of you, and both children play free.",
        ),
        (  # "get in" names nothing priced
            "Entry for shoppers is 2 pounds. Under-12s get in free.",
            "It's 2 pounds to get in.",
        ),
    ],
)
def test_a_free_clause_beside_a_price_misreads_no_right_answer(page, answer):
    assert misread_spans(answer, ContextWords.of([page], "What does it cost?")) == []


def test_a_phone_number_one_clause_writes_is_held_there():
    # waste review r16 (session 69): "Call 0800 555 123." read "the sources say something
    # else about “0800”, “555”, “123”", the waste team's "9:00 to 17:00" lying closer to "call"
    pages = [
        "Missed collections. Report a missed collection online or by calling 0800 555 123.",
        "Contact the waste team. The waste team answers phone calls from 9:00 to 17:00.",
    ]
    context = ContextWords.of(pages, "What number do I call for a missed bin?")
    assert misread_spans("Call 0800 555 123.", context) == []
    assert "124" in unchecked_facts("Call 0800 555 124.", context)
    hours = ContextWords.of(
        ["Weekdays 9 - 17. Saturdays 10 - 14."], "When are you open on Saturdays?"
    )
    assert misread_spans("On Saturdays 9 - 17.", hours) != []  # a range is no code
