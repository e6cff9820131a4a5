"""Word forms the gate compares, and values or negations the context does not state (pure
logic: no model)."""

from __future__ import annotations

import pickle

import pytest

from camab_rag.groundedness.score import (
    MISREAD_COVERAGE,
    checked_coverage,
    claim_coverage,
    coverage,
    misread_words,
    unchecked_facts,
    words,
)
from camab_rag.groundedness.wordforms import (
    ContextWords,
    forms,
    holds,
    misread_spans,
    rival_spans,
    rivals,
    sentences_of,
    stem,
)


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


def test_a_degree_sign_and_its_scale_read_as_the_words():
    def of(text: str) -> list[str]:
        return [f for *_, f in forms(text) if f]

    assert of("220°C") == of("220 degrees Celsius") == ["220", "deg", "celsius"]
    assert of("40 °F") == of("40 degrees Fahrenheit") == ["40", "deg", "fahrenheit"]
    assert of("vitamin C") == ["vitamin", "c"]  # a letter is a scale only after the sign
    oven = ContextWords.of(["Bake the loaf at 220°C for 35 minutes."])
    assert coverage("220 degrees Celsius.", oven) == 1.0
    assert coverage("250 degrees Celsius.", oven) < 1.0


@pytest.mark.parametrize(
    ("written", "hour"),
    [
        ("5 pm", "17:00"),
        ("5pm", "17:00"),
        ("5 p.m.", "17.00"),
        ("5 PM", "17:00"),
        ("10am", "10:00"),
        ("9 a.m.", "09:00"),
        ("noon", "12:00"),
        ("12 pm", "12:00"),
        ("midnight", "00:00"),
        ("12 am", "00:00"),
    ],
)
def test_every_way_of_writing_a_clock_time_shares_the_hour_form(written, hour):
    """Issue 48 (a fresh user's museum): "It closes at 5 pm on Saturday." over "from 10:00
    to 17:00" lost the hour when written "5pm" or "5 p.m.", and "At noon." over "12:00"."""

    def of(text: str) -> list[str]:
        return [f for *_, f in forms(text) if f]

    assert of(written) == of(hour) == [hour[:2].lstrip("0") or "0"]
    hours = ContextWords.of([f"On Saturdays the museum closes at {hour}."])
    assert coverage(f"It closes at {written} on Saturday.", hours) == 1.0


def test_coverage_compares_forms_and_context_words_stay_a_word_set():
    context = ContextWords.of(["The Glass Teapot holds 0.8 litres and costs €29."])
    assert context == frozenset(words("The Glass Teapot holds 0.8 litres and costs €29."))
    assert coverage("The teapots cost 29 euros.", context) == 1.0
    # another price of the same teapot: a misread value, not a new detail
    assert coverage("The teapots cost 45 euros.", context) == MISREAD_COVERAGE
    assert coverage("The teapots ship with 45 cups.", context) == pytest.approx(1 / 4)
    assert coverage("The teapots cost 29.", set(context)) == 1.0  # a plain set: by form too
    assert pickle.loads(pickle.dumps(context)).sentences == context.sentences


def test_a_value_of_another_subject_and_an_unmade_negation_are_misread():
    two = ContextWords.of(
        ["The Aero kettle costs 49 euros.", "The Glass teapot costs 59 euros. It is blue."]
    )

    def misread(text: str) -> list[str]:
        return [text[a:b] for a, b in misread_spans(text, two)]

    assert misread("The Aero kettle costs 59 euros.") == ["59"]
    assert misread("The Aero kettle costs 49 euros.") == []
    assert misread("The Glass teapot is not blue.") == ["not"]
    assert misread("The Glass teapot isn't blue.") == ["isn't"]
    assert misread("No, the Aero kettle costs 49 euros.") == []  # a reply, not a negation
    assert coverage("The Aero kettle costs 59 euros.", two) == MISREAD_COVERAGE
    # a pronoun-led sentence borrows the previous sentence's subject
    pronoun = ContextWords.of(["The Glass Teapot holds 0.8 litres. It costs €29."])
    assert misread_spans("The Glass Teapot costs €29.", pronoun) == []
    # no sentences known (a plain set): nothing is misread
    assert misread_spans("The Aero kettle costs 59 euros.", set(two)) == []


def test_a_negation_is_read_in_its_own_clause():
    """ "...; don't wait for a booking" is checked against the context clause about
    waiting, not against the one the whole sentence shares most words with."""
    clinic = ContextWords.of(
        [
            "Emergencies: if your pet is bleeding heavily or has eaten poison, call "
            "0123 456 789 at once, day or night. Do not wait for an appointment."
        ],
        "My dog ate rat poison, what should I do?",
    )

    def misread(text: str) -> list[str]:
        return [text[a:b] for a, b in misread_spans(text, clinic)]

    assert (
        misread("Phone 0123 456 789 straight away, even at night; don't wait for a booking.") == []
    )
    assert misread("Phone 0123 456 789 at once; do not call at night.") == ["not"]


def test_a_clause_holds_its_own_values_and_the_subject_before_it():
    hours = ContextWords.of(
        [
            "The shop is open Monday to Friday from 9:00 to 18:00 and on Saturday from "
            "10:00 to 16:00. It is closed on Sunday."
        ]
    )
    parts = sentences_of("Open Monday from 9:00 and on Saturday from 10:00; closed Sunday.")
    assert [sorted(s.own & {"9", "10", "monday", "saturday", "closed"}) for s in parts] == [
        ["9", "monday"],
        ["10", "saturday"],
        ["closed"],
    ]

    def misread(text: str) -> list[str]:
        return [text[a:b] for a, b in misread_spans(text, hours)]

    assert misread("The shop is open on Saturday from 9:00 to 18:00.") == ["9", "18"]
    assert misread("The shop is open on Saturday from 10:00 to 16:00.") == []
    assert misread("The shop is open on Monday from 9:00 to 18:00.") == []
    assert coverage("The shop is open on Saturday from 9:00 to 18:00.", hours) == 0.5


SHOP = [
    "The shop is open Monday to Friday from 9:00 to 18:00 and on Saturday from 10:00 to "
    "16:00. It is closed on Sunday.",
    "The City bike costs 590 euros and has three gears.",
    "The Trail Hopper costs 1,290 euros and comes with a two-year frame warranty.",
]


def test_an_opposite_of_what_the_context_states_for_the_subject_is_misread():
    """Issue 48: "open on Sunday" over "It is closed on Sunday." held every word (``open``
    from the sentence before), so the wrong answer passed (p 0.32)."""
    hours = ContextWords.of(SHOP, "Is the shop open on Sunday?")

    def misread(text: str) -> list[str]:
        return [text[a:b] for a, b in misread_spans(text, hours)]

    assert misread("Yes, the shop is open on Sunday from 10:00 to 16:00.") == ["open", "Yes"]
    assert misread("Yes.") == ["Yes"]  # a reply asserts what the question asks
    assert misread("No, it is closed on Sunday.") == []
    assert misread("No.") == []
    assert misread("The shop is open on Saturday.") == []  # borrowed subject, not opposed
    assert misread("The shop is closed on Saturday.") == ["closed"]
    assert coverage("Yes, the shop is open on Sunday.", hours) == MISREAD_COVERAGE


def test_the_question_names_the_subject_of_a_short_answer():
    """ "It costs 1,290 euros." to "How much is the City bike?": the answer's own words
    match both prices alike; the question says whose price it is."""
    city = ContextWords.of(SHOP, "How much is the City bike?")
    assert misread_spans("It costs 1,290 euros.", city) != []
    assert misread_spans("It costs 590 euros.", city) == []
    assert claim_coverage("It costs 590 euros.", city) == 1.0
    # no question: nothing tells the two prices apart, nothing is misread
    assert misread_spans("It costs 1,290 euros.", ContextWords.of(SHOP)) == []


def test_the_claim_must_hold_in_one_clause_not_in_words_scattered_over_documents():
    """The claim-level check: every word of "The City bike has a frame warranty." is
    somewhere in the context (the warranty is the Trail Hopper's), so word coverage is 1;
    the best clause holds half of it."""
    shop = ContextWords.of(SHOP, "What warranty does the City bike have?")
    scattered = "The City bike has a frame warranty."
    assert coverage(scattered, shop) == 1.0
    assert claim_coverage(scattered, shop) == 0.5
    assert checked_coverage(scattered, shop) == 0.75
    assert claim_coverage("The frame warranty is 2 years.", shop) == 1.0
    assert claim_coverage("The Trail Hopper costs 1,290 euros.", shop) == 1.0
    # a plain word set has no clauses: the claim-level check is word coverage
    assert claim_coverage(scattered, set(shop)) == 1.0


def test_how_often_and_function_words_are_no_checkable_content():
    context = ContextWords.of(["Guided tours start every hour. Members save 10% on all items."])
    assert coverage("Hourly.", context) == 1.0
    assert coverage("10% off everything, since 2020.", context) == pytest.approx(2 / 3)
    # review 19: the words of a sum state no fact ("the sources do not say “in total”")
    prices = ContextWords.of(["A tour costs 35 euros.", "A cruise costs 55 euros."])
    assert coverage("Together that comes to 90 euros in total.", prices) == 1.0


def test_selling_for_a_price_is_costing_it():
    """The fresh user's shop "sells the City Cruiser for 590 euros": "It costs 590 euros."
    lost a third of its coverage to the word ``costs``."""
    shop = ContextWords.of(
        [
            "Spoke & Chain sells the City Cruiser for 590 euros and the Trail Hopper for 1,290 "
            "euros."
        ],
        "How much is the City Cruiser?",
    )
    assert coverage("It costs 590 euros.", shop) == 1.0
    assert checked_coverage("The Trail Hopper costs 1,290 euros.", shop) == 1.0


def test_a_number_the_context_states_otherwise_for_the_same_words_is_misread():
    """Issue 48: "It is at 31 Quay Street, Port Elwyn." over "The museum is at 27 Quay
    Street" passed the gate (31 counted as a new detail, coverage 0.8) while the
    citations showed the document as disputing it."""
    museum = ContextWords.of(
        ["The museum is at 27 Quay Street, Port Elwyn, next to the ferry terminal."],
        "Where is the museum?",
    )

    def misread(text: str) -> list[str]:
        return [text[a:b] for a, b in misread_spans(text, museum)]

    assert misread("It is at 31 Quay Street, Port Elwyn.") == ["31"]
    assert checked_coverage("It is at 31 Quay Street, Port Elwyn.", museum) == MISREAD_COVERAGE
    assert misread("It is at 27 Quay Street, Port Elwyn.") == []
    # a number next to words the clause does not hold is a new detail, not a misread one
    assert misread("It has 31 rooms.") == []
    assert checked_coverage("It has 31 rooms.", museum) == 0.0


