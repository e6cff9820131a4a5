"""Batch audit (camab audit): output lines, summary, resume, torn lines, rate gate."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import openai
import pytest
from fakes import FailingScorer, KeywordScorer

from camab_cli.audit import AuditConfig, RateGate, ScorerSpec, audit
from camab_cli.audit.batching import MicroBatcher
from camab_cli.audit.cli import configure_parser, main, spec_from_args
from camab_cli.audit.gate import GatedScorer, transient
from camab_cli.audit.lines import GROUNDEDNESS_METHOD, without_timing
from camab_cli.audit.local import audit_records
from camab_cli.audit.outputs import OutputFile, iter_all_lines, iter_lines
from camab_cli.options import shared_parser
from camab_cli.records import Record, read_records
from camab_rag.errors import InputError
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest

RECORDS: list[Any] = [
    {
        "id": "dune",
        "question": "Who wrote Dune?",
        "documents": [
            "Dune is a novel by Frank Herbert. It was published in 1965.",
            "Paris is the capital of France.",
        ],
        "response": "Frank Herbert wrote Dune.",
    },
    {
        "id": "paris",
        "question": "What is the capital of France?",
        "documents": ["Bananas are yellow.", {"text": "Paris is the capital of France."}],
        "response": "Paris.",
    },
    {"question": 3, "documents": []},  # line 3: bad
    {
        "id": "zebra",
        "question": "What colour are bananas?",
        "documents": ["Bananas are yellow.", "Grass is green."],
        "response": "Purple zebras sing loudly.",  # nothing in the context supports it
    },
    "{broken json",  # line 5: bad
]
CONFIG = AuditConfig(budget=10)


def write_input(path: Path, rows: Sequence[Any] = RECORDS) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


def lines_by_id(path: Path) -> dict[str, dict[str, Any]]:
    return {line["id"]: line for line in iter_lines(path)}


def run(tmp_path: Path, scorer: Any = None, **kwargs: Any) -> dict[str, Any]:
    return audit(
        tmp_path / "in.jsonl",
        tmp_path / "out.jsonl",
        scorer=scorer if scorer is not None else KeywordScorer(),
        config=kwargs.pop("config", CONFIG),
        progress=kwargs.pop("progress", False),
        **kwargs,
    )


def test_one_line_per_record_and_a_summary(tmp_path: Path) -> None:
    write_input(tmp_path / "in.jsonl")
    summary = run(tmp_path)
    lines = lines_by_id(tmp_path / "out.jsonl")
    assert sorted(lines) == ["dune", "paris", "zebra"]
    dune = lines["dune"]
    assert (dune["status"], dune["line"]) == ("ok", 1)
    assert dune["attribution"]["n_queries"] == dune["cost"]["attribution_queries"] <= 10
    # the verdict's full/empty context rewards cost at most two more queries
    extra = dune["groundedness"]["extra_queries"]
    assert dune["cost"]["queries"] == dune["attribution"]["n_queries"] + extra
    assert 0 <= extra <= 2
    assert dune["groundedness"]["source"] == "measured"
    # empty context: only "wrote" and "Dune" (in the question) are likely
    assert dune["groundedness"]["context_gain"] == pytest.approx(-0.1 - (-3 - 3 - 0.1 - 0.1) / 4)
    assert dune["cost"]["prompt_tokens"] > 0
    # the supporting sentence is cited for the answer sentence; the Paris document is not
    [citation] = dune["citations"]
    assert citation["statement"] == "Frank Herbert wrote Dune."
    assert citation["segments"][0]["text"] == "Dune is a novel by Frank Herbert."
    assert dune["documents"]["cited"] == [0]
    assert dune["documents"]["never_cited"] == [1]
    assert lines["paris"]["documents"]["never_cited"] == [0]
    # groundedness: the zebra answer is unsupported, the Paris one supported (the fake
    # scorer leaves "wrote", a word no document holds, to the calibrated verdict)
    assert lines["zebra"]["groundedness"]["flagged"] is True
    assert lines["zebra"]["groundedness"]["verdict"] == "unsupported"
    assert lines["zebra"]["groundedness"]["blocked"] is True
    assert lines["paris"]["groundedness"]["flagged"] is False
    assert lines["dune"]["groundedness"]["method"] == GROUNDEDNESS_METHOD
    assert lines["paris"]["groundedness"]["grounded"] is True  # camab_rag.groundedness report
    assert lines["zebra"]["groundedness"]["sentences"][0]["supported"] is False
    n_unsupported = sum(line["groundedness"]["verdict"] == "unsupported" for line in lines.values())
    # summary: counts, bad lines named, cost
    assert summary["records"] == {
        "in_output": 3,
        "ok": 3,
        "error": 0,
        "audited_this_run": 3,
        "skipped_already_done": 0,
        "bad_input_lines": 2,
        "bad_input_lines_this_run": 2,
    }
    assert [(b["line"], b["field"]) for b in summary["bad_records"]] == [
        (3, "question"),
        (5, None),
    ]
    assert summary["bad_records"][0]["error"] == (
        "line 3: field 'question' must be a string, got a number"
    )
    assert summary["groundedness"]["unsupported"] == n_unsupported
    assert summary["groundedness"]["share_unsupported"] == pytest.approx(n_unsupported / 3)
    zebra_docs = len(lines["zebra"]["documents"]["never_cited"])
    assert summary["documents"]["total"] == 6
    assert summary["documents"]["never_cited"] == 2 + zebra_docs
    assert summary["cost"]["queries"] == sum(line["cost"]["queries"] for line in lines.values())
    assert json.loads((tmp_path / "out.jsonl.summary.json").read_text()) == summary


def test_a_summary_file_camab_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    """The default summary path (OUTPUT.summary.json) holding the user's own JSON: the
    audit refuses before writing anything; its own summary from a run before is replaced."""
    write_input(tmp_path / "in.jsonl")
    mine = tmp_path / "out.jsonl.summary.json"
    mine.write_text('{"my": "precious summary"}', encoding="utf-8")
    with pytest.raises(InputError, match="not an audit summary"):
        run(tmp_path)
    assert mine.read_text(encoding="utf-8") == '{"my": "precious summary"}'
    assert not (tmp_path / "out.jsonl").exists()
    mine.unlink()
    first = run(tmp_path)
    assert run(tmp_path)["records"]["skipped_already_done"] == first["records"]["ok"]


def test_rerun_skips_done_records_and_is_idempotent(tmp_path: Path) -> None:
    write_input(tmp_path / "in.jsonl")
    run(tmp_path)
    before = (tmp_path / "out.jsonl").read_bytes()
    scorer = KeywordScorer()
    summary = run(tmp_path, scorer)
    assert scorer.calls == []  # nothing re-scored
    assert (tmp_path / "out.jsonl").read_bytes() == before
    assert summary["records"]["skipped_already_done"] == 3
    assert summary["records"]["audited_this_run"] == 0
    assert summary["records"]["in_output"] == 3


def test_resume_audits_only_the_missing_records(tmp_path: Path) -> None:
    write_input(tmp_path / "in.jsonl", RECORDS[:1])
    run(tmp_path)
    write_input(tmp_path / "in.jsonl")
    scorer = KeywordScorer()
    summary = run(tmp_path, scorer)
    assert {call.response for call in scorer.calls} == {"Paris.", "Purple zebras sing loudly."}
    assert summary["records"]["skipped_already_done"] == 1
    assert sorted(lines_by_id(tmp_path / "out.jsonl")) == ["dune", "paris", "zebra"]


def test_a_torn_last_line_is_cut_and_its_record_redone(tmp_path: Path) -> None:
    # lines are written in input order: the last input line (a record) is the torn one
    write_input(tmp_path / "in.jsonl", [*RECORDS[:3], RECORDS[4], RECORDS[3]])
    run(tmp_path)
    out = tmp_path / "out.jsonl"
    raw = out.read_bytes().splitlines(keepends=True)
    torn = raw[-1][: len(raw[-1]) // 2]
    out.write_bytes(b"".join(raw[:-1]) + torn)  # a crash in the middle of the last write
    torn_id = json.loads(raw[-1])["id"]
    scorer = KeywordScorer()
    summary = run(tmp_path, scorer)
    assert summary["torn_bytes_recovered"] == len(torn)
    assert summary["records"]["audited_this_run"] == 1
    assert {c.response for c in scorer.calls} == {
        r["response"] for r in RECORDS if isinstance(r, dict) and r.get("id") == torn_id
    }
    text = out.read_bytes()
    assert text.endswith(b"\n")
    every = [json.loads(line) for line in text.splitlines()]  # every line is whole JSON
    assert sorted(line["id"] for line in every if not line.get("bad_input")) == [
        "dune",
        "paris",
        "zebra",
    ]
    assert sorted(line["line"] for line in every) == [1, 2, 3, 4, 5]  # bad ones not twice


def test_a_file_that_is_not_an_audit_output_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out.jsonl").write_text('{"id": "x"}\nnot json\n{"id": "y"}\n')
    write_input(tmp_path / "in.jsonl")
    with pytest.raises(ValueError, match="line 1 is not a camab audit result line"):
        run(tmp_path)


@pytest.mark.parametrize(
    "content",
    [b"PRECIOUS DATA", b"export OPENAI_API_KEY=sk-123\n", b'{"id": "a", "question": "q"}\n'],
    ids=["one line, no newline", "one line", "an input-like line"],
)
def test_a_one_line_file_that_is_not_audit_output_is_left_untouched(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    content: bytes,
) -> None:
    """Issue 37: on main a one-line file was taken for a torn tail, cut, and overwritten
    (rc 0)."""
    out = tmp_path / "precious.txt"
    out.write_bytes(content)
    write_input(tmp_path / "in.jsonl")
    monkeypatch.setattr(ScorerSpec, "build", lambda self: KeywordScorer())
    code = main([str(tmp_path / "in.jsonl"), "--out", str(out), "--budget", "4", "--no-progress"])
    assert code == 2
    assert "not a camab audit result line" in capsys.readouterr().err
    assert out.read_bytes() == content


def test_a_second_run_on_the_same_output_is_refused_while_the_first_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 37: on main two runs on one --out both wrote every record."""
    write_input(tmp_path / "in.jsonl")
    out = tmp_path / "out.jsonl"
    monkeypatch.setattr(ScorerSpec, "build", lambda self: KeywordScorer())
    args = [str(tmp_path / "in.jsonl"), "--out", str(out), "--budget", "4", "--no-progress"]
    with OutputFile.open(out):  # the first run, still writing
        assert main(args) == 2
        assert "locked" in capsys.readouterr().err
    assert out.read_bytes() == b""
    assert main(args) == 1  # free again once the first has ended (1: two bad input lines)
    assert sorted(lines_by_id(out)) == ["dune", "paris", "zebra"]


