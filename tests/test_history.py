"""Everything the model saw is context: the chat history (earlier turns, system prompt)
counts like the documents in the groundedness gate, and the report says which part a
sentence rests on."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest
from fakes import KeywordScorer

from camab_rag import AttributionSettings, assess_answer, assess_groundedness, attribute
from camab_rag.errors import InputError
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.groundedness.anchors import anchor_prompts, default_builder
from camab_rag.groundedness.report import GroundednessReport, SentenceGroundedness, support_parts
from camab_rag.render.cited_answer import CitationRule, CitedAnswer, CitedSentence
from camab_rag.steps import adrive, drive
from camab_rag.token_support import TokenSupport

DOCS = [
    "All Lumora kettles come with a 2-year warranty. Teapots have a 1-year warranty "
    "against manufacturing defects.",
    "The staff picnic is on Friday.",
]
HISTORY = [
    {"role": "user", "content": "How much is the Glass teapot?"},
    {"role": "assistant", "content": "The Glass teapot costs 29 euros."},
]
USER_TURNS = ("How much is the Glass teapot?",)
"""What counts as context of HISTORY: the user's words, not the model's own earlier answer."""
FOLLOW_UP = "And how long is its warranty?"
ANSWER = "The Glass teapot has a 1-year warranty."


def test_the_history_goes_between_the_system_prompt_and_the_question_and_leaves_the_empty_anchor():
    builder = default_builder(FOLLOW_UP, DOCS, history=HISTORY)
    prompts = anchor_prompts(builder)
    assert not isinstance(prompts.full, str) and not isinstance(prompts.empty, str)
    assert [m["role"] for m in prompts.full] == ["system", "user", "assistant", "user"]
    assert [m["role"] for m in prompts.empty] == ["system", "user"]
    assert prompts.earlier_turns == 2
    assert prompts.conversation[1:] == USER_TURNS


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ("How much is it?", "history must be a list of chat messages"),
        ([("user", "hi")], r"history\[0\] must be a chat message mapping"),
        ([{"role": "bot", "content": "hi"}], r"history\[0\] has role 'bot'"),
        ([{"role": "user", "content": 3}], r"history\[0\]\.content must be a string"),
        (  # the input gate, as for the question: never a raw tokenizer error
            [{"role": "user", "content": "hi"}, {"role": "user", "content": "a\udfff"}],
            r"^history\[1\]\.content holds a lone surrogate U\+DFFF at character 1",
        ),
        ([{"role": "user", "content": "a\x00b"}], r"^history\[0\]\.content holds a NUL"),
    ],
)
def test_a_malformed_history_is_a_typed_error_naming_the_problem(history, message):
    with pytest.raises(InputError, match=message):
        assess_answer(FOLLOW_UP, DOCS, ANSWER, KeywordScorer(), history=history)
    with pytest.raises(InputError, match=message):
        attribute(FOLLOW_UP, DOCS, ANSWER, KeywordScorer(), budget=2, history=history)


def test_history_and_a_captured_prompt_are_not_mixed_silently():
    prompt = [{"role": "user", "content": DOCS[0] + "\n" + DOCS[1] + "\n" + FOLLOW_UP}]
    with pytest.raises(InputError, match="history= goes into the default prompt template"):
        attribute(FOLLOW_UP, DOCS, ANSWER, KeywordScorer(), prompt=prompt, history=HISTORY)


def test_a_sentence_rests_on_the_part_whose_words_it_takes():
    documents, conversation = {"teapots", "warranty", "1", "year"}, {"glass", "teapot"}
    assert support_parts("1-year warranty.", documents, conversation) == ("documents",)
    assert support_parts(ANSWER, documents, conversation) == ("documents", "conversation")
    assert support_parts("It costs 29 euros.", documents, conversation) == ()
    assert support_parts(ANSWER, None, conversation) == ()


def test_old_reports_without_the_conversation_still_load():
    old = {"text": "A.", "start": 0, "end": 2, "gain": 0.1, "top_share": 0.0, "supported": True}
    assert SentenceGroundedness.from_dict(old).support_from == ()
    report = assess_answer(FOLLOW_UP, DOCS, ANSWER, KeywordScorer(), history=HISTORY)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["token_support"]["conversation"][1:] == list(USER_TURNS)
    assert GroundednessReport.from_dict(data).to_dict() == report.to_dict()
    del data["token_support"]["conversation"]
    assert GroundednessReport.from_dict(data).token_support.conversation == ()  # type: ignore[union-attr]


def test_a_chat_follow_up_that_names_the_product_from_an_earlier_turn_passes(smollm2_scorer):
    """The product is named only in the conversation: its words are context, not invented
    words, and the score is the README's formula on the two anchors."""
    report = assess_answer(FOLLOW_UP, DOCS, ANSWER, smollm2_scorer, history=HISTORY)
    assert report.earlier_turns == 2
    assert report.grounded, report.score
    assert report.sentences[0].support_from == ("documents", "conversation")
    assert report.full_reward is not None and report.empty_reward is not None
    assert report.score == pytest.approx(1 - report.full_reward / report.empty_reward, abs=1e-9)
    assert report.unsupported_spans == []
    # an invented number in the same follow-up is still marked
    wrong = assess_answer(
        FOLLOW_UP, DOCS, "The Glass teapot has a 5-year warranty.", smollm2_scorer, history=HISTORY
    )
    assert [s.text for s in wrong.unsupported_spans] == ["5"]

    # the same through an attribution's anchors (no extra call for the verdict)
    result = attribute(
        FOLLOW_UP,
        DOCS,
        ANSWER,
        smollm2_scorer,
        budget=4,
        granularity="chunk",
        history=HISTORY,
        settings=AttributionSettings(anchors=True),
    )
    observed = assess_groundedness(result)
    assert observed.source == "observed" and observed.grounded
    assert observed.score == pytest.approx(report.score, abs=1e-3)