@pytest.mark.parametrize(
    ("answer", "source"),
    [
        ("Students get in for nine euros.", "Students and seniors pay 9 euros."),
        ("Children under 12 go in free.", "Children under 12 enter free."),
        (
            "No, you may not take flash photos in the galleries.",
            "Flash photography is not allowed in the galleries.",
        ),
    ],
)
def test_light_verbs_are_not_checked_and_a_stem_of_a_context_word_is_held(answer, source):
    """Issue 48: ordinary verbs (get, go, may, take) counted as facts the context lacks,
    and "photos" as missing under "photography", so reworded correct answers lost a
    quarter to a half of their coverage and were blocked."""
    context = ContextWords.of([source, "The museum is at 27 Quay Street."])
    assert checked_coverage(answer, context) == 1.0
    # a content word the context lacks is still checked
    assert checked_coverage(answer.rstrip(".") + " on Fridays.", context) < 1.0


def test_a_short_word_is_no_stem_and_an_invented_word_stays_unheld():
    context = ContextWords.of(["The country hosts a photography festival."])
    assert coverage("The festival shows photos.", context) == pytest.approx(2 / 3)  # shows
    assert coverage("A photo festival.", context) == 1.0
    assert coverage("An art festival.", context) == pytest.approx(1 / 2)  # art: too short


def test_a_number_written_another_way_is_no_evidence_against_the_answer():
    """Issue 48: "It closes at 5 pm on Saturday." over "from 10:00 to 17:00" scored
    -0.44 (a small model finds "5 pm" unlikely after "17:00") and its "pm" was shown as
    unsupported; the hour was checked by form, so its tokens' doubt is about spelling."""
    import re

    import numpy as np

    from camab_rag.groundedness.report import support_report
    from camab_rag.groundedness.score import reformed_pieces, support_score, taken_pieces
    from camab_rag.token_support import TokenSupport

    hours = ContextWords.of(["The museum is open Tuesday to Saturday from 10:00 to 17:00."])
    text = "It closes at 5 pm on Saturday."
    spans = [m.span() for m in re.finditer(r"\w+|\.", text)]
    pieces = [text[a:b] for a, b in spans]  # It closes at 5 pm on Saturday .
    empty = np.full(len(spans), -2.0)
    full = empty + np.array([0.5, 0.5, 0.5, -3.0, -1.0, 0.5, 1.0, 0.0])
    support = TokenSupport(
        text,
        np.array([a for a, _ in spans]),
        np.array([b for _, b in spans]),
        full,
        empty,
        np.ones(len(spans), dtype=np.int64),
    )
    assert [p for p, r in zip(pieces, reformed_pieces(support, hours)) if r] == ["5", "pm"]
    assert taken_pieces(support, hours)[pieces.index("pm")]
    # "closes" is held (the span of clock times states the closing time: its gain counts),
    # "5 pm" doubted by spelling only (no loss): 3 of 16
    assert support_score(support, hours) == pytest.approx(3.0 / 16)
    # written as the context writes it, the model's doubt counts
    same = TokenSupport(
        "It closes at 17 pm.",
        np.array([0, 3, 10, 13, 16]),
        np.array([2, 9, 12, 15, 18]),
        np.array([-1.5, -1.5, -1.5, -5.0, -3.0]),
        np.full(5, -2.0),
        np.ones(5, dtype=np.int64),
    )
    assert not reformed_pieces(same, hours)[3]
    # second review: where another page writes "5:00", "5 pm" does not count as rewritten,
    # but its "pm" alone is the time's spelling: never shown as unsupported
    both = ContextWords.of(["Open 10:00 to 17:00.", "Deliveries arrive at 5:00."])
    shown = [s.text for s in support_report(support, context_words=both).unsupported_spans]
    assert "pm" not in shown


def test_a_span_of_clock_times_states_when_it_opens_and_closes():
    """Issue 48 (review corpus C7): "It closes at 5 pm on Saturday." over "open Tuesday
    to Saturday from 10:00 to 17:00" was held only in part (checked coverage 0.83),
    "closes" being in the Sunday sentence alone: a clause that states a span of clock
    times states the opening and closing times, however they are worded."""
    museum = ContextWords.of(
        [
            "The Harbourlight Museum is open Tuesday to Saturday from 10:00 to 17:00. On "
            "Sundays it opens at 12:00 and closes at 16:00. It is closed on Mondays."
        ]
    )
    assert checked_coverage("It closes at 5 pm on Saturday.", museum) == 1.0
    assert checked_coverage("It closes at 6 pm on Saturday.", museum) < 1.0  # 18 is not held
    shop = ContextWords.of(["The shop is open from 9am-6pm on weekdays."])
    assert checked_coverage("It closes at 18:00 on weekdays.", shop) == 1.0
    assert checked_coverage("It is open until 6 pm.", shop) == 1.0
    # a span of days, a price or a count is no clock time: nothing is implied
    for text in ("Delivery takes 3 to 5 days.", "Tickets from 12.50 euros.", "Monday to Friday."):
        assert checked_coverage("It closes in 5 days.", ContextWords.of([text])) < 1.0


def test_a_pronoun_one_and_a_contraction_are_no_facts_to_check():
    """Blind set, dev half: "On Sundays the first one leaves at 8:15." read "one" as the
    number 1 next to the train's times (a misread value: coverage 0.5), and "No, it
    isn't." checked "isn" (coverage 0)."""
    trains = ContextWords.of(
        ["On weekdays the first train leaves at 5:40. On Sundays the first train leaves at 8:15."]
    )
    assert checked_coverage("On Sundays the first one leaves at 8:15.", trains) == 1.0
    policy = ContextWords.of(["Damage caused by flooding is not covered."])
    assert checked_coverage("No, it isn't.", policy) == 1.0
    assert [f for *_, f in forms("this one, one train")] == ["this", "", "1", "train"]


@pytest.mark.parametrize(
    ("written", "hour"),
    [
        ("5:30 pm", ["17", "30"]),
        ("11:40 p.m.", ["23", "40"]),
        ("7 in the morning", ["7"]),
        ("5 in the afternoon", ["17"]),
    ],
)
def test_an_hour_with_minutes_or_a_part_of_the_day_is_a_clock_time(written, hour):
    """Blind set, dev half: "5:30 pm" read as 5 (the mark was two tokens away) and "at 7
    in the morning" left "morning" to check, both against a context's 24-hour clock."""
    assert [f for *_, f in forms(written) if f and f not in ("in", "the")] == hour
    context = ContextWords.of([f"The ferry leaves at {hour[0]}:{[*hour, '00'][1]}."])
    assert checked_coverage(f"The ferry leaves at {written}.", context) == 1.0


def test_a_superscript_digit_is_no_clock_hour() -> None:
    """'²' is a digit to str.isdigit() but not to int(): the fuzz test's text that crashed
    cite() through the clock-time forms."""
    from camab_rag.groundedness.wordforms import forms

    assert isinstance(forms("It opens at ² in the morning, ²:30 pm."), list)


def test_unchecked_facts_are_numbers_dates_names_and_misread_values_not_rewordings():
    hotel = ContextWords.of(
        ["Pets are not permitted in guest rooms at the Saltmarsh Inn. Breakfast costs 12 euros."],
        "Can I bring my dog?",
    )
    assert unchecked_facts("Sorry, animals are forbidden in the rooms.", hotel) == []
    assert unchecked_facts("Breakfast costs 15 euros on Sunday.", hotel) == ["15", "Sunday"]
    assert unchecked_facts("Ask Kristjan Tamm at the Saltmarsh Inn.", hotel) == [
        "Kristjan",
        "Tamm",
    ]
    # a sentence the context holds none of is made up whole, reworded or not
    assert unchecked_facts("Lovely spa upstairs.", hotel) == ["Lovely", "spa", "upstairs"]


def test_how_many_groups_the_question_needs_is_worked_out_not_invented():
    """Blind set 3 (dev): five people, four a boat, "you'd need two boats" was blocked for
    "two"; the count must come from the question's number, not two of the context's."""
    lake = ContextWords.of(
        ["Hire costs 15 euros for 30 minutes, from 10:00, and each boat takes up to four people."],
        "We're a family of five. Can we all go in one boat?",
    )
    assert unchecked_facts("No: you'd need two boats.", lake) == []
    assert unchecked_facts("No: you'd need three boats.", lake) == ["three"]


def test_a_period_the_question_names_in_words_is_counted_from():
    """Blind set 3 (dev): "I got a tattoo last month" and a four-month wait, "donate in
    about three months" was blocked for "three"."""
    blood = ContextWords.of(
        ["After a tattoo or piercing you have to wait four months before donating."],
        "I got a tattoo last month. Can I give blood?",
    )
    assert unchecked_facts("You can donate in about three months.", blood) == []
    assert unchecked_facts("You can donate in about seven months.", blood) == ["seven"]


def test_a_total_the_answer_works_out_from_its_own_amounts_is_held():
    """Blind set 4 (dev): "£24 a month (£18 plus £9, minus the £3 discount)" and "saves you
    £2.97 compared with £20.97" (three bags at £6.99 against £18) were blocked; a total that
    is not what the stated amounts give still is."""
    cover = ContextWords.of(
        [
            "Buildings cover costs £18 a month and contents cover £9 a month; if you buy both, "
            "we take £3 off the combined monthly price.",
            "Compost is £6.99 a bag, or 3 bags for £18.",
        ],
        "How much do I save buying three bags of compost?",
    )
    shown = "Together they come to £24 a month (£18 plus £9, minus the £3 discount)."
    assert unchecked_facts(shown, cover) == []
    assert unchecked_facts(shown.replace("£24", "£25"), cover) == ["25"]
    saved = "Three bags for £18 saves you £2.97 compared with £20.97 at the single-bag price."
    assert unchecked_facts(saved, cover) == []
    assert unchecked_facts(saved.replace("2.97", "3.97"), cover) == ["3.97"]


def test_two_steps_the_answer_shows_are_held():
    """Blind set 6 (dev): eight photos asked, five included and €15 each extra: "€165 in
    total: the €120 session ... and the three extra ones are €15 each" was blocked for "165"
    and "three"; a wrong count or total still is."""
    studio = ContextWords.of(
        [
            "A one-hour session costs €120 and includes five edited digital images. "
            "Extra images are €15 each."
        ],
        "If we want eight edited photos from a family session, how much is that?",
    )
    shown = (
        "That would be €165 in total: the €120 session comes with five edited images, and "
        "the three extra ones are €15 each."
    )
    assert unchecked_facts(shown, studio) == []
    assert unchecked_facts(shown.replace("€165", "€175"), studio) == ["175"]
    assert unchecked_facts(shown.replace("three", "four"), studio) == ["165", "four"]