def test_the_input_is_never_the_output(tmp_path: Path) -> None:
    write_input(tmp_path / "in.jsonl")
    before = (tmp_path / "in.jsonl").read_bytes()
    with pytest.raises(ValueError, match="is the input file"):
        audit(tmp_path / "in.jsonl", tmp_path / "in.jsonl", scorer=KeywordScorer())
    assert (tmp_path / "in.jsonl").read_bytes() == before


class CrashingScorer(KeywordScorer):
    """Scores normally, then the process "dies" (a BaseException nothing catches)."""

    def __init__(self, after_calls: int) -> None:
        super().__init__()
        self.after_calls = after_calls

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        if len(self.calls) >= self.after_calls:
            raise KeyboardInterrupt
        return super().score(requests)


def test_a_crash_loses_only_records_in_flight(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"r{i}",
            "question": "Who?",
            "documents": ["Ann met Bob.", "Cy ran."],
            "response": "Ann.",
        }
        for i in range(8)
    ]
    write_input(tmp_path / "in.jsonl", rows)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, CrashingScorer(after_calls=12), concurrency=2)
    finished = lines_by_id(tmp_path / "out.jsonl")
    assert 1 <= len(finished) < 8
    assert all(line["status"] == "ok" for line in finished.values())
    summary = run(tmp_path, concurrency=2)
    assert summary["records"]["audited_this_run"] == 8 - len(finished)
    assert sorted(lines_by_id(tmp_path / "out.jsonl")) == sorted(str(r["id"]) for r in rows)
    assert len(list(iter_lines(tmp_path / "out.jsonl"))) == 8  # no id written twice