def test_the_filter_judges_a_follow_up_with_its_history():
    gate = GroundednessFilter()
    verdict = drive(gate.answer_steps(FOLLOW_UP, DOCS, ANSWER, KeywordScorer(), history=HISTORY))
    assert verdict.report is not None and verdict.report.earlier_turns == 2
    assert verdict.report.token_support is not None
    assert verdict.report.token_support.conversation[1:] == USER_TURNS

    async def judged() -> FilteredAnswer:
        steps = gate.answer_steps(FOLLOW_UP, DOCS, ANSWER, KeywordScorer(), history=HISTORY)
        return await adrive(steps)

    assert asyncio.run(judged()).to_dict() == verdict.to_dict()
    bad = drive(gate.answer_steps(FOLLOW_UP, DOCS, ANSWER, KeywordScorer(), history="hi"))  # type: ignore[arg-type]
    assert bad.grounded is None and "history must be a list" in (bad.error or "")


def test_a_sentence_resting_on_the_conversation_says_so_instead_of_citing():
    sentence = CitedSentence("It costs 29 euros.", 0, 18, [], [])
    answer = CitedAnswer("It costs 29 euros.", FOLLOW_UP, [sentence], [], CitationRule())
    verdict = SimpleNamespace(
        sentences=[
            SimpleNamespace(
                start=0, end=18, supported=True, abstention=False, support_from=("conversation",)
            )
        ],
        unsupported_spans=[],
        grounded=True,
        to_dict=dict,
    )
    judged = answer.with_groundedness(verdict)
    assert judged.sentences[0].support_from == ("conversation",)
    assert judged.to_dict()["sentences"][0]["support_from"] == ["conversation"]
    assert "It costs 29 euros. (from the conversation)" in judged.to_terminal(color=False)
    assert "It costs 29 euros. *(from the conversation)*" in judged.to_markdown()
    assert '<span class="camab-from-chat">(from the conversation)</span>' in judged.to_html()
    plain = answer.with_groundedness(
        SimpleNamespace(sentences=[], unsupported_spans=[], grounded=True, to_dict=dict)
    )
    assert "conversation" not in plain.to_terminal(color=False)


def test_a_detail_the_model_invented_in_an_earlier_turn_does_not_ground_its_repetition(
    smollm2_scorer,
):
    """Fresh-user review: the assistant's own earlier turn counted as context, so an
    invented name and number, once said, passed as supported when repeated."""
    docs = [
        "Customer service answers by email at help@brenna.example, weekdays 9-17.",
        "Parking is free for customers behind the shop.",
    ]
    invented = "Call Maria Tamm at +372 555 1234."
    history = [
        {"role": "user", "content": "How do I contact customer service?"},
        {"role": "assistant", "content": invented},
    ]
    blocked = drive(
        GroundednessFilter(mode="block").answer_steps(
            "Sorry, what was the number again?", docs, invented, smollm2_scorer, history=history
        )
    )
    assert blocked.verdict == "unsupported", blocked.report
    assert blocked.blocked and "1234" not in blocked.answer


REFUNDS = [
    "Cancellations made more than 60 days before the hire date receive a full refund minus a "
    "£50 admin fee. Cancellations 30-60 days before receive a 50% refund. Cancellations "
    "within 30 days are not refunded."
]
WEDDING = [
    {"role": "user", "content": "What's your cancellation policy?"},
    {"role": "assistant", "content": "More than 60 days ahead: a full refund minus £50."},
    {"role": "user", "content": "Our wedding is in 45 days. Is the deposit £80?"},
    {"role": "assistant", "content": "I'm sorry to hear that."},
]


def test_the_users_earlier_statements_are_told_their_questions_evidence():
    """Blind set 12 (dev): a number the user stated in an earlier turn ("Our wedding is in 45
    days") was nowhere in the context, so a right answer working from it was blocked. A
    statement is kept whole as told (its numbers read as the question's are); a question
    keeps its words without its numbers, as before."""
    prompts = anchor_prompts(default_builder("What would we get back then?", REFUNDS, WEDDING))
    assert prompts.told == ("Our wedding is in 45 days.",)
    assert prompts.conversation[1:] == ("What's your cancellation policy?", "Is the deposit £?")


def test_a_follow_up_working_from_a_number_the_user_stated_earlier_passes(smollm2_scorer):
    question = "What would we get back then?"
    right = "At 45 days you're in the 30-60 day band, so you would get a 50% refund."
    report = assess_answer(question, REFUNDS, right, smollm2_scorer, history=WEDDING)
    assert report.verdict != "unsupported" and "45" not in (report.unchecked_facts or ())
    assert report.token_support is not None and report.token_support.told
    stored = TokenSupport.from_dict(report.token_support.to_dict())
    assert stored.told == ("Our wedding is in 45 days.",)
    wrong = right.replace("50%", "70%")
    invented = assess_answer(question, REFUNDS, wrong, smollm2_scorer, history=WEDDING)
    assert invented.verdict != "supported" and "70" in (invented.unchecked_facts or ())
    # a price the user asked about is not told: "£80" stays unchecked
    deposit = assess_answer(
        question, REFUNDS, "The deposit is £80.", smollm2_scorer, history=WEDDING
    )
    assert "80" in (deposit.unchecked_facts or ())


def test_the_filter_checks_a_bare_answer_in_one_call_sync_and_async(smollm2_scorer):
    """Review 21: GroundednessFilter had no synchronous call for a bare answer outside
    ``judge(attribute(...))`` and ``answer_steps``; ``check``/``acheck`` are that call."""
    gate = GroundednessFilter(mode="block", scorer=smollm2_scorer)
    wrong = "The Glass teapot has a 5-year warranty."
    blocked = gate.check(FOLLOW_UP, DOCS, wrong, history=HISTORY)
    assert blocked.verdict != "supported" and blocked.report is not None
    assert blocked.report.earlier_turns == 2
    # review 23: the JSON a front end reads carries the words to show beside the answer
    data = blocked.to_dict()
    assert data["notice"] == blocked.notice and FilteredAnswer.from_dict(data) == blocked
    passed = asyncio.run(gate.acheck(FOLLOW_UP, DOCS, ANSWER, history=HISTORY))
    assert passed.grounded is True and passed.answer == ANSWER and not passed.blocked
    failed = GroundednessFilter(mode="block").check(FOLLOW_UP, DOCS, ANSWER, object())  # no scorer
    assert failed.grounded is None and failed.blocked and failed.error


def test_a_first_turn_rests_on_no_conversation(smollm2_scorer):
    """Review 23: a first chat turn was marked "(from the conversation)": the template's
    system prompt ("You are a helpful assistant ...") counted as the conversation. With no
    earlier turn no sentence rests on one; its words still count as context."""
    answer = "As a helpful assistant, I can say teapots have a 1-year warranty."
    first = assess_answer("How long is the teapot warranty?", DOCS, answer, smollm2_scorer)
    assert first.earlier_turns == 0
    assert all("conversation" not in s.support_from for s in first.sentences)
    later = assess_answer(FOLLOW_UP, DOCS, ANSWER, smollm2_scorer, history=HISTORY)
    assert "conversation" in later.sentences[0].support_from
