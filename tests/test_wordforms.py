"""Word forms the gate compares, and values or negations the context does not state (pure
logic: no model)."""

from __future__ import annotations

import pickle

import pytest

from camab_rag.groundedness.score import MISREAD_COVERAGE, STOPWORDS, coverage, words
from camab_rag.groundedness.wordforms import ContextWords, clauses, forms, misread_spans, stem


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("grinders", "grinder"),
        ("boxes", "box"),
        ("batteries", "battery"),
        ("costs", "cost"),
    ],
)
def test_plurals_share_a_form(a, b):
    assert stem(a) == stem(b)


def test_units_number_words_and_clock_times_share_a_form():
    def of(text: str) -> list[str]:
        return [f for *_, f in forms(text) if f]

    assert set(of("€29")) == set(of("29 euros")) == set(of("29 EUR")) == {"eur", "29"}
    assert of("10 am") == of("10:00") == ["10"]
    assert of("4 pm") == of("16:00") == ["16"]
    assert of("four minutes") == of("4 mins") == ["4", "min"]


def test_coverage_compares_forms_and_context_words_stay_a_word_set():
    context = ContextWords.of(["The Glass Teapot holds 0.8 litres and costs €29."])
    assert context == frozenset(words("The Glass Teapot holds 0.8 litres and costs €29."))
    assert coverage("The teapots cost 29 euros.", context) == 1.0
    assert coverage("The teapots cost 45 euros.", context) == pytest.approx(3 / 4)
    assert coverage("The teapots cost 29.", set(context)) == 1.0  # a plain set: by form too
    assert pickle.loads(pickle.dumps(context)).sentences == context.sentences


def test_a_value_of_another_subject_and_an_unmade_negation_are_misread():
    two = ContextWords.of(
        ["The Aero kettle costs 49 euros.", "The Glass teapot costs 59 euros. It is blue."]
    )

    def misread(text: str) -> list[str]:
        return [text[a:b] for a, b in misread_spans(text, two, STOPWORDS)]

    assert misread("The Aero kettle costs 59 euros.") == ["59"]
    assert misread("The Aero kettle costs 49 euros.") == []
    assert misread("The Glass teapot is not blue.") == ["not"]
    assert misread("The Glass teapot isn't blue.") == ["isn't"]
    assert misread("No, the Aero kettle costs 49 euros.") == []  # a reply, not a negation
    assert coverage("The Aero kettle costs 59 euros.", two) == MISREAD_COVERAGE
    # a pronoun-led sentence borrows the previous sentence's subject
    pronoun = ContextWords.of(["The Glass Teapot holds 0.8 litres. It costs €29."])
    assert misread_spans("The Glass Teapot costs €29.", pronoun, STOPWORDS) == []
    # no sentences known (a plain set): nothing is misread
    assert misread_spans("The Aero kettle costs 59 euros.", set(two), STOPWORDS) == []


def test_a_clause_holds_its_own_values_and_the_subject_before_it():
    hours = ContextWords.of(
        [
            "The shop is open Monday to Friday from 9:00 to 18:00 and on Saturday from "
            "10:00 to 16:00. It is closed on Sunday."
        ]
    )
    assert clauses("Open Monday from 9:00 and on Saturday from 10:00; closed Sunday.") == [
        "Open Monday from 9:00",
        "on Saturday from 10:00",
        "closed Sunday.",
    ]

    def misread(text: str) -> list[str]:
        return [text[a:b] for a, b in misread_spans(text, hours, STOPWORDS)]

    assert misread("The shop is open on Saturday from 9:00 to 18:00.") == ["9", "18"]
    assert misread("The shop is open on Saturday from 10:00 to 16:00.") == []
    assert misread("The shop is open on Monday from 9:00 to 18:00.") == []
    assert coverage("The shop is open on Saturday from 9:00 to 18:00.", hours) == 0.5