def test_the_audit_verdict_is_the_librarys_on_the_same_input(tmp_path: Path) -> None:
    """The fresh-user review: `camab audit` said "grounded"/"ungrounded" from the old
    0.49 score rule on the whole-answer gain, so it disagreed with ``assess_answer``. Each
    line's verdict and ``p_unsupported`` are now the library's on the same record."""
    from camab_rag import assess_answer

    write_input(tmp_path / "in.jsonl")
    run(tmp_path)
    lines = lines_by_id(tmp_path / "out.jsonl")
    for row in (r for r in RECORDS if isinstance(r, dict) and "id" in r):
        line = lines[row["id"]]["groundedness"]
        report = assess_answer(row["question"], row["documents"], row["response"], KeywordScorer())
        assert line["verdict"] == report.verdict in ("supported", "uncertain", "unsupported")
        assert line["p_unsupported"] == pytest.approx(report.p_unsupported)
        assert line["score"] == pytest.approx(report.score)
        assert line["flagged"] == (report.verdict != "supported")


def test_failing_records_get_error_lines_and_can_be_retried(tmp_path: Path) -> None:
    write_input(tmp_path / "in.jsonl")
    summary = run(tmp_path, FailingScorer())
    assert summary["records"]["error"] == 3
    assert {e["id"] for e in summary["errors"]} == {"dune", "paris", "zebra"}
    assert all("scorer is down" in e["error"] for e in summary["errors"])
    assert summary["groundedness"]["share_unsupported"] is None
    skipped = run(tmp_path)
    assert skipped["records"]["audited_this_run"] == 0  # errors count as done by default
    retried = run(tmp_path, retry_errors=True)
    assert retried["records"]["audited_this_run"] == 3
    assert retried["records"]["ok"] == 3  # the last line of an id wins