def test_a_count_the_asker_names_and_a_date_a_week_on_are_worked_with():
    """Blind sets 8 and 9 (dev): five lessons at "£35 an hour" (£175, so the £150 block
    saves £25), "$21 a guitar, so double that for two" ($42), "Two weeks would be £95" for a
    two-week hire, and a weekly hire from Saturday 4 April ending Saturday 11 April were
    blocked; a wrong product, sum or date still is."""
    chess = ContextWords.of(
        ["Lessons cost £35 per hour. A block of five lessons booked in advance costs £150."],
        "How much would I save by booking five lessons at once?",
    )
    save = "Five lessons would cost £175 at £35 an hour, so the £150 block saves you £25."
    assert unchecked_facts(save, chess) == []
    # £25 is what five lessons at £35 save against £150, whatever the wrong total says
    assert unchecked_facts(save.replace("£175", "£185"), chess) == ["185"]
    strings = ContextWords.of(
        ["We fit new strings for $12 per set plus the string price. Standard sets cost $9."],
        "What would it cost to have two electric guitars restrung with standard strings?",
    )
    double = "$42 in total: $12 fitting plus $9 for the strings is $21 a guitar, double for two."
    assert unchecked_facts(double, strings) == []
    assert unchecked_facts(double.replace("$42", "$44"), strings) == ["44"]
    tower = ContextWords.of(
        ["The tower hires for £65 for the first week and £30 for each additional week."],
        "What would a two-week hire of the tower cost?",
    )
    weeks = "Two weeks would be £95: £65 for the first week plus £30 for the second."
    assert unchecked_facts(weeks, tower) == []
    assert unchecked_facts(weeks.replace("£95", "£105"), tower) == ["105"]
    huts = ContextWords.of(
        ["Our huts reopen on Saturday 4 April. Weekly hires run Saturday to Saturday."],
        "If I book the very first week of the season, what day would it end?",
    )
    assert unchecked_facts("It would end on Saturday 11 April.", huts) == []
    assert unchecked_facts("It would end on Saturday 12 April.", huts) == ["12"]


def test_what_the_parts_cost_separately_is_their_sum():
    """Blind set 10 (dev): "separately they'd cost £120, so the £110 package saves you £10"
    was blocked for "120" and "10"; a sum the stated prices do not give still is."""
    sweep = ContextWords.of(
        ["A Winter Ready package costs £110. A sweep alone costs £70 and a smoke test alone £50."],
        "Is the package cheaper than booking the sweep and smoke test separately?",
    )
    saved = "Yes, separately they'd cost £120, so the £110 package saves you £10."
    assert unchecked_facts(saved, sweep) == []
    assert unchecked_facts(saved.replace("£120", "£130"), sweep) == ["130", "10"]


PEDAL_POST = [  # review 20's corpus, cut down
    "A standard delivery within the city centre costs £8. Express delivery costs £14.",
    "Five photos are included with every order, and each extra photo costs £2. Christmas "
    "bookings open on 1 December.",
    "We are open Monday to Friday from 8:00 to 18:00.",
    "Archived price list (2022): a standard delivery costs £6.",
]


def test_two_amounts_of_one_document_make_no_price_without_a_rate():
    """Review 20: "A standard delivery costs £10." passed as five photos times £2 (two
    numbers of another document's sentence); a product needs a rate ("€22 per player")."""
    docs = ContextWords.of(PEDAL_POST, "How much is a standard delivery?")
    assert unchecked_facts("A standard delivery costs £10.", docs) == ["10"]
    assert misread_words("A standard delivery costs £10.", docs) == ()
    team = ContextWords.of(
        ["Tickets cost €22 per player, for groups of four."], "What's the price?"
    )
    assert unchecked_facts("For your group that is €88.", team) == []


def test_a_worked_number_the_context_also_states_elsewhere_is_not_misread():
    """Review 20: "£6 extra for the three extra photos" (eight wanted, five included, £2
    each) was misread for the archived £6; "8 December" a week after 1 December was
    blocked, "week" being in the question only, and misread for "8:00"."""
    photos = ContextWords.of(
        PEDAL_POST, "We want eight photos, five are included. How much extra do we pay?"
    )
    assert unchecked_facts("You pay £6 extra for the three extra photos.", photos) == []
    assert misread_words("You pay £6 extra for the three extra photos.", photos) == ()
    asked = "I want to book exactly a week after Christmas bookings open. What date is that?"
    for docs in (PEDAL_POST, PEDAL_POST[1:2]):
        assert unchecked_facts("That is 8 December.", ContextWords.of(docs, asked)) == []
    assert unchecked_facts("That is 9 December.", ContextWords.of(PEDAL_POST, asked)) == ["9"]


BOWLINE = [  # review 21's corpus, cut down
    "Bowline runs a two-day Start Sailing course for 240 euros per person. Lunch is not included.",
    "A set of photos of your sail costs 4 euros per photo; five photos are included with "
    "every course.",
    "Prices 2019: the Start Sailing course at Bowline costs 190 euros.",
]


def test_review_21_stale_price_clause_opposite_and_a_rate_times_a_worked_count():
    """Review 21: the 2019 price passed as supported, the current page saying "runs ...
    for 240" and not "costs"; "240 euros per person, lunch included" hid its opposite in
    the sentence's price clause; "12 euros for the three extra photos" (eight wanted, five
    included, 4 euros per photo) was blocked."""
    course = ContextWords.of(BOWLINE, "How much is the Start Sailing course?")
    stale = "The Start Sailing course costs 190 euros."
    assert [stale[a:b] for a, b in rival_spans(stale, course)] == ["190"]
    lunch = "The Start Sailing course costs 240 euros per person, lunch included."
    assert unchecked_facts(lunch, course) == ["included"]
    assert misread_words(lunch, course) == ("included",)
    assert unchecked_facts(lunch.replace(", lunch included", ""), course) == []
    photos = ContextWords.of(BOWLINE, "We want eight photos, and five are included. How much?")
    assert unchecked_facts("You pay 12 euros for the three extra photos.", photos) == []
    assert unchecked_facts("You pay 14 euros for the three extra photos.", photos) == ["14"]


def test_a_number_with_a_plural_s_is_the_number():
    """Blind set 4 (dev): "Under-14s must be supervised" states fourteen."""
    wall = ContextWords.of(["Under-14s must be supervised by an adult at all times."])
    assert unchecked_facts("Children younger than fourteen need an adult.", wall) == []
    assert unchecked_facts("Children younger than twelve need an adult.", wall) == ["twelve"]


def test_a_share_in_words_a_rate_times_a_count_and_a_total_with_its_step_are_held():
    """Blind set 5 (dev): "charged 50% of the price" over "charged at half price", "€88 for
    the four of you" at "€22 per player", and "$220 in total, since each extra person adds
    $40" over "$180 for one person, and each additional person adds $40" were blocked."""
    salon = ContextWords.of(["Appointments cancelled late are charged at half price."])
    assert unchecked_facts("You'll be charged 50% of the price.", salon) == []
    assert unchecked_facts("You'll be charged 75% of the price.", salon) == ["75"]
    rooms = ContextWords.of(
        ["Weekday sessions cost €22 per player."], "How much for four of us on a Friday?"
    )
    assert unchecked_facts("It's €88 for the four of you.", rooms) == []
    assert unchecked_facts("It's €96 for the four of you.", rooms) == ["96"]  # four: the asker's
    ski = ContextWords.of(
        ["A lesson costs $180 for one person, and each additional person adds $40."],
        "What if my sister joins me?",
    )
    assert unchecked_facts("It's $220 in total, since each extra person adds $40.", ski) == []
    assert unchecked_facts("It's $230 in total, since each extra person adds $40.", ski) == ["230"]
    assert unchecked_facts("It's $140 in total, since each extra person adds $40.", ski) == ["140"]


def test_a_said_total_of_two_amounts_is_held_wherever_they_stand():
    """Review 19: "That comes to 90 euros in total." for a 35-euro tour and a 55-euro cruise
    (two documents) was blocked; a total no two amounts give still is."""
    tours = ContextWords.of(
        [
            "The harbour tour lasts an hour and a half and costs 35 euros per adult.",
            "Blue Heron also runs a sunset cruise for 55 euros per person.",
        ],
        "How much for one adult harbour tour and one sunset cruise?",
    )
    assert unchecked_facts("That comes to 90 euros in total.", tours) == []
    assert unchecked_facts("That comes to 95 euros in total.", tours) == ["95"]
    assert unchecked_facts("They cost 90 euros.", tours) == ["90"]  # no word of a sum


def test_a_count_in_words_three_quarters_of_an_hour_and_the_days_dates_span():
    """Blind set 6 (dev): "twice" at "£6 each visit" (£12), "three quarters of an hour" for
    45 minutes and "ten days, from 4 April to 13 April" were blocked."""
    club = ContextWords.of(
        ["Guests pay £6 each visit.", "Story time lasts 45 minutes."],
        "If I bring a friend twice, what does it cost?",
    )
    assert unchecked_facts("It would be £12 in total.", club) == []
    assert unchecked_facts("It would be £18 in total.", club) == ["18"]
    assert unchecked_facts("It runs for three quarters of an hour.", club) == []
    sale = ContextWords.of(["The sale runs from Friday 4 April to Sunday 13 April."])
    assert unchecked_facts("It runs for ten days, from 4 April to 13 April.", sale) == []
    assert unchecked_facts("It runs for twelve days, from 4 April to 13 April.", sale) == ["twelve"]


def test_the_askers_own_numbers_inflections_pence_and_days_of_hours():
    """Blind set 7 (dev): "Your 7-year-old" over "We have a 7-year-old", "no need to book"
    over "No booking is needed", "15p" for £0.15 and "two days" for 48 hours were blocked;
    a value asked about stays unheld, and "HR" is no hour."""
    park = ContextWords.of(
        ["The Summit Zone is for ages 5 to 13 and costs €14 on Saturdays."],
        "We have a 7-year-old. Can we come on a Saturday?",
    )
    assert unchecked_facts("Your 7-year-old can go in the Summit Zone.", park) == []
    assert unchecked_facts("Your 8-year-old can go in the Summit Zone.", park) == ["8"]
    asked = ContextWords.of(["A wristband costs €14."], "Is it 12 euros?")
    assert unchecked_facts("Yes, it is 12 euros.", asked) == ["12"]
    shop = ContextWords.of(
        [
            "No booking is needed. Rides over 20 minutes cost £0.15 per extra minute.",
            "Wreaths must be ordered 48 hours ahead, with two days' notice for staff changes.",
        ]
    )
    assert unchecked_facts("No, there's no need to book. Just come along.", shop) == []
    assert unchecked_facts("You pay 15p a minute.", shop) == []
    assert unchecked_facts("You pay 25p a minute.", shop) == ["25p"]
    assert unchecked_facts("Order two days ahead.", shop) == []
    assert "HR" in unchecked_facts("Please ask HR about booking.", shop)


WORKSHOP = ContextWords.of(
    [
        "The workshop is open Tuesday to Friday from 9:00 to 18:00 and on Saturday from 10:00 "
        "to 14:00. It is closed on Sunday and Monday.",
        "A wheel truing costs 20 euros, and a full overhaul costs 120 euros.",
    ]
)


@pytest.mark.parametrize(
    ("answer", "misread"),
    [
        ("No, it does not open on Mondays.", []),  # "not open" states "closed"
        ("It isn't open on Sunday.", []),
        ("No, it does not open on Saturdays.", ["open"]),
        ("Yes, it is open on Mondays.", ["open"]),
        ("A full overhaul costs 120 euros.", []),
        ("A full overhaul costs 20 euros.", ["20"]),  # the truing price, ", and" a new clause
    ],
)
def test_a_negated_opposite_and_a_value_of_the_clause_after_and(answer, misread):
    """Review 6: "No, it does not open on Mondays." was blocked (its "open" and "not" read
    as misread) and "A full overhaul costs 20 euros." passed (one clause held both prices)."""
    found = misread_spans(answer, WORKSHOP)
    assert [answer[a:b] for a, b in found if answer[a:b].lower() != "yes"] == misread


