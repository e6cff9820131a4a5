"""A bare "Yes." or "No." cites the passage that answers the question, not the passages the
model's scores of one reply word happen to favour (fresh-user review, session 64)."""

from __future__ import annotations

import numpy as np
from fakes import over_sentences

from camab_rag.citations import cite
from camab_rag.groundedness.wordforms import ContextWords
from camab_rag.render.text import dispute_text, verdict_text
from camab_rag.result import AttributionResult
from camab_rag.segments import Segment

DOCS = [
    "Opening hours. The Harbour Museum is open every day except Tuesdays, from 10:00 to 17:30.",
    "Cafe and shop. The Quayside Cafe is open 7 days a week from 9:30 to 18:00. "
    "The museum shop is open weekdays only, from 10:00 to 17:00.",
    "Getting here. There is no visitor car park; the nearest garage is on Dock Street.",
]


def _reply(question: str, answer: str) -> AttributionResult:
    """``answer`` attributed with scores that favour the car park page most, as SmolLM2's
    did for "No." in the review."""

    def scores(segments: list[Segment]) -> np.ndarray:
        favoured = np.array([0.3 if s.doc_index == 2 else 0.0 for s in segments])
        favoured[-1] = 0.4
        return favoured

    return over_sentences(DOCS, question, answer, scores, n_queries=16)


def _cited(question: str, answer: str) -> tuple[list[int], list[list[str]]]:
    """The documents cited (from 0) and the passages highlighted in each."""
    result = _reply(question, answer)
    cited = cite(result, DOCS)
    sources = [cited.source(n) for n in cited.sentences[0].citations]
    return [s.doc_index for s in sources], [[h.text for h in s.highlights] for s in sources]


def test_a_bare_no_cites_the_clause_it_answers():
    docs, passages = _cited("Is the museum open on Tuesdays?", "No.")
    assert docs == [0]
    assert passages == [[DOCS[0][len("Opening hours. ") :]]]


def test_a_bare_yes_cites_the_subject_asked_about():
    # the cafe's "7 days a week" implies Tuesday; the museum's "except Tuesdays" is the
    # museum's, and the shop's "weekdays only" (another sentence) does not cancel the cafe's days
    docs, passages = _cited("Is the cafe open on Tuesdays?", "Yes, it is.")
    assert docs == [1]
    assert passages == [["The Quayside Cafe is open 7 days a week from 9:30 to 18:00."]]


def test_a_bare_no_cites_the_days_a_page_leaves_out():
    docs, passages = _cited("Is the shop open on Sundays?", "No.")
    assert docs == [1]
    assert passages == [["The museum shop is open weekdays only, from 10:00 to 17:00."]]


def test_a_reply_to_what_no_page_states_cites_nothing():
    assert _cited("Does the museum have a planetarium?", "No.") == ([], [])


def test_a_reply_with_words_of_its_own_is_cited_as_before():
    result = _reply("Is there parking?", "No, there is no visitor car park.")
    cited = cite(result, DOCS)
    assert [cited.source(n).doc_index for n in cited.sentences[0].citations] == [2]


def test_an_every_day_clause_keeps_the_days_another_sentence_groups():
    context = ContextWords.of([DOCS[1]], "Is the cafe open on Tuesdays?")
    cafe = next(c for c in context.sentences if "quayside" in c.forms)
    assert {"tuesday", "monday", "saturday"} <= cafe.implied


def test_a_denied_reply_is_not_quoted_to_the_reader():
    class Report:
        verdict, misread, unchecked_facts, sentences = "uncertain", ("Yes",), ("Yes",), []

    assert verdict_text(Report()) == "Check this answer: the sources say the opposite"
    assert dispute_text(["Yes"]) == "disagrees with the answer"
    assert dispute_text(["Yes", "open"]) == "disagrees with the answer on \u201copen\u201d"


def test_a_yes_the_page_denies_with_no_cites_nothing():
    """Review 2 (session 64), case 12: a wrong "Yes." to "Does the Harbour gym have a
    sauna?" cited "There is no sauna at the Harbour gym." as holding the answer."""
    docs, _ = _cited("Is there a visitor car park?", "Yes.")
    assert docs == []
    docs, passages = _cited("Is there a visitor car park?", "No.")
    assert docs == [2] and passages == [[DOCS[2][len("Getting here. ") :]]]


def test_a_clock_time_is_quoted_whole_in_the_notice():
    """Review 1 (session 64), case 22: the notice named "8", "30" for the answer's 8:30."""

    class Sentence:
        text = "Yes, it is open on Tuesdays from 8:30 to 12:30 and costs 30 euros."

    class Report:
        verdict, misread, unchecked_facts = "uncertain", ("open", "8", "30", "12"), ()
        sentences = (Sentence(),)

    assert verdict_text(Report()) == (
        "Check this answer: the sources say something else about "
        "\u201copen\u201d, \u201c8:30\u201d, \u201c12:30\u201d"
    )


def test_a_decimal_is_quoted_whole_in_the_notice():
    """Review 2 (session 67): "a 1.7-liter battery" read "1", "7" in the notice."""

    class Sentence:
        text = "It has a 1.7-liter battery and weighs 9 kg."

    class Report:
        verdict, misread, unchecked_facts = "uncertain", ("1", "7", "9"), ()
        sentences = (Sentence(),)

    assert verdict_text(Report()) == (
        "Check this answer: the sources say something else about \u201c1.7\u201d, \u201c9\u201d"
    )


def test_the_passage_a_reply_answers_has_no_empty_bar():
    """Two reviews (session 65): "[        ] holds the answer" read as no support at all."""
    shown = cite(_reply("Is the museum open on Tuesdays?", "No."), DOCS).to_terminal(color=False)
    line = next(line for line in shown.splitlines() if "except Tuesdays" in line)
    assert "holds the answer" in line and "[" not in line.split("holds")[0]