def test_concurrency_gives_the_same_results_as_one_at_a_time(tmp_path: Path) -> None:
    write_input(tmp_path / "in.jsonl")
    one = run(tmp_path, concurrency=1)
    first = {k: without_timing(v) for k, v in lines_by_id(tmp_path / "out.jsonl").items()}
    (tmp_path / "out.jsonl").unlink()
    many = run(tmp_path, concurrency=8)
    second = {k: without_timing(v) for k, v in lines_by_id(tmp_path / "out.jsonl").items()}
    assert first == second
    # a model call serves one record, whose deadline it counts against: the same calls
    assert many["cost"]["batching"] == one["cost"]["batching"]
    # with no deadline to count, the records' calls are merged into bigger model batches
    (tmp_path / "out.jsonl").unlink()
    merged = run(tmp_path, concurrency=8, config=AuditConfig(budget=10, deadline_s=None))
    third = {k: without_timing(v) for k, v in lines_by_id(tmp_path / "out.jsonl").items()}
    assert third == first
    assert merged["cost"]["batching"]["mean_batch"] > one["cost"]["batching"]["mean_batch"]
    assert merged["cost"]["batching"]["model_calls"] < one["cost"]["batching"]["model_calls"]


def test_parquet_input(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [r for r in RECORDS[:2]]
    table = pa.table(
        {
            "id": [r["id"] for r in rows],
            "question": [r["question"] for r in rows],
            "documents": [
                [d if isinstance(d, str) else d["text"] for d in r["documents"]] for r in rows
            ],
            "response": [r["response"] for r in rows],
        }
    )
    pq.write_table(table, tmp_path / "in.parquet")
    summary = audit(
        tmp_path / "in.parquet",
        tmp_path / "out.jsonl",
        scorer=KeywordScorer(),
        config=CONFIG,
        progress=False,
    )
    assert summary["records"]["ok"] == 2


def test_progress_bar_reports_rate_and_eta(tmp_path: Path) -> None:
    import io

    write_input(tmp_path / "in.jsonl")
    stream = io.StringIO()
    run(tmp_path, stream=stream, progress=True)
    text = stream.getvalue()
    assert "audit: bad input line 3: field 'question' must be a string" in text
    assert "5/5 records" in text and "rec/s" in text and "ETA" in text


def test_output_writes_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "o.jsonl"
    with OutputFile.open(path) as out:
        out.write({"camab_audit": 1, "id": "a", "status": "ok", "text": "é\nx"})
        out.write({"camab_audit": 1, "id": "b", "status": "error"})
    with OutputFile.open(path) as out:
        assert out.recovery.done == {"a": "ok", "b": "error"}
        assert out.recovery.torn_bytes == 0
    assert path.read_text(encoding="utf-8").count("\n") == 2


# ---------------------------------------------------------------- the shared rate gate
def rate_limit_error(retry_after: str | None = None) -> openai.RateLimitError:
    headers = {"retry-after": retry_after} if retry_after else {}
    response = httpx.Response(
        429, headers=headers, request=httpx.Request("POST", "http://127.0.0.1/v1/completions")
    )
    return openai.RateLimitError("rate limited", response=response, body=None)


def test_transient_errors_are_classified() -> None:
    assert transient(rate_limit_error("2")) == (True, 2.0)
    assert transient(TimeoutError()) == (True, None)
    wrapped = RuntimeError("scoring failed")
    wrapped.__cause__ = rate_limit_error()
    assert transient(wrapped) == (True, None)
    assert transient(ValueError("bad prompt")) == (False, None)


class StormScorer(KeywordScorer):
    """An async server that answers 429 to its first ``storm`` calls."""

    def __init__(self, storm: int, retry_after: float = 0.05) -> None:
        super().__init__()
        self.storm = storm
        self.retry_after = retry_after
        self.events: list[tuple[float, str]] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.001)
            if self.storm > 0:
                self.storm -= 1
                self.events.append((time.monotonic(), "429"))
                raise rate_limit_error(str(self.retry_after))
            self.events.append((time.monotonic(), "ok"))
            return self.score(requests)
        finally:
            self.in_flight -= 1


