"""The one door (issue 49): ``Attributor`` run / arun / submit / results / summary, the
thin calls over it (``attribute``, ``aattribute``, ``assess_answer``) and the one scorer
resolver. The embedded model runs where a user would use it (three short documents, whole
documents: 8 subsets, an exact fit); fakes only block or count calls."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from fakes import KeywordScorer, attribute_captured

import camab_rag
from camab_rag import Attributor, deadline
from camab_rag.errors import (
    AttributionCancelledError,
    AttributionPendingError,
    DeadlineExceededError,
    InputError,
    ScorerUnavailableError,
)
from camab_rag.groundedness import GroundednessFilter
from camab_rag.scorers import OpenAICompletionsScorer, resolve_scorer
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest

DOCS = [
    "The Eiffel Tower is in Paris.",
    "Bananas are yellow.",
    "Gustave Eiffel's company designed the tower.",
]
QUESTION = "What colour are bananas?"
ANSWER = "Bananas are yellow."


class GatedScorer(KeywordScorer):
    """Scores only once ``gate`` is set (a slow model, for the background handle)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        assert self.gate.wait(30), "the test never opened the gate"
        return super().score(requests)


def test_run_arun_and_attribute_agree_with_the_real_model(smollm2_scorer: Any) -> None:
    att = Attributor(scorer=smollm2_scorer, budget=8, granularity="chunk", keep=2)
    result = att.run(QUESTION, DOCS, ANSWER)
    assert result.n_documents == 3 and result.budget == 8 and result.n_queries == 8
    assert result.top_documents(1) == [1]  # the document that holds the answer
    same = asyncio.run(att.arun(QUESTION, DOCS, ANSWER))
    np.testing.assert_allclose(same.scores, result.scores, atol=1e-4)
    thin = camab_rag.attribute(
        QUESTION, DOCS, ANSWER, smollm2_scorer, budget=8, granularity="chunk"
    )
    np.testing.assert_allclose(thin.scores, result.scores, atol=1e-4)
    # a knob given to one call wins for that call only; results are bounded by keep
    third = att.run(QUESTION, DOCS, ANSWER, budget=4, method="loo")
    assert third.method == "loo" and third.n_queries == 4
    assert att.results == [same, third]
    summary = att.summary()
    assert summary.startswith("2 answers attributed (newest last):")
    assert '"Bananas are yellow.": from document 2;' in summary
    assert summary.count("\n") == 2 and "4 model calls" in summary.splitlines()[-1]


def test_the_verdict_comes_with_the_run_and_assess_answer_is_the_same_call(
    smollm2_scorer: Any,
) -> None:
    att = Attributor(smollm2_scorer, budget=8, granularity="chunk", groundedness=True)
    assert isinstance(att.groundedness, GroundednessFilter)
    assert "groundedness" not in {f.name for f in dataclasses.fields(att.settings)}
    result = att.run(QUESTION, DOCS, ANSWER)
    assert result.n_queries == 8  # all 8 subsets: the full and empty contexts among them
    assert set(result.anchor_rewards) == {"full", "empty"}
    verdict = GroundednessFilter().judge(result).verdict
    assert verdict in ("supported", "uncertain", "unsupported")
    assert att.summary().endswith(f"; {verdict}; 8 model calls")
    off = att.run(QUESTION, DOCS, ANSWER, groundedness=False)  # off for one call
    assert not off.anchor_rewards
    last = att.summary().splitlines()[-1]
    assert last.startswith("2. ") and verdict not in last and last.endswith("; 8 model calls")
    report = camab_rag.assess_answer(QUESTION, DOCS, ANSWER, smollm2_scorer)
    assert report.extra_queries == 2
    assert report.full_reward == pytest.approx(result.anchor_rewards["full"], abs=1e-4)
    # a chain's door (the integrations' generator) gives the same result for this input
    chain = attribute_captured(
        QUESTION, DOCS, ANSWER, smollm2_scorer, att.settings, groundedness=True
    )
    np.testing.assert_allclose(chain.scores, result.scores, atol=1e-4)
    assert chain.n_queries == result.n_queries and chain.method == result.method
    assert chain.anchor_rewards == pytest.approx(result.anchor_rewards, abs=1e-4)
    assert chain.groundedness is not None and result.groundedness is not None
    assert chain.groundedness.verdict == result.groundedness.verdict
    here, there = result.groundedness.report, chain.groundedness.report
    assert here is not None and there is not None
    assert there.score == pytest.approx(here.score, abs=1e-4)
    assert there.p_unsupported == pytest.approx(here.p_unsupported, abs=1e-4)
    assert there.top_segments == here.top_segments