GYM = "Harbor Gym is open Monday to Friday from 6:00 to 22:00. On Sundays the gym is closed."
GYM_ARCHIVE = "Harbor Gym hours (2021 archive). On Sundays the gym is open from 9:00 to 14:00."


@pytest.mark.parametrize(
    ("answer", "pages", "misread"),
    [
        ("Harbor Gym is open Monday to Friday and closed on Sundays.", [GYM], []),
        ("Harbor Gym is open Monday to Friday and open on Sundays.", [GYM], ["open"]),
        ("Harbor Gym is closed Monday to Friday and closed on Sundays.", [GYM], ["closed"]),
        ("Harbor Gym is open Monday to Friday and closed on Sundays.", [GYM_ARCHIVE], ["closed"]),
        # two pages state Sundays differently: the question's "open" no longer makes the
        # archive's "open" clause the closer (it passed the stale value, flagged the current)
        ("Harbor Gym is open Monday to Friday and closed on Sundays.", [GYM, GYM_ARCHIVE], []),
        (
            "Harbor Gym is open Monday to Friday and open on Sundays.",
            [GYM, GYM_ARCHIVE],
            ["open"],
        ),
    ],
)
def test_an_opposite_is_read_with_its_piece_after_and(answer, pages, misread):
    """Review 62: "... open Monday to Friday ... and closed on Sundays" was read against the
    page's clause closest to the whole sentence (its weekday hours, "open"), so the page
    saying "On Sundays the gym is closed" was shown disputing its own statement."""
    context = ContextWords.of(pages, "When is Harbor Gym open?")
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread


@pytest.mark.parametrize(("reply", "misread"), [("No.", []), ("Yes.", ["Yes"])])
def test_a_bare_reply_is_read_with_the_questions_weekday(reply, misread):
    """Review 62: a bare "No." to "Is Harbor Gym open on Sundays?" was read against the
    page's weekday hours ("open"), so the page saying the gym is closed on Sundays
    disputed it, and a bare "Yes." was not misread."""
    context = ContextWords.of([GYM], "Is Harbor Gym open on Sundays?")
    assert [reply[a:b] for a, b in misread_spans(reply, context)] == misread


def test_an_ordinal_in_digits_is_its_number():
    """ "the 5th" restates "5 January"; "the 6th" is a value the context lacks."""
    term = ContextWords.of(["The spring term starts on Monday 5 January."], "When does it start?")
    assert [f for _, _, _, f in forms("the 5th, 21st")] == ["the", "5", "21"]
    assert unchecked_facts("It starts on the 5th.", term) == []
    assert unchecked_facts("It starts on the 6th.", term) == ["6th"]


def test_a_value_two_sources_state_differently_is_contested():
    """A stale price page beside the current one: the stale price is contested by the
    current page; the current price is not, by a page saying it is "no longer valid"
    (review 1, session 64), but is by one that does not say so. Two prices of one text, or
    of two subjects, are no rivals."""
    from camab_rag.groundedness.wordforms import rival_spans

    pages = [
        "Price list 2026: the rabies vaccine costs 45 euros.",
        "Old price list (no longer valid): the rabies vaccine costs 35 euros.",
    ]
    question = "How much does the rabies vaccine cost?"

    def rivals(answer: str, texts: list[str]) -> list[str]:
        found = rival_spans(answer, ContextWords.of(texts, question))
        return [answer[a:b] for a, b in found]

    assert rivals("The rabies vaccine costs 35 euros.", pages) == ["35"]
    assert rivals("The rabies vaccine costs 45 euros.", pages) == []
    unmarked = [pages[0], "Price list 2024: the rabies vaccine costs 35 euros."]
    assert rivals("The rabies vaccine costs 45 euros.", unmarked) == ["45"]
    assert rivals("The rabies vaccine costs 45 euros.", [" ".join(pages)]) == []  # one text
    assert rivals("The rabies vaccine costs 45 euros.", pages[:1]) == []
    other = ["The rabies vaccine costs 45 euros.", "The booster shot costs 60 euros."]
    assert rivals("The rabies vaccine costs 45 euros.", other) == []
    joined = ContextWords.of(pages[:1]) | ContextWords.of(pages[1:])  # documents | chat
    assert [s.doc for s in joined.sentences] == [0, 1]


def test_at_no_cost_is_free_not_a_negation():
    """Fresh-user review: "at no cost" blocked a correct parking answer as an unmade
    negation; the pair states "free"."""
    shop = ContextWords.of(
        ["Customers may park for free in the courtyard beside the shop for up to three hours."],
        "Can I park my car at the shop?",
    )
    assert unchecked_facts("Yes, in the courtyard at no cost.", shop) == []
    assert [f for _, _, _, f in forms("at no charge")] == ["at", "free", ""]
    assert unchecked_facts("Parking in the courtyard is not free.", shop) == ["not"]


def test_for_nothing_and_no_extra_cost_are_free():
    """ "for nothing" and "at no extra cost" state "free", as "at no cost" does."""
    train = ContextWords.of(["Bicycles may be taken on regional trains free of charge."])
    assert unchecked_facts("Your bicycle travels on regional trains for nothing.", train) == []
    assert [f for _, _, _, f in forms("at no extra cost")] == ["at", "free", "", ""]
    assert unchecked_facts("Bicycles are not free on regional trains.", train) == ["not"]


RENTAL = (
    "Opening hours: the rental shop is open Tuesday to Saturday from 9:00 to 19:00 and on "
    "Sunday from 10:00 to 16:00. The shop is closed on Monday."
)


@pytest.mark.parametrize(
    ("question", "answer", "misread"),
    [
        ("On which day is the shop closed?", "The shop is closed on Tuesday.", ["closed"]),
        ("On which day is the shop closed?", "The shop is closed on Monday.", []),
        ("Is the shop open on Wednesday?", "Yes, the shop is open on Wednesday.", []),
        (
            "Is the shop open on Wednesday?",
            "No, the shop is closed on Wednesday.",
            ["closed", "No"],
        ),
        ("When does the shop close on Sunday?", "It closes at 7 pm on Sunday.", ["7"]),
        ("When does the shop close on Friday?", "It closes at 7 pm on Friday.", []),
    ],
)
def test_a_weekday_range_states_each_day_and_a_named_day_picks_its_clause(
    question, answer, misread
):
    """Fresh-user review: "closed on Tuesday" against "open Tuesday to Saturday" was not
    read as a misread value (the clause closed on Monday matched the question better), and
    a day inside a range was an unchecked fact."""
    shop = ContextWords.of([RENTAL], question)
    assert unchecked_facts(answer, shop) == misread


def test_an_opposite_is_read_with_its_own_clause_of_the_answer():
    """ "No, Monday is its closing day; on the other days it is open from 8 ..." states
    "open" for the hours of its own clause, not for the Monday of the clause before."""
    centre = ContextWords.of(
        ["The centre is open Tuesday to Sunday, 8:00-17:00. It is closed on Mondays."],
        "Does the centre open on Mondays?",
    )
    answer = "No, Monday is its closing day; on the other days it is open from 8 until 5 pm."
    assert unchecked_facts(answer, centre) == []
    assert unchecked_facts("Yes, it is open on Mondays from 8 until 5 pm.", centre) == [
        "open",
        "Yes",
    ]


def test_an_amount_with_decimals_is_one_number():
    """Fresh-user review 3: "0.20 euros" was read as 0 and 20, so the current fine was an
    unchecked "20"; "10.30" alone stays a clock time."""
    assert [f for _, _, _, f in forms("0.20 euros, €1,50, 5.00 EUR")] == [
        "0.2",
        "",
        "eur",
        "eur",
        "1.5",
        "",
        "5",
        "",
        "eur",
    ]
    assert [f for _, _, _, f in forms("at 10.30")] == ["at", "10", "30"]
    assert [(s, e) for s, e, _, f in forms("It is 0.20 euros.") if f == "0.2"] == [(6, 10)]


LIBRARY = [
    "Loans and fines (from January 2026): books can be borrowed for three weeks. A late "
    "book costs 0.20 euros per day, up to a maximum of 5 euros per item.",
    "Fines (2024, no longer valid): a late book costs 0.50 euros per day, with no maximum.",
]


def test_two_sources_stating_one_subject_differently_dispute_not_misread():
    """Fresh-user review 3: the current fine (0.20) was blocked as a misread value and the
    stale one (0.50) passed, because the question's "fine" matched the old page's title
    better; both pages state the late-book fine, so the stale value is contested, not
    misread, and the current one is contested only where the old page does not say it is
    "no longer valid" (review 1, session 64)."""
    library = ContextWords.of(LIBRARY, "How much is the fine for a late book?")
    unmarked = [LIBRARY[0], LIBRARY[1].replace(", no longer valid", "")]
    for answer, texts, contested in (
        ("A late book costs 0.20 euros per day.", LIBRARY, 0),
        ("A late book costs 0.20 euros per day.", unmarked, 1),
        ("A late book costs 0.50 euros per day.", LIBRARY, 1),
    ):
        context = ContextWords.of(texts, "How much is the fine for a late book?")
        assert unchecked_facts(answer, context) == []
        assert len(rival_spans(answer, context)) == contested
    assert unchecked_facts("A late book costs 0.70 euros per day.", library) == ["0.70"]


@pytest.mark.parametrize(
    ("context", "question", "right", "invented"),
    [
        (  # a tens word and its unit are one number
            "Each Orla backpack holds 25 litres and weighs 900 grams.",
            "How big is the Orla backpack?",
            "It has a capacity of twenty-five litres.",
            "It has a capacity of thirty-five litres.",
        ),
        (  # weeks are days, years are months
            "Refunds are paid to the original card within 14 days of receiving the return.",
            "How soon will I get my money back?",
            "Within two weeks, to the card you paid with.",
            "Within three weeks, to the card you paid with.",
        ),
        (
            "The Nordvik warranty covers the battery for 24 months.",
            "How long is the battery covered?",
            "The battery has a 2-year warranty.",
            "The battery has a three-year warranty.",
        ),
        (  # an ordinal word is its number; "St." is "Street"
            "The Aldren clinic is at 18 Rowan Street, on the 2nd floor.",
            "Where is the clinic?",
            "At 18 Rowan St., 2nd floor.",
            "At 18 Rowan St., fourth floor.",
        ),
        (  # seventy is a number too
            "The Brenna ferry crossing takes 50 minutes.",
            "How long is the crossing?",
            "The crossing lasts fifty minutes.",
            "The crossing lasts seventy minutes.",
        ),
    ],
)
def test_numbers_written_as_words_and_converted_units_are_checked(
    context, question, right, invented
):
    """Gate9 dev cases: "twenty-five", "two weeks" (14 days), "two-year" (24 months) and
    "St." were unchecked facts of right answers (blocked); "seventy" and "fourth" were no
    facts at all (an invented one was not blocked)."""
    known = ContextWords.of([context], question)
    assert unchecked_facts(right, known) == []
    assert unchecked_facts(invented, known) != []