def test_a_429_storm_slows_everyone_instead_of_failing_records(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"r{i}",
            "question": "Who?",
            "documents": ["Ann met Bob.", "Cy ran."],
            "response": "Ann.",
        }
        for i in range(12)
    ]
    write_input(tmp_path / "in.jsonl", rows)
    records = [r for _, r in read_records(tmp_path / "in.jsonl") if isinstance(r, Record)]
    assert len(records) == 12
    server = StormScorer(storm=10)
    gate = RateGate(limit=8, max_retries=20, backoff_base=0.01, backoff_max=0.5)
    lines: list[dict[str, Any]] = []
    asyncio.run(
        audit_records(
            records, GatedScorer(server, gate), AuditConfig(budget=4), lines.append, concurrency=8
        )
    )
    assert [line["status"] for line in lines] == ["ok"] * 12
    assert gate.stats.transient_errors == 10 and gate.stats.retries == 10
    assert gate.stats.min_limit < 8  # the storm halved the shared limit
    assert server.most_in_flight <= 8
    # after the last 429, nobody called the server before its Retry-After had passed
    last_429 = max(t for t, kind in server.events if kind == "429")
    first_ok_after = min(t for t, kind in server.events if kind == "ok" and t > last_429)
    assert first_ok_after - last_429 >= 0.05 - 0.005