class StuckScorer(KeywordScorer):
    """A model stuck past the deadline: the blocking call returns only once the running
    deadline has passed, then checks it (as the embedded model does between parts); the
    awaited call never returns (the deadline must cancel it)."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        while (left := deadline.remaining()) is not None and left > 0:
            time.sleep(0.01)
        deadline.check("the model")
        return super().score(requests)

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        await asyncio.sleep(60)
        return super().score(requests)


class VerdictCall:
    """The verdict's own model call (fault injection): the blocking call returns the
    deadline it runs under; the awaited call is stuck (the deadline must cancel it)."""

    def run(self) -> float | None:
        return deadline.remaining()

    async def arun(self) -> None:
        await asyncio.sleep(60)


class CallingFilter(GroundednessFilter):
    """A filter whose verdict makes a model call before judging (a slow judge)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[float | None] = []

    def judge_steps(self, result: Any, **where: Any) -> Any:
        self.seen.append((yield VerdictCall()))
        return (yield from super().judge_steps(result, **where))


def test_the_deadline_covers_the_verdict_at_both_doors() -> None:
    """Issue 49 follow-up: the Attributor bounded the attribution only, the captured door
    the verdict too (as ``AttributionSettings.deadline_s`` says); one generator now."""
    gate = CallingFilter()
    att = Attributor(KeywordScorer(), budget=8, granularity="chunk", groundedness=gate)
    assert att.run(QUESTION, DOCS, ANSWER).groundedness is not None  # no deadline
    att.run(QUESTION, DOCS, ANSWER, deadline_s=50.0)
    captured = attribute_captured(QUESTION, DOCS, ANSWER, KeywordScorer(), groundedness=gate)
    assert captured.groundedness is not None
    no_limit, attributor_left, captured_left = gate.seen
    assert no_limit is None
    assert attributor_left is not None and 0 < attributor_left <= 50.0
    assert captured_left is not None and 0 < captured_left <= 120.0  # CHAIN_SETTINGS
    with pytest.raises(DeadlineExceededError, match=r"deadline of 0\.2 s \(deadline_s\)"):
        asyncio.run(att.arun(QUESTION, DOCS, ANSWER, deadline_s=0.2))  # the verdict is stuck


def test_assess_answer_takes_a_deadline_with_attributes_meaning() -> None:
    """Review of issue 49: the verdict's forward pass could not be bounded."""
    assert camab_rag.assess_answer(QUESTION, DOCS, ANSWER, StuckScorer()).extra_queries == 2
    with pytest.raises(DeadlineExceededError, match=r"deadline of 0\.2 s \(deadline_s\)"):
        camab_rag.assess_answer(QUESTION, DOCS, ANSWER, StuckScorer(), deadline_s=0.2)
    with pytest.raises(DeadlineExceededError, match=r"deadline of 0\.2 s \(deadline_s\)"):
        asyncio.run(camab_rag.aassess_answer(QUESTION, DOCS, ANSWER, StuckScorer(), deadline_s=0.2))
    with pytest.raises(InputError, match="deadline_s must be a positive number"):
        camab_rag.assess_answer(QUESTION, DOCS, ANSWER, KeywordScorer(), deadline_s=0)


def test_submit_runs_in_the_background_and_waits_only_in_the_handle() -> None:
    scorer = GatedScorer()
    att = Attributor(scorer, budget=8, granularity="chunk")
    handle = att.submit(QUESTION, DOCS, ANSWER)
    assert not handle.done()
    with pytest.raises(AttributionPendingError, match=r"still running after 0\.05 s"):
        handle.result(timeout=0.05)
    assert att.results == []
    scorer.gate.set()
    result = handle.result(timeout=30)
    assert handle.done() and not handle.cancel()  # finished: nothing to cancel
    assert result.top_documents(1) == [1] and att.results == [result]
    assert asyncio.run(handle.aresult()) is result
    att.close()


def test_a_cancelled_submission_stops_before_its_next_call_and_says_so() -> None:
    scorer = GatedScorer()
    att = Attributor(scorer, budget=8, granularity="chunk")
    running = att.submit(QUESTION, DOCS, ANSWER)
    queued = att.submit(QUESTION, DOCS, ANSWER)  # one worker: waits behind the first
    assert running.cancel() and queued.cancel()
    scorer.gate.set()
    for handle in (running, queued):  # the user's own cancel is named, not an event loop
        with pytest.raises(AttributionCancelledError) as caught:
            handle.result(timeout=30)
        assert str(caught.value) == (
            "the attribution was cancelled by h.cancel() before it finished: it has no "
            "result; submit it again to get one"
        )
    with pytest.raises(AttributionCancelledError):
        asyncio.run(queued.aresult())
    att.close()
    assert att.results == [] and len(scorer.calls) <= 8  # at most the one batch in flight


