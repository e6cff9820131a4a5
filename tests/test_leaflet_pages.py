"""How the gate and citations read a pharmacy's leaflets (fresh-user review, session 68):
dose limits worded two ways ("no more than 8 tablets", "Do not take more than 8 tablets"),
an archived leaflet beside the current one, and a small model's "The answer is: No."."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import over_sentences

from camab_rag import cite
from camab_rag.conflicts import disputes
from camab_rag.groundedness.anchors import followed_up
from camab_rag.groundedness.wordforms import (
    ContextWords,
    form,
    limits,
    misread_spans,
    outdated,
    rivals,
)

LEAFLET = (
    "Dolorex 250 mg tablets, patient leaflet (2026). Adults and children aged 12 and over: "
    "take 1 or 2 tablets, leaving at least 6 hours between doses. Do not take more than 8 "
    "tablets in 24 hours. Children aged 6 to 11: take 1 tablet every 6 hours, no more than 4 "
    "tablets in 24 hours. Do not give Dolorex to children under 6."
)
WARNINGS = (
    "Dolorex warnings. Do not drink alcohol while taking Dolorex. Do not combine Dolorex with "
    "warfarin or with other medicines that contain dolorexate."
)
ARCHIVED = (
    "ARCHIVED PAGE: superseded by the 2026 leaflet. Dolorex 250 mg tablets, patient leaflet "
    "(2023). Adults: take 1 or 2 tablets every 4 hours. Do not take more than 12 tablets in "
    "24 hours."
)
HOURS = (
    "Greenleaf Pharmacy opening hours. Monday to Friday: 8:00 to 19:00. Saturday: 9:00 to "
    "13:00. The pharmacy is closed on Sundays and public holidays."
)
PAGES = [LEAFLET, WARNINGS, ARCHIVED, HOURS]
MAXIMUM = "What is the maximum number of Dolorex tablets an adult can take in a day?"
CHILD = "How many Dolorex tablets can a child aged 8 take in a day?"


def _read(
    answer: str, question: str, pages: list[str] = PAGES
) -> tuple[list[str], list[tuple[str, list[int]]]]:
    context = ContextWords.of(pages, question)
    spans = [answer[a:b] for a, b in misread_spans(answer, context)]
    return spans, [(answer[a:b], sorted(docs)) for (a, b), docs in rivals(answer, context)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Do not take more than 8 tablets in 24 hours.", [("most", "8", "tablet")]),
        ("no more than 4 tablets", [("most", "4", "tablet")]),
        ("Adults may take up to 12 tablets.", [("most", "12", "tablet")]),
        ("leaving at least 6 hours between doses", [("least", "6", "hour")]),
        ("Take 2 tablets every 6 hours.", []),
    ],
)
def test_a_limit_reads_alike_in_either_wording(text, found):
    assert [bound for _, bound in limits(text)] == found


def test_children_is_the_plural_of_child():
    assert form("children") == form("child") == "child"


def test_a_right_limit_worded_otherwise_is_read_on_the_limits_clause():
    # review 4 c03: "no more than 8" was misread ("8", "24", and its "no" an opposite) by
    # the adults' "take 1 or 2 tablets" sentence, which shares more of its words
    for answer in [
        "An adult can take no more than 8 tablets of Dolorex in 24 hours.",
        "No more than 8 tablets in 24 hours.",
    ]:
        assert _read(answer, MAXIMUM) == ([], [])
        result = over_sentences(PAGES, MAXIMUM, answer, lambda s: np.zeros(len(s)))
        assert disputes(result) == {}


def test_the_archived_leaflets_limit_is_disputed_by_the_current_one():
    # review 4 c04: the 2023 leaflet's 12 tablets passed as "Supported by the sources"
    answer = "Adults may take up to 12 tablets in 24 hours."
    assert _read(answer, MAXIMUM) == (["12"], [("12", [0])])


def test_a_limit_of_another_age_group_is_misread():
    answer = "A child of 8 can take up to 8 tablets a day."
    misread, rival = _read(answer, CHILD)
    assert "8" in misread and rival == [("8", [0])]
    assert _read("No more than 4 tablets in 24 hours.", CHILD) == ([], [])


def test_a_follow_up_on_children_reads_the_childrens_limit():
    history = [{"role": "user", "content": "What is the adult dose of Dolorex?"}]
    asked = followed_up("And for children aged 6 to 11?", history, PAGES)
    answer = "1 tablet every 6 hours, at most 4 tablets a day."
    assert _read(answer, asked) == ([], [])
    assert _read("2 tablets every 4 hours, at most 8 tablets a day.", asked)[0] != []


def test_a_small_models_lead_in_is_no_claim():
    # review 4: "The answer is: No." read "the sources say the opposite" where "No." passed
    system = "You are a helpful assistant. Answer the question using only the given context."
    question = "Can I drink alcohol while taking Dolorex?"
    for answer in ["The answer is: No.", "No.", "Answer: no."]:
        assert _read(answer, question, [system, WARNINGS]) == ([], [])
    assert _read("The answer is: Yes.", question, [system, WARNINGS])[0] == ["Yes"]


def test_saturdays_hours_are_not_the_weekdays():
    # review 4 c31 (a bare amount read with the day asked; session 68's earlier commit)
    assert _read("From 8:00 to 19:00.", "When is Greenleaf open on Saturdays?")[0] == ["8", "19"]
    assert _read("From 9:00 to 13:00.", "When is Greenleaf open on Saturdays?") == ([], [])


def _cited(question: str, answer: str, top: float = 1.0) -> tuple[list[int], list[int], list[bool]]:
    """The documents (indices) the answer's sentence cites and those disputing it, and
    which sources are out of date; the archived leaflet's "every 4 hours" scores ``top``,
    the current leaflet's sentences ``-top`` (a model that cannot tell them apart)."""
    docs = [LEAFLET, ARCHIVED]

    def scores(segments):
        own = [-top if s.doc_index == 0 else 0.0 for s in segments]
        return np.array([top if "every 4 hours" in s.text else v for s, v in zip(segments, own)])

    shown = cite(over_sentences(docs, question, answer, scores), docs)
    index = {s.number: s.doc_index for s in shown.sources}
    (sentence,) = shown.sentences
    stale = [s.stale for s in shown.sources]
    return [index[n] for n in sentence.citations], [index[n] for n in sentence.disputed], stale


def test_an_answer_the_current_leaflet_holds_cites_it_not_the_archived_one():
    # review 4 c05: "4 tablets." cited only the 2023 leaflet ("holds the answer")
    assert _cited(CHILD, "4 tablets.") == ([0], [], [False])
    # with the model's scores near nought, where the archived page would have been cited
    assert _cited(CHILD, "4 tablets.", top=0.001) == ([0], [], [False])
    # the archived leaflet's own value still cites it, disputed by the current one
    hours = "How many hours should I leave between Dolorex doses?"
    assert _cited(hours, "4 hours.") == ([1], [0], [True, False])
    # and so does a sentence on what the old leaflet said
    past = "The 2023 leaflet said no more than 12 tablets; it was superseded."
    assert _cited(MAXIMUM, past)[0] == [1]


def test_a_value_only_the_archived_leaflet_states_of_its_unit_is_out_of_date():
    # review 4: "4 hours." read "the sources differ on “4”", never naming the archived page
    context = ContextWords.of([LEAFLET, ARCHIVED], "How many hours between Dolorex doses?")
    assert outdated("4", context, "4 hours.")
    assert not outdated("4", context, "4 tablets.")  # the current leaflet's 4 tablets
    assert not outdated("6", context, "6 hours.")