def test_the_gate_gives_up_after_its_retries() -> None:
    gate = RateGate(limit=2, max_retries=2, backoff_base=0.001)
    server = StormScorer(storm=100, retry_after=0.001)
    request = ScoreRequest("p", "Ann.")
    with pytest.raises(openai.RateLimitError):
        asyncio.run(gate.call(server, [request]))
    assert gate.stats.calls == 3


def test_micro_batcher_isolates_a_bad_request() -> None:
    class PickyScorer(KeywordScorer):
        def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
            if any(r.response == "bad" for r in requests):
                raise ValueError("cannot score 'bad'")
            return super().score(requests)

    batcher = MicroBatcher(PickyScorer(), max_batch=8)

    async def both() -> list[list[ResponseLogprobs] | BaseException]:
        outcomes = await asyncio.gather(
            batcher.ascore([ScoreRequest("Ann met Bob.", "Ann.")]),
            batcher.ascore([ScoreRequest("x", "bad")]),
            return_exceptions=True,
        )
        return list(outcomes)

    good, bad = asyncio.run(both())
    assert isinstance(good, list) and np.allclose(good[0].logprobs, [-0.1])
    assert isinstance(bad, ValueError)


# ---------------------------------------------------------------- command line
def test_cli_arguments_build_the_scorer_and_config() -> None:
    shared = [shared_parser()]
    parser = configure_parser(__import__("argparse").ArgumentParser(parents=shared))
    args = parser.parse_args(
        [
            "in.jsonl",
            "--out",
            "o.jsonl",
            "--base-url",
            "http://127.0.0.1:1/v1",
            "--base-url",
            "http://127.0.0.1:2/v1",
            "--model-name",
            "m",
            "--budget",
            "8",
        ]
    )
    spec = spec_from_args(args)
    assert (spec.kind, spec.base_urls, spec.options) == (
        "http",
        ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"),
        {},  # the scorer keeps its own retry policy: the gate does not retry (issue 50)
    )
    assert spec.api_key_env is None  # no key unless --api-key-env names its variable


def test_cli_reports_a_missing_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(tmp_path / "absent.jsonl"), "--out", str(tmp_path / "o.jsonl")])
    assert code == 2
    assert "no such input file" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_cli_runs_an_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_input(tmp_path / "in.jsonl")
    monkeypatch.setattr(ScorerSpec, "build", lambda self: KeywordScorer())
    code = main(
        [
            str(tmp_path / "in.jsonl"),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--budget",
            "6",
            "--no-progress",
        ]
    )
    assert code == 1  # the two bad input lines were skipped: a script must be able to tell
    err = capsys.readouterr().err
    assert (
        "audit: 3 records audited this run (0 already done, 2 bad input lines written as "
        "errors)" in err
    )
    verdicts = [line["groundedness"]["verdict"] for line in iter_lines(tmp_path / "o.jsonl")]
    bad, unsure = verdicts.count("unsupported"), verdicts.count("uncertain")
    assert f"{bad} of 3 answers unsupported ({100 * bad / 3:.1f}%), {unsure} uncertain" in err
    assert "camab audit: 2 bad input lines, written as error lines (fix them and run again" in err
    assert "--retry-errors" not in err  # no record failed: retrying would redo nothing
    assert sorted(lines_by_id(tmp_path / "o.jsonl")) == ["dune", "paris", "zebra"]


def test_cli_exit_status_says_whether_every_record_is_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = write_input(tmp_path / "clean.jsonl", [RECORDS[0], RECORDS[1]])
    args = ["--budget", "4", "--no-progress"]
    monkeypatch.setattr(ScorerSpec, "build", lambda self: KeywordScorer())
    assert main([str(clean), "--out", str(tmp_path / "ok.jsonl"), *args]) == 0
    assert "camab audit:" not in capsys.readouterr().err
    monkeypatch.setattr(ScorerSpec, "build", lambda self: FailingScorer())
    assert main([str(clean), "--out", str(tmp_path / "bad.jsonl"), *args]) == 1
    err = capsys.readouterr().err
    assert "camab audit: 2 records in error (--retry-errors redoes them)" in err
    assert "camab audit: 0 input lines" not in err and "fix them" not in err