def test_a_task_its_event_loop_cancelled_says_so() -> None:
    """Nobody called h.cancel(): the loop ended first (asyncio.run cancels its tasks)."""
    att = Attributor(KeywordScorer(), budget=8, granularity="chunk")

    async def main() -> Any:
        return att.submit(QUESTION, DOCS, ANSWER)

    handle = asyncio.run(main())
    with pytest.raises(AttributionCancelledError, match="its event loop stopped") as caught:
        handle.result()
    assert "h.cancel()" not in str(caught.value)


def test_submit_from_a_coroutine_is_a_task_of_its_loop() -> None:
    att = Attributor(KeywordScorer(), budget=8, granularity="chunk")

    async def main() -> Any:
        handle = att.submit(QUESTION, DOCS, ANSWER)
        with pytest.raises(AttributionPendingError, match=r"await h\.aresult"):
            handle.result()
        return await handle.aresult()

    assert asyncio.run(main()).top_documents(1) == [1]
    assert len(att.results) == 1


def test_bad_input_is_refused_when_the_attributor_is_built() -> None:
    with pytest.raises(ScorerUnavailableError) as caught:  # words for this class, no chain
        Attributor()
    assert str(caught.value).startswith(
        "no scorer: pass scorer=, llm= or proxy= to Attributor, e.g. "
        "scorer=camab_rag.default_scorer()"
    )
    assert "chain" not in str(caught.value)
    for door, call in [
        ("attribute()", lambda: camab_rag.attribute(QUESTION, DOCS, ANSWER, None)),
        ("assess_answer()", lambda: camab_rag.assess_answer(QUESTION, DOCS, ANSWER, None)),
    ]:
        with pytest.raises(ScorerUnavailableError) as caught:
            call()
        assert str(caught.value).startswith(f"no scorer: {door} needs one, e.g. scorer=")
        assert "Attributor(llm=<a LangChain or LlamaIndex chat model>)" in str(caught.value)
    with pytest.raises(InputError, match="scorer must have a score"):
        Attributor(object())
    with pytest.raises(InputError, match="keep must be"):
        Attributor(KeywordScorer(), keep=-1)
    with pytest.raises(InputError, match="unknown method 'camba'"):
        Attributor(KeywordScorer(), method="camba")
    att = Attributor(KeywordScorer())
    with pytest.raises(TypeError, match="unexpected keyword argument 'seed'"):
        att.submit(QUESTION, DOCS, ANSWER, seed=1)
    with pytest.raises(InputError, match="budget"):
        att.run(QUESTION, DOCS, ANSWER, budget=-1)
    assert att.summary() == "No answers attributed yet."


