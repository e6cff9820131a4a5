"""A record that would hold a batch audit for minutes (review 7, finding 9: a 5,000-word
answer scored in-process ran over 6 minutes) is cut by a default per-record deadline and
becomes a named error line; the run goes on. The slow model is a fault-injected fake that,
like the in-process scorer, checks the deadline before each of its passes."""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from fakes import KeywordScorer
from test_hostile_input import GOOD, dumps, write

from camab_cli.audit import ScorerSpec, lines
from camab_cli.audit import cli as audit_cli
from camab_cli.audit.batching import MicroBatcher
from camab_cli.audit.config import AUDIT_DEADLINE_S, AuditConfig
from camab_cli.audit.run import audit
from camab_cli.options import shared_parser
from camab_rag import deadline
from camab_rag.deadline import bounded
from camab_rag.errors import DeadlineExceededError
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest
from camab_rag.steps import ScoreCall, Steps, adrive

SLOW = "SLOW"


class SlowScorer(KeywordScorer):
    """A request whose response holds ``SLOW`` takes ``passes`` passes of 20 ms (5 s in
    all), each after a deadline check, as the in-process model's forward passes do."""

    def __init__(self, passes: int = 250) -> None:
        super().__init__()
        self.passes = passes
        self.slow_passes = 0
        self.asked: list[str] = []  # every response the model was asked to score

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.asked += [r.response for r in requests]
        deadline.check("a forward pass")
        if any(SLOW in r.response for r in requests):
            for _ in range(self.passes):
                deadline.check("a forward pass")
                self.slow_passes += 1
                time.sleep(0.02)
        return super().score(requests)


def test_the_audit_has_a_default_deadline_said_in_its_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert AuditConfig().deadline_s == AUDIT_DEADLINE_S
    parser = audit_cli.configure_parser(argparse.ArgumentParser(parents=[shared_parser()]))
    args = parser.parse_args(["in.jsonl", "--out", "o.jsonl"])
    assert audit_cli.config_from_args(args).deadline_s == AUDIT_DEADLINE_S
    unlimited = parser.parse_args(["in.jsonl", "--out", "o.jsonl", "--no-deadline"])
    assert audit_cli.config_from_args(unlimited).deadline_s is None
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    assert f"(default {AUDIT_DEADLINE_S:g})" in " ".join(capsys.readouterr().out.split())


def test_a_record_past_the_default_deadline_is_an_error_line_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scorer = SlowScorer()
    monkeypatch.setattr(ScorerSpec, "build", lambda self: scorer)
    # the default, made small; 2 s, not less: a quick record must meet it on a busy CI core
    monkeypatch.setattr(audit_cli, "AUDIT_DEADLINE_S", 2.0)
    rows = [
        {**GOOD, "id": "a"},
        {**GOOD, "id": "slow", "response": f"Frank Herbert wrote Dune. {SLOW}"},
        {**GOOD, "id": "b"},
    ]
    write(tmp_path / "in.jsonl", [dumps(r) for r in rows])
    out = tmp_path / "out.jsonl"
    argv = [str(tmp_path / "in.jsonl"), "--out", str(out), "--budget", "4", "--no-progress"]
    assert audit_cli.main([*argv, "--concurrency", "1"]) == 1
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["id"], x["status"]) for x in lines] == [("a", "ok"), ("slow", "error"), ("b", "ok")]
    error = lines[1]["error"]
    assert error.startswith("DeadlineExceededError: ") and "2 s" in error
    assert "--deadline-s" in error  # named as the flag that raises it
    # an audit's advice, not a chain's (fresh-user review 10)
    assert "--concurrency" in error and "in a chain" not in error
    # what a record's time counts: not its wait behind the others in-process (audit12;
    # fresh-user review 11 found it did), a busy server's time yes
    assert "stops while its requests wait behind another record's in-process" in error
    assert "--concurrency 1" not in error
    assert scorer.slow_passes < scorer.passes  # the model was stopped, not waited for
    summary = json.loads((tmp_path / "out.jsonl.summary.json").read_text())
    assert summary["config"]["deadline_s"] == 2.0
    assert (summary["records"]["ok"], summary["records"]["error"]) == (2, 1)
    # the stopped record says what ran and how long, not "camab, budget 0, 0 queries"
    stopped = lines[1]
    assert (stopped["attribution"]["method"], stopped["attribution"]["budget"]) == ("auto", 4)
    assert stopped["cost"]["queries"] is None and stopped["cost"]["wall_time_s"] >= 2.0
    assert summary["cost"]["records_not_counted"] == 1
    assert summary["cost"]["queries"] == sum(x["cost"]["queries"] for x in (lines[0], lines[2]))


def _ask(scorer: Any, request: ScoreRequest, *more: ScoreRequest) -> Steps[Any]:
    return (yield ScoreCall(scorer, [request, *more]))


def _request(response: str) -> ScoreRequest:
    return ScoreRequest("Dune is a novel by Frank Herbert.", response)


