"""How the gate reads a shop's product pages (fresh-user review, session 67): model names
that end in a number ("the Aero 14"), and a discontinued model's page beside its successor."""

from __future__ import annotations

import pytest

from camab_rag.groundedness.wordforms import (
    ContextWords,
    derived_values,
    forms,
    is_stale,
    misread_spans,
    named_numbers,
    rivals,
    subject_forms,
)

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