def test_one_resolver_for_every_way_to_name_a_scorer() -> None:
    own = KeywordScorer()
    assert resolve_scorer(own) is own
    assert resolve_scorer(llm=SimpleNamespace(scorer=own)) is own  # in-process chat model
    served = resolve_scorer(base_url="http://127.0.0.1:9/v1", model="smollm2", timeout=2.0)
    assert isinstance(served, OpenAICompletionsScorer) and served.model == "smollm2"
    client = SimpleNamespace(openai_api_base="http://127.0.0.1:9/v1", model_name="m")
    assert isinstance(resolve_scorer(llm=client), OpenAICompletionsScorer)
    proxy = KeywordScorer()
    alone = resolve_scorer(proxy=proxy)
    assert alone.scored_by.proxy is True and alone.proxy is proxy
    beside = resolve_scorer(own, proxy=proxy)
    assert beside.own is own and beside.scored_by.proxy is False
    with pytest.raises(ScorerUnavailableError, match="cannot score with the chain's model"):
        resolve_scorer(llm=object())
    with pytest.raises(ScorerUnavailableError, match="needs model="):
        resolve_scorer(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(InputError, match="not both"):
        resolve_scorer(own, llm=client)
    with pytest.raises(InputError, match="proxy must have a score"):
        resolve_scorer(own, proxy=object())
    # the Attributor resolves once, with the same rule
    assert Attributor(llm=SimpleNamespace(scorer=own)).scorer is own
    assert Attributor(proxy=proxy).scorer.scored_by.proxy is True


BIKE_SHOP = [
    "Tune-ups cost 59 euros and take one day.",
    "We sell city bikes and cargo bikes.",
    "Helmets are sold in three sizes.",
    "Our mechanics trained in Utrecht.",
    "Gift cards never expire.",
    "The shop opens at 9am on Saturdays.",
]


def test_summary_names_the_documents_cite_shows_in_words() -> None:
    """summary() says what cite() shows (the fix of a review: it said "mostly from document
    1 (0.42), then document 6 (0.42)" where cite() found no document standing out, and
    named documents scoring -0.05 as sources); no raw scores in its words."""
    att = Attributor(KeywordScorer(), budget=64, granularity="chunk", groundedness=True)
    answers = [
        "Tune-ups cost 59 euros. The shop opens at 9am.",  # two facts, two documents
        "Tune-ups cost 80 dollars in Berlin.",  # invented details: the gate rejects it
        "Cards and bikes are sold.",
    ]
    for answer in answers:
        att.run("What about the shop?", BIKE_SHOP, answer)
    lines = att.summary().splitlines()[1:]
    assert lines[0] == f'1. "{answers[0]}": from documents 1 and 6; supported; 64 model calls'
    assert lines[1] == (
        f'2. "{answers[1]}": no source is cited: the sources do not support this answer; '
        "unsupported; 64 model calls"
    )
    for line, result in zip(lines, att.results):
        cited = camab_rag.cite(result, BIKE_SHOP)  # the gate's anchors: unsupported cites none
        shown = [f"{s.doc_index + 1}" for s in cited.sources]
        assert ("no source is cited" in line or "stands out" in line) == (not shown)
        assert all(f" {n}" in line.split(";")[0] for n in shown)
        assert "(0." not in line and "(-" not in line  # no raw scores


def test_budget_counts_attribution_calls_and_the_gate_anchors_add_at_most_two() -> None:
    """Review of issue 49: budget=12 with the gate and a history made 13 calls and nothing
    said why. The budget counts the attribution's subsets; the gate's full and empty
    anchors come on top (one or two calls), as the README and docstring now say."""
    import re
    from pathlib import Path

    docs = [
        "The Eiffel Tower is in Paris. It opened in 1889.",
        "Bananas are yellow. They grow in bunches.",
        "Gustave Eiffel's company designed the tower. It was built fast.",
        "Rome is in Italy.",
    ]
    history = [
        {"role": "user", "content": "Tell me about towers."},
        {"role": "assistant", "content": "Which one?"},
    ]
    question, answer = "Who designed the Eiffel Tower?", "Gustave Eiffel's company designed it."
    for extra, anchors in (
        ({}, False),
        ({"groundedness": True}, True),
        ({"groundedness": True, "history": history}, True),
    ):
        scorer = KeywordScorer()
        result = camab_rag.attribute(question, docs, answer, scorer, budget=12, **extra)
        distinct = {(str(call.prompt), call.response) for call in scorer.calls}
        assert result.n_queries == len(distinct) == len(scorer.calls)
        if anchors:
            assert 12 < result.n_queries <= 14, extra
        else:
            assert result.n_queries == 12
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    found = re.search(r"\* \*\*`budget`\*\*(.*?)\n\* ", readme, re.S)
    assert found, "the README lost its budget entry"
    bullet = " ".join(found.group(1).split())
    assert "distinct attribution calls" in bullet and "budget + 2" in bullet
    assert "budget + 2" in " ".join((camab_rag.attribute.__doc__ or "").split())


def test_a_budget_past_the_call_limit_is_refused_before_any_call() -> None:
    """Fresh-user review 4: ``budget=10**6`` planned a million model calls, with no warning
    and no deadline (ContextCite-style and KernelSHAP designs even drew the whole plan up
    front). A plan above MAX_CALLS is an InputError naming the budget and the context size,
    before any call; a big budget over a small context stays harmless (2**N subsets)."""
    from camab_rag.runs import MAX_CALLS

    documents = [f"Fact number {k} is about item {k}." for k in range(20)]  # 20 segments
    scorer = KeywordScorer()
    for method in ("auto", "contextcite", "kernelshap"):
        with pytest.raises(InputError) as refused:
            camab_rag.attribute("Q?", documents, "Item 3.", scorer, budget=10**6, method=method)
        message = str(refused.value)
        assert "budget=1000000 would make 1000000 model calls" in message
        assert "context of 20 segments" in message and f"at most {MAX_CALLS}" in message
    with pytest.raises(InputError, match=f"budget={MAX_CALLS + 1} would make"):
        Attributor(scorer, budget=MAX_CALLS + 1).run("Q?", documents, "Item 3.")
    assert scorer.calls == []
    small = camab_rag.attribute("Q?", documents[:3], "Item 1.", scorer, budget=10**6)
    assert small.exact and small.n_queries == 8  # every subset of 3 segments, once
