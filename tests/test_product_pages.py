"""How the gate reads a shop's product pages (fresh-user review, session 67): model names
that end in a number ("the Aero 14"), and a discontinued model's page beside its successor."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from fakes import over_sentences

from camab_rag.conflicts import disputes
from camab_rag.groundedness.anchors import followed_up
from camab_rag.groundedness.wordforms import (
    ContextWords,
    answered_clauses,
    derived_values,
    forms,
    is_stale,
    misread_spans,
    named_numbers,
    rivals,
    sentences_of,
    subject_forms,
)
from camab_rag.result import Conflict

AERO_14 = (
    "Aero 14 (2025). 14-inch laptop, 2.8K display. Memory: 16 GB RAM. Storage: 512 GB SSD. "
    "Battery: up to 12 hours. Ports: 2x USB-C (Thunderbolt 4), HDMI 2.0. Price: 1,099 EUR."
)
AERO_16 = (
    "Aero 16. 16-inch laptop, 3.2K display. Memory: 32 GB RAM. Storage: 1 TB SSD. "
    "Battery: up to 10 hours. Price: 1,499 EUR."
)
OLD_AERO_14 = (
    "DISCONTINUED - This product is no longer available. Successor: Aero 14 (2025). "
    "Aero 14 (2023). 14-inch laptop. Memory: 8 GB RAM. Battery: up to 10 hours. Price: 899 EUR."
)
SHOP = [AERO_14, OLD_AERO_14, AERO_16]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("How much RAM does the Aero 16 have?", ["16"]),
        ("Is Terminal 2 open at night?", ["2"]),
        ("Can I still buy the Aero 14 (2023)?", ["14", "2023"]),
        # amounts, dates and counts are no names
        ("It has 16 GB of RAM and weighs 1.9 kg.", []),
        ("We are closed on Monday 5 May and in June 2025.", []),
        ("The price is EUR 50.", []),
        ("Storage: 512 GB SSD.", []),
    ],
)
def test_a_number_ending_a_name_is_part_of_the_name(text, named):
    found = forms(text)
    assert [found[k][2] for k in sorted(named_numbers(text, found))] == named


def test_a_name_ending_in_a_number_is_the_questions_subject_not_a_value():
    assert "aero 16" in subject_forms("How much RAM does the Aero 16 have?")
    context = ContextWords.of(SHOP, "What is the battery life of the Aero 14?")
    assert context.asked_values == ()  # "14" is no amount the asker gave
    # "Take 2 tablets" is read as a count where the context writes no "Take 2" as a name
    assert named_numbers("Take 2 tablets.", forms("Take 2 tablets."), context.named) == set()


@pytest.mark.parametrize(
    ("question", "answer", "misread"),
    [
        # the Aero 16's page, not the Aero 14's "16 GB", is what the answer is about
        ("How much RAM does the Aero 16 have?", "The Aero 16 has 16 GB of RAM.", ["16"]),
        ("How much RAM does the Aero 16 have?", "The Aero 16 has 32 GB of RAM.", []),
        ("What is the battery life of the Aero 14?", "The Aero 14 lasts up to 14 hours.", ["14"]),
        ("What is the battery life of the Aero 14?", "The Aero 14 lasts up to 12 hours.", []),
    ],
)
def test_a_models_number_picks_its_page(question, answer, misread):
    context = ContextWords.of(SHOP, question)
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread
    assert rivals(answer, context) == []  # the other models' pages do not dispute it


def test_the_model_number_is_no_amount_to_work_with():
    # "14 hours" is not "the Aero 14" times some "1 kg" of the context
    context = ContextWords.of(SHOP, "And the 14-inch one?")
    assert derived_values("The Aero 14 lasts up to 14 hours.", context) == frozenset()


@pytest.mark.parametrize(
    ("text", "stale"),
    [
        ("DISCONTINUED - This product is no longer available. Successor: Aero 14.", True),
        ("This model has been discontinued. See the Aero 15.", True),
        ("Aero 14. This product is no longer available in blue.", False),
        ("Shop. The blue model is no longer available.", False),
    ],
)
def test_a_discontinued_products_page_is_out_of_date(text, stale):
    assert is_stale(text) is stale


def test_a_discontinued_page_disputes_no_value_its_successor_states():
    context = ContextWords.of(SHOP, "What is the battery life of the Aero 14?")
    assert rivals("The Aero 14 lasts up to 12 hours on battery.", context) == []
    wrong = "The Aero 14 lasts up to 10 hours on battery."
    assert [(wrong[a:b], set(d)) for (a, b), d in rivals(wrong, context)] == [("10", {0})]


def test_a_question_naming_the_discontinued_model_is_answered_by_its_page():
    asked = ContextWords.of(SHOP, "Can I still buy the Aero 14 (2023)?")
    assert asked.stale == frozenset()  # only its page names the 2023 model
    assert rivals("No, the Aero 14 (2023) is discontinued.", asked) == []
    # the same page stays out of date where the question names no model of its own
    assert ContextWords.of(SHOP, "How much is the Aero 14?").stale == {1}


RETURNS = (
    "Returns and warranty. You can return any laptop within 30 days of delivery if it is "
    "unused. Refunds are paid within 14 days of receiving the return. All laptops come with "
    "a 2-year warranty."
)


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        # the returns clause's 30 days, in an answer about the warranty the question asks
        ("The warranty on laptops is 30 days after delivery.", ["30"]),
        ("All laptops come with a 30-day warranty.", ["30"]),
        ("All laptops come with a 2-year warranty.", []),
        ("The warranty on laptops lasts two years.", []),
    ],
)
def test_a_value_of_a_clause_lacking_the_questions_words_is_misread(answer, misread):
    context = ContextWords.of([RETURNS, AERO_14], "How long is the warranty on laptops?")
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread
    # asked about returns, the same 30 days is the returns clause's
    returns = ContextWords.of([RETURNS, AERO_14], "How long do I have to return a laptop?")
    assert misread_spans("You can return a laptop within 30 days of delivery.", returns) == []


def test_a_bare_reply_is_read_on_the_page_of_the_model_asked():
    # "Ethernet" is a rarer word than "Aero 14", but the question names the Aero 14
    nova = "Nova 15. Ports: 1x USB-C, 3x USB-A, HDMI, Ethernet (RJ45). Price: 999 EUR."
    docs = [AERO_14, AERO_16, nova]
    aero = answered_clauses(ContextWords.of(docs, "Does the Aero 14 have an Ethernet port?"))
    assert {c.doc for c in aero} == {0} and all("hdmi" in c.own for c in aero)
    asked = answered_clauses(ContextWords.of(docs, "Does the Nova 15 have an Ethernet port?"))
    assert {c.doc for c in asked} == {2}


LINES = [  # review 3's transit pages (session 67)
    "Line 4 (bus): Central Station - Harbour Square. On weekdays Line 4 runs every 4 "
    "minutes during peak hours (7:00-9:00 and 16:00-18:30) and every 10 minutes at other "
    "times. First departure from Central Station: 05:10. Last departure from Central "
    "Station: 23:40. On Sundays and public holidays Line 4 runs every 20 minutes; the "
    "first departure is at 07:00 and the last departure is at 22:50.",
    "Line 14 (bus): Central Station - Airport (Terminal 1, Terminal 2). Line 14 runs "
    "every 15 minutes, every day. First departure from Central Station: 04:50. Last "
    "departure from Central Station: 00:15. On Sundays Line 14 runs every 30 minutes. "
    "Since 1 March 2025 Line 14 replaces the former Line 41.",
    "Discontinued: Line 41 (Airport Express). This line no longer runs since 1 March "
    "2025; replaced by Line 14. Line 41 ran from Central Station to the Airport every 20 "
    "minutes; the last departure was at 22:30. A single ticket on Line 41 cost 6 EUR.",
    "Tram 2: Old Town - University. Tram 2 runs every 8 minutes on weekdays and every 12 "
    "minutes at weekends. First departure from Old Town: 05:30. Last departure from Old "
    "Town: 01:00. Bicycles are not allowed on Tram 2. All trams are step-free.",
]


def _line_disputes(question: str, answer: str) -> dict[int, list[str]]:
    return disputes(over_sentences(LINES, question, answer, lambda s: np.zeros(len(s))))


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # review 3 (session 67): Line 4's page "disagreed on “14”, “15”" of a right answer
        ("How often does Line 14 run?", "Line 14 runs every 15 minutes."),
        # another line's stop in the same slot is no rival name
        (
            "When is the last departure of Line 14?",
            "The last departure of Line 14 from Central Station is at 00:15.",
        ),
        ("When does Tram 2 start in the morning?", "The first Tram 2 leaves Old Town at 05:30."),
        # "no longer" says what the discontinued page says of itself
        (
            "Does Line 41 still run to the airport?",
            "No, Line 41 no longer runs since 1 March 2025; take Line 14 instead.",
        ),
    ],
)
def test_another_lines_page_disputes_nothing(question, answer):
    assert rivals(answer, ContextWords.of(LINES, question)) == []
    assert _line_disputes(question, answer) == {}


def test_the_models_conflict_from_another_lines_page_disputes_nothing():
    # review 3 #14 (session 67): the model's own conflict kept Line 4's page disputing
    answer = "Line 14 runs every 15 minutes."
    result = over_sentences(
        LINES, "How often does Line 14 run?", answer, lambda s: np.zeros(len(s))
    )
    line_4, line_14 = (
        next(k for k, s in enumerate(result.segments) if s.doc_index == d and "every" in s.text)
        for d in (0, 1)
    )
    at = answer.index("15")
    result = replace(result, conflicts=[Conflict("15", at, at + 2, line_4, line_14, -0.9, 1.2)])
    assert disputes(result) == {}
    assert line_4 not in disputes(result, unit="segment")


def test_a_line_answer_is_still_misread_by_its_own_page():
    question = "How often does Line 4 run at peak hours?"
    answer = "Line 4 runs every 8 minutes at peak hours."
    assert [answer[a:b] for a, b in misread_spans(answer, ContextWords.of(LINES, question))] == [
        "8"
    ]


LAST_4 = [
    {"role": "user", "content": "When is the last departure of Line 4 from Central Station?"},
    {"role": "assistant", "content": "The last Line 4 bus leaves Central Station at 23:40."},
]
WEEKDAYS_4 = [
    {"role": "user", "content": "How often does Line 4 run on weekdays?"},
    {"role": "assistant", "content": "Every 10 minutes outside peak hours."},
]


@pytest.mark.parametrize(
    ("history", "follow_up", "answer", "misread", "disputed"),
    [
        # review 3 #27/#28 (session 67): "What about Line 14?" asks of Line 14, not of both
        (LAST_4, "What about Line 14?", "At 00:15.", [], {}),
        (LAST_4, "What about Line 14?", "At 23:40.", [], {1: ["23:40"]}),
        # review 3 #26: "On Sundays ...; the last departure is at 22:50" is of Sundays
        (LAST_4, "And on Sundays?", "On Sundays the last departure is at 22:50.", [], {}),
        # its page states the Sundays' value: it disputes (session 69)
        (
            LAST_4,
            "And on Sundays?",
            "On Sundays the last departure is at 23:40.",
            ["23", "40"],
            {0: ["23:40"]},
        ),
        # review 3 #29: the weekdays asked before are not the days asked now
        (WEEKDAYS_4, "And on Sundays?", "Every 10 minutes.", ["10"], {0: ["10"]}),
        (WEEKDAYS_4, "And on Sundays?", "Every 20 minutes.", [], {}),
    ],
)
def test_a_follow_up_asks_of_its_own_line_and_days(history, follow_up, answer, misread, disputed):
    asked = followed_up(follow_up, history, LINES)
    read = misread_spans(answer, ContextWords.of(LINES, asked))
    assert [answer[a:b] for a, b in read] == misread
    result = over_sentences(LINES, follow_up, answer, lambda s: np.zeros(len(s)))
    assert disputes(replace(result, asked=asked)) == disputed


def test_an_opening_day_holds_for_the_sentences_later_clauses():
    clauses = sentences_of(LINES[0])
    last = next(c for c in clauses if "22" in c.own)
    assert last.named_days == {"sunday"}
    assert next(c for c in clauses if "23" in c.own).named_days == frozenset()
    # a later clause naming its own days keeps them
    shop = sentences_of("On Mondays the shop opens at 9:00; on Saturdays it opens at 10:00.")
    assert [sorted(c.named_days) for c in shop] == [["monday"], ["saturday"]]


def test_a_price_times_one_is_no_working_out():
    # review 3 #7 (session 67): "a day pass" was a count of one day, and 2 EUR x 1 the
    # single ticket's price "worked out", so the wrong price passed
    fares = (
        "Fares (zone A): A single ticket costs 2 EUR and is valid for 90 minutes on all "
        "buses, trams and the S3. A day pass costs 7 EUR."
    )
    context = ContextWords.of([fares], "How much is a day pass?")
    wrong = "A day pass costs 2 EUR."
    assert derived_values(wrong, context) == frozenset()
    assert [wrong[a:b] for a, b in misread_spans(wrong, context)] == ["2"]
    assert misread_spans("A day pass costs 7 EUR.", context) == []