def test_weekdays_and_weekends_name_their_days():
    """ "on weekdays" restates "Monday to Friday"; "on Saturday" reads the weekend's
    clause, so the weekdays' hour is a misread value."""
    pharmacy = ContextWords.of(["The pharmacy opens at 8:00 from Monday to Friday."], "When?")
    assert unchecked_facts("It opens at 8 am on weekdays.", pharmacy) == []
    assert unchecked_facts("It opens at 8 am on Sundays.", pharmacy) == ["Sundays"]
    gym = ContextWords.of(
        ["PulseFit Arena opens at 6 am on weekdays and at 8 am on weekends."], "When?"
    )
    assert unchecked_facts("It opens at 6 am on Wednesday.", gym) == []
    assert unchecked_facts("It opens at 8 am on Saturday.", gym) == []
    assert unchecked_facts("It opens at 6 am on Saturday.", gym) == ["6"]


def test_an_every_day_clause_states_each_weekday_it_does_not_name():
    """Review finding: "open daily" held no weekday, so a right "open on Mondays" was flagged
    ("the sources do not say Mondays"); a day the text names keeps its own clause."""
    pool = ContextWords.of(["Riverside Pool is open daily from 7:00 to 21:00."], "When?")
    assert unchecked_facts("It is open on Mondays.", pool) == []
    week = ContextWords.of(["The pool is open seven days a week."], "When?")
    assert unchecked_facts("It is open on Sunday.", week) == []
    pass_ = ContextWords.of(["A daily pass for the pool costs 5 euros."], "When?")
    assert "Sundays" in unchecked_facts("It is open on Sundays.", pass_)
    closed = ContextWords.of(
        ["The pool is open every day from 7:00 to 21:00. It is closed on Mondays."], "When?"
    )
    assert closed.sentences[0].implied & {"monday", "tuesday"} == {"tuesday"}
    assert misread_spans("It is open on Mondays.", closed) != []


def test_days_excepted_from_an_every_day_clause_state_its_opposite():
    """Review finding: "open every day except Tuesdays" disputed a right "No." to "open on
    Tuesdays?" and passed "open on Tuesdays"; a café "open 7 days a week" is not the
    closest clause to the shop's Sunday, though it implies one."""
    pool = ContextWords.of(
        ["Riverside Pool is open daily except Mondays, from 7:00 to 21:00."],
        "Is the pool open on Monday?",
    )
    assert misread_spans("No.", pool) == []
    assert unchecked_facts("No, it is closed on Mondays.", pool) == []
    assert misread_spans("Yes, it is open on Mondays.", pool) != []
    assert unchecked_facts("It is open on Tuesdays from 7:00 to 21:00.", pool) == []
    shops = ContextWords.of(
        [
            "The cafe is open 7 days a week from 9:30 to 18:00. "
            "The shop is open weekdays only, from 10:00 to 17:00."
        ],
        "Is the shop open on Sundays?",
    )
    assert misread_spans("No.", shops) == []
    museum = ContextWords.of(
        [
            "The museum is open every day except Tuesdays, from 10:00 to 17:30.",
            "The museum shop is open weekdays only, from 10:00 to 17:00.",
        ],
        "Is the museum open on Tuesdays?",
    )  # the shop's clause ties with "except Tuesdays": the one saying least else decides
    assert misread_spans("No.", museum) == []
    assert misread_spans("Yes.", museum) != []
    branches = ContextWords.of(
        [
            "Harbour Street branch. The Harbour Street bakery is open Monday to Saturday "
            "from 7:00 to 18:00. It is closed on Sundays.",
            "Old Town branch. The Old Town bakery is open every day except Mondays. "
            "Opening hours are Tue-Sun, 8:00 to 15:00.",
        ],
        "Is the Old Town branch open on Sundays?",
    )  # second review: the page naming the asked branch decides, not Harbour Street's
    assert misread_spans("Yes.", branches) == []
    assert misread_spans("No.", branches) != []


def test_a_range_of_opening_days_states_the_rest_closed():
    """ "open Tuesday to Sunday" (no other day named, no every-day clause) says Monday is
    closed: "Yes, it is open on Monday." passed and the right "No, it is closed on
    Mondays." was flagged; a page giving another day its own hours implies nothing."""
    pool = ContextWords.of(
        ["Riverside Pool is open Tuesday to Sunday from 7:00 to 21:00."],
        "Is the pool open on Monday?",
    )
    assert unchecked_facts("No, it is closed on Mondays.", pool) == []
    assert misread_spans("No.", pool) == []
    assert misread_spans("Yes, it is open on Monday.", pool) != []
    assert unchecked_facts("It is open on Wednesday.", pool) == []
    bank = ContextWords.of(
        ["The bank is open Monday to Friday from 9:00 to 17:00, Saturday 10:00 to 13:00."],
        "Is the bank open on Sunday?",
    )
    assert misread_spans("No.", bank) == [] and misread_spans("Yes.", bank) != []
    later = ContextWords.of(
        ["The bank is open Monday to Friday from 9:00 to 17:00. It opens Saturdays at 10."],
        "Is the bank open on Sunday?",
    )
    assert [s.implied for s in later.sentences] == [frozenset()] * len(later.sentences)


def test_a_span_of_times_states_when_something_starts_and_ends():
    breakfast = ContextWords.of(["Breakfast is served between 06:30 and 09:30."], "When?")
    assert coverage("Breakfast ends at 9:30 am.", breakfast) == 1.0
    assert coverage("Breakfast starts at 6:30 am.", breakfast) == 1.0


def test_a_negated_opposite_in_the_context_is_the_opposite():
    """The flipped rule (review finding): "same-day appointments are available" over
    "Same-day appointments are not available" held every word, so it passed."""
    clinic = ContextWords.of(
        ["Same-day appointments are not available; please book one day in advance."],
        "Can I get an appointment today?",
    )

    def misread(text: str) -> list[str]:
        return [text[a:b] for a, b in misread_spans(text, clinic)]

    assert misread("Yes, same-day appointments are available.") == ["available"]
    assert unchecked_facts("Yes, same-day appointments are available.", clinic) == ["available"]
    assert misread("No, same-day appointments are not available.") == []
    assert misread("Same-day appointments are unavailable.") == []


def test_a_negation_is_read_with_its_own_clause_after_but():
    """ "No, cars are not carried, but you can bring a bicycle for free." read its "not"
    against "Bicycles travel free." (the clause sharing most words), so a right answer
    was blocked."""
    ferry = ContextWords.of(
        ["The Seabright ferry does not carry cars. Bicycles travel free."], "Can I take my car?"
    )
    right = "No, cars are not carried, but you can bring a bicycle for free."
    assert unchecked_facts(right, ferry) == []
    wrong = "Bicycles do not travel free, but cars are carried."
    assert [wrong[a:b] for a, b in misread_spans(wrong, ferry)] == ["not"]


def test_a_courtesy_sentence_claims_nothing():
    """ "Great question!" or "I hope this helps!" beside a right answer held none of the
    context's words, so each of its words was an unchecked fact and the answer was
    blocked; an invented sentence beside it still is not."""
    tickets = ContextWords.of(["Students pay 20 euros; adults pay 35 euros."], "Students?")
    for polite in (
        "Great question! Students pay 20 euros.",
        "Students pay 20 euros. I hope this helps!",
        "Students pay 20 euros. Let me know if you need anything else.",
    ):
        assert unchecked_facts(polite, tickets) == [], polite
        assert coverage(polite, tickets) == 1.0
    assert unchecked_facts("Students pay 20 euros. Pensioners pay 10 euros.", tickets) == ["10"]


def test_digits_grouped_by_commas_are_one_number():
    bike = ContextWords.of(["The Trail Hopper costs 1,290 euros."], "How much is it?")
    found = [f for _, _, _, f in forms("1,290 and 12,500,000") if f]
    assert found == ["1290", "and", "12500000"]
    assert unchecked_facts("It costs 1290 euros.", bike) == []
    assert unchecked_facts("It costs 1,390 euros.", bike) == ["1,390"]


def test_abbreviated_weekdays_and_months_are_their_names():
    line = ContextWords.of(["Support answers calls Mon-Fri. Closed Sat and Sun."], "When?")
    assert unchecked_facts("It is closed on Saturday.", line) == []
    assert unchecked_facts("It is open on Sun.", line) == ["open"]
    assert [f for _, _, _, f in forms("until 14 Sept; the sun sat")][2:] == [
        "september",
        "the",
        "sun",
        "sat",
    ]


def test_permitted_is_allowed_and_an_exception_states_both():
    """ "not permitted" states ``forbidden``: "pets are allowed" misreads it, "pets are
    forbidden" restates it; with "with the exception of ..." the clause states both."""
    strict = ContextWords.of(["Pets are not permitted in guest rooms."], "Can I bring my cat?")
    assert unchecked_facts("No, pets are forbidden in the rooms.", strict) == []
    assert unchecked_facts("Yes, pets are allowed in the rooms.", strict) == ["allowed"]
    except_dogs = ContextWords.of(
        ["Pets are not permitted in guest rooms, with the exception of assistance dogs."],
        "Can I bring my dog?",
    )
    assert unchecked_facts("Only assistance dogs are allowed.", except_dogs) == []
    assert unchecked_facts("No, pets are not allowed in guest rooms.", except_dogs) == []


def test_afternoon_hours_on_the_twelve_hour_clock():
    """ "9 to 5" and "7.30pm" restate "09:00 to 17:00" and "19:30" (review finding:
    12-hour times against 24-hour ones); another hour stays unchecked."""
    library = ContextWords.of(
        ["The library is open from 09:00 to 17:00 on weekdays. The café closes at 19:30."],
        "When is it open?",
    )
    assert unchecked_facts("It is open 9 to 5 on weekdays.", library) == []
    assert unchecked_facts("The café closes at 7.30pm.", library) == []
    assert unchecked_facts("The café closes at 7:30pm.", library) == []
    assert unchecked_facts("It closes at 6 on weekdays.", library) == ["6"]
    assert unchecked_facts("The café closes at 7.45pm.", library) == ["45pm"]


def test_cents_per_cent_and_first_floor():
    """ "50 cents" restates "0.50 euros", "20 per cent" "20%", "1st floor" "first
    floor"; another amount or floor stays unchecked."""
    kiosk = ContextWords.of(
        [
            "A coffee costs 0.50 euros. Prices drop 20% after 6 pm. The office is on the "
            "first floor."
        ],
        "How much is a coffee?",
    )
    assert unchecked_facts("It costs 50 cents.", kiosk) == []
    assert unchecked_facts("It costs 60 cents.", kiosk) == ["60"]
    assert unchecked_facts("Prices drop 20 per cent after 6 pm.", kiosk) == []
    assert unchecked_facts("The office is on the 1st floor.", kiosk) == []
    assert unchecked_facts("The office is on the 2nd floor.", kiosk) == ["2nd"]


def test_a_duration_in_another_unit_is_held_but_no_rival_value():
    """ "two weeks" restates "14 days" (the context states both), but a summary's "the
    39-year-old" over "the 39-year-old" is no misread of a rival "468" months, and
    "first" is no rival number of "5-3 on penalties" (gate9: these blocked FRANK
    summaries when the conversion replaced the answer's own number)."""
    refunds = ContextWords.of(["Refunds arrive within 14 days."], "When?")
    assert unchecked_facts("Within two weeks.", refunds) == []
    assert unchecked_facts("Within 3 weeks.", refunds) == ["3"]
    news = ContextWords.of(
        [
            "Kilmarnock have signed Kris Boyd, 39, on a three-year deal. Leverkusen lost "
            "the first leg on penalties. The shoot-out ended 5-3."
        ],
        "Summarise the article.",
    )
    assert unchecked_facts("The 39-year-old has a three-year deal.", news) == []
    assert unchecked_facts("Leverkusen lost 5-3 on penalties.", news) == []


def test_a_number_is_read_with_its_own_clause_of_a_mixed_answer():
    """A mixed answer's second fact (",while printing is extra at 10 cents a page") was
    read against the clause closest to the whole sentence (the membership's 320 euros),
    so the right printing price was a misread value (gate9, second blind set's dev half)."""
    desk = ContextWords.of(
        [
            "The fixed-desk membership costs 320 euros a month and includes a lockable "
            "drawer and mail handling. Printing is charged at 0.10 euros per page."
        ],
        "What do I get with a fixed desk?",
    )
    right = "It comes with a lockable drawer and mail handling, while printing is 10 cents a page."
    assert unchecked_facts(right, desk) == []
    wrong = "It comes with a lockable drawer and mail handling, while printing is 320 euros a page."
    assert unchecked_facts(wrong, desk) == ["320"]


def test_not_necessarily_is_a_hedge_not_a_negation():
    plan = ContextWords.of(
        ["The Team plan costs 12 dollars per user. Teams of more than 50 users contact sales."],
        "We have 80 people. Is it the same price for us?",
    )
    assert (
        unchecked_facts("Not necessarily: teams of more than 50 users contact sales.", plan) == []
    )
    assert unchecked_facts("No, the Team plan is not 12 dollars per user.", plan) == ["not"]


POOL = [
    "Prices 2026. A single adult swim costs 6.50 euros. A child ticket (under 16) costs "
    "3.20 euros.",
    "Lane booking. Lanes can be booked up to 7 days in advance at the front desk. Lane "
    "booking is not permitted on Sundays.",
]


def test_a_year_the_context_states_is_no_misread_for_a_number_of_another_kind():
    """Fresh-user review 10: "According to the 2026 price list, a child ticket costs 3.20
    euros." was blocked on "2026": the child-ticket sentence states "16" (an age) and not
    2026, which was read as another value for the subject. A rival is of the value's kind."""
    pool = ContextWords.of(POOL, "How much is a child ticket?")
    answer = "According to the 2026 price list, a child ticket costs 3.20 euros."
    assert unchecked_facts(answer, pool) == []
    assert unchecked_facts(answer.replace("2026", "2025"), pool) == ["2025"]
    changed = "According to the price list, a child ticket costs 4.20 euros."
    assert unchecked_facts(changed, pool) == ["4.20"]


def test_a_yes_against_the_clause_that_says_not_is_a_misread():
    """Fresh-user review 10: "Yes, lanes can be booked on Sundays." passed as uncertain
    (nothing unchecked) where the sources say "Lane booking is not permitted on Sundays"."""
    pool = ContextWords.of(POOL, "Can I book a lane on Sunday?")
    assert unchecked_facts("Yes, lanes can be booked on Sundays.", pool) == ["Yes"]
    assert unchecked_facts("No, lanes cannot be booked on Sundays.", pool) == []
    ahead = ContextWords.of(POOL, "Can I book a lane in advance?")
    assert unchecked_facts("Yes, up to 7 days in advance at the front desk.", ahead) == []


def test_a_listed_price_is_read_with_its_own_item():
    """Fresh-user review 10: "… a single adult swim for 6.50 euros and a child ticket for
    3.20 euros." was blocked on "3.20": the sentence read as a whole sat closest to the
    adult-swim sentence, where 3.20 is not stated. Between "and"s with a number on both
    sides, each number is read with its own item."""
    stale = "Prices 2024 (no longer valid). A single adult swim costs 5.00 euros."
    pool = ContextWords.of([*POOL, stale], "How much is a child ticket?")
    listed = "The list has a single adult swim for 6.50 euros and a child ticket for {} euros."
    assert unchecked_facts(listed.format("3.20"), pool) == []
    assert unchecked_facts(listed.format("4.20"), pool) == ["4.20"]


ROOMS = ContextWords.of(
    ["Loomworks meeting rooms seat up to 8 people and cost 25 euros per hour."],
    "How much would one cost for two hours?",
)


@pytest.mark.parametrize(
    ("answer", "unchecked"),
    [
        ("50 euros, since it's 25 euros an hour.", []),  # 2 hours (asked) x 25 euros/hour
        ("60 euros, since it's 30 euros an hour.", ["60", "30"]),  # the invented twin
        ("It comes to 33 euros.", ["33"]),  # 8 people + 25 euros: no rate, no unit alike
        ("50 euros, since it's 50 euros an hour.", ["50"]),  # a total is no rate
    ],
)
def test_a_number_worked_out_from_a_stated_rate_and_the_question_is_held(answer, unchecked):
    """Issue 48 (fresh2 dev): "50 euros" for two hours at 25 euros an hour was an
    unchecked fact, so the right answer was blocked; an invented twin still is."""
    assert unchecked_facts(answer, ROOMS) == unchecked


def test_a_derived_value_needs_an_operand_of_the_question_or_the_answer_not_two_stated():
    hall = ContextWords.of(
        [
            "The hall can be hired for 35 euros per hour on weekdays and 50 euros per hour "
            "at weekends. A refundable deposit of 100 euros is required."
        ],
        "How much would it cost to rent the hall for 4 hours on a Saturday?",
    )
    right = "At 50 euros an hour, 4 hours comes to 200 euros. The deposit is 100 euros."
    assert unchecked_facts(right, hall) == []  # the question's 4 is worked with
    assert unchecked_facts("At 50 euros an hour, 4 hours comes to 210 euros.", hall) == [
        "4",
        "210",
    ]
    warranty = ContextWords.of(
        ["The warranty covers the motor for 5 years and the battery for 2 years."],
        "How long is the battery covered?",
    )  # 5 - 2 = 3: two stated amounts make no value (an invented twin's chance)
    assert unchecked_facts("The battery has a three-year warranty.", warranty) == ["three"]


def test_a_question_number_is_held_only_when_truly_compared_with_a_stated_one():
    shop = ContextWords.of(
        ["Orders placed before 2 pm ship the same day."], "If I order at 1 pm, when does it ship?"
    )
    assert unchecked_facts("It ships that day, since 1 pm is before the 14:00 cut-off.", shop) == []
    assert unchecked_facts("It ships the next day, since 3 pm is past the 2 pm cut-off.", shop) == [
        "3"
    ]  # not asked
    assert unchecked_facts("It ships that day, since 1 pm is after the 2 pm cut-off.", shop) == [
        "1"
    ]  # a false comparison
    assert unchecked_facts("An order placed at 1 pm ships.", shop) == ["1"]  # only restated
    studio = ContextWords.of(
        ["The hourly rate for the recording studio is 35 euros."],
        "Since the studio is 30 euros an hour, what do 2 hours cost?",
    )  # a false premise of the question is not held, nor what it gives
    assert (
        unchecked_facts("The studio is 35 euros an hour, so 2 hours cost 70 euros.", studio) == []
    )
    assert unchecked_facts("At 30 euros an hour, 2 hours cost 60 euros.", studio) == [
        "30",
        "2",
        "60",
    ]


def test_cents_a_page_make_euros_and_the_next_working_day_follows_the_asked_one():
    copies = ContextWords.of(["Printing costs 10 cents per page."], "How much would 40 pages cost?")
    assert unchecked_facts("40 pages come to 4 euros.", copies) == []
    assert unchecked_facts("40 pages come to 5 euros.", copies) == ["40", "5", "euros"]
    bank = ["Transfers made after 16:00 are processed on the next working day."]
    monday = ContextWords.of(bank, "If I send money at 5 pm on a Monday, when is it processed?")
    friday = ContextWords.of(bank, "I sent it on a Friday. When is it processed?")
    assert unchecked_facts("It is processed on Tuesday.", monday) == []
    assert unchecked_facts("It is processed on Wednesday.", monday) == ["Wednesday"]
    assert unchecked_facts("It is processed on Monday.", friday) == []  # the weekend skipped
    assert unchecked_facts("It is processed on Saturday.", friday) == ["Saturday"]


def test_context_words_keep_their_amounts_when_joined_and_pickled():
    joined = ROOMS | ContextWords.of(["Say hello."])
    assert joined.asked_values == ROOMS.asked_values and joined.quantities[0] == ROOMS.quantities[0]
    assert pickle.loads(pickle.dumps(joined)).quantities == joined.quantities
    assert unchecked_facts("50 euros, since it's 25 euros an hour.", joined) == []


REVIEW11 = [
    "Opening hours. The Riverside Public Library is open Monday to Friday from 09:00 to "
    "18:00. On Saturday it opens from 10:00 to 14:00.",
    "Mobile library van. The van stops at Oak Square on Tuesday from 10:00 to 11:30 and at "
    "Hill Farm School on Wednesday from 13:00 to 14:00.",
]


def test_a_stop_on_the_asked_day_is_no_rival_of_a_range_of_days():
    """Fresh-user review 11: "on Wednesday it is open from 09:00 to 18:00" was contested by
    the van's Wednesday stop; "Monday to Friday" states Wednesday, and a span of clock
    times is no subject word the van clause says. A stale hours page still contests it,
    named as the answer wrote it ("09:00", not "09")."""
    question = "Is the library open on Wednesday?"
    answer = "Yes, on Wednesday it is open from 09:00 to 18:00."

    def rivals(texts: list[str]) -> list[str]:
        found = rival_spans(answer, ContextWords.of(texts, question))
        return [answer[a:b] for a, b in found]

    assert rivals(REVIEW11) == []
    for days in ("Mon-Fri", "on weekdays"):  # a range written otherwise states Wednesday too
        assert rivals([f"The library is open {days} from 09:00 to 18:00.", REVIEW11[1]]) == []
    stale = "Opening hours (2024). The Riverside Public Library is open Monday to Friday from "
    assert rivals([REVIEW11[0], stale + "10:00 to 17:00."]) == ["09:00", "18:00"]


