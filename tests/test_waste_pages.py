"""How the gate reads a council's waste-service pages (fresh-user review, session 69): an
archived price whose current page opens with a heading, a day given for another district,
and a "No" to "Is it free for ...?" where the page says it is."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import over_sentences

from camab_rag.conflicts import disputes
from camab_rag.groundedness.anchors import followed_up
from camab_rag.groundedness.score import unchecked_facts
from camab_rag.groundedness.wordforms import (
    ContextWords,
    misread_spans,
    other_kinds_of,
    price_disputes,
    rivals,
)

DAYS = (
    "Household bin collection days. Bins in the North district are collected on Mondays. "
    "Bins in the South district are collected on Thursdays. Put your bin out by 7 am."
)
BULKY = (
    "Bulky waste collection. We collect up to 3 bulky items for 25 euros. Each extra item "
    "costs 8 euros. The collection is free for residents over 75."
)
CENTRE = (
    "Recycling centre opening hours. The centre is open from 9:00 to 16:00. The centre is "
    "closed on Tuesdays all year."
)
ARCHIVED = (
    "ARCHIVED PAGE: 2024 fees, superseded. Bulky waste collection cost 20 euros for up to 3 "
    "items and each extra item cost 6 euros."
)
PAGES = [DAYS, BULKY, CENTRE, ARCHIVED]
NORTH = "When are bins collected in the North district?"


def _misread(answer: str, question: str) -> list[str]:
    return [answer[a:b] for a, b in misread_spans(answer, ContextWords.of(PAGES, question))]


def test_an_archived_price_is_disputed_by_the_current_pages_priced_clause():
    # review w01: "20 euros." passed; the current page's closest clause was its heading
    context = ContextWords.of(PAGES, "How much does bulky waste collection cost?")
    answer = "20 euros."
    assert [(answer[a:b], sorted(d)) for (a, b), d in rivals(answer, context)] == [("20", [1])]
    assert rivals("25 euros.", context) == []


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        ("On Mondays.", ["Mondays"]),  # review w05, a chat follow-up
        ("They are collected on Mondays.", ["Mondays"]),
        ("South district bins are collected on Mondays.", ["Mondays"]),  # review w07
        ("On Thursdays.", []),
        ("South district bins are collected on Thursdays.", []),
    ],
)
def test_a_day_the_closest_clause_does_not_give_is_misread(answer, misread):
    history = [{"role": "user", "content": NORTH}, {"role": "assistant", "content": "On Mondays."}]
    question = followed_up("And in the South district?", history, PAGES)
    assert "South district" in question
    assert _misread(answer, question) == misread


def test_days_read_with_open_or_closed_are_left_to_the_opposites():
    question = "When is the recycling centre open?"
    assert _misread("It is open on Mondays and closed on Tuesdays.", question) == []
    assert _misread("On Mondays.", NORTH) == []  # the day the North district's page gives


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        ("No.", ["No"]),
        ("No, it costs 25 euros.", ["No"]),  # review w08 passed
        ("Yes.", []),
        ("Yes, it is free for residents over 75.", []),
    ],
)
def test_a_no_to_is_it_free_misreads_where_the_page_says_free(answer, misread):
    assert _misread(answer, "Is bulky waste collection free for residents over 75?") == misread


def test_a_no_to_is_it_free_stands_where_the_clause_also_prices_it():
    pages = ["Wi-Fi. Wi-Fi is free for members and costs 5 euros a day for everyone else."]
    context = ContextWords.of(pages, "Is the Wi-Fi free?")
    assert misread_spans("No.", context) == []


@pytest.mark.parametrize(
    ("answer", "unchecked"),
    [  # review r14: the right total read "the sources do not say “41”"
        (
            "It would cost 41 euros: 25 euros for the first three and 8 euros for each of the "
            "two extra items.",
            [],
        ),
        (
            "It would cost 45 euros: 25 euros for the first three and 8 euros for each of the "
            "two extra items.",
            ["45"],
        ),
    ],
)
def test_a_total_worked_from_a_price_for_each_extra_item_is_shown(answer, unchecked):
    context = ContextWords.of(PAGES, "How much would it cost to collect 5 bulky items?")
    assert unchecked_facts(answer, context) == unchecked


GARDEN = (
    "Garden waste subscription. A garden waste subscription costs 45 euros a year for one "
    "bin. A second bin costs 30 euros a year."
)


def test_free_where_a_page_prices_it_is_disputed_by_that_page():
    # review w14: "something else about “free”" named no source
    pages = [*PAGES, GARDEN]
    question = "How much is a garden waste subscription? And a second bin?"
    result = over_sentences(pages, question, "A second bin is free.", lambda s: np.zeros(len(s)))
    assert disputes(result) == {4: ["free"]}
    right = over_sentences(
        pages, question, "A second bin costs 30 euros a year.", lambda s: np.zeros(len(s))
    )
    assert disputes(right) == {}


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        ("It costs 30 euros a year.", []),  # session 70: "30" read against the 45
        ("A second bin costs 30 euros a year.", []),
        ("It costs 45 euros a year.", ["45"]),
        ("A second bin costs 45 euros a year.", ["45"]),
    ],
)
def test_a_follow_ups_own_subject_picks_the_clause_its_pronoun_stands_for(answer, misread):
    # "And a second bin?" after the subscription's price: the clause on a second bin
    history = [
        {"role": "user", "content": "How much is a garden waste subscription?"},
        {"role": "assistant", "content": "45 euros a year."},
    ]
    pages = [*PAGES, GARDEN]
    question = followed_up("And a second bin?", history, pages)
    context = ContextWords.of(pages, question)
    assert context.latest == {"second", "bin"}
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread
    result = over_sentences(pages, question, answer, lambda s: np.zeros(len(s)))
    assert disputes(result) == ({4: misread} if misread else {})


LIBRARY = [
    "Library. The library is open Monday to Friday from 9:00 to 18:00, and on Saturdays "
    "from 10:00 to 14:00.",
    "Museum. The museum is open Tuesday to Saturday, and the shop is open on Mondays.",
]


@pytest.mark.parametrize(
    ("question", "answer", "misread"),
    [
        ("When is the library open on weekends?", "On Saturdays.", []),  # a day group asked
        ("When is the library open besides weekdays?", "On Saturdays.", []),  # ", and on ..."
        ("When is the library open besides weekdays?", "On Saturdays from 10:00 to 14:00.", []),
        ("When is the museum open?", "On Mondays.", ["Mondays"]),  # the shop's own clause
    ],
)
def test_a_day_a_sentence_goes_on_to_give_is_the_same_subjects(question, answer, misread):
    context = ContextWords.of(LIBRARY, question)
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread


GARDEN_DAYS = [
    "Garden waste. Garden waste is collected on Tuesdays.",
    "ARCHIVED PAGE, superseded. Garden waste bins in the town are collected every week on Mondays.",
]


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        ("On Tuesdays.", []),
        ("Garden waste bins are collected on Tuesdays.", []),
        ("On Mondays.", ["Mondays"]),  # the archived page's day
    ],
)
def test_a_day_is_read_against_the_current_page_where_an_archived_one_is_closer(answer, misread):
    # the archived clause shares more of the question's words ("bins", "town")
    context = ContextWords.of(GARDEN_DAYS, "When are garden waste bins collected in the town?")
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread


DISTRICTS = [
    "North district. Bins in the North district are collected on Mondays. A replacement bin "
    "costs 15 euros. The North district's recycling centre is open on Sundays.",
    "South district. In the South district, general waste bins are collected on Thursdays. "
    "A replacement general waste bin costs 25 euros in the South district. The South "
    "district's recycling centre is closed on Sundays.",
]


@pytest.mark.parametrize(
    ("question", "answer", "misread"),
    [
        ("When are general waste bins collected in the North district?", "On Mondays.", []),
        (
            "When are general waste bins collected in the North district?",
            "General waste bins are collected on Thursdays.",
            ["Thursdays"],
        ),
        (
            "When are general waste bins collected in the North district?",
            "On Thursdays.",
            ["Thursdays"],
        ),
        (
            "How much is a replacement general waste bin in the North district?",
            "A replacement general waste bin costs 15 euros.",
            [],
        ),
        (
            "How much is a replacement general waste bin in the North district?",
            "A replacement general waste bin costs 25 euros.",
            ["25"],
        ),
        ("When are bins collected in the South district?", "On Thursdays.", []),
        ("When are bins collected in the South district?", "On Mondays.", ["Mondays"]),
        (
            "Is the general waste recycling centre in the North district open on Sundays?",
            "Yes.",
            [],
        ),
        (
            "Is the general waste recycling centre in the North district open on Sundays?",
            "No.",
            ["No"],
        ),
    ],
)
def test_a_page_about_another_district_is_no_source_for_the_one_asked(question, answer, misread):
    # the South page shares more of the question's words ("general waste"), but the
    # question names the North district, and the South page names only the South
    context = ContextWords.of(DISTRICTS, question)
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread


@pytest.mark.parametrize(
    ("answer", "disputed"),
    [("25 euros.", [("25", [0])]), ("15 euros.", []), ("It costs 25 euros.", [("25", [0])])],
)
def test_a_price_only_another_districts_page_gives_is_disputed_by_the_page_asked(answer, disputed):
    # "25 euros" is the South district's general waste bin, asked of the North district
    context = ContextWords.of(DISTRICTS, "How much is a replacement bin in the North district?")
    assert [(answer[a:b], sorted(d)) for (a, b), d in rivals(answer, context)] == disputed


BULKY_BY_DISTRICT = [  # the district named in another sentence than the price
    "North district waste. In the North district, bins are collected every Tuesday. Bulky "
    "waste collection is free once a year.",
    "South district waste. In the South district, bins are collected every Thursday. Bulky "
    "waste collection costs 25 euros per visit.",
]


@pytest.mark.parametrize(
    ("district", "answer", "disputed"),
    [
        ("North", "25 euros.", {0: ["25"]}),  # fresh-user review 72, W8: it was supported
        ("North", "Bulky waste collection in the North district costs 25 euros.", {0: ["25"]}),
        ("North", "It is free once a year.", {}),
        ("South", "25 euros.", {}),
        ("South", "It is free.", {1: ["free"]}),
    ],
)
def test_a_price_or_free_of_another_districts_page_is_disputed_by_the_page_asked(
    district, answer, disputed
):
    question = f"How much does bulky waste collection cost in the {district} district?"
    assert price_disputes(answer, ContextWords.of(BULKY_BY_DISTRICT, question)) == disputed


GARDEN_BY_DISTRICT = [  # each page names its district in its first clause only
    "North district waste collection. In the North district, residual waste bins are "
    "collected every Tuesday and recycling bins every second Monday. Garden waste is "
    "collected on Fridays from April to October.",
    "South district waste collection. In the South district, general waste bins are "
    "collected every Thursday. There is no garden waste collection in the South district; "
    "take garden waste to the recycling centre.",
]


@pytest.mark.parametrize(
    ("question", "answer", "misread"),
    [  # fresh-user review 72, W6: "Yes, on Fridays ..." to the South question passed
        ("When is garden waste collected in the North district?", "On Fridays.", []),
        (
            "When is garden waste collected in the North district?",
            "Garden waste is collected on Fridays from April to October.",
            [],
        ),
        ("When is garden waste collected in the South district?", "On Fridays.", ["Fridays"]),
        ("Is there a garden waste collection in the South district?", "Yes.", ["Yes"]),
        ("Is there a garden waste collection in the South district?", "No.", []),
        (
            "Is there a garden waste collection in the South district?",
            "Yes, on Fridays from April to October.",
            ["Fridays"],
        ),
        ("Is there a garden waste collection in the North district?", "Yes.", []),
    ],
)
def test_each_clause_of_a_districts_page_is_of_that_district(question, answer, misread):
    # the North page's first clause shares more of the question's words ("North
    # district") than its garden-waste clause, which holds the day asked
    context = ContextWords.of(GARDEN_BY_DISTRICT, question)
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread


POOLS = [
    "Riverside pool. The Riverside pool has a 50-metre pool. A monthly pass costs 45 euros.",
    "Hilltop pool. The Hilltop pool has a 25-metre pool. A monthly pass costs 35 euros.",
]


@pytest.mark.parametrize(
    ("question", "answer", "word", "kinds"),
    [
        (
            "When is garden waste collected in the South district?",
            "On Fridays.",
            "Fridays",
            ("North district",),
        ),
        ("When is garden waste collected in the North district?", "On Fridays.", "Fridays", ()),
        (
            "When are residual waste bins collected in the North district?",
            "Every Thursday.",
            "Thursday",
            ("South district",),
        ),
        # "25" also stands on the Hilltop pool's page: a page about another thing is no
        # page of the kind asked, nor of another district
        ("How much is a monthly pass in the North district?", "25 euros.", "25", ()),
        ("How much is a monthly pass at the Hilltop pool?", "45 euros.", "45", ("Riverside pool",)),
        ("How much is a monthly pass?", "45 euros.", "45", ()),  # no kind asked
    ],
)
def test_a_word_only_another_kinds_page_states_names_that_kind(question, answer, word, kinds):
    context = ContextWords.of([*GARDEN_BY_DISTRICT, *POOLS], question)
    assert other_kinds_of(word, context, answer) == kinds
