"""How the gate reads an employee handbook (fresh-user review, session 67): bare amounts
("25 days."), a page of another scope, an archived policy, "not unless"."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import KeywordScorer, over_sentences

from camab_rag.attributor import assess_answer
from camab_rag.conflicts import disputes
from camab_rag.groundedness.anchors import followed_up
from camab_rag.groundedness.wordforms import ContextWords, derived_values, misread_spans, rivals
from camab_rag.render.text import verdict_text

HANDBOOK = [
    "Annual Leave Policy. Full-time employees receive 25 working days of paid annual leave "
    "per calendar year. Annual leave can only be taken after the 6-month probation period "
    "has been completed, unless the line manager approves an exception in writing.",
    "Sick Leave. A medical certificate is required from the 4th consecutive calendar day of "
    "sickness. Employees receive full pay for up to 30 sick days per calendar year; after "
    "that, sick pay is 70% of the base salary.",
    "Parental Leave. Birth mothers are entitled to 16 weeks of maternity leave at 100% of "
    "their salary.",
    "Remote Work. Employees may work remotely up to 2 days per week. Working from another "
    "country is allowed for at most 20 working days per year and requires prior approval "
    "from HR.",
    "Contractors. Contractors are not eligible for paid annual leave; days off are unpaid. "
    "Contractors may work remotely up to 4 days per week.",
    "[Archived] Annual Leave Policy 2023. This page has been archived and is kept for "
    "reference only. Full-time employees receive 22 working days of paid annual leave per year.",
]


def _read(question: str, answer: str) -> tuple[list[tuple[str, set[int]]], list[str]]:
    context = ContextWords.of(HANDBOOK, question)
    found = [(answer[a:b], set(d)) for (a, b), d in rivals(answer, context)]
    return found, [answer[a:b] for a, b in misread_spans(answer, context)]


def test_a_bare_amount_is_read_with_the_questions_subject():
    # "25 days." is the leave page's; the sick days and the contractors' page do not dispute it
    assert _read("How many days of annual leave do I get per year?", "25 days.") == ([], [])
    # the archived page's value is disputed by the current page alone
    assert _read("How many days of annual leave do I get per year?", "22 days.") == (
        [("22", {0})],
        [],
    )


def test_days_per_year_are_no_subject_of_their_own():
    # the comma piece "up to 20 working days per year" names no subject beside the amount
    answer = "Only for up to 20 working days per year, and you need prior approval from HR."
    assert _read("Can I work from Spain for a month?", answer) == ([], [])


def test_a_hundred_percent_of_an_amount_is_no_working_out():
    # "2 days per week" at "100%" is no second day worked out: the 4th day is misread
    answer = "A medical certificate is required from the 2nd day of absence."
    context = ContextWords.of(HANDBOOK, "When do I need a doctor's note for sick leave?")
    assert derived_values(answer, context) == frozenset()
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == ["2nd"]


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        ("No, not unless your line manager approves an exception in writing.", []),
        ("No, not even if your line manager approves an exception in writing.", ["not"]),
    ],
)
def test_not_unless_restates_only_unless(answer, misread):
    question = "Can I take annual leave during my probation period?"
    assert _read(question, answer)[1] == misread


def test_an_archived_policys_value_says_it_is_out_of_date():
    question = "How many days of annual leave do I get per year?"
    old = assess_answer(
        question, HANDBOOK, "Employees get 22 days of annual leave.", KeywordScorer()
    )
    assert old.verdict == "uncertain" and old.sentences[0].outdated == ("22",)
    assert verdict_text(old) == "Check this answer: \u201c22\u201d is from an out-of-date page"
    # another scope's value (the contractors') is no history: the sources differ on it
    mixed = assess_answer(
        "How many days per week can employees work remotely?",
        HANDBOOK,
        "Employees can work remotely up to 4 days per week.",
        KeywordScorer(),
    )
    assert mixed.sentences[0].outdated == ()
    assert "out-of-date" not in (verdict_text(mixed) or "")


def _disputes(question: str, answer: str) -> dict[int, list[str]]:
    result = over_sentences(HANDBOOK, question, answer, lambda s: np.zeros(len(s)))
    return disputes(result)


def test_a_bare_amount_is_disputed_only_where_the_question_points():
    # the contractors' "4 days per week" is no value in the place of the annual leave's days
    question = "How many days of annual leave do I get per year?"
    assert _disputes(question, "25 days.") == {}
    assert _disputes(question, "22 days.") == {0: ["22"]}  # the current policy's 25


def test_a_denied_yes_is_disputed_by_the_page_it_answers_not_every_negation():
    question = "Am I eligible for parental leave from my first day?"
    answer = "Yes, all employees are eligible for paid parental leave from their first day."
    handbook = [
        *HANDBOOK,
        "Parental leave eligibility. Employees are not eligible for company-paid parental "
        "leave until they have been employed for 12 months.",
        "Public holidays. The offices are closed from 24 December to 1 January; these closure "
        "days do not count against annual leave.",
    ]
    result = over_sentences(handbook, question, answer, lambda s: np.zeros(len(s)))
    # the contractors' "not eligible" and the closure days' "do not count" are of others
    assert disputes(result) == {6: ["Yes"]}


def test_a_follow_ups_bare_amount_is_not_read_against_the_earlier_question():
    """Review 1 (session 67), case 31: "Also 2 days per week." to "And for contractors?"
    (contractors: 4) passed once a bare amount took the question's words: the earlier
    question itself was the closest "clause", and it states no number."""
    history = [
        {"role": "user", "content": "How many days per week can employees work remotely?"},
        {"role": "assistant", "content": "Up to 2 days per week."},
    ]
    answer = "Also 2 days per week."
    report = assess_answer(
        "And for contractors?", HANDBOOK, answer, KeywordScorer(), history=history
    )
    assert report.sentences[0].contested == ("2",)


@pytest.mark.parametrize(
    ("answer", "rivalled"),
    [
        ("Up to 4 days per week.", []),  # review 1 (session 67): contested by the employees'
        ("4 days.", []),
        ("They can work remotely up to 4 days per week.", []),
        ("Also 2 days per week.", [("2", [4])]),
        ("Up to 2 days per week.", [("2", [4])]),
    ],
)
def test_the_earlier_subjects_page_is_no_rival_of_a_follow_ups_value(answer, rivalled):
    """To "And for contractors?" after the employees' remote days, the contractors' 4 is
    theirs: the employees' page (2) holds none of the follow-up's own subject."""
    history = [
        {"role": "user", "content": "How many days per week can employees work remotely?"},
        {"role": "assistant", "content": "Up to 2 days per week."},
    ]
    context = ContextWords.of(HANDBOOK, followed_up("And for contractors?", history, HANDBOOK))
    found = [(answer[a:b], sorted(d)) for (a, b), d in rivals(answer, context)]
    assert found == rivalled
