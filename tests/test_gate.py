"""The groundedness gate without attribution: the two anchor calls, abstentions,
calibration, earlier chat turns, proxy judges, judge-only integrations, rendering."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakes import FailingScorer, KeywordScorer, attribute_captured

from camab_rag import AttributionSettings, attribute, cite
from camab_rag.attributor import Attributor, aassess_answer, assess_answer
from camab_rag.errors import InputError
from camab_rag.groundedness import (
    GroundednessFilter,
    GroundednessReport,
    LabelledAnswer,
    assess_groundedness,
)
from camab_rag.groundedness.abstention import is_abstention
from camab_rag.groundedness.anchors import anchor_prompts
from camab_rag.groundedness.calibration import calibrate, shipped_examples
from camab_rag.groundedness.filter import CHECK_FAILED_NOTICE
from camab_rag.groundedness.report import DEFAULT_BLOCK_ON, DEFAULT_THRESHOLD, recalibrated
from camab_rag.groundedness.score import SCORE_NAME
from camab_rag.groundedness.verdict import DEFAULT_CALIBRATION, Calibration
from camab_rag.prompts import plan_prompt
from camab_rag.render.text import verdict_detail, verdict_text
from camab_rag.scorers.proxy import ProxyFallbackScorer
from camab_rag.segments import to_documents
from camab_rag.settings import CHAIN_SETTINGS
from camab_rag.steps import adrive, drive

ROOT = Path(__file__).resolve().parent.parent
CONTEXT = [
    "The Varnholt Bridge was opened in 1927 by the engineer Ilse Marten.",
    "Kelby holds a lantern festival every October.",
]
QUESTION = "Who opened the bridge?"
SUPPORTED = "Ilse Marten opened the Varnholt Bridge in 1927."
INVENTED = "Sailors from Portugal painted it green."
LONG = f"{SUPPORTED} {INVENTED}"


def test_the_gate_alone_makes_two_calls_and_judges_each_sentence():
    scorer = KeywordScorer()
    report = assess_answer(QUESTION, CONTEXT, LONG, scorer, threshold=0.5)
    assert len(scorer.calls) == 2 and report.extra_queries == 2
    assert report.source == "measured" and report.token_support is not None
    first, second = report.sentences
    assert (first.text, first.supported, first.source) == (SUPPORTED, True, "measured")
    assert (second.text, second.supported) == (INVENTED, False)
    assert second.score is not None and first.score is not None and second.score < first.score
    # every word of the invented sentence is unlikely with the context and gains nothing
    assert [s.text for s in report.unsupported_spans] == [INVENTED.rstrip(".")]

    async def judged_async() -> GroundednessReport:
        return await aassess_answer(QUESTION, CONTEXT, LONG, KeywordScorer(), threshold=0.5)

    assert asyncio.run(judged_async()).to_dict() == report.to_dict()
    assert json.loads(json.dumps(report.to_dict()))["sentences"][1]["supported"] is False


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "The documents do not say.",
        "There is no information about this in the context.",
        "I cannot find the answer in the provided documents.",
        # review 23: a chat model's refusal, cut off at its token limit
        "I'm sorry for any confusion, but as a dental chatbot, I don't have access to",
        "I'm sorry, but as a dental chatbot, I am unable to provide information about",
    ],
)
def test_an_abstention_passes_and_is_neither_flagged_nor_cited(answer):
    scorer = KeywordScorer()
    report = assess_answer(QUESTION, CONTEXT, answer, scorer)
    assert report.score < DEFAULT_THRESHOLD  # its own figure would flag it
    assert report.abstained and report.grounded and not report.unsupported_sentences
    assert report.unsupported_spans == []
    verdict = drive(
        GroundednessFilter(mode="block").answer_steps(QUESTION, CONTEXT, answer, scorer)
    )
    assert verdict.grounded and not verdict.blocked and verdict.answer == answer
    result = attribute(
        QUESTION, CONTEXT, answer, scorer, budget=4, settings=AttributionSettings(anchors=True)
    )
    cited = cite(result, CONTEXT)
    assert all(s.citations == [] and s.abstention for s in cited.sentences)
    assert "declines to answer" in (verdict_text(report) or "")


def test_an_abstaining_sentence_is_not_counted_against_a_supported_one():
    answer = f"{SUPPORTED} The documents do not say who paid for it."
    report = assess_answer(QUESTION, CONTEXT, answer, KeywordScorer(), threshold=0.5)
    assert [s.abstention for s in report.sentences] == [False, True]
    assert all(s.supported for s in report.sentences) and report.grounded
    alone = assess_answer(QUESTION, CONTEXT, SUPPORTED, KeywordScorer(), threshold=0.5)
    assert report.score == pytest.approx(alone.score)
    assert not report.abstained
    assert not is_abstention(SUPPORTED) and not is_abstention("He did not know until 1990.")
    assert not is_abstention("As a dental assistant, I can book you in on Monday.")
    assert not is_abstention("I'm sorry, the clinic is closed on Sundays.")


def test_judge_answer_blocks_without_any_attribution_and_fails_closed():
    gate = GroundednessFilter(threshold=0.5, mode="block", fallback="Not supported.")
    blocked = drive(gate.answer_steps(QUESTION, CONTEXT, INVENTED, KeywordScorer()))
    assert blocked.blocked and blocked.answer == "Not supported." and blocked.grounded is False
    assert blocked.report is not None and blocked.report.unsupported_sentences
    passed = drive(gate.answer_steps(QUESTION, CONTEXT, SUPPORTED, KeywordScorer()))
    assert passed.grounded and passed.answer == SUPPORTED
    down = drive(gate.answer_steps(QUESTION, CONTEXT, SUPPORTED, FailingScorer()))
    assert down.blocked and down.grounded is None and "scorer is down" in (down.error or "")
    flag = drive(
        GroundednessFilter(mode="flag").answer_steps(QUESTION, CONTEXT, " ", KeywordScorer())
    )
    assert flag.grounded is None and "answer is empty" in (flag.error or "")
    assert not flag.blocked and flag.notice == CHECK_FAILED_NOTICE  # shown: say it is unchecked
    assert down.notice is None  # blocked: the fallback says it
    shown = drive(
        GroundednessFilter(mode="flag").answer_steps(QUESTION, CONTEXT, SUPPORTED, FailingScorer())
    )
    assert shown.answer == SUPPORTED and shown.to_dict()["notice"] == CHECK_FAILED_NOTICE
    later = asyncio.run(adrive(gate.answer_steps(QUESTION, CONTEXT, INVENTED, KeywordScorer())))
    assert later.to_dict() == blocked.to_dict()


def labelled() -> list[object]:
    return [
        LabelledAnswer(QUESTION, CONTEXT, SUPPORTED, True),
        {
            "question": "When?",
            "context": CONTEXT,
            "answer": "It opened in 1927.",
            "supported": True,
        },
        (QUESTION, CONTEXT, "Ilse Marten built it.", True),
        (QUESTION, CONTEXT, INVENTED, False),
        (QUESTION, CONTEXT, "A Danish shipyard owns the bridge.", False),
        (QUESTION, CONTEXT, "Marten opened a bakery in Lisbon.", False),
    ]


def test_calibration_on_a_handful_of_own_labels_refits_the_verdict():
    scorer = KeywordScorer()
    seen: list[tuple[int, int]] = []
    calibration = calibrate(scorer, labelled(), progress=lambda done, n: seen.append((done, n)))
    assert len(scorer.calls) == 2 * 6 and seen[-1] == (6, 6) and len(seen) == 6
    assert (calibration.n_supported, calibration.n_unsupported) == (3, 3)
    assert calibration.model == "keyword" or calibration.model
    assert calibration.weights != DEFAULT_CALIBRATION.weights
    assert (calibration.block_at, calibration.flag_at) == (
        DEFAULT_CALIBRATION.block_at,
        DEFAULT_CALIBRATION.flag_at,
    )
    assert 0.0 <= calibration.balanced_accuracy <= 1.0 and 0.0 <= calibration.auroc <= 1.0
    assert calibration.fitted_on == "6 own answers; block_at and flag_at kept from the default"
    gate = GroundednessFilter(mode="block", fallback="No.").calibrate(KeywordScorer(), labelled())
    assert gate.calibration == calibration and gate.mode == "block" and gate.threshold is None
    assert Calibration.from_dict(calibration.to_dict()) == calibration
    assert GroundednessFilter().calibration is DEFAULT_CALIBRATION


def test_calibrate_with_no_labels_fits_the_shipped_set():
    """``calibrate(scorer)``: the labelled set in camab_rag/data, every row scored once."""
    shipped = shipped_examples()
    assert 80 <= len(shipped) <= 150
    assert {e.kind for e in shipped} == {"qa", "summary"}
    assert {e.supported for e in shipped} == {True, False}
    scorer = KeywordScorer()
    calibration = calibrate(scorer, progress=False)
    assert len(scorer.calls) == 2 * len(shipped)
    assert calibration.fitted_on.startswith("the shipped calibration set; block_at and flag_at")
    assert calibration.n_supported + calibration.n_unsupported + calibration.n_abstained == len(
        shipped
    )
    assert 0.5 < calibration.balanced_accuracy <= 1.0  # held out, cross-validated
    with pytest.raises(InputError, match=r"the scorer comes first: calibrate\(scorer, examples"):
        calibrate(labelled(), KeywordScorer())  # type: ignore[arg-type]


def test_answers_that_decline_to_answer_are_left_out_of_the_fit():
    dont_know = (QUESTION, CONTEXT, "I don't know.", False)
    scorer = KeywordScorer()
    with_it = calibrate(scorer, [*labelled(), dont_know], progress=False)
    assert len(scorer.calls) == 2 * 7
    assert (with_it.n_supported, with_it.n_unsupported, with_it.n_abstained) == (3, 3, 1)
    assert with_it.weights == calibrate(KeywordScorer(), labelled(), progress=False).weights
    assert with_it.to_dict()["n_abstained"] == 1
    only = [(QUESTION, CONTEXT, SUPPORTED, True), dont_know]
    with pytest.raises(InputError, match="after leaving out 1 that decline to answer"):
        calibrate(KeywordScorer(), only, progress=False)


@pytest.mark.parametrize(
    ("examples", "message"),
    [
        ([(QUESTION, CONTEXT, SUPPORTED, True)], "at least one supported and one unsupported"),
        ([(QUESTION, CONTEXT, SUPPORTED)], "labelled example 0 must be"),
        ([{"question": QUESTION, "context": CONTEXT, "answer": SUPPORTED}], "no 'supported'"),
        ([(QUESTION, CONTEXT, SUPPORTED, "yes")], "'supported' must be True or False"),
    ],
)
def test_calibration_rejects_bad_examples(examples, message):
    with pytest.raises(InputError, match=message):
        calibrate(KeywordScorer(), examples)


def test_a_calibration_reads_in_words_and_logs_progress_by_tenths(capsys):
    """``repr`` states the cut points and held-out figures, not the weights; progress
    into a log (not a terminal) is a line per tenth, not one line of carriage returns."""
    shown = repr(DEFAULT_CALIBRATION)
    cut = f"{DEFAULT_CALIBRATION.block_at:.2f}"
    assert shown.startswith(f"Calibration(model='smollm2', blocks from P(unsupported) {cut}")
    assert "held-out balanced accuracy" in shown and "weights" not in shown
    calibrate(KeywordScorer(), shipped_examples()[:20], progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == "calibrating: 20/20 answers scored" and len(lines) == 10
    assert not any("\r" in line for line in lines)


def test_an_answer_the_sources_disagree_on_is_uncertain_and_says_so():
    """The answer copies the stale page's price: the sources state two prices for it, so
    the verdict is at most ``uncertain``, and the renderers say the sources disagree."""
    pages = [
        "Price list 2026: the rabies vaccine costs 45 euros.",
        "Old price list (no longer valid): the rabies vaccine costs 35 euros.",
    ]
    question = "How much does the rabies vaccine cost?"
    stale = assess_answer(question, pages, "The rabies vaccine costs 35 euros.", KeywordScorer())
    assert stale.verdict == "uncertain" and stale.sentences[0].contested == ("35",)
    assert repr(stale).endswith("0 unsupported, contested: '35')")  # the reason, in its repr
    assert stale.sentences[0].outdated == ("35",)  # only the old price list states it
    assert (verdict_text(stale) or "").startswith(
        "Check this answer: \u201c35\u201d is from an out-of-date page"
    )
    alone = assess_answer(
        question, pages[:1], "The rabies vaccine costs 45 euros.", KeywordScorer()
    )
    assert alone.verdict == "supported" and alone.sentences[0].contested == ()
    again = type(stale).from_dict(stale.to_dict())
    assert again.sentences[0].contested == ("35",) and again.verdict == "uncertain"
    assert again.sentences[0].outdated == ("35",)


def test_a_fine_two_pages_state_differently_is_contested_either_way():
    """Fresh-user review 3: the current fine ("0.20 euros") was blocked as a misread value
    and the stale one passed. The stale one is contested, named whole, and shown; the
    current one is contested only by a page not saying it is out of date (review 1,
    session 64: "no longer valid" beside it made a right answer uncertain)."""
    pages = [
        "Loans and fines (from January 2026): a late book costs 0.20 euros per day.",
        "Fines (2024, no longer valid): a late book costs 0.50 euros per day.",
    ]
    question = "How much is the fine for a late book?"
    unmarked = [pages[0], pages[1].replace(", no longer valid", "")]
    for fine, texts, contested in (
        ("0.50", pages, True),
        ("0.20", unmarked, True),
        ("0.20", pages, False),
    ):
        answer = f"A late book costs {fine} euros per day."
        report = assess_answer(question, texts, answer, KeywordScorer())
        assert report.sentences[0].contested == ((fine,) if contested else ()), texts
        assert (report.verdict == "uncertain") == contested


def test_three_verdicts_and_the_block_rule():
    """``p >= block_at``: unsupported (blocked); ``p >= flag_at``: uncertain (marked, shown);
    below: supported. ``grounded`` is False only for unsupported."""
    # P(unsupported) = sigmoid(2 - 4 * coverage): coverage 1 -> 0.12, 0.5 -> 0.5, 0 -> 0.88
    model = Calibration(weights=(0.0, -4.0), bias=2.0, block_at=0.7, flag_at=0.3, model="t")
    answers = {
        "supported": "Ilse Marten opened it.",  # every informative word in the context
        "uncertain": "Ilse Berg opened it.",  # half of them
        "unsupported": "Sailors painted it.",  # none
    }
    for mode in ("block", "flag"):
        gate = GroundednessFilter(mode=mode, calibration=model, fallback="No.")
        for verdict, answer in answers.items():
            shown = drive(gate.answer_steps(QUESTION, CONTEXT, answer, KeywordScorer()))
            assert shown.verdict == verdict and shown.report is not None
            assert shown.report.verdict == verdict and shown.report.sentences[0].verdict == verdict
            assert shown.grounded == (verdict != "unsupported")
            assert shown.blocked == (mode == "block" and verdict == "unsupported")
            assert shown.flagged == (verdict != "supported")
            assert shown.answer == ("No." if shown.blocked else answer)
            p = shown.report.p_unsupported
            assert p is not None and (p >= 0.7) == (verdict == "unsupported")
    # the default calibration gives every report a probability; a threshold keeps two verdicts
    report = assess_answer(QUESTION, CONTEXT, answers["uncertain"], KeywordScorer(), threshold=0.1)
    assert report.verdict in ("supported", "unsupported") and report.p_unsupported is not None
    down = drive(
        GroundednessFilter(mode="block", calibration=model).answer_steps(
            QUESTION, CONTEXT, SUPPORTED, FailingScorer()
        )
    )
    assert down.verdict is None and down.blocked and down.flagged  # unknown: fails closed


def test_a_fact_the_sources_never_state_is_never_supported():
    """Blind set 5 (dev): "he works Tuesday to Saturday" over "Wednesday to Saturday" was
    ``supported`` (a low P(unsupported)); a name, day or number the context never states
    leaves an answer at most ``uncertain``; a threshold keeps its two verdicts."""
    model = Calibration(weights=(0.0, -4.0), bias=2.0, block_at=0.7, flag_at=0.3, model="t")
    for answer, fact in (("Ilse Marten opened it on a Tuesday.", "Tuesday"), (SUPPORTED, None)):
        report = recalibrated(assess_answer(QUESTION, CONTEXT, answer, KeywordScorer()), model)
        assert report.p_unsupported is not None and report.p_unsupported < 0.3
        assert report.verdict == ("uncertain" if fact else "supported"), answer
        assert (fact in (report.unchecked_facts or ())) if fact else not report.unchecked_facts
        assert report.sentences[0].verdict == report.verdict
    two = assess_answer(
        QUESTION, CONTEXT, "Ilse Marten opened it on a Tuesday.", KeywordScorer(), threshold=0.1
    )
    assert two.verdict in ("supported", "unsupported")


def test_reports_without_verdicts_load_and_reports_and_answers_print_short():
    report = assess_answer(QUESTION, CONTEXT, LONG, KeywordScorer())
    data = report.to_dict()
    assert GroundednessReport.from_dict(data) == report
    for key in ("verdict", "p_unsupported", "coverage", "informative"):
        del data[key]
        for sentence in data["sentences"]:
            sentence.pop(key, None)
    old = GroundednessReport.from_dict(data)
    assert old.verdict == ("supported" if report.grounded else "unsupported")
    assert old.p_unsupported is None
    assert [s.verdict for s in old.sentences] == [
        "supported" if s.supported else "unsupported" for s in report.sentences
    ]
    text = repr(report)
    assert len(text) < 120 and "\n" not in text and text.startswith("GroundednessReport(")
    assert "token_support" not in text
    answer = drive(
        GroundednessFilter(mode="block").answer_steps(QUESTION, CONTEXT, LONG, KeywordScorer())
    )
    assert len(repr(answer)) < 80


def test_the_json_says_what_decided_the_verdict():
    """Issue 48: the JSON showed ``"threshold": 0.52`` beside a calibrated verdict that
    never used it. Calibrated: no threshold, ``decided_by`` and the calibration's cut-offs;
    a threshold given: it decides and shows."""
    report = assess_answer(QUESTION, CONTEXT, LONG, KeywordScorer())
    data = json.loads(json.dumps(report.to_dict()))
    assert data["decided_by"] == "calibration" and data["threshold"] is None
    cut_offs = data["calibration"]
    assert (cut_offs["block_at"], cut_offs["flag_at"]) == (
        DEFAULT_CALIBRATION.block_at,
        DEFAULT_CALIBRATION.flag_at,
    )
    assert DEFAULT_CALIBRATION.verdict(data["p_unsupported"]) == data["verdict"]
    assert GroundednessReport.from_dict(data) == report
    given = assess_answer(QUESTION, CONTEXT, LONG, KeywordScorer(), threshold=0.3)
    two = given.to_dict()
    assert (two["decided_by"], two["threshold"], two["calibration"]) == ("threshold", 0.3, None)
    assert two["verdict"] == ("supported" if given.score >= 0.3 else "unsupported")
    assert GroundednessReport.from_dict(two) == given
    # a filter's own calibration is the one named
    model = Calibration(weights=(0.0, -4.0), bias=2.0, block_at=0.7, flag_at=0.3, model="t")
    shown = drive(
        GroundednessFilter(calibration=model).answer_steps(
            QUESTION, CONTEXT, SUPPORTED, KeywordScorer()
        )
    )
    assert shown.report is not None
    assert shown.report.to_dict()["calibration"]["block_at"] == 0.7


def test_an_abstention_has_a_probability_and_the_filter_a_short_repr():
    """The fresh-user review: an abstention's ``p_unsupported`` was ``None`` (a number is
    asked for: it claims nothing, so 0.0), and ``repr(GroundednessFilter())`` was the
    object default."""
    report = assess_answer(QUESTION, CONTEXT, "I don't know.", KeywordScorer())
    assert report.abstained and report.verdict == "supported"
    assert report.p_unsupported == 0.0 and report.sentences[0].p_unsupported == 0.0
    text = repr(GroundednessFilter(mode="block"))
    assert text == "GroundednessFilter(mode='block', calibration='smollm2', block_at=" + (
        f"{DEFAULT_CALIBRATION.block_at:.3f})"
    )
    assert repr(GroundednessFilter(0.4)) == "GroundednessFilter(mode='flag', threshold=0.4)"


def test_a_scorer_passed_as_the_threshold_is_named():
    with pytest.raises(
        InputError, match=r"a scorer\? pass it by name: GroundednessFilter\(scorer="
    ):
        GroundednessFilter(KeywordScorer())  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"finite number or None, got 'high'$"):
        GroundednessFilter("high")  # type: ignore[arg-type]


def test_in_a_chat_the_earlier_turns_count_as_context():
    history = "The bridge's first toll keeper was Oskar Lund."
    messages = [
        {"role": "system", "content": "Context:\n" + "\n".join(CONTEXT)},
        {"role": "user", "content": "Tell me about the bridge's staff."},
        {"role": "assistant", "content": history},
        {"role": "user", "content": "Who was the first toll keeper?"},
    ]
    builder = plan_prompt([messages], to_documents(CONTEXT), "chunk").builder
    assert builder is not None
    prompts = anchor_prompts(builder)
    assert prompts.earlier_turns == 2 and len(prompts.empty) == 2
    answer = "Oskar Lund was the first toll keeper."
    report = assess_answer(
        "Who was the first toll keeper?", CONTEXT, answer, KeywordScorer(), prompt_builder=builder
    )
    assert report.earlier_turns == 2 and report.grounded  # supported by the earlier turn
    words, detail = verdict_text(report) or "", verdict_detail(report) or ""
    assert words == "Supported by the sources"  # end users read no count
    assert detail.endswith("; context includes 2 earlier chat messages")  # the tooltip
    result = attribute(
        QUESTION,
        CONTEXT,
        answer,
        KeywordScorer(),
        budget=3,
        prompt=messages,
        settings=AttributionSettings(anchors=True),
    )
    assert result.token_support is not None and result.token_support.earlier_turns == 2
    assert result.reward_of([False, False]) != result.anchor_rewards["empty"]


def test_a_verdict_from_a_proxy_says_so():
    proxy = ProxyFallbackScorer(None, KeywordScorer())
    report = assess_answer(QUESTION, CONTEXT, SUPPORTED, proxy)
    assert report.scored_by is not None and report.scored_by.proxy
    assert "judged by a proxy model (KeywordScorer)" in (verdict_text(report) or "")
    own = assess_answer(QUESTION, CONTEXT, SUPPORTED, KeywordScorer())
    assert own.scored_by is not None and not own.scored_by.proxy
    assert "proxy" not in (verdict_text(own) or "")


def test_judge_only_settings_attribute_nothing_and_make_two_calls():
    scorer = KeywordScorer()
    gate = GroundednessFilter(threshold=0.5)
    settings = CHAIN_SETTINGS.with_changes(budget=0)
    captured = attribute_captured(QUESTION, CONTEXT, LONG, scorer, settings, groundedness=gate)
    assert len(scorer.calls) == 2
    result, verdict = captured, captured.groundedness
    assert result.method == "none" and result.budget == 0 and result.n_queries == 2
    assert result.scores.tolist() == [0.0, 0.0] and result.token_support is not None
    assert verdict is not None and verdict.report is not None
    assert [s.supported for s in verdict.report.sentences] == [True, False]
    with pytest.raises(InputError, match="budget=0 attributes nothing"):
        attribute_captured(QUESTION, CONTEXT, LONG, scorer, settings)  # no filter


def test_renderers_show_the_unsupported_sentence_without_a_citation():
    scorer = KeywordScorer()
    result = attribute(
        QUESTION, CONTEXT, LONG, scorer, budget=4, settings=AttributionSettings(anchors=True)
    )
    report = GroundednessFilter(threshold=0.5).judge(result).report
    cited = cite(result, CONTEXT).with_groundedness(report)
    first, second = cited.sentences
    assert first.citations == [1] and first.supported is True
    assert second.citations == [] and second.supported is False
    assert second.unsupported_spans == [(len(SUPPORTED) + 1, len(LONG) - 1)]
    markdown = cited.to_markdown()
    assert f"{INVENTED} *(not supported by the sources: \u201c{INVENTED[:-1]}\u201d)*" in markdown
    assert "\\[1\\]" in markdown.split(INVENTED)[0]
    html = cited.to_html(full_page=False)
    assert '<span class="camab-unsupported"><mark class="camab-nosupport">Sailors' in html
    plain = cited.to_terminal(color=False)
    assert "(not supported by the sources" in plain and "1 sentence is not supported" in plain
    assert cited.to_dict()["sentences"][1]["supported"] is False
    # cite() alone applies the gate's verdict at the default threshold
    assert cite(result, CONTEXT).sentences[1].citations == []


def test_an_uncertain_sentence_is_not_called_supported():
    """Fresh-user review (session 60): the JSON said ``"supported": true`` of a sentence
    the gate found ``uncertain`` (a source disputing its word); it now says which verdict."""
    result = attribute(
        QUESTION,
        CONTEXT,
        LONG,
        KeywordScorer(),
        budget=4,
        settings=AttributionSettings(anchors=True),
    )
    report = GroundednessFilter(threshold=0.5).judge(result).report
    assert report is not None
    first = replace(report.sentences[0], verdict="uncertain", grounded=True)
    doubted = replace(report, sentences=[first, *report.sentences[1:]], verdict="uncertain")
    cited = cite(result, CONTEXT).with_groundedness(doubted)
    sentences = cited.to_dict()["sentences"]
    assert [s["verdict"] for s in sentences] == ["uncertain", "unsupported"]
    assert [s["supported"] for s in sentences] == [None, False]
    assert cited.sentences[0].citations == [1]  # an uncertain sentence still cites
    assert "not supported" not in cited.to_markdown().split(INVENTED)[0]


def test_the_default_threshold_and_verdict_are_the_benchmarks_figures():
    """The library's defaults, the README's figures and the benchmark section all come from
    the benchmark's stored results (written by ``bench_gate.py report``)."""
    results = ROOT / "benchmarks" / "results" / "groundedness"
    stored = json.loads((results / "default_threshold.json").read_text())
    assert stored["threshold"] == DEFAULT_THRESHOLD
    assert stored["score"] == SCORE_NAME
    assert stored["model"] == "smollm2" and "FRANK valid" in stored["fitted_on"]
    benchmarks = (results / "README.md").read_text(encoding="utf-8")  # the gate's topic file
    assert f"Default threshold: **{stored['threshold']:.3f}**" in benchmarks
    fitted = json.loads((results / "default_calibration.json").read_text())
    assert Calibration.from_dict(fitted) == DEFAULT_CALIBRATION
    held_out = fitted["held_out_smollm2"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- gate:figures -->")[1].split("<!-- /gate:figures -->")[0]
    assert f"**{DEFAULT_CALIBRATION.block_at:.3f}**" in block
    for key in ("halueval_pass", "halueval_flagged", "halueval_blocked", "short_pass"):
        assert f"{held_out[key]:.0%}" in block
    for key in ("frank_pass", "frank_flagged", "frank_blocked"):
        assert f"{held_out[key]:.0%}" in block
    assert fitted["block_on"] == DEFAULT_BLOCK_ON and f'`block_on="{DEFAULT_BLOCK_ON}"`' in block
    strict = fitted["held_out_smollm2_block_on_any"]
    assert f"blocks {strict['halueval_blocked']:.0%} of the hallucinated" in block
    assert "The library ships `score_floor + coverage`" in benchmarks
    assert f"`block_at` {DEFAULT_CALIBRATION.block_at:.3f}" in benchmarks


@pytest.mark.model
def test_short_and_reworded_correct_answers_pass_and_invented_details_do_not(smollm2_scorer):
    """Issue 48: the teapot answer copied word for word scored 0.476 < 0.49 and "It costs
    €29." 0.236, both failed; an invented name or phone number must still fail."""
    teapots = [
        "All Lumora kettles come with a 2-year warranty. Teapots have a 1-year warranty "
        "against manufacturing defects."
    ]
    price = ["The Glass Teapot holds 0.8 litres and costs €29. It is dishwasher safe."]
    cases = [
        ("How long is the teapot warranty?", teapots, "Teapots have a 1-year warranty.", True),
        ("How much is the glass teapot?", price, "It costs €29.", True),
        ("Who can I call about my teapot?", teapots, "Call Kristjan Tamm.", False),
        ("Who can I call about my teapot?", teapots, "Call +372 555 1234.", False),
    ]
    for question, context, answer, correct in cases:
        report = assess_answer(question, context, answer, smollm2_scorer)
        assert report.p_unsupported is not None
        assert (report.verdict != "unsupported") == correct, (answer, report)
        assert report.grounded == correct
    blocked = drive(
        GroundednessFilter(mode="block", fallback="No.").answer_steps(
            "Who can I call about my teapot?", teapots, "Call Kristjan Tamm.", smollm2_scorer
        )
    )
    assert blocked.blocked and blocked.answer == "No."
    assert any("Kristjan" in s.text for s in blocked.report.unsupported_spans)  # type: ignore[union-attr]


TEAPOT = ["The Glass Teapot holds 0.8 litres and costs €29. It is dishwasher safe."]


@pytest.mark.model
def test_reworded_answers_pass_whatever_the_word_form_unit_or_clock(smollm2_scorer):
    """The fresh-user review: coverage compared exact word forms, so "29 euros" over "€29",
    "grinders" over "grinder" and "10:00" over "10 am" were words the context lacked and the
    correct answers were blocked (p 0.80, 0.93, 0.96 with the old code)."""
    grinder = ["Every Lumora coffee grinder has a ceramic burr and a two-year warranty."]
    showroom = ["Our Tallinn showroom is open from 10 am to 4 pm on Saturdays."]
    cases = [
        ("How much is the glass teapot?", TEAPOT, "It costs 29 euros."),
        ("What do the grinders have?", grinder, "Lumora grinders have ceramic burrs."),
        ("When does the showroom open on Saturdays?", showroom, "It opens at 10:00 on Saturdays."),
    ]
    for question, context, answer in cases:
        report = assess_answer(question, context, answer, smollm2_scorer)
        # every checked word held: never blocked; "uncertain" when the model's figure is
        # not positive (SmolLM2 gives "It opens at 10:00" -0.006), "supported" above
        assert report.coverage == 1.0 and report.verdict != "unsupported", (answer, report)
        assert report.unsupported_spans == []


@pytest.mark.model
def test_a_museum_s_reworded_answers_pass_and_another_house_number_does_not(smollm2_scorer):
    """Issue 48, a fresh user's museum: "Students get in for nine euros." and "It closes
    at 5pm on Saturday." were blocked (light verbs counted as facts, "5pm" unread; review
    corpus C7: "closes" over "open ... from 10:00 to 17:00", 0.85), and
    "It is at 31 Quay Street" passed while the citation showed the page disputing it."""
    tickets = ["Adult tickets cost 14 euros. Students and seniors pay 9 euros."]
    hours = ["On Saturdays the museum closes at 17:00."]
    week = ["The museum is open Tuesday to Saturday from 10:00 to 17:00. It is closed on Mondays."]
    address = ["The museum is at 27 Quay Street, Port Elwyn, next to the ferry terminal."]
    cases = [
        ("How much do students pay?", tickets, "Students get in for nine euros.", True),
        ("When does it close on Saturday?", hours, "It closes at 5pm on Saturday.", True),
        ("When does it close on Saturday?", week, "It closes at 5 pm on Saturday.", True),
        ("Where is the museum?", address, "It is at 31 Quay Street, Port Elwyn.", False),
    ]
    for question, context, answer, correct in cases:
        report = assess_answer(question, context, answer, smollm2_scorer)
        assert (report.verdict != "unsupported") == correct, (answer, report)
        if correct:
            assert report.coverage == 1.0 and report.unsupported_spans == [], answer
        else:
            assert any("31" in s.text for s in report.unsupported_spans), report


@pytest.mark.model
def test_a_value_of_another_subject_or_a_negation_the_context_lacks_is_flagged(
    smollm2_scorer,
):
    """The fresh-user review: every word of "The Aero kettle costs 59 euros." is in the
    context (59 euros is the teapot's price), and so is every content word of "... is not
    dishwasher safe."; both passed (p 0.30 and 0.18 with the old code). Both are misread
    (``uncertain``: flagged, never blocked by default, as the word rules misread right
    answers too); ``block_on="any"`` blocks them."""
    prices = [
        "The Aero kettle costs 49 euros and boils water in four minutes.",
        "The Glass teapot costs 59 euros and holds 0.8 litres.",
    ]
    question = "How much is the Aero kettle?"
    swapped = assess_answer(question, prices, "The Aero kettle costs 59 euros.", smollm2_scorer)
    assert swapped.verdict == "uncertain" and swapped.misread == ("59",)
    assert [s.text for s in swapped.unsupported_spans] == ["59"]
    strict = assess_answer(
        question, prices, "The Aero kettle costs 59 euros.", smollm2_scorer, block_on="any"
    )
    assert strict.verdict == "unsupported"
    # review 18: the teapot page (59 euros) is no support for the kettle's price
    result = attribute(
        question,
        prices,
        "The Aero kettle costs 59 euros.",
        smollm2_scorer,
        budget=4,
        groundedness=True,
    )
    assert [s.citations for s in cite(result, prices).sentences] == [[]]
    never = assess_answer(question, prices, "The Aero kettle costs 69 euros.", smollm2_scorer)
    assert never.verdict == "unsupported" and never.misread == ()  # 69: stated nowhere
    right = assess_answer(question, prices, "The Aero kettle costs 49 euros.", smollm2_scorer)
    assert right.verdict == "supported" and right.coverage == 1.0
    for wrong in ("The Glass Teapot is not dishwasher safe.", "It is no longer dishwasher safe."):
        report = assess_answer("Is the teapot dishwasher safe?", TEAPOT, wrong, smollm2_scorer)
        assert report.verdict == "uncertain" and report.misread, (wrong, report)


@pytest.mark.model
def test_a_fact_only_the_user_asserted_earlier_does_not_support_the_answer(smollm2_scorer):
    """The fresh-user review: the user's earlier turns counted as context, so a user's
    claim ("the warranty is 5 years") made its repetition supported (p 0.29 with the old
    code). Evidence is the documents and the system prompt; the correct answer passes."""
    docs = [
        "All Lumora kettles come with a 2-year warranty. Teapots have a 1-year warranty "
        "against manufacturing defects."
    ]
    history = [
        {"role": "user", "content": "I read that the teapot warranty is 5 years."},
        {"role": "assistant", "content": "Let me check that for you."},
    ]
    question = "How long is the teapot warranty?"
    claimed = assess_answer(
        question, docs, "The teapot warranty is 5 years.", smollm2_scorer, history=history
    )
    assert claimed.verdict == "unsupported" and claimed.earlier_turns == 2
    right = assess_answer(
        question, docs, "Teapots have a 1-year warranty.", smollm2_scorer, history=history
    )
    assert right.verdict == "supported"


@pytest.mark.model
def test_calibrate_fits_smollm2_on_a_fast_slice_of_the_shipped_set(smollm2_scorer):
    """The shipped set's short hand-written cases (one-sentence contexts): a fit in
    seconds, with held-out figures."""
    short = [e for e in shipped_examples() if isinstance(e.context, str) and len(e.context) < 90]
    written = short[:8]  # four cases, a correct and an invented answer each
    assert len(written) == 8
    calibration = calibrate(smollm2_scorer, written, progress=False)
    assert calibration.model == "smollm2"
    assert calibration.n_supported + calibration.n_unsupported == len(written)
    _, w_coverage = calibration.weights
    assert w_coverage < 0  # more of the answer's words in the context: less unsupported
    assert 0.5 <= calibration.balanced_accuracy <= 1.0


@pytest.mark.model
def test_a_long_answer_with_one_invented_sentence_is_flagged_on_that_sentence(smollm2_scorer):
    """The real embedded model, the shipped score and threshold: the sentence taken from
    the context passes, the invented one is flagged, with its words marked."""
    context = [
        "The Varnholt Bridge over the river Emsa was opened in 1927. It was designed by the "
        "engineer Ilse Marten and is 412 metres long.",
        "The town of Kelby holds a lantern festival every October.",
    ]
    question = "Who designed the Varnholt Bridge?"
    answer = (
        "The Varnholt Bridge was designed by Ilse Marten. "
        "It was painted bright green by sailors from Portugal in 1985."
    )
    report = assess_answer(question, context, answer, smollm2_scorer)
    taken, invented = report.sentences
    assert taken.supported and not invented.supported
    assert taken.score is not None and invented.score is not None
    assert invented.score < DEFAULT_THRESHOLD <= taken.score
    assert report.unsupported_spans and all(
        invented.start <= span.start < invented.end
        for span in report.unsupported_spans
        if "Portugal" in span.text
    )
    assert any("Portugal" in span.text for span in report.unsupported_spans)


def test_the_marked_words_are_the_wrong_ones_not_the_copied_ones(smollm2_scorer):
    """The fresh-user review: "Bananas are blue." marked "Bananas" (copied from the
    context, but already in the question: no gain) and not "blue" (the context about a
    fruit's colour raises it). Words the context holds are never marked, content words it
    lacks are marked when unlikely, function words alone are not reported."""
    docs = ["Bananas are yellow.", "The Eiffel Tower is in Paris."]
    question = "What colour are bananas?"
    wrong = assess_answer(question, docs, "Bananas are blue.", smollm2_scorer)
    assert [s.text for s in wrong.unsupported_spans] == ["blue"]
    copied = assess_answer(question, docs, "Bananas are yellow.", smollm2_scorer)
    assert copied.unsupported_spans == []
    # a closing quote the model did not expect is no reason to mark the quoted word
    quoted = assess_answer(question, docs, 'The answer is: "Yellow"', smollm2_scorer)
    assert "Yellow" not in [s.text for s in quoted.unsupported_spans]


def test_a_word_the_context_lacks_explains_nothing():
    """The fake scorer finds "Mart" inside "Marten", so the context makes it likely (+2.9
    nats), but the context has no such word: its gain is dropped, on every path (the gate
    alone, an attribution's own anchors, cite())."""
    from camab_rag.groundedness import assess_groundedness
    from camab_rag.groundedness.anchors import context_words, default_builder
    from camab_rag.groundedness.score import words

    expected = frozenset(w for text in CONTEXT for w in words(text))
    assert context_words(CONTEXT) == expected
    assert context_words(builder=default_builder(QUESTION, CONTEXT)) == expected
    answer = "Ilse Mart opened the bridge."
    # full context: every word likely (-0.1); none: "Ilse" and "Mart" unlikely (-3)
    report = assess_answer(QUESTION, CONTEXT, answer, KeywordScorer(), threshold=0.6)
    assert report.score == pytest.approx(2.9 / 6.3) and not report.grounded
    assert report.full_reward is not None and report.empty_reward is not None
    assert report.full_reward - report.empty_reward == pytest.approx(5.8 / 5)  # the plain gain
    anchored = AttributionSettings(anchors=True)
    result = attribute(QUESTION, CONTEXT, answer, KeywordScorer(), budget=4, settings=anchored)
    assert context_words(result=result) == expected
    observed = assess_groundedness(result, threshold=0.6)
    assert observed.source == "observed" and observed.score == pytest.approx(2.9 / 6.3)
    # the fake scorer's P(unsupported) (0.57) sits at the refitted default cut-off: pin one
    gated = attribute(
        QUESTION,
        CONTEXT,
        answer,
        KeywordScorer(),
        budget=4,
        settings=anchored,
        groundedness=GroundednessFilter(block_at=0.5),
    )
    assert gated.groundedness is not None and gated.groundedness.verdict == "unsupported"
    assert cite(gated, CONTEXT).sentences[0].citations == []


BIKE_SHOP = [  # the fresh-user review's corpus (issue 48)
    "Spoke & Chain bike shop sells the City Cruiser for 590 euros and the Trail Hopper "
    "mountain bike for 1,290 euros.",
    "The shop is open Monday to Friday from 9:00 to 18:00 and on Saturday from 10:00 to "
    "16:00. It is closed on Sunday.",
    "Every new bike comes with a two-year warranty on the frame and six months on parts.",
    "Unused items can be returned within 30 days with the receipt for a full refund.",
    "The staff picnic this year is on June 14 at Riverside Park.",
    "Customers can park for free in the lot behind the shop for up to two hours.",
]


@pytest.mark.model
def test_a_value_the_context_gives_in_another_clause_is_flagged(smollm2_scorer):
    """The fresh-user review (issue 48): one context sentence gives 9:00-18:00 for
    weekdays "and on Saturday" 10:00-16:00; read as one sentence it held 9:00-18:00 for
    Saturday too, so the wrong hours passed (p 0.27 with the old code)."""
    question = "When is the shop open on Saturday?"
    wrong = assess_answer(
        question, BIKE_SHOP, "The shop is open on Saturday from 9:00 to 18:00.", smollm2_scorer
    )
    assert wrong.verdict == "uncertain" and {"9", "18"} <= set(wrong.misread)
    assert wrong.coverage is not None and wrong.coverage <= 0.5  # 9 and 18: misread
    right = assess_answer(
        question, BIKE_SHOP, "On Saturday it is open from 10:00 to 16:00.", smollm2_scorer
    )
    assert right.verdict != "unsupported" and right.coverage == 1.0


BIKE_SHOP = [
    "Spoke & Chain is a bike shop in Kelby. The shop is open Monday to Friday from 9:00 to "
    "18:00 and on Saturday from 10:00 to 16:00. It is closed on Sunday.",
    "The Trail Hopper is our mountain bike. The Trail Hopper costs 1,290 euros and comes "
    "with a two-year frame warranty.",
    "The Linden city bike costs 590 euros and has three gears.",
    "Unused items can be returned within 30 days with the receipt for a full refund.",
    "Customers can park for free in the lot behind the shop for up to two hours.",
    "The staff picnic this year is on June 14 at Riverside Park.",
]


@pytest.mark.model
def test_short_answers_over_a_multi_document_shop_are_judged_by_their_claim(smollm2_scorer):
    """Issue 48, a fresh user's bike shop (six documents): correct short answers were
    blocked (p 0.58-0.73: the words of every document counted, the model's doubt about
    "closed" decided) and "open on Sunday" over "It is closed on Sunday." passed (p 0.32).
    The claim-level check reads each answer against the clause about its subject; an
    opposite ("open" for "closed"), or another bike's price, is a misread value: flagged."""
    cases = [
        ("How much is the city bike?", "It costs 590 euros.", True),
        ("How much is the Trail Hopper?", "The Trail Hopper costs 1,290 euros.", True),
        ("Is the shop open on Sunday?", "No, it is closed on Sunday.", True),
        ("What is the frame warranty?", "The frame warranty is 2 years.", True),
        (
            "Is the shop open on Sunday?",
            "Yes, the shop is open on Sunday from 10:00 to 16:00.",
            False,
        ),
        ("How much is the city bike?", "It costs 1,290 euros.", False),
    ]
    for question, answer, correct in cases:
        report = assess_answer(question, BIKE_SHOP, answer, smollm2_scorer)
        assert report.verdict != "unsupported", (answer, report.p_unsupported)
        assert (report.verdict == "uncertain" and bool(report.misread)) != correct, answer


def test_an_abstention_reads_as_abstained_not_as_supported() -> None:
    """Fresh-user review 11: an abstention's verdict read "supported" everywhere a user
    looks (the summary, the reprs, the renderers' "nothing to support"). The three
    verdicts stay (it is never blocked: ``verdict == "supported"``), and what a user reads
    says it abstained: no claim to check."""
    att = Attributor(KeywordScorer(), budget=4, groundedness=GroundednessFilter(mode="block"))
    result = att.run(QUESTION, CONTEXT, "I don't know.")
    verdict = result.groundedness
    assert verdict is not None and verdict.report is not None
    assert verdict.verdict == "supported" and verdict.grounded and not verdict.blocked
    assert verdict.abstained and verdict.to_dict()["abstained"] is True
    assert repr(verdict) == "FilteredAnswer(abstained: no claim to check, shown, mode='block')"
    assert repr(verdict.report).startswith("GroundednessReport(abstained, p_unsupported=0.00")
    assert att.summary().splitlines()[1].endswith("; abstained: no claim to check; 4 model calls")
    cited = cite(result, CONTEXT)
    for text in (cited.to_terminal(color=False), cited.to_markdown(), cited.to_html()):
        assert "The answer declines to answer: no claim to check" in text
        assert "Supported by the sources" not in text and "stands out" not in text
    answered = att.run(QUESTION, CONTEXT, SUPPORTED).groundedness
    assert answered is not None and not answered.abstained


SMOKING = [
    "Smoking is not allowed anywhere in the Harbour Hotel. Guests who smoke in their room "
    "pay a cleaning fee of 150 euros."
]


@pytest.mark.model
def test_block_on_facts_passes_a_reworded_answer_and_blocks_an_invented_fact(smollm2_scorer):
    """The blind set: a right answer in other words is blocked by default (its reworded
    words are unchecked); ``block_on="facts"`` marks it uncertain and still blocks an
    answer whose number or name the context lacks."""
    question = "Can I smoke in my room?"
    reworded = "No, cigarettes are banned in the rooms and you would be charged 150 euros."
    strict = GroundednessFilter(mode="block", fallback="No.", block_on="any")
    facts = GroundednessFilter(mode="block", fallback="No.", block_on="facts")
    assert drive(strict.answer_steps(question, SMOKING, reworded, smollm2_scorer)).blocked
    shown = drive(facts.answer_steps(question, SMOKING, reworded, smollm2_scorer))
    assert shown.verdict == "uncertain" and not shown.blocked and shown.flagged
    assert shown.answer == reworded and shown.report is not None
    assert shown.report.unchecked_facts == () and shown.report.grounded
    for invented, unchecked in (
        ("No, cigarettes are banned in the rooms and you would be charged 300 euros.", ("300",)),
        ("No. Ask Kristjan Tamm at the desk for the smoking area.", ("Kristjan", "Tamm")),
    ):
        blocked = drive(facts.answer_steps(question, SMOKING, invented, smollm2_scorer))
        assert blocked.blocked and blocked.answer == "No.", invented
        assert blocked.report is not None and blocked.report.unchecked_facts == unchecked


def test_block_on_is_checked_shown_and_kept_by_calibrate():
    with pytest.raises(InputError, match="block_on must be 'any' or 'facts'"):
        GroundednessFilter(block_on="names")  # type: ignore[arg-type]
    gate = GroundednessFilter(mode="block", block_on="facts")
    assert "block_on" not in repr(gate) and "block_on" not in repr(GroundednessFilter())
    assert "block_on='any'" in repr(GroundednessFilter(block_on="any"))
    assert gate.calibrate(KeywordScorer(), labelled(), progress=False).block_on == "facts"
    report = assess_answer(QUESTION, CONTEXT, "Ilse Berg opened it.", KeywordScorer())
    assert report.unchecked_facts == ("Berg",)
    again = GroundednessReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.unchecked_facts == ("Berg",)
    assert again.sentences[0].unchecked_facts == ("Berg",)


@pytest.mark.model
def test_cite_follows_the_carried_verdict_of_a_block_on_facts_filter(smollm2_scorer):
    """A reworded sentence ``block_on="facts"`` lets through keeps its source (cite() used
    to judge it again by the default rule and drop it); under the default it cites none."""
    docs = [*SMOKING, "The hotel car park opens at 6:00 and costs 12 euros a day."]
    answer = "No, cigarettes are banned in the rooms and you would be charged 150 euros."
    cited = {}
    for rule in ("any", "facts"):
        gate = GroundednessFilter(block_on=rule)  # type: ignore[arg-type]
        result = attribute(
            "Can I smoke in my room?", docs, answer, smollm2_scorer, budget=4, groundedness=gate
        )
        assert result.groundedness is not None
        assert result.groundedness.verdict == ("unsupported" if rule == "any" else "uncertain")
        cited[rule] = cite(result, docs)
    assert cited["any"].sentences[0].citations == []
    kept = cited["facts"]
    assert [kept.source(n).doc_index for n in kept.sentences[0].citations] == [0]


PETS = ["Pets are not permitted in guest rooms."]
PETS_QUESTION = "Can I bring my dog to my room?"
REWORDED = "Sorry, animals are forbidden in the rooms."


def test_every_door_reads_one_default_rule_and_refuses_another():
    """Issue 48: the gate blocks only on facts by default, in every door that hands a
    verdict to a user (``block_on="any"``, the stricter verdict, is the option)."""
    assert DEFAULT_BLOCK_ON == "facts" and GroundednessFilter().block_on == DEFAULT_BLOCK_ON
    gate = Attributor(KeywordScorer(), groundedness=True).groundedness
    assert gate is not None and gate.block_on == "facts"
    with pytest.raises(InputError, match="block_on must be 'any' or 'facts'"):
        assess_answer(QUESTION, CONTEXT, SUPPORTED, KeywordScorer(), block_on="names")  # type: ignore[arg-type]
    result = attribute(QUESTION, CONTEXT, SUPPORTED, KeywordScorer(), budget=4)
    with pytest.raises(InputError, match="block_on must be 'any' or 'facts'"):
        assess_groundedness(result, block_on="names")  # type: ignore[arg-type]


@pytest.mark.model
def test_a_reworded_right_answer_is_shown_marked_by_default_and_an_invented_fact_blocked(
    smollm2_scorer,
):
    """Issue 48, the first complaint: a correct answer in other words was blocked by the
    default gate ("forbidden" is no word of the document). By default it is now
    ``uncertain``: shown, and marked in words; ``block_on="any"`` keeps the old verdict;
    an invented number or name is still ``unsupported`` and blocked."""
    report = assess_answer(PETS_QUESTION, PETS, REWORDED, smollm2_scorer)
    assert report.verdict == "uncertain" and report.grounded and report.unchecked_facts == ()
    strict = assess_answer(PETS_QUESTION, PETS, REWORDED, smollm2_scorer, block_on="any")
    assert strict.verdict == "unsupported" and strict.score == pytest.approx(report.score, abs=1e-4)

    async def judged_async() -> GroundednessReport:
        return await aassess_answer(PETS_QUESTION, PETS, REWORDED, smollm2_scorer)

    assert asyncio.run(judged_async()).verdict == "uncertain"
    gate = GroundednessFilter(mode="block", fallback="No.")
    shown = drive(gate.answer_steps(PETS_QUESTION, PETS, REWORDED, smollm2_scorer))
    assert not shown.blocked and shown.answer == REWORDED and shown.flagged
    assert shown.verdict == "uncertain"
    assert shown.notice is not None and shown.notice.startswith("Check this answer:")  # review 17
    old = GroundednessFilter(mode="block", fallback="No.", block_on="any")
    assert drive(old.answer_steps(PETS_QUESTION, PETS, REWORDED, smollm2_scorer)).blocked
    for invented, fact in (
        ("Sorry, animals are forbidden in the rooms, except in room 12.", "12"),
        ("Sorry, animals are forbidden in the rooms. Ask Kristjan Tamm at the desk.", "Tamm"),
    ):
        judged = assess_answer(PETS_QUESTION, PETS, invented, smollm2_scorer)
        assert judged.verdict == "unsupported" and fact in (judged.unchecked_facts or ())
        blocked = drive(gate.answer_steps(PETS_QUESTION, PETS, invented, smollm2_scorer))
        assert blocked.blocked and blocked.answer == "No." and blocked.notice is None, invented
    # what an end user sees: the answer, and the mark in words (no figures)
    result = attribute(PETS_QUESTION, PETS, REWORDED, smollm2_scorer, budget=4, groundedness=gate)
    assert result.groundedness is not None and not result.groundedness.blocked
    cited = cite(result, PETS)
    for text in (cited.to_terminal(color=False), cited.to_markdown(), cited.to_html()):
        assert REWORDED.rstrip(".") in text and "could not find support" not in text
        assert "Check this answer: the sources do not say \u201c" in text
    for text in (cited.to_terminal(color=False), cited.to_markdown()):
        assert "P(unsupported)" not in text and "threshold" not in text
    assert "uncertain, flagged" in repr(result.groundedness)


def test_a_filter_takes_its_own_probability_cut_offs():
    """Fresh-user review 3: ``repr(GroundednessFilter())`` showed ``block_at=0.573`` but
    ``GroundednessFilter(block_at=0.6)`` was a TypeError; a user sets the cut-off on
    ``P(unsupported)`` as the repr shows it."""
    strict = GroundednessFilter(block_at=0.3)
    assert "block_at=0.300" in repr(strict)
    assert (strict.calibration.block_at, strict.calibration.flag_at) == (0.3, 0.3)
    loose = GroundednessFilter(block_at=0.9, flag_at=0.7)
    assert loose.calibration.verdict(0.8) == "uncertain"
    assert strict.calibration.verdict(0.8) == "unsupported"
    answer = "It was built in 1998 by Kristjan Tamm."  # p_unsupported near 1: blocked
    blocked = drive(
        GroundednessFilter(mode="block").answer_steps(QUESTION, CONTEXT, answer, KeywordScorer())
    )
    assert blocked.blocked and blocked.report is not None
    p = blocked.report.p_unsupported
    assert p is not None
    lenient = GroundednessFilter(mode="block", block_on="any", block_at=min(0.999, p + 0.001))
    shown = drive(lenient.answer_steps(QUESTION, CONTEXT, answer, KeywordScorer()))
    assert not shown.blocked and shown.verdict == "uncertain"
    with pytest.raises(InputError, match="block_at must be a probability"):
        GroundednessFilter(block_at=1.5)
    with pytest.raises(InputError, match="must not be above block_at"):
        GroundednessFilter(flag_at=0.9)


@pytest.mark.model
def test_number_words_and_flipped_rules_decide_the_default_verdict(smollm2_scorer):
    """Gate9 dev cases at the shipped default: "twenty-five litres" over "25 litres" and a
    negation read against the wrong clause were blocked; "seventy minutes" (a number the
    rules did not read) and "available" over "not available" were not; "available" is now
    flagged as misread (``uncertain``), "seventy minutes" blocked."""
    pack = ["Each Orla backpack holds 25 litres and weighs 900 grams."]
    ferry = ["The Brenna ferry leaves the harbour at 7:15 and takes 50 minutes."]
    clinic = ["Same-day appointments are not available; please book one day in advance."]
    cars = ["The Seabright ferry does not carry cars. Bicycles travel free."]
    cases = [
        ("How big is the backpack?", pack, "It has a capacity of twenty-five litres.", True),
        ("How long is the crossing?", ferry, "The crossing lasts seventy minutes.", False),
        ("Can I get an appointment today?", clinic, "Yes, same-day ones are available.", None),
        (
            "Can I take my car on the ferry?",
            cars,
            "No, cars are not carried, but you can bring a bicycle for free.",
            True,
        ),
    ]
    _passes_only_the_right(cases, smollm2_scorer)


@pytest.mark.model
def test_a_total_worked_out_from_a_rate_or_a_next_working_day_passes_by_default(smollm2_scorer):
    """Issue 48 dev cases: a right answer that works a number out ("two hours would be
    30 euros" at 15 euros an hour; Monday after a Friday's "next working day"; 11 am
    before a 3 pm cut-off) was blocked for a number or day the context does not state
    (p 0.88-0.96 with the old code); the invented twins stay blocked."""
    kayak = ["Kayak rental costs 15 euros per hour. Life jackets are free."]
    desk = ["Requests received on a working day are answered on the next working day."]
    shop = ["Orders placed before 3 pm are dispatched the same day."]
    cases = [
        ("What would two hours of kayaking cost?", kayak, "Two hours would be 30 euros.", True),
        ("What would two hours of kayaking cost?", kayak, "Two hours would be 35 euros.", False),
        ("I wrote on a Friday. When do I get an answer?", desk, "You get one on Monday.", True),
        ("I wrote on a Friday. When do I get an answer?", desk, "You get one on Tuesday.", False),
        (
            "I ordered at 11 am. Will it go out today?",
            shop,
            "Yes, 11 am is before the 3 pm cut-off, so it is dispatched today.",
            True,
        ),
    ]
    _passes_only_the_right(cases, smollm2_scorer)


def _passes_only_the_right(
    cases: Sequence[tuple[str, list[str], str, bool | None]], scorer: Any
) -> None:
    """Each right answer is not ``unsupported`` at the default; each wrong one is, or
    (``None``) is flagged as misread."""
    for question, context, answer, correct in cases:
        report = assess_answer(question, context, answer, scorer)
        if correct is None:
            assert report.verdict == "uncertain" and report.misread, (answer, report)
        else:
            assert (report.verdict != "unsupported") == correct, (answer, report)


@pytest.mark.model
def test_a_block_filter_without_a_scorer_reads_the_facts_rule(smollm2_scorer):
    """Review finding 7: ``GroundednessFilter(mode="block").judge(result)`` with no scorer
    (the attribution's estimate, two verdicts) blocked a right answer the token-level
    default passes; it now reads the same facts rule: a right answer is shown, one with
    an invented number still blocked."""
    context = ["The Harbour car park charges 3 euros per hour, up to 20 euros per day."]
    question = "How much is parking per hour?"
    gate = GroundednessFilter(mode="block")
    right, invented = (
        gate.judge(attribute(question, context, answer, smollm2_scorer, budget=4))
        for answer in ("Parking costs 3 euros an hour.", "Parking costs 4 euros an hour.")
    )
    assert right.report is not None and right.report.source != "measured"
    assert not right.blocked and right.answer == "Parking costs 3 euros an hour."
    assert invented.blocked and invented.report is not None
    assert invented.report.unchecked_facts == ("4",)


def test_a_price_the_page_asked_calls_free_is_contested_as_cite_shows_it():
    """Fresh-user review 72, W8: "25 euros." (the South district's price) to the North
    district's bulky collection, which its page says is free, was "supported" while its
    citation listed the North page as disputing it; the verdict now says so too."""
    pages = [
        "North district waste. In the North district, bins are collected every Tuesday. Bulky "
        "waste collection is free once a year.",
        "South district waste. In the South district, bins are collected every Thursday. Bulky "
        "waste collection costs 25 euros per visit.",
    ]
    north = "How much does bulky waste collection cost in the North district?"
    wrong = assess_answer(north, pages, "25 euros.", KeywordScorer())
    assert wrong.verdict == "uncertain" and wrong.sentences[0].contested == ("25",)
    # not "the sources differ": the pages are about two districts (review 72, W8 and W9)
    assert wrong.sentences[0].elsewhere == ("25",)
    assert wrong.sentences[0].elsewhere_kinds == ("South district",)
    assert (
        verdict_text(wrong)
        == "Check this answer: \u201c25\u201d is from the page on the South district"
    )
    again = GroundednessReport.from_dict(wrong.to_dict())
    assert again.sentences[0].elsewhere_kinds == ("South district",)
    south = "How much does bulky waste collection cost in the South district?"
    right = assess_answer(south, pages, "25 euros.", KeywordScorer())
    assert right.sentences[0].contested == ()