class TooLongScorer(KeywordScorer):
    """Refuses every request as vLLM does a prompt over its context (recorded 400 body)."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        from camab_rag.scorers.transport import context_too_long

        fixture = Path(__file__).resolve().parents[3] / "tests/fixtures/echo/context_too_long.json"
        body = json.loads(fixture.read_text("utf-8"))["cases"][0]["body"]
        error = context_too_long(body["error"]["message"])
        assert error is not None
        raise error


def test_cli_never_suggests_retrying_records_too_long_for_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = write_input(tmp_path / "clean.jsonl", [RECORDS[0], RECORDS[1]])
    monkeypatch.setattr(ScorerSpec, "build", lambda self: TooLongScorer())
    assert main([str(clean), "--out", str(tmp_path / "o.jsonl"), "--budget", "4"]) == 1
    err = capsys.readouterr().err
    assert "more than the model's limit 2048" in (tmp_path / "o.jsonl").read_text("utf-8")
    assert "camab audit: 2 records in error (shorten them: a retry fails too)" in err
    assert "--retry-errors" not in err


# ---------------------------------------------------------------- the real model
@pytest.mark.model
def test_real_audit_with_the_embedded_model(tmp_path: Path, smollm2_scorer: Any) -> None:
    write_input(tmp_path / "in.jsonl", [RECORDS[0], RECORDS[1]])
    config = AuditConfig(budget=4, granularity="chunk")
    summary = run(tmp_path, smollm2_scorer, config=config, concurrency=2)
    lines = lines_by_id(tmp_path / "out.jsonl")
    assert summary["records"]["ok"] == 2
    for line in lines.values():
        attribution = line["attribution"]
        assert 1 <= attribution["n_queries"] <= 4
        assert len(attribution["segments"]) == 2  # one per document
        assert line["cost"]["prompt_tokens"] > 20 * line["cost"]["queries"]
        assert np.all(np.isfinite(attribution["scores"]))
        assert len(attribution["scores"]) == len(attribution["segments"])
        assert np.isfinite(line["groundedness"]["context_gain"])
        assert line["citations"][0]["statement"] == attribution["statements"][0]["text"]
    # the model relies on the Paris document for "Paris.", not on the banana one
    paris = lines["paris"]["attribution"]["document_scores"]
    assert paris[1] > paris[0]
    assert summary["cost"]["batching"]["model_calls"] >= 1


def test_the_gate_around_the_real_http_scorer_rides_out_a_429_storm() -> None:
    """The real HTTP scorer (its own retries off) against a scripted 127.0.0.1 endpoint."""
    from test_http_faults import REQUEST, FaultyServer, assert_good

    from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

    server = FaultyServer()
    try:
        storm = ("status", 429, {"Retry-After": "0.2"}, {"error": {"message": "slow down"}})
        server.script.extend([storm] * 6)
        scorer = OpenAICompletionsScorer(server.base_url, "smollm2", max_retries=0, timeout=10)
        gate = RateGate(limit=4, max_retries=10, backoff_base=0.01)
        gated = GatedScorer(scorer, gate)

        async def many() -> list[list[ResponseLogprobs]]:
            return list(await asyncio.gather(*(gated.ascore([REQUEST]) for _ in range(10))))

        started = time.monotonic()
        results = asyncio.run(many())
        assert len(results) == 10
        for [result] in results:
            assert_good(result)
        assert gate.stats.transient_errors == 6
        assert gate.stats.min_limit < 4  # the storm lowered everyone's concurrency
        assert server.max_in_flight <= 4
        assert time.monotonic() - started >= 0.2  # Retry-After was honoured by all
    finally:
        server.close()


def test_nothing_left_to_do_builds_no_scorer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_input(tmp_path / "in.jsonl")
    run(tmp_path)

    def no_model(self: ScorerSpec) -> Any:
        raise AssertionError("the model was loaded with nothing to audit")

    monkeypatch.setattr(ScorerSpec, "build", no_model)
    summary = audit(
        tmp_path / "in.jsonl", tmp_path / "out.jsonl", spec=ScorerSpec(), progress=False
    )
    assert summary["records"]["skipped_already_done"] == 3


def test_the_scorer_wrappers_report_the_model_they_wrap_not_themselves() -> None:
    from camab_rag.scorers.base import scored_by

    class Named(KeywordScorer):
        model_name = "smollm2"

    batcher = MicroBatcher(Named(), max_batch=4)
    assert scored_by(batcher).model == "smollm2"
    # the HTTP path's rate gate too (fresh-user review 10: "GatedScorer" in the output)
    assert scored_by(GatedScorer(Named(), RateGate(limit=2))).model == "smollm2"


def test_lines_are_written_in_input_order(tmp_path: Path) -> None:
    """Fresh-user review 12: bad lines were written as soon as they were read and results
    as their records finished, so OUTPUT listed bad lines first and results shuffled. A
    slow first record (six documents, the whole budget) and two bad lines: OUTPUT follows
    INPUT, each line keeping its ``line``, and a re-run appends what it adds."""
    slow = {
        "id": "slow",
        "question": "Who wrote Dune?",
        "documents": [f"Fact {k}: Frank Herbert wrote page {k}." for k in range(6)],
        "response": "Frank Herbert wrote Dune.",
    }
    write_input(tmp_path / "in.jsonl", [slow, *RECORDS])
    run(tmp_path, concurrency=4)
    out = tmp_path / "out.jsonl"
    written = [(line["line"], line["id"]) for line in iter_all_lines(out)]
    assert [number for number, _ in written] == [1, 2, 3, 4, 5, 6]
    assert [rid for _, rid in written][:3] == ["slow", "dune", "paris"]
    with (tmp_path / "in.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({**RECORDS[1], "id": "late"}) + "\n")
    run(tmp_path, concurrency=4)
    assert [line["line"] for line in iter_all_lines(out)] == [1, 2, 3, 4, 5, 6, 7]


def test_block_on_facts_reads_a_reworded_answer_as_uncertain(tmp_path: Path) -> None:
    """``--block-on facts`` (the default, issue 48): an answer whose only unchecked word is
    reworded ("authored") is ``uncertain``, as ``GroundednessFilter()`` reads it;
    ``--block-on any`` (the stricter rule) ``unsupported``."""
    reworded = {**RECORDS[0], "response": "Frank Herbert authored the book Dune."}
    verdicts = {}
    for block_on in ("any", "facts"):
        write_input(tmp_path / "in.jsonl", [reworded])
        (tmp_path / "out.jsonl").unlink(missing_ok=True)
        run(tmp_path, config=AuditConfig(budget=4, block_on=block_on))
        verdicts[block_on] = lines_by_id(tmp_path / "out.jsonl")["dune"]["groundedness"]
    assert verdicts["any"]["verdict"] == "unsupported"
    assert verdicts["facts"]["verdict"] == "uncertain"
    assert verdicts["facts"]["unchecked_facts"] == []
    parser = configure_parser(__import__("argparse").ArgumentParser(parents=[shared_parser()]))
    args = parser.parse_args(["in.jsonl", "--out", "o.jsonl", "--block-on", "any"])
    assert args.block_on == "any"
    assert parser.parse_args(["in.jsonl", "--out", "o.jsonl"]).block_on == "facts"
    assert AuditConfig().block_on == "facts"
    with pytest.raises(InputError, match="block_on must be 'any' or 'facts'"):
        AuditConfig(block_on="names")
