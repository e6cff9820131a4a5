"""How the gate reads a reply to a question about one of several places (fresh-user review,
session 64: a town's library, branch, pool and permit office pages)."""

from __future__ import annotations

import numpy as np
import pytest

from camab_rag.groundedness.anchors import context_words
from camab_rag.groundedness.score import unasked_facts
from camab_rag.groundedness.wordforms import (
    ContextWords,
    agreeing,
    answered_clauses,
    misread_spans,
)
from camab_rag.prompts import TemplatePromptBuilder
from camab_rag.result import AttributionResult
from camab_rag.segments import segment_documents, to_documents

PAGES = [
    "Central Library. The Central Library is open Monday to Friday from 9:00 to 20:00 and on "
    "Saturdays from 10:00 to 16:00. Closed on Sundays and on public holidays. Printing costs "
    "0.10 euros per page.",
    "Hill Branch Library. The Hill Branch is open Tuesday to Thursday from 13:00 to 18:00 "
    "(weekdays only). The branch is closed on Saturdays, Sundays and Mondays. The branch has "
    "a reading room. It does not offer printing.",
    "Depot. The recycling depot is open Wednesday to Sunday from 8:00 to 17:00. There is no "
    "charge for parking at the depot.",
    "Permit desk. The permit desk is open Monday, Wednesday and Friday from 8:30 to 12:30.",
]


def _misread(question: str, answer: str) -> list[str]:
    spans = misread_spans(answer, ContextWords.of(PAGES, question))
    return [answer[a:b] for a, b in spans]


@pytest.mark.parametrize(
    ("question", "answer", "misread"),
    [
        # another place's Sunday hours ("open Wednesday to Sunday") answered the reply
        ("Is the Central Library open on Sundays?", "No.", []),
        ("Is the Central Library open on Sundays?", "Yes.", ["Yes"]),
        # the question's "open" made the depot's "open ... Sunday" the closest clause
        (
            "Is the Central Library open on Sundays?",
            "No, the Central Library is closed on Sundays and public holidays.",
            [],
        ),
        # no clause names Tuesday (a list of days leaves none out): the reply is not read
        ("Is the permit desk open on Tuesdays?", "No, it is open Monday and Friday.", []),
        # the branch's page says it does not: the central library's price is a mix-up
        (
            "Can I print at the Hill Branch?",
            "Yes, printing costs 0.10 euros per page at the Hill Branch.",
            ["Yes"],
        ),
        ("Can I print at the Central Library?", "Yes, printing costs 0.10 euros per page.", []),
        # "no charge" is not a denial of "free"
        ("Is parking free at the recycling depot?", "Yes, parking is free.", []),
    ],
)
def test_a_reply_is_read_with_the_page_the_question_asks_about(question, answer, misread):
    assert _misread(question, answer) == misread


def _followed(earlier: str, question: str, answer: str) -> list[str]:
    history = [{"role": "user", "content": earlier}, {"role": "assistant", "content": "Yes."}]
    docs = to_documents(PAGES)
    segments = segment_documents(docs, "sentence")
    builder = TemplatePromptBuilder(question, docs, segments, history=history)
    spans = misread_spans(answer, context_words(PAGES, builder=builder))
    return [answer[a:b] for a, b in spans]


def test_a_follow_up_is_read_with_the_question_it_follows():
    """ "And on Sundays?" named no place: the branch's and the library's "closed on Sundays"
    disputed a right answer about the depot."""
    earlier = "Is the recycling depot open on Saturdays?"
    assert _followed(earlier, "And on Sundays?", "Yes, it is open on Sundays too.") == []
    wrong = _followed(earlier, "And on Mondays?", "Yes, it is open on Mondays too.")
    assert wrong == ["open", "Yes"]
    # a day the branch's page names beats one its "weekdays only" spans
    branch = "When is the Hill Branch open?"
    assert _followed(branch, "And on Mondays?", "No, it is closed on Mondays.") == []