class ExpiringScorer(SlowScorer):
    """The model's own deadline check fails a ``SLOW`` request at once, before the
    record's event-loop timer fires: the race CI hit (stop 68)."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        if any(SLOW in r.response for r in requests):
            self.asked += [r.response for r in requests]
            raise deadline.expired(seconds=0.3)
        return super().score(requests)


@pytest.mark.parametrize(
    ("scorer", "seconds"),
    [(SlowScorer(), 0.3), (ExpiringScorer(), 60.0)],
    ids=["the record gives up first", "the model reports the deadline first"],
)
async def test_one_records_deadline_never_fails_or_cuts_another_records_batch(
    scorer: SlowScorer, seconds: float
) -> None:
    """The batcher's worker was started by the slow record and ran every later batch in
    that record's context: once its deadline passed, the next record's requests failed
    with DeadlineExceededError, and the slow record's queued requests were still scored
    (when the model reported the deadline before the record gave up, its next queued
    request was taken and scored in between)."""
    batcher = MicroBatcher(scorer, max_batch=1)
    slow = [_request(f"Dune. {SLOW}"), _request("Dune one."), _request("Dune two.")]
    late = asyncio.ensure_future(adrive(bounded(_ask(batcher, *slow), seconds)))
    await asyncio.sleep(0.05)  # the slow request is in the model, the others queued
    patient = asyncio.ensure_future(adrive(bounded(_ask(batcher, _request("Dune.")), 60.0)))
    with pytest.raises(DeadlineExceededError):
        await late
    [result] = await patient
    assert isinstance(result, ResponseLogprobs)
    # the slow record's two queued requests were dropped unscored once it gave up
    assert scorer.asked == [f"Dune. {SLOW}", "Dune."]


class LongRecordScorer(KeywordScorer):
    """A model call of the long record (its answer holds ``SLOW``) runs until the deadline
    it runs under has passed, then checks it (as the in-process model does before each
    pass): it outlasts any deadline. The short record's calls are quick."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[list[str]] = []  # each model call's responses

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.asked.append([r.response for r in requests])
        if any(SLOW in r.response for r in requests):
            while (left := deadline.remaining()) is not None and left > 0:
                time.sleep(0.01)
            deadline.check("a forward pass")
        return super().score(requests)


def test_a_short_record_meets_its_deadline_behind_a_long_records_batches(
    tmp_path: Path,
) -> None:
    """Fresh-user review 11: with two records in flight on one in-process model, a short
    record ran past its deadline while its requests waited behind a long record's batch.
    Now its clock stops while it waits behind another record's call: it completes; the
    long record, whose own call outlasts the deadline, still fails at it."""
    scorer = LongRecordScorer()
    rows = [
        {**GOOD, "id": "long", "response": f"Frank Herbert wrote Dune. {SLOW}"},
        {**GOOD, "id": "short"},
    ]
    write(tmp_path / "in.jsonl", [dumps(r) for r in rows])
    config = AuditConfig(budget=4, deadline_s=1.0)
    out = tmp_path / "out.jsonl"
    audit(tmp_path / "in.jsonl", out, scorer=scorer, config=config, concurrency=2, progress=False)
    lines = {x["id"]: x for x in map(json.loads, out.read_text().splitlines())}
    assert lines["short"]["status"] == "ok", lines["short"]["error"]
    assert lines["short"]["groundedness"]["source"] == "measured"  # the verdict ran too
    assert lines["long"]["status"] == "error"
    assert lines["long"]["error"].startswith("DeadlineExceededError: ")
    assert "deadline of 1 s" in lines["long"]["error"]
    # the short record's requests did wait behind the long record's call ...
    assert any(SLOW in response for response in scorer.asked[0])
    # ... and each model call served one record (a shared call would charge it to both)
    assert all(len({SLOW in response for response in call}) == 1 for call in scorer.asked)


async def test_a_hung_model_call_is_cut_and_the_record_behind_it_still_ends() -> None:
    """A model call that ignores the deadline is cut at its record's deadline; the record
    queued behind it waits with its clock stopped only while that record waits, then its
    clock runs again (a hung model stalls nobody for ever) and it ends at its deadline."""
    release = threading.Event()

    class HungScorer(KeywordScorer):
        def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
            if any(SLOW in r.response for r in requests):
                release.wait(60)  # stuck, never checks the deadline
            return super().score(requests)

    batcher = MicroBatcher(HungScorer(), max_batch=4)
    hung = asyncio.ensure_future(adrive(bounded(_ask(batcher, _request(f"Dune. {SLOW}")), 0.2)))
    await asyncio.sleep(0.05)  # the hung request is in the model
    behind = asyncio.ensure_future(adrive(bounded(_ask(batcher, _request("Dune.")), 0.2)))
    try:
        with pytest.raises(DeadlineExceededError):
            await hung
        with pytest.raises(DeadlineExceededError):
            await asyncio.wait_for(behind, 30)  # a safety net, not a measure: it must end
    finally:
        release.set()


def test_the_verdict_counts_within_the_records_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library's deadline_s bounds the attribution; the verdict after it (two more
    queries) gets only what is left, so one deadline bounds the whole record."""

    async def slow_verdict(*args: Any) -> lines.Gain:
        await asyncio.sleep(60.0)  # a verdict stuck on a slow model
        return lines.Gain(None, "surrogate")

    monkeypatch.setattr(lines, "context_gain", slow_verdict)
    monkeypatch.setattr(ScorerSpec, "build", lambda self: KeywordScorer())
    write(tmp_path / "in.jsonl", [dumps(GOOD)])
    out = tmp_path / "out.jsonl"
    argv = [str(tmp_path / "in.jsonl"), "--out", str(out), "--budget", "4", "--no-progress"]
    # 2 s, not less: the attribution before the verdict (a few ms when idle) ran past
    # 0.5 s on a busy CI core (stop 98), and then the verdict was never waited for
    assert audit_cli.main([*argv, "--deadline-s", "2"]) == 1
    [line] = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["status"] == "error"
    assert line["error"].startswith("DeadlineExceededError: ")
    assert "(waiting for: the groundedness verdict)" in line["error"]
