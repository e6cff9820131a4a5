"""How the gate reads an airline's baggage pages (fresh-user review, session 69): one
number in two measures ("23 kg" of a checked bag, "23 cm" of a cabin bag's size), an
archived rule whose value a current page states of something else, and "free" where the
page gives a price."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import over_sentences

from camab_rag import cite
from camab_rag.conflicts import disputes
from camab_rag.groundedness.wordforms import ContextWords, misread_spans, outdated, rivals

CABIN = (
    "Cabin baggage. Every passenger may bring one cabin bag of up to 8 kg on board. The cabin "
    "bag must not exceed 55 x 40 x 23 cm including wheels and handles."
)
CHECKED = "Checked baggage. Standard fares include one checked bag of up to 23 kg."
PETS = (
    "Small cats and dogs may travel in the cabin if pet and carrier together weigh no more "
    "than 8 kg. Pets in the cabin cost 55 euros per flight."
)
INFANTS = "Each infant may bring one extra bag of up to 10 kg for baby items, carried free."
ARCHIVED = (
    "ARCHIVED PAGE: 2024 baggage rules. Under the 2024 rules, cabin bags could weigh up to 10 kg."
)
PAGES = [CABIN, CHECKED, PETS, INFANTS, ARCHIVED]
HEAVY = "How heavy can my cabin bag be?"


def _misread(answer: str, question: str = HEAVY) -> list[str]:
    return [answer[a:b] for a, b in misread_spans(answer, ContextWords.of(PAGES, question))]


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        # review 6, LangChain: SmolLM2's own answer passed, "23" held by "23 cm"
        ("The maximum weight limit for a cabin bag is 23 kg.", ["23"]),
        ("The maximum weight limit for a cabin bag is 8 kg.", []),
        ("The cabin bag may be at most 23 cm deep.", []),
        ("A checked bag on a Standard fare can weigh up to 23 kg.", []),
    ],
)
def test_a_number_is_held_only_in_its_measure(answer, misread):
    assert _misread(answer) == misread


def test_an_archived_value_a_current_page_states_of_something_else_is_out_of_date():
    # review 6 w01: "10 kg." read "the sources differ on “10”" (the infants' 10 kg bag)
    context = ContextWords.of(PAGES, HEAVY)
    assert outdated("10", context, "10 kg.")
    assert outdated("10", context, "A cabin bag can weigh 10 kg.")
    assert not outdated("10", context, "An infant may bring an extra bag of up to 10 kg.")
    answer = "10 kg."
    assert [(answer[a:b], sorted(d)) for (a, b), d in rivals(answer, context)] == [("10", [0])]


def test_free_where_the_page_gives_a_price():
    # review 6 w12: "pets of any size travel in the cabin for free" (55 euros) passed as support
    asked = "Can I bring my cat in the cabin?"
    assert _misread("Yes, pets of any size travel in the cabin for free.", asked) == ["free"]
    assert _misread("Yes, and pets in the cabin cost 55 euros per flight.", asked) == []


EXCESS = "Excess baggage fees. An extra checked bag of up to 23 kg costs 45 euros online."


@pytest.mark.parametrize("lead", [0.02, 0.2])
def test_a_bare_value_cites_the_page_naming_what_was_asked(lead):
    # review 6 c04: "23 kg." to the Standard fare's limit cited only the excess fees page,
    # which the model scored a little higher; the checked baggage page names the question
    docs = [CABIN, CHECKED, EXCESS]
    question = "What is the weight limit per checked bag on a Standard fare?"

    def scores(segments):
        return np.array([0.05 + lead if s.doc_index == 2 else 0.05 for s in segments])

    shown = cite(over_sentences(docs, question, "23 kg.", scores), docs)
    assert [shown.source(n).doc_index for n in shown.sentences[0].citations] == [1]
    # an answer naming the excess fee still cites the fees page
    fee = cite(
        over_sentences(docs, question, "An extra bag of 23 kg costs 45 euros.", scores), docs
    )
    assert [fee.source(n).doc_index for n in fee.sentences[0].citations] == [2]


FARES = (
    "Checked baggage allowance by fare. Standard fares include one checked bag of up to 23 kg. "
    "Flex fares include two checked bags of up to 23 kg each."
)
CHECK_IN = (
    "Check-in times. Online check-in opens 30 hours before departure and closes 1 hour before "
    "departure. Airport check-in desks open 3 hours before departure and close 45 minutes "
    "before departure."
)


@pytest.mark.parametrize(
    ("question", "answer", "disputed"),
    [
        # review 6 w05: another fare's number, held on the same page ("two" of Flex fares)
        (
            "How much checked baggage is included in a Standard fare?",
            "Two checked bags of up to 23 kg each.",
            {0: ["Two"]},
        ),
        # review 6 w09: online check-in's "1 hour" for the airport desks
        ("When do the airport check-in desks close?", "1 hour before departure.", {1: ["1"]}),
        ("When do the airport check-in desks close?", "45 minutes before departure.", {}),
        ("How much checked baggage is included in a Standard fare?", "One bag of 23 kg.", {}),
    ],
)
def test_a_misread_number_is_disputed_by_the_page_stating_otherwise(question, answer, disputed):
    old = "ARCHIVED PAGE: 2024 rules. Standard fares included one checked bag of up to 20 kg."
    docs = [FARES, CHECK_IN, INFANTS, old]  # the archived page lies closest to "Two ... bags"
    result = over_sentences(docs, question, answer, lambda s: np.zeros(len(s)))
    assert disputes(result) == disputed