@pytest.mark.parametrize(
    ("question", "answer", "unchecked"),
    [
        ("Does the depot have a sauna?", "Yes.", ["sauna"]),
        ("Does the depot have a sauna?", "Yes, it does.", ["sauna"]),
        ("Does the depot have a sauna?", "No.", []),  # what no page says is not
        # a page holds two of its words: a word it lacks may be the asker's ("bring")
        ("Does the recycling depot have a sauna?", "Yes.", []),
        ("Does the Hill Branch have a reading room?", "Yes.", []),
        ("Is the Central Library open on Saturdays?", "Yes.", []),
        # a reason after it says what it claims (blind set: "Yes. If you register ...")
        ("Does the depot have a sauna?", "Yes. The depot has a sauna by the gate.", []),
    ],
)
def test_a_bare_yes_claims_what_the_question_asks(question, answer, unchecked):
    """A bare "Yes." to a question whose subject no page states passed as supported: it
    claims the question's words, and the sources hold none of "sauna"."""
    assert unasked_facts(answer, ContextWords.of(PAGES, question)) == unchecked


def test_an_attribution_reads_a_follow_up_with_its_history():
    """``attribute(..., history=)``'s verdict is read with its result's question and the
    history its prompt builder holds (before: the result's question alone)."""
    history = [{"role": "user", "content": "Is the recycling depot open on Saturdays?"}]
    stub = AttributionResult(
        scores=np.zeros(0), question="And on Sundays?", response="Yes.", method="none"
    )
    docs = to_documents(PAGES)
    builder = TemplatePromptBuilder(
        "And on Sundays?", docs, segment_documents(docs, "sentence"), history=history
    )
    assert {"depot", "sunday"} <= context_words(PAGES, result=stub, builder=builder).asked
    assert {"depot", "sunday"} <= context_words(PAGES, result=stub, history=history).asked
    assert "depot" not in context_words(PAGES, result=stub).asked


def test_a_current_and_an_archived_page_both_answer_a_reply():
    """ "Yes, on Sundays it opens from 8:00." over the current page was misread: the archived
    page's "The pool is closed on Sundays." was the one clause read, on the strength of a
    word ("pool") the current page's clause left to its title."""
    pages = [
        "Riverside Pool (updated 2025). Opening times: Saturday and Sunday 8:00 to 18:00.",
        "Riverside Pool (archived 2022). The pool is closed on Sundays.",
    ]
    context = ContextWords.of(pages, "Is the Riverside pool open on Sundays?")
    answer = "Yes, on Sundays it opens from 8:00."
    assert {c.doc for c in answered_clauses(context)} == {0, 1}
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == []
    assert [c.doc for c in agreeing(answered_clauses(context), "yes", context)] == [0]


def test_attribute_and_judge_read_a_follow_up_with_its_history(smollm2_scorer):
    """With the embedded model: "Yes, it is open on Sundays too." after a question about the
    depot was shown disputed by the library and branch pages (their "closed on Sundays")."""
    from camab_rag import GroundednessFilter, attribute

    history = [
        {"role": "user", "content": "Is the recycling depot open on Saturdays?"},
        {"role": "assistant", "content": "Yes, it is open from 8:00 to 17:00."},
    ]
    answer = "Yes, it is open on Sundays too, from 8:00 to 17:00."
    result = attribute(
        "And on Sundays?",
        PAGES,
        answer,
        smollm2_scorer,
        budget=4,
        groundedness=True,
        history=history,
    )
    assert result.groundedness.report.misread == ()
    judged = GroundednessFilter(mode="flag").judge(
        result, context=PAGES, scorer=smollm2_scorer, history=history
    )
    assert judged.report.misread == ()
    alone = GroundednessFilter(mode="flag").judge(result, context=PAGES, scorer=smollm2_scorer)
    assert alone.report.misread == ("open",)  # without the turn before: another place's Sunday


@pytest.mark.parametrize(("reply", "misread"), [("Yes.", []), ("No.", ["No"])])
def test_the_place_named_outweighs_a_word_every_page_holds(reply, misread):
    """Second review (session 64): "No." to "Is the Central gym open on Sundays?" passed on
    the Harbour gym's "Closed on Sundays": both pages held two of the question's words, and
    the Harbour page's named day won; "Central" is the word that tells the page."""
    pages = [
        "FitZone Central gym, 8 Market Square. Open daily, 6:00-23:00.",
        "FitZone Harbour gym, 21 Dock Lane. Open Monday to Saturday. Closed on Sundays.",
    ]
    context = ContextWords.of(pages, "Is the Central gym open on Sundays?")
    assert [reply[a:b] for a, b in misread_spans(reply, context)] == misread
