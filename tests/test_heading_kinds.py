"""Kinds named in lower case under their pages' headings (fresh-user review, session 72,
K2): "Resident parking permit." and "Visitor parking permit." open two pages, whose
clauses then write "a resident parking permit costs 60 euros per year"."""

from __future__ import annotations

import pytest

from camab_rag.groundedness.wordforms import ContextWords, misread_spans

PERMITS = [
    "Resident parking permit. A resident parking permit costs 60 euros per year and allows "
    "parking in the holder's own zone only. Each household may have at most two resident "
    "permits. Apply online; the permit is sent within 10 working days.",
    "Visitor parking permit. Visitor permits are sold in books of 10 day passes for 15 euros. "
    "Each household may buy up to 5 books per year. A visitor permit is valid in the "
    "holder's zone for one day, from 8 am to midnight.",
]
VISITOR = "How much does a visitor parking permit cost?"
RESIDENT = "How much does a resident parking permit cost?"


def test_the_first_words_of_headings_ending_alike_are_kinds_of_one_thing():
    context = ContextWords.of(PERMITS, VISITOR)
    assert context.variants == {"resident", "visitor"}
    assert context.kind_names["visitor"] == "visitor parking permit"
    # headings ending differently, or holding a small word, name no kinds
    other = ["Opening hours. Open daily.", "Parking permit. Apply online.", "How to apply. Online."]
    assert not ContextWords.of(other, VISITOR).variants


@pytest.mark.parametrize(
    ("question", "answer", "misread"),
    [
        (VISITOR, "It costs 60 euros per year.", ["60"]),  # the resident permit's price
        (VISITOR, "A visitor parking permit costs 60 euros.", ["60"]),
        (VISITOR, "It costs 15 euros for a book of 10 day passes.", []),
        (RESIDENT, "It costs 60 euros per year.", []),
        (RESIDENT, "A resident parking permit costs 60 euros per year.", []),
    ],
)
def test_a_price_from_the_other_kinds_page_is_misread(question, answer, misread):
    context = ContextWords.of(PERMITS, question)
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread
