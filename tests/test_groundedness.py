"""Groundedness score and filter (pure logic with the KeywordScorer fake)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import numpy as np
import pytest
from fakes import FailingScorer, KeywordScorer

from camab_rag import AttributionSettings, attribute
from camab_rag.errors import InputError
from camab_rag.groundedness import (
    FilteredAnswer,
    GroundednessFilter,
    GroundednessReport,
    assess_groundedness,
)
from camab_rag.groundedness.filter import DEFAULT_FALLBACK
from camab_rag.groundedness.report import SentenceGroundedness, top_share
from camab_rag.groundedness.verdict import Verdict
from camab_rag.result import AttributionResult, StatementAttribution
from camab_rag.segments import Segment
from camab_rag.steps import drive

CONTEXT = [
    "The Eiffel Tower is in Paris. It was completed in 1889.",
    "Bananas are yellow. Apples can be red.",
]
QUESTION = "Where is the tower?"
SUPPORTED = "The tower is in Paris. It was completed in 1889."
UNSUPPORTED = "Quokkas hop around Rottnest beaches nightly."


def camab_run(response: str, scorer: object) -> AttributionResult:
    """CAMAB's three calls on :data:`CONTEXT`, seeded (the runs these tests judge)."""
    result: AttributionResult = attribute(
        QUESTION,
        CONTEXT,
        response,
        scorer,
        budget=3,
        method="camab",
        settings=AttributionSettings(seed=5),
    )
    return result


def hand_result(masks: list[list[bool]], rewards: list[float]) -> AttributionResult:
    segments = [Segment("a.", 0, 0, 2), Segment("b.", 0, 3, 5), Segment("c.", 1, 0, 2)]
    return AttributionResult(
        scores=np.array([0.5, 0.3, -0.1]),
        segments=segments,
        response="One. Two.",
        question="q",
        n_documents=2,
        masks=np.array(masks, dtype=bool).reshape(len(masks), 3),
        rewards=np.array(rewards, dtype=float),
        statements=[
            StatementAttribution("One.", 0, 4, np.array([0.4, 0.0, 0.0])),
            StatementAttribution("Two.", 5, 9, np.array([0.02, 0.01, -0.2])),
        ],
    )


def test_top_share():
    assert top_share([0.5, 0.3, -0.1, 0.2], 1) == pytest.approx(0.5)
    assert top_share([0.5, 0.3, -0.1, 0.2], 2) == pytest.approx(0.8)
    assert top_share([-1.0, 0.0], 2) == 0.0
    with pytest.raises(InputError):
        top_share([1.0], 0)


def test_observed_gain_comes_from_the_attribution_history():
    result = hand_result([[True] * 3, [False, True, False], [False] * 3], [-0.4, -1.0, -1.9])
    report = assess_groundedness(result, threshold=0.2, top_k=1, block_on="any")
    assert report.source == "observed" and report.extra_queries == 0
    assert (report.full_reward, report.empty_reward) == pytest.approx((-0.4, -1.9))
    assert report.top_share == pytest.approx(0.5 / 0.8)
    assert report.top_segments == [0]
    # per sentence: the surrogate gain (sum of its scores) over the answer's surprisal
    assert [s.gain for s in report.sentences] == pytest.approx([0.4, -0.17])
    assert [s.score for s in report.sentences] == pytest.approx([0.4 / 1.9, -0.17 / 1.9])
    assert [s.supported for s in report.sentences] == [True, False]
    assert [s.top_share for s in report.sentences] == pytest.approx([1.0, 2 / 3])
    assert [s.text for s in report.unsupported_sentences] == ["Two."]
    # the answer's score is its least supported sentence's: "Two." fails, so it fails
    assert report.score == pytest.approx(-0.17 / 1.9) and report.grounded is False
    assert report.to_dict()["sentences"][0]["supported"] is True
    # without statements, the whole answer's explained share: 1.5 / 1.9
    bare = assess_groundedness(replace(result, statements=[]), threshold=0.7)
    assert bare.score == pytest.approx(1.5 / 1.9) and bare.grounded


def test_a_lone_sentence_takes_the_measured_gain_not_the_fits():
    """One claiming sentence whose statement scores sum below zero (a fit of a few calls)
    while the whole answer, measured, gains 1.5 nats per token: the sentence's gain is the
    measured one, so the verdict follows the measurement (the audit's low-budget case)."""
    result = hand_result([[True] * 3, [False, True, False], [False] * 3], [-0.4, -1.0, -1.9])
    lone = replace(
        result, statements=[StatementAttribution("One.", 0, 4, np.array([-0.1, 0.0, 0.0]))]
    )
    report = assess_groundedness(lone, threshold=0.49)
    assert report.sentences[0].gain == pytest.approx(1.5)
    assert report.score == pytest.approx(1.5 / 1.9) and report.grounded
    # a pure surrogate (no endpoint observed or measured) keeps the fit's sum
    bare = replace(lone, masks=lone.masks[1:2], rewards=lone.rewards[1:2])
    assert assess_groundedness(bare).sentences[0].gain == pytest.approx(-0.1)


def test_surrogate_when_the_endpoints_were_not_evaluated():
    result = replace(hand_result([[False, True, False]], [-1.0]), statements=[])
    report = assess_groundedness(result, threshold=0.6, block_on="any")
    assert report.source == "surrogate"
    # V(S) = w0 + sum(w in S): w0 = -1.0 - 0.3, L(C) = w0 + (0.5 + 0.3 - 0.1)
    assert report.empty_reward == pytest.approx(-1.3)
    assert report.full_reward == pytest.approx(-0.6)
    assert report.score == pytest.approx(0.7 / 1.3)
    assert report.grounded is False


def test_the_observed_gain_needs_both_endpoints():
    scorer = KeywordScorer()
    result = attribute(QUESTION, CONTEXT, SUPPORTED, scorer, budget=6, method="loo")
    # leave-one-out evaluated the full context but not the empty one: one extra call
    n = result.n_segments
    assert result.reward_of(np.ones(n, bool)) is not None
    assert result.reward_of(np.zeros(n, bool)) is None
    assert assess_groundedness(result).source == "surrogate"
    # a method that evaluates the empty context observes both endpoints
    shap = attribute(QUESTION, CONTEXT, SUPPORTED, KeywordScorer(), budget=8, method="kernelshap")
    observed = assess_groundedness(shap)
    assert observed.source == "observed" and observed.extra_queries == 0
    assert observed.full_reward == shap.reward_of(np.ones(n, bool))
    assert observed.empty_reward == shap.reward_of(np.zeros(n, bool))


def test_measure_costs_at_most_two_queries():
    scorer = KeywordScorer()
    result = attribute(
        QUESTION,
        CONTEXT,
        SUPPORTED,
        scorer,
        budget=3,
        method="camab",
        settings=AttributionSettings(seed=3),
    )
    before = len(scorer.calls)
    report = assess_groundedness(result, context=CONTEXT, scorer=scorer)
    assert report.extra_queries == len(scorer.calls) - before <= 2
    assert report.source in ("measured", "observed")
    # every word of the answer is in the context, few are in the question
    assert report.full_reward == pytest.approx(-0.1)
    assert report.score > 0.5 and report.grounded


def test_unsupported_answer_is_not_grounded():
    scorer = KeywordScorer()
    supported = attribute(QUESTION, CONTEXT, SUPPORTED, scorer, budget=10, method="kernelshap")
    unsupported = attribute(QUESTION, CONTEXT, UNSUPPORTED, scorer, budget=10, method="kernelshap")
    # (the question's words gain nothing from the context: a low bar for this fake)
    good = assess_groundedness(supported, threshold=0.3)
    bad = assess_groundedness(unsupported, threshold=0.3)
    assert good.grounded and not bad.grounded
    assert bad.score == pytest.approx(0.0)  # no answer word is in any document
    assert good.score > bad.score + 0.3


def test_measure_errors():
    result = hand_result([[False, True, False]], [-1.0])
    with pytest.raises(InputError, match="fewer documents"):
        assess_groundedness(result, context=["only one document"], scorer=KeywordScorer())
    with pytest.raises(InputError, match="failed"):
        assess_groundedness(AttributionResult.failed("down"), context=CONTEXT)


# ----------------------------------------------------------------------------- filter
def test_flag_mode_keeps_the_answer_and_attaches_the_verdict():
    scorer = KeywordScorer()
    result = attribute(QUESTION, CONTEXT, UNSUPPORTED, scorer, budget=10, method="kernelshap")
    verdict = GroundednessFilter(threshold=0.5).judge(result)
    assert verdict.answer == UNSUPPORTED and not verdict.blocked
    assert verdict.grounded is False
    assert verdict.report is not None and verdict.report.score < 0.5
    assert verdict.to_dict()["report"]["grounded"] is False


def test_block_mode_replaces_ungrounded_answers_only():
    scorer = KeywordScorer()
    bad = attribute(QUESTION, CONTEXT, UNSUPPORTED, scorer, budget=10, method="kernelshap")
    good = attribute(QUESTION, CONTEXT, SUPPORTED, scorer, budget=10, method="kernelshap")
    gate = GroundednessFilter(threshold=0.3, mode="block")
    blocked = gate.judge(bad)
    assert blocked.blocked and blocked.answer == DEFAULT_FALLBACK
    assert blocked.original_answer == UNSUPPORTED
    passed = gate.judge(good)
    assert not passed.blocked and passed.answer == SUPPORTED and passed.grounded

    def fallback(result: AttributionResult, report: GroundednessReport | None) -> str:
        assert report is not None
        return f"No support (gain {report.score:.1f}) for: {result.question}"

    custom = GroundednessFilter(threshold=0.5, mode="block", fallback=fallback)
    assert custom.judge(bad).answer == "No support (gain 0.0) for: Where is the tower?"


def test_a_failing_fallback_function_still_blocks(caplog):
    bad = attribute(QUESTION, CONTEXT, UNSUPPORTED, KeywordScorer(), budget=10, method="kernelshap")
    failed = AttributionResult.failed("scorer is down", response=UNSUPPORTED)

    def fallback(result: AttributionResult, report: GroundednessReport | None) -> str:
        raise ZeroDivisionError("the host's bug")

    gate = GroundednessFilter(threshold=0.5, mode="block", fallback=fallback)
    for verdict in (gate.judge(bad), gate.judge(failed)):
        assert verdict.blocked and verdict.answer == DEFAULT_FALLBACK
    assert "fallback function failed (ZeroDivisionError)" in caplog.text


def test_filter_measures_missing_endpoints_with_its_scorer():
    scorer = KeywordScorer()
    result = camab_run(SUPPORTED, scorer)
    gate = GroundednessFilter(threshold=0.5, scorer=scorer)
    verdict = gate.judge(result, context=CONTEXT)
    assert verdict.report is not None and verdict.report.source in ("observed", "measured")
    assert verdict.report.extra_queries <= 2 and verdict.grounded


def test_failed_attribution_is_blocked_unless_told_to_pass():
    failed = AttributionResult.failed("scorer is down", response="An answer.")
    verdict = GroundednessFilter(mode="block", on_error="pass").judge(failed)
    assert verdict.grounded is None and not verdict.blocked and verdict.answer == "An answer."
    assert verdict.error == "scorer is down"
    strict = GroundednessFilter(mode="block", fallback="Sorry.").judge(failed)
    assert strict.blocked and strict.answer == "Sorry." and strict.grounded is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "drop"},
        {"on_error": "raise"},
        {"threshold": float("nan")},
        {"threshold": "0.2"},
        {"threshold": True},
        {"fallback": 3},
    ],
)
def test_filter_rejects_bad_settings(kwargs):
    with pytest.raises(InputError):
        GroundednessFilter(**kwargs)


def test_async_assessment_matches_the_sync_one():
    scorer = KeywordScorer()
    result = camab_run(SUPPORTED, scorer)
    gate = GroundednessFilter(threshold=0.5)
    sync = gate.judge(result, context=CONTEXT, scorer=scorer)
    asynchronous = asyncio.run(gate.ajudge(result, context=CONTEXT, scorer=scorer))
    assert asynchronous.to_dict() == sync.to_dict()
    assert sync.report is not None and sync.report.source == "measured"
    assert sync.report.extra_queries >= 1


def test_judge_never_raises_and_records_why():
    result = camab_run(UNSUPPORTED, KeywordScorer())
    gate = GroundednessFilter(mode="block", on_error="pass")
    # the measurement fails: the answer passes, grounded is unknown, the error is kept
    verdict = gate.judge(result, context=CONTEXT, scorer=FailingScorer())
    assert verdict.grounded is None and not verdict.blocked
    assert verdict.answer == UNSUPPORTED
    assert verdict.error is not None and "scorer is down" in verdict.error
    strict = GroundednessFilter(mode="block", on_error="block", fallback="Sorry.")
    blocked = asyncio.run(strict.ajudge(result, context=CONTEXT, scorer=FailingScorer()))
    assert blocked.blocked and blocked.answer == "Sorry." and blocked.grounded is None


def test_verdict_round_trips_through_json():
    scorer = KeywordScorer()
    result = attribute(QUESTION, CONTEXT, SUPPORTED, scorer, budget=10, method="kernelshap")
    verdict = GroundednessFilter(threshold=0.5, mode="block").judge(result)
    data = json.loads(json.dumps(verdict.to_dict()))
    again = FilteredAnswer.from_dict(data)
    assert again == verdict
    assert again.report is not None and verdict.report is not None
    assert again.report.sentences == verdict.report.sentences


def test_a_blocking_filter_fails_closed_when_it_cannot_judge():
    result = camab_run(UNSUPPORTED, KeywordScorer())
    blocking = GroundednessFilter(mode="block", fallback="Sorry.")
    assert blocking.on_error == "block"
    verdict = blocking.judge(result, context=CONTEXT, scorer=FailingScorer())
    assert verdict.blocked and verdict.answer == "Sorry." and verdict.grounded is None
    assert verdict.error is not None and "scorer is down" in verdict.error
    failed = AttributionResult.failed("no documents", response=UNSUPPORTED)
    assert blocking.judge(failed).blocked
    flagging = GroundednessFilter(mode="flag")
    assert flagging.on_error == "pass" and not flagging.judge(failed).blocked


def test_random_scores_are_not_read_as_a_groundedness_estimate():
    result = attribute(QUESTION, CONTEXT, SUPPORTED, KeywordScorer(), budget=3, method="random")
    gate = GroundednessFilter(mode="block")
    with pytest.raises(InputError, match="random scores carry no estimate"):
        assess_groundedness(result)
    verdict = gate.judge(result)  # unknown: blocked, fails closed
    assert verdict.grounded is None and verdict.blocked
    assert verdict.error is not None and "random scores carry no estimate" in verdict.error
    measured = gate.judge(result, context=CONTEXT, scorer=KeywordScorer())
    assert measured.report is not None and measured.report.source in ("observed", "measured")


def test_a_failed_check_does_not_claim_the_documents_lack_support():
    """Review 6: block mode's default text on a scorer error said the documents held no
    support, which nobody checked; a result that reached the model with no context still
    says so."""
    from camab_rag.groundedness.filter import CHECK_FAILED_FALLBACK

    gate = GroundednessFilter(mode="block")
    down = drive(gate.answer_steps(QUESTION, CONTEXT, SUPPORTED, FailingScorer()))
    assert down.blocked and down.answer == CHECK_FAILED_FALLBACK and down.error
    empty = AttributionResult.failed("no context", response=SUPPORTED)
    empty = replace(empty, status="no_context")
    assert gate.judge(empty).answer == DEFAULT_FALLBACK
    custom = GroundednessFilter(mode="block", fallback="Sorry.")
    assert (
        drive(custom.answer_steps(QUESTION, CONTEXT, SUPPORTED, FailingScorer())).answer == "Sorry."
    )
    called: list[str] = []  # an answer that is shown never asks the host's fallback

    def fallback(result: AttributionResult, report: GroundednessReport | None) -> str:
        called.append(result.response)
        return "Sorry."

    passing = GroundednessFilter(mode="block", fallback=fallback, on_error="pass")
    shown = drive(passing.answer_steps(QUESTION, CONTEXT, SUPPORTED, FailingScorer()))
    assert not shown.blocked and shown.answer == SUPPORTED and called == []


def test_an_uncertain_sentence_passes_the_gate_but_is_not_called_supported():
    """Review 62: a report sentence said ``"supported": true`` beside ``"verdict":
    "uncertain"`` (a source disputing it); a front end read it as a supported badge."""
    base = SentenceGroundedness("It opens at 9.", 0, 14, gain=0.1, top_share=0.5, grounded=True)
    cases: list[tuple[Verdict, bool, bool | None]] = [
        ("supported", True, True),
        ("uncertain", True, None),
        ("unsupported", False, False),
    ]
    for verdict, grounded, supported in cases:
        sentence = replace(base, verdict=verdict, grounded=grounded)
        data = json.loads(json.dumps(sentence.to_dict()))
        assert (sentence.supported, data["supported"], data["grounded"]) == (
            supported,
            supported,
            grounded,
        )
        assert SentenceGroundedness.from_dict(data) == sentence
    old = {k: v for k, v in replace(base, verdict="uncertain").to_dict().items() if k != "grounded"}
    assert SentenceGroundedness.from_dict(old | {"supported": True}).grounded is True  # stored
    unsaid = {k: v for k, v in old.items() if k != "verdict"} | {"supported": True}
    assert SentenceGroundedness.from_dict(unsaid).grounded is True  # before verdicts
    assert SentenceGroundedness.from_dict(old | {"supported": None}).grounded is True  # review 62