def test_a_number_word_is_contested_only_by_a_page_of_its_subject():
    """Fresh-user review 11: "Fourteen days." (how many days a renewal adds) was contested
    by the fines page's "0.25 euros per day"; a page that never speaks of renewals is no
    rival, a stale renewal page is, and the number word is read by its value."""
    renewals = "Renewing loans. Each renewal extends the loan by 14 days."
    fines = "Fines. Overdue books cost a fine of 0.25 euros per day."
    question = "How many days does a renewal add?"

    def rivals(texts: list[str]) -> list[str]:
        found = rival_spans("Fourteen days.", ContextWords.of(texts, question))
        return ["Fourteen days."[a:b] for a, b in found]

    assert rivals([renewals, fines]) == []
    assert rivals([renewals, "Renewing loans (old). Each renewal adds 7 days."]) == ["Fourteen"]


def test_half_an_hour_is_thirty_minutes_and_a_twin_s_other_time_is_still_missing():
    """Issue 48 (fresh3 dev): "About half an hour." for "about 30 minutes" was blocked on
    "half" and "hour"."""
    assert [f for *_, f in forms("About half an hour.")] == ["about", "30", "", "min"]
    assert [f for *_, f in forms("a quarter of an hour, half price")][:5] == [
        "a",
        "15",
        "",
        "",
        "min",
    ]
    tests = ContextWords.of(["Eye tests take about 30 minutes."], "How long does a test take?")
    assert unchecked_facts("About half an hour.", tests) == []
    free = ContextWords.of(["The first 30 minutes are free."])
    assert coverage("The first half hour is free.", free) == 1.0
    assert unchecked_facts("About 45 minutes.", tests) == ["45"]
    assert unchecked_facts("About a quarter of an hour.", tests) == ["quarter"]


def test_a_negation_in_an_if_clause_is_the_reader_s_case_not_a_claim():
    """Issue 48 (fresh3 dev): "If you haven't got a helmet, you can rent one" was blocked on
    "haven't"; a negation the answer claims is still one the context does not make."""
    shop = ContextWords.of(["Helmets can be hired at the rental shop for 5 euros a day."])
    right = "If you haven't got a helmet, you can hire one at the rental shop for 5 euros a day."
    assert misread_spans(right, shop) == []
    wrong = "Helmets can't be hired at the rental shop."
    assert [wrong[a:b] for a, b in misread_spans(wrong, shop)] == ["can't"]


def test_a_non_prefix_makes_its_sentence_negated():
    """Issue 48 (fresh3 dev): "can't be refunded" over "a non-refundable deposit" was an
    unmade negation; "non-members" names a kind and negates nothing."""
    trip = ContextWords.of(["A non-refundable deposit of 200 euros is due by 30 September."])
    assert misread_spans("The deposit can't be refunded.", trip) == []
    plain = ContextWords.of(["A deposit of 200 euros is due by 30 September."])
    assert misread_spans("The deposit can't be refunded.", plain) != []
    members = ContextWords.of(["Non-members pay 12 euros a day."])  # a kind, no negation
    assert not any(s.negated for s in members.sentences)


@pytest.mark.parametrize(
    "answer",
    ["Not yet. You have to wait 30 days.", "I'm afraid not: we open only on 3 May."],
)
def test_a_negative_reply_lead_answers_the_question_and_claims_nothing(answer):
    """Issue 48 (fresh3 dev): "Not yet." and "I'm afraid not:" were unmade negations (and
    "yet" an unchecked word); the facts after the lead are still checked."""
    pool = ContextWords.of(["The pool opens on 3 May. New members wait 30 days."])
    assert unchecked_facts(answer, pool) == []
    assert unchecked_facts(answer.replace("30", "20").replace("3 May", "5 May"), pool) != []
    assert unchecked_facts("The pool does not open in May.", pool) != []


def test_a_yes_is_judged_against_its_own_clause_not_a_but_clause_that_negates():
    """Issue 48 (fresh3 dev): "..., but cannot be exchanged for cash" made the whole
    sentence negated, so "Yes, ... online" was a misread; the clause that says "cannot"
    still contradicts a "Yes" to it."""
    cards = ContextWords.of(
        ["Vouchers can be used in store and online but cannot be exchanged for cash."],
        "Can I use a voucher online?",
    )
    assert unchecked_facts("Yes, vouchers can be used in store and online.", cards) == []
    cash = ContextWords.of(["Vouchers cannot be exchanged for cash."])
    assert unchecked_facts("Yes, vouchers can be exchanged for cash.", cash) == ["Yes"]
    assert [s.negates for s in cards.sentences] == [False, True]
    assert all(s.negated for s in cards.sentences)  # an answer's negation may use either


def test_a_no_to_a_qualifier_the_context_lacks_is_judged_by_its_words():
    """Issue 48 (fresh3 dev): "No, on Fridays we close at 1 pm." to "open on Friday
    afternoon?" was a misread "No" against "open ... on Friday from 8:00 to 13:00"."""
    hours = [
        "The clinic is open Monday to Thursday from 8:00 to 18:00 and on Friday from 8:00 to 13:00."
    ]
    asked = ContextWords.of(hours, "Are you open on Friday afternoon?")
    assert unchecked_facts("No, on Fridays we close at 1 pm.", asked) == []
    assert unchecked_facts("No, on Fridays we close at 2 pm.", asked) == ["2"]
    plain = ContextWords.of(hours, "Are you open on Friday?")
    assert unchecked_facts("No, we are closed on Fridays.", plain) != []


def test_an_afternoon_hour_at_a_sentence_end_is_also_its_12_hour_form():
    stage = ContextWords.of(["Doors open at 19:00. The band plays at 21:00."])
    assert unchecked_facts("The band plays at 9.", stage) == []
    assert unchecked_facts("The band plays at 10.", stage) == ["10"]


def test_a_percent_off_a_stated_amount_is_worked_out():
    """Issue 48 (fresh3 dev): half price of two listed fees was unchecked arithmetic."""
    plots = ContextWords.of(
        ["A small plot costs 30 euros a year and a large plot 70 euros.", "Members get 20% off."]
    )
    assert unchecked_facts("Members pay 56 euros for a large plot.", plots) == []
    assert unchecked_facts("Members save 6 euros on a small plot.", plots) == []
    assert unchecked_facts("Members pay 52 euros for a large plot.", plots) == ["52"]
    rates = ContextWords.of(["Plots cost 30 euros a year. Members over 65 get a 50% discount."])
    assert unchecked_facts("With the 50% discount a plot costs 15 euros.", rates) == []


def test_a_weekday_the_question_names_is_no_unchecked_fact():
    """Issue 48 (fresh3 dev): the question's words are context too ("on a Tuesday night?"
    answered "on a Tuesday use the form"); a day neither names is still unchecked."""
    line = ["Call the night line on Friday and Saturday nights. At other times, use the form."]
    asked = ContextWords.of(line, "It is Tuesday night and the music is loud. What can I do?")
    assert unchecked_facts("On a Tuesday, use the form.", asked) == []
    assert unchecked_facts("On a Sunday, call the night line.", asked) == ["Sunday"]


def test_a_name_the_question_names_is_still_unchecked():
    """Only the question's weekdays and months count as held: a hallucinated answer often
    repeats the question's names (HaluEval), and the question does not state them true."""
    line = ["The Riverside branch opens at 9 am."]
    asked = ContextWords.of(line, "Who manages the Riverside branch with Anna Berg?")
    assert unchecked_facts("Anna Berg manages the Riverside branch.", asked) == ["Berg"]


def test_clock_hours_are_the_hours_only_a_clock_time_states():
    """Issue 49: the citations read clock hours from here (one rule, memoised per text)."""
    from camab_rag.groundedness.wordforms import clock_hours

    assert clock_hours("Open 10:00 to 4 pm, and from 7 in the morning on Sundays.") == {
        "10",
        "16",
        "7",
    }
    assert clock_hours("Returns within 10 days; 4 p.m. pickup.") == {"16"}
    assert clock_hours("It costs 4.50 euros.") == frozenset()


MARINA = [
    "Sailing lessons cost 60 euros per session. Lunch is not included.",
    "2019 price list: a sailing lesson costs 50 euros, lunch included.",
    "The photo package includes five photos. Extra photos cost 4 euros each.",
]


def test_a_current_price_in_a_stale_pages_wording_is_contested_not_misread():
    """Session 20: "A sailing lesson costs 60 euros, lunch included." takes its price from the
    current page and its words from the 2019 page. The price was read as misread against the
    2019 page (closest by all the sentence's words), so no source was cited and the notice
    said the sources "say something else"; the sources disagree on it."""
    lesson = ContextWords.of(MARINA, "How much is a sailing lesson?")
    answer = "A sailing lesson costs 60 euros, lunch included."
    assert misread_words(answer, lesson) == ()
    assert [answer[a:b] for a, b in rival_spans(answer, lesson)] == ["60"]
    assert misread_words("A sailing lesson costs 50 euros, lunch included.", lesson) == ()
    assert unchecked_facts("A sailing lesson costs 70 euros, lunch included.", lesson) == ["70"]


def test_a_rate_times_the_asked_count_less_the_included_ones_is_held():
    """Session 20: eight photos wanted, five included, 4 euros each: "You pay 12 euros." was
    blocked, the three extra photos being nowhere in the answer."""
    photos = ContextWords.of(MARINA, "I want eight photos in total. How much extra do I pay?")
    assert unchecked_facts("You pay 12 euros.", photos) == []
    assert unchecked_facts("You pay 16 euros.", photos) == ["16"]


def test_counts_at_a_price_each_sum_to_the_total_in_any_currency_the_context_uses():
    """Blind set 12 (dev): "Two adult tickets at 12 CHF and two child tickets at 9 CHF come
    to 42 CHF." was blocked: "at 12 CHF" was not read as a price each, and CHF was no
    currency. The same sum in euros over a context in francs keeps "€" unchecked."""
    theatre = ContextWords.of(
        ["Tickets cost 9 CHF for children and 12 CHF for adults."],
        "What would a family of two adults and two children pay?",
    )
    right = "Two adult tickets at 12 CHF and two child tickets at 9 CHF come to 42 CHF."
    assert unchecked_facts(right, theatre) == []
    assert unchecked_facts(right.replace("42", "44"), theatre) == ["44"]
    assert "€" in unchecked_facts("Two at €12 and two at €9 come to €42.", theatre)


def test_a_number_stated_only_of_another_measure_on_an_unrelated_page_is_unchecked():
    """Review 22: "Within 48 hours." over the repairs page was blocked, but beside a charity
    page ("finished first in 48 minutes") the 48 read as misread, which never blocks. A
    number of a measure the context states only of another measure, in clauses sharing none
    of the sentence's words, is a fact the context never states."""
    repairs = (
        "Emergency repairs (no heating, flooding, a broken front-door lock) are attended "
        "within 24 hours. Other repairs are booked within 10 working days."
    )
    run = "Our staff charity run raised £2,300. Priya finished first in 48 minutes."
    both = ContextWords.of([repairs, run], "How quickly are emergency repairs attended?")
    assert unchecked_facts("Within 48 hours.", both) == ["48"]
    assert misread_words("Within 48 hours.", both) == ()
    assert unchecked_facts("Within 24 hours.", both) == []
    # a clause sharing the sentence's words keeps the number (two nights, two days)
    cabin = ContextWords.of(["Cabins can be booked for a minimum of 2 days."])
    assert "2" not in unchecked_facts("The cabin minimum is 2 nights.", cabin)


def test_a_date_of_the_month_does_not_state_a_count_of_months():
    """Review 22: "one month's notice" from a 2023 page went undisputed by the update page
    ("From 1 April 2025 ... two months' written notice"): its "1 April" held the 1."""
    stale = "Rent increases (2023). We give tenants one month's notice of any rent increase."
    update = (
        "Update: from 1 April 2025, Harbour Lets gives tenants two months' written notice of "
        "any rent increase. This replaces our earlier rent increase page."
    )
    pages = ContextWords.of([stale, update], "How much notice of a rent increase will I get?")
    answer = "You will get one month's notice of a rent increase."
    assert [answer[a:b] for a, b in rival_spans(answer, pages)] == ["one"]
    current = "You will get two months' notice of a rent increase."
    assert [current[a:b] for a, b in rival_spans(current, pages)] == ["two"]


def test_a_question_word_counts_in_its_longer_form_when_clauses_tie():
    """Review 22: "When can I view a flat and where is your office?" made the office page's
    "open Monday to Saturday" the closest clause to "on Saturday from 10:00 to 14:00" (it
    holds "office"; the viewing clause holds "viewing", not "view"), so a copied answer read
    as misread."""
    pages = ContextWords.of(
        [
            "Viewings are available Monday to Friday from 9:00 to 18:00 and on Saturday from "
            "10:00 to 14:00. We do not offer viewings on Sundays.",
            "The Hove office at 12 Church Road is open Monday to Saturday.",
        ],
        "When can I view a flat and where is your office?",
    )
    copied = "Viewings run Monday to Friday from 9:00 to 18:00 and on Saturday from 10:00 to 14:00."
    assert misread_words(copied, pages) == ()
    assert unchecked_facts(copied.replace("14:00", "16:00"), pages) == ["16"]


def test_a_frequency_states_its_interval():
    """Blind set 13 (dev): "Once every six months." for "checked twice a year" was blocked. A
    frequency a year or a day states its interval in months or hours. (Where another clause
    says "every three months" of another subject, that answer still reads as misread.)"""
    saddle = ContextWords.of(["Mature horses in steady work should be checked twice a year."])
    assert unchecked_facts("Once every six months.", saddle) == []
    assert unchecked_facts("Every four months.", saddle) == ["four"]
    pills = ContextWords.of(["Take the tablets three times a day."])
    assert unchecked_facts("One every 8 hours.", pills) == []


def test_two_prices_joined_by_and_a_are_two_clauses_and_a_short_stale_answer_is_contested():
    """Review 23: "A private crown is £60." was supported where the update page says "A
    private check-up now costs £60 and a porcelain crown now costs £950." (one clause, so
    the check-up's price was the crown's too); and the stale "£55." for a check-up passed
    with no notice where "A private check-up costs £55." drew one."""
    update = (
        "Update: from 1 March 2024. A private check-up now costs £60 and a porcelain crown "
        "now costs £950."
    )
    stale = "Private price list (2023). A private check-up costs £55. A porcelain crown costs £850."
    crown = ContextWords.of([update], "How much does a private crown cost?")
    assert misread_words("A private crown is £60.", crown) == ("60",)
    assert misread_words("A private crown is £950.", crown) == ()
    both = ContextWords.of([update, stale], "How much is a private check-up?")
    assert [a for a, _ in rival_spans("£55.", both)] == [1]
    # "tea and a biscuit cost £3": a side with no number is no clause of its own
    snack = ContextWords.of(["Tea and a biscuit cost £3."], "How much is tea?")
    assert unchecked_facts("Tea and a biscuit cost £3.", snack) == []


def test_an_inflection_of_a_context_word_is_held():
    """Review 23: "Cancelling with less than 24 hours' notice costs £25." was marked "the
    sources do not say 'Cancelling'" over "If you cancel ..." and "cancelled"."""
    policy = ContextWords.of(["If you cancel with less than 24 hours' notice, a £25 fee applies."])
    assert holds("cancelling", policy.forms) and holds("cancelled", policy.forms)
    assert unchecked_facts("Cancelling late costs £25.", policy) == []
    assert not holds("cancellation", policy.forms)  # another word, not an inflection


def test_a_place_the_answer_shares_with_a_stale_page_does_not_hide_the_rival():
    """Review 55: "in 1991 at MIT" went undisputed against "in 1989 while working at CERN":
    "MIT" made the stale clause the only one closest to the answer, so no rival was read."""
    current = "Tim Berners-Lee invented the World Wide Web in 1989 while working at CERN."
    stale = "An outdated 1993 magazine claimed that the World Wide Web was invented in 1991 at MIT."
    pages = ContextWords.of([current, stale], "When was the Web invented?")
    for answer, values in [  # the place too: the pages disagree on it
        ("The World Wide Web was invented in 1991 at MIT.", ["1991", "MIT"]),
        ("The World Wide Web was invented at MIT in Boston in 1991.", ["1991", "MIT"]),
        # the current page's values: the "outdated" magazine does not dispute them
        ("The World Wide Web was invented in 1989 at CERN.", []),
    ]:
        assert [answer[a:b] for a, b in rival_spans(answer, pages)] == values
    # a name that is the answer's subject, not a value after a preposition, still counts
    own = "Tim Berners-Lee invented the World Wide Web in 1989 at CERN."
    assert rival_spans(own, pages) == []
    # a name the question asks about is its subject too
    asked = ContextWords.of([current, stale], "When was the Web invented at MIT?")
    assert rival_spans("The World Wide Web was invented in 1991 at MIT.", asked) == []


def test_a_place_a_stale_page_states_in_the_same_words_is_disputed():
    """Review 56: "Cambridge, Massachusetts." (a 2016 press kit's headquarters) rendered
    "Supported by the sources" beside the 2024 profile's "headquarters are in Boulder":
    only numbers had rivals. A clause of another text stating every word the holding
    clause shares with the answer and question, and another name, rivals a name."""
    profile = "Quillon Labs builds sensors. Its headquarters are in Boulder, Colorado."
    stale = "Quillon Labs was founded in 1991. Its headquarters are in Cambridge, Massachusetts."
    shop = "Quill & Ink Stationery has its headquarters in Portland."
    pages = ContextWords.of([profile, stale, shop], "Where are Quillon Labs' headquarters?")
    for answer in ("Cambridge, Massachusetts.", "It is headquartered in Cambridge, Massachusetts."):
        found = [answer[a:b] for a, b in rival_spans(answer, pages)]
        assert found == ["Cambridge, Massachusetts"]  # one place
    assert rival_spans("Boulder, Colorado.", pages) == [(0, 17)]
    # the same name in both, or a name no other text's clause frames alike: no rival
    founders = ContextWords.of(
        ["Dr. Elena Marsh founded Quillon Labs in 1994.", "Elena Marsh founded it in 1991."],
        "Who founded Quillon Labs?",
    )
    assert rival_spans("Dr. Elena Marsh founded it.", founders) == []
    faq = ContextWords.of([profile, "Sensors ship from the warehouse in Denver."], "From where?")
    assert rival_spans("Sensors ship from the warehouse in Denver.", faq) == []
    # a clause of the subject with a name in another place ("Gustave Eiffel" as designer)
    tower = ContextWords.of(
        ["The Eiffel Tower is in Paris.", "Gustave Eiffel's company designed the tower."],
        "Where is the tower and who designed it?",
    )
    assert rival_spans("It stands in Paris.", tower) == []


def test_a_bare_year_reads_the_question_in_its_inflected_form():
    """Review 56: the bare "2006." (a 2008 brochure's opening year) was "Supported by the
    sources" beside the 2024 guide's 2019, while "It opened in 2006." was disputed: the
    question's "open" did not find the clauses' "opened"."""
    pages = ContextWords.of(
        [
            "The Marlow Maritime Museum is in Bristol. It opened in its present building in 2019.",
            "The Marlow Maritime Museum is in Plymouth. It opened in its building in 2006.",
        ],
        "When did the museum open?",
    )
    for answer, year in (("2006.", "2006"), ("2019", "2019"), ("It opened in 2006.", "2006")):
        assert [answer[a:b] for a, b in rival_spans(answer, pages)] == [year], answer


def test_a_pronoun_led_sentence_has_the_subject_of_the_one_before():
    """Review finding: "They close at 21:00." after "On Thursdays the galleries stay open
    late." was read with no subject, so the shop's "10:00 to 17:00" was shown disputing it
    ("which one is current?"); a page giving the galleries another hour still does."""
    pages = [
        "On Thursdays the galleries stay open until 21:00.",
        "The museum shop is open weekdays only, from 10:00 to 17:00.",
    ]
    museum = ContextWords.of(pages, "How late is the museum open on Thursdays?")
    first = "On Thursdays the galleries stay open late."
    assert rival_spans("They close at 21:00.", museum, first) == []
    assert rival_spans("They close at 21:00.", museum) != []  # no subject: the shop's hours
    stale = ContextWords.of([*pages, "On Thursdays the galleries stay open until 20:00."], "?")
    assert rival_spans("They close at 21:00.", stale, first) != []


def test_a_bare_value_is_read_with_the_clause_stating_it():
    """Review finding: "15 euros." (the archived price) to "How much is an adult ticket?"
    was read with the family ticket's clause (it shares "adult" and "ticket"), which states
    neither price, so no page disputed it; the current adult price now does."""
    pages = [
        "Tickets. Adult admission costs 18 euros. A family ticket for 2 adults costs 40 euros.",
        "Visitor information (2023, archived). Adult admission costs 15 euros.",
    ]
    museum = ContextWords.of(pages, "How much is an adult ticket?")
    assert rivals("15 euros.", museum) == [((0, 2), frozenset({0}))]
    assert rivals("18 euros.", museum) == []  # the tickets page is more on the subject


def test_an_every_day_answer_is_read_against_the_current_days_too():
    """Second review: "open daily from 6:00 to 20:00" (the archived page's words) was read
    only with the archived clause, the one sharing "daily", so it passed as supported;
    "daily" says when, so the current page's hours dispute it."""
    pages = [
        "The Harbour Street bakery is open Monday to Saturday from 7:00 to 18:00.",
        "Archived page (2021). The Harbour Street bakery is open daily from 6:00 to 20:00.",
    ]
    bakery = ContextWords.of(pages, "When is the Harbour Street branch open?")
    answer = "The Harbour Street bakery is open daily from 6:00 to 20:00."
    assert rivals(answer, bakery) != []
    assert rivals("It is open Monday to Saturday from 7:00 to 18:00.", bakery) == []


def test_days_a_page_names_by_their_group_are_not_left_out():
    """ "open Monday to Friday ... and at weekends" names Saturday and Sunday by their
    group: the weekdays' clause leaves no day out."""
    pool = ContextWords.of(
        ["The pool is open Monday to Friday for members and at weekends for everyone."], "?"
    )
    assert [s.implied for s in pool.sentences] == [frozenset()] * len(pool.sentences)
