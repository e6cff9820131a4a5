"""Issue 50, ``camab audit``: every input line ends as a result line or a named bad line
whatever its bytes, nothing finished is lost on Ctrl-C, a dead server fails each record
within the scorer's retry budget, and no command destroys a file it did not write."""

from __future__ import annotations

import json
import os
import signal
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from fakes import KeywordScorer
from test_hostile_input import GOOD, HOSTILE, SURROGATE, dumps, hostile_file, write

from camab_cli.audit import AuditConfig, ScorerSpec, audit, lines
from camab_cli.audit.cli import main
from camab_cli.audit.outputs import iter_lines
from camab_rag.errors import InputError
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest


def run_cli(tmp_path: Path, *extra: str, scorer: Any = None) -> int:
    return main(
        [
            str(tmp_path / "in.jsonl"),
            *("--out", str(tmp_path / "out.jsonl"), "--budget", "4", "--no-progress"),
            *extra,
        ]
    )


@pytest.fixture
def keyword(monkeypatch: pytest.MonkeyPatch) -> KeywordScorer:
    scorer = KeywordScorer()
    monkeypatch.setattr(ScorerSpec, "build", lambda self: scorer)
    return scorer


def out_lines(tmp_path: Path) -> list[dict[str, Any]]:
    """Every line of ``--out``, as written (the file alone must account for the input)."""
    raw = (tmp_path / "out.jsonl").read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.splitlines()]


def input_lines(path: Path) -> list[int]:
    """The numbers of the non-blank lines of an input file."""
    return [n for n, raw in enumerate(path.read_bytes().split(b"\n"), 1) if raw.strip()]


def summary_of(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / "out.jsonl.summary.json").read_text())
    return data


def test_the_issue_repro_a_surrogate_at_line_10_of_30(
    tmp_path: Path, keyword: KeywordScorer, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: the fallback error record failed an assert, the run crashed after 8 lines
    and no summary was written, run after run."""
    rows = [dumps({**GOOD, "id": f"r{i}"}) for i in range(1, 31)]
    rows[9] = dumps({"id": "b", "question": f"Q {SURROGATE}", "documents": ["d"], "response": "r"})
    write(tmp_path / "in.jsonl", rows)
    assert run_cli(tmp_path) == 1
    written = list(iter_lines(tmp_path / "out.jsonl"))
    assert len(written) == 29 and all(line["status"] == "ok" for line in written)
    summary = summary_of(tmp_path)
    assert summary["records"]["bad_input_lines"] == 1
    assert summary["bad_records"] == [
        {
            "line": 10,
            "field": "question",
            "error": "line 10: question holds a lone surrogate U+DFFF at character 2: the text "
            "is not valid Unicode (often a broken \\u escape in JSON); fix or remove that "
            "character",
        }
    ]
    assert "audit: bad input line 10: question holds a lone surrogate" in capsys.readouterr().err
    every = out_lines(tmp_path)
    assert sorted(line["line"] for line in every) == list(range(1, 31))
    [bad] = [line for line in every if line["status"] != "ok"]
    assert bad == {
        "camab_audit": 1,
        "id": "b",
        "line": 10,
        "status": "error",
        "error": summary["bad_records"][0]["error"],
        "bad_input": True,
        "field": "question",
        "attribution": bad["attribution"],
        "cost": {"queries": 0, "prompt_tokens": 0, "wall_time_s": 0.0},
    }
    assert bad["attribution"]["status"] == "error"
    assert run_cli(tmp_path) == 1  # a re-run writes nothing twice and counts the same
    assert out_lines(tmp_path) == every
    assert summary_of(tmp_path)["records"]["bad_input_lines"] == 1
    assert summary_of(tmp_path)["records"]["skipped_already_done"] == 29
    assert summary_of(tmp_path)["records"]["bad_input_lines_this_run"] == 0


def test_every_hostile_line_is_accounted_for(tmp_path: Path, keyword: KeywordScorer) -> None:
    hostile_file(tmp_path / "in.jsonl")
    assert run_cli(tmp_path) == 1
    summary = summary_of(tmp_path)
    done = {line["line"] for line in iter_lines(tmp_path / "out.jsonl")}
    bad = {b["line"] for b in summary["bad_records"]}
    assert done == {1, len(HOSTILE) + 2} and not done & bad
    assert done | bad == set(range(1, len(HOSTILE) + 3))
    assert all(b["error"].isascii() for b in summary["bad_records"])
    every = out_lines(tmp_path)  # --out alone: one line per input line, the bad ones named
    assert sorted(line["line"] for line in every) == input_lines(tmp_path / "in.jsonl")
    named = {line["line"]: line for line in every if line.get("bad_input")}
    assert set(named) == bad and all(line["status"] == "error" for line in named.values())
    assert [named[b["line"]]["error"] for b in summary["bad_records"]] == [
        b["error"] for b in summary["bad_records"]
    ]
    assert summary["records"]["bad_input_lines"] == len(bad) == len(HOSTILE)


def test_a_line_that_cannot_be_written_becomes_an_error_line(
    tmp_path: Path, keyword: KeywordScorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault injection (no reader lets a surrogate through): on main the fallback error
    record failed an assert and the run crashed, no summary."""
    result_line = lines.result_line

    def poisoned(record: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        line = result_line(record, *args, **kwargs)
        if record.id == "r2":
            line["citations"] = [{"statement": SURROGATE}]
        return line

    monkeypatch.setattr(lines, "result_line", poisoned)
    write(tmp_path / "in.jsonl", [dumps({**GOOD, "id": f"r{i}"}) for i in range(1, 4)])
    assert run_cli(tmp_path) == 1
    by_id = {line["id"]: line for line in iter_lines(tmp_path / "out.jsonl")}
    assert [by_id[i]["status"] for i in ("r1", "r2", "r3")] == ["ok", "error", "ok"]
    assert by_id["r2"]["error"].startswith(
        "the result could not be written (UnicodeEncodeError: 'utf-8' codec can't encode "
        "character '\\udfff'"
    )
    assert summary_of(tmp_path)["records"]["error"] == 1


class InterruptingScorer(KeywordScorer):
    """Sends this process a real SIGINT (Ctrl-C) on its ``after``-th call."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after
        self.n = 0

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.n += 1
        if self.n == self.after:
            os.kill(os.getpid(), signal.SIGINT)
        return super().score(requests)


def test_ctrl_c_keeps_what_is_done_writes_the_summary_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main the summary was lost on Ctrl-C and the exit status was a traceback's."""
    hostile_file(tmp_path / "in.jsonl")
    more = [dumps({**GOOD, "id": f"m{i}"}) for i in range(20)]
    with (tmp_path / "in.jsonl").open("a") as handle:
        handle.write("\n".join(more) + "\n")
    total = len(HOSTILE) + 2 + len(more)
    monkeypatch.setattr(ScorerSpec, "build", lambda self: InterruptingScorer(after=10))
    assert run_cli(tmp_path, "--concurrency", "1") == 130
    assert "camab audit: interrupted: the records done are in" in capsys.readouterr().err
    first = summary_of(tmp_path)
    assert first["interrupted"] is True
    done_first = {line["line"] for line in iter_lines(tmp_path / "out.jsonl")}
    assert 1 <= len(done_first) < len(more) + 2
    lines_first = out_lines(tmp_path)  # the records done and the bad lines read so far
    assert len({line["line"] for line in lines_first}) == len(lines_first) < total
    monkeypatch.setattr(ScorerSpec, "build", lambda self: KeywordScorer())
    assert run_cli(tmp_path, "--concurrency", "1") == 1  # resumed: the bad lines remain
    second = summary_of(tmp_path)
    assert second["interrupted"] is False
    assert second["records"]["skipped_already_done"] == len(done_first)
    first_bad = len(lines_first) - len(done_first)
    assert second["records"]["bad_input_lines_this_run"] == len(HOSTILE) - first_bad
    written = [line["line"] for line in iter_lines(tmp_path / "out.jsonl")]
    assert len(written) == len(set(written)) == len(more) + 2  # none lost, none twice
    bad = {b["line"] for b in second["bad_records"]}
    assert set(written) | bad == set(range(1, total + 1)) and not set(written) & bad
    every = [line["line"] for line in out_lines(tmp_path)]  # --out alone, after the resume
    assert sorted(every) == list(range(1, total + 1))  # each input line exactly once
    assert second["records"]["bad_input_lines"] == len(HOSTILE)


def test_bad_lines_resume_by_line_and_id_torn_or_fixed(
    tmp_path: Path, keyword: KeywordScorer
) -> None:
    """A repeated id's error line does not hide the first record; a torn bad line is cut
    and written again, once; a bad line fixed since is audited and leaves the summary."""
    rows = [dumps(GOOD), dumps({**GOOD, "question": 7}), "{oops", dumps(GOOD)]
    write(tmp_path / "in.jsonl", rows)
    assert run_cli(tmp_path) == 1
    every = out_lines(tmp_path)
    assert [(x["line"], x["id"], x.get("field")) for x in every if x.get("bad_input")] == [
        (2, "g", "question"),
        (3, None, None),
        (4, "g", "id"),
    ]
    summary = summary_of(tmp_path)
    assert summary["records"]["ok"] == 1 and summary["records"]["bad_input_lines"] == 3
    out = tmp_path / "out.jsonl"
    raw = out.read_bytes().splitlines(keepends=True)
    [idless] = [x for x in raw if b'"id": null' in x]  # line 3's error line, torn last
    out.write_bytes(b"".join(x for x in raw if x != idless) + idless[:30])
    assert run_cli(tmp_path) == 1
    assert [x["line"] for x in out_lines(tmp_path)] == [1, 2, 3, 4]  # in order
    assert out_lines(tmp_path)[2] == json.loads(idless)  # written again, once
    again = summary_of(tmp_path)["records"]
    assert (again["bad_input_lines_this_run"], again["audited_this_run"]) == (1, 0)
    rows[2] = dumps({**GOOD, "id": "fixed"})
    write(tmp_path / "in.jsonl", rows)
    assert run_cli(tmp_path) == 1  # lines 2 and 4 are still bad
    fixed = summary_of(tmp_path)
    assert (fixed["records"]["ok"], fixed["records"]["bad_input_lines"]) == (2, 2)
    assert [b["line"] for b in fixed["bad_records"]] == [2, 4]
    # the fixed line's record replaced its error line: one line per input line, in order
    fixed_lines = out_lines(tmp_path)
    assert [(x["line"], x["status"], x.get("bad_input")) for x in fixed_lines] == [
        (1, "ok", None),
        (2, "error", True),
        (3, "ok", None),
        (4, "error", True),
    ]


def test_a_rerun_after_fixing_a_bad_line_keeps_one_line_per_input_in_order(
    tmp_path: Path, keyword: KeywordScorer
) -> None:
    """Review 7, finding 11: after fixing input line 2 (an empty answer) and running again
    as the message says, the output held 13 lines for 12 inputs, line 2's new result
    appended last after its old error line."""
    rows = [dumps({**GOOD, "id": f"r{n}"}) for n in range(1, 13)]
    rows[1] = dumps({**GOOD, "id": "r2", "response": ""})
    write(tmp_path / "in.jsonl", rows)
    assert run_cli(tmp_path) == 1
    first = out_lines(tmp_path)
    assert [x["line"] for x in first] == list(range(1, 13))
    assert first[1]["bad_input"] is True
    rows[1] = dumps({**GOOD, "id": "r2"})  # fixed
    write(tmp_path / "in.jsonl", rows)
    assert run_cli(tmp_path) == 0
    again = out_lines(tmp_path)
    assert [(x["line"], x["id"], x["status"]) for x in again] == [
        (n, f"r{n}", "ok") for n in range(1, 13)
    ]
    assert again[0] == first[0]  # the lines already done are kept as they were
    records = summary_of(tmp_path)["records"]
    assert (records["in_output"], records["ok"], records["bad_input_lines"]) == (12, 12, 0)
    assert (records["audited_this_run"], records["skipped_already_done"]) == (1, 11)


def test_a_retried_record_replaces_its_error_line_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--retry-errors``: the record's new line takes its old error line's place."""
    failing = DownFor("Truly")
    monkeypatch.setattr(ScorerSpec, "build", lambda self: failing)
    rows = [dumps({**GOOD, "id": f"r{n}"}) for n in range(1, 4)]
    rows[1] = dumps({**GOOD, "id": "r2", "response": "Frank Herbert wrote Dune. Truly."})
    write(tmp_path / "in.jsonl", rows)
    assert run_cli(tmp_path) == 1
    assert [x["status"] for x in out_lines(tmp_path)] == ["ok", "error", "ok"]
    failing.down = False
    assert run_cli(tmp_path, "--retry-errors") == 0
    assert [(x["id"], x["status"]) for x in out_lines(tmp_path)] == [
        ("r1", "ok"),
        ("r2", "ok"),
        ("r3", "ok"),
    ]


class DownFor(KeywordScorer):
    """Fails every request whose answer holds ``word`` while ``down`` is set."""

    def __init__(self, word: str) -> None:
        super().__init__()
        self.word = word
        self.down = True

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        if self.down and any(self.word in r.response for r in requests):
            raise RuntimeError("the model is down for a moment")
        return super().score(requests)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # closed again: nothing listens there


def test_a_dead_server_stops_the_audit_once_within_the_scorers_retry_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real closed port on 127.0.0.1. On main the audit's own layer retried 8 times with
    backoff up to 30 s on top of nothing (1 record: 75 s; 3 records: 452 s); then each
    record failed the same way, summarised as rate limiting (review 6). Now the first
    record's refused connection, after the scorer's one retry policy, stops the run."""
    write(tmp_path / "in.jsonl", [dumps({**GOOD, "id": f"r{i}"}) for i in range(3)])
    url = f"http://127.0.0.1:{closed_port()}/v1"
    assert run_cli(tmp_path, "--base-url", url, "--model-name", "m") == 2
    summary = summary_of(tmp_path)
    assert "retry budget of 3 s spent" in summary["stopped"]  # the scorer's one policy
    assert "Connection refused" in summary["stopped"]
    assert "check --base-url" in summary["stopped"]
    assert (summary["cost"]["gate"] or {}).get("retries", 0) == 0  # no second retry layer
    err = capsys.readouterr().err
    assert err.count("nothing accepts connections there") == 1


# ------------------------------------------------------------------------ files
def test_summary_may_not_be_the_output_or_the_input(
    tmp_path: Path, keyword: KeywordScorer, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main --summary equal to --out replaced the results with the summary."""
    write(tmp_path / "in.jsonl", [dumps(GOOD)])
    out = tmp_path / "out.jsonl"
    assert run_cli(tmp_path, "--summary", str(out)) == 2
    assert "is the --out file: the summary would replace the results" in capsys.readouterr().err
    assert not out.exists()
    before = (tmp_path / "in.jsonl").read_bytes()
    assert run_cli(tmp_path, "--summary", str(tmp_path / "in.jsonl")) == 2
    assert "is the input file" in capsys.readouterr().err
    assert (tmp_path / "in.jsonl").read_bytes() == before
    assert run_cli(tmp_path) == 0  # and the run then works, summary beside the output
    assert run_cli(tmp_path, "--summary", str(tmp_path / "." / "out.jsonl")) == 2


def test_a_missing_summary_directory_is_refused_before_the_run(
    tmp_path: Path, keyword: KeywordScorer, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: a traceback after the whole run, the summary lost."""
    write(tmp_path / "in.jsonl", [dumps(GOOD)])
    missing = tmp_path / "nope" / "summary.json"
    assert run_cli(tmp_path, "--summary", str(missing)) == 2
    assert f"the directory {missing.parent} does not exist" in capsys.readouterr().err
    assert keyword.calls == [] and not (tmp_path / "out.jsonl").exists()


def test_a_user_jsonl_with_id_and_status_is_never_cut(
    tmp_path: Path, keyword: KeywordScorer, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main its last line (no newline) was taken for a torn audit line and deleted."""
    write(tmp_path / "in.jsonl", [dumps(GOOD)])
    mine = tmp_path / "out.jsonl"
    content = b'{"id": "a", "status": "ok"}\n{"id": "b", "status": "ok", "note": "mine"}'
    mine.write_bytes(content)
    assert run_cli(tmp_path) == 2
    assert "line 1 is not a camab audit result line" in capsys.readouterr().err
    assert mine.read_bytes() == content


def test_an_output_written_before_the_marker_is_still_resumed(
    tmp_path: Path, keyword: KeywordScorer
) -> None:
    write(tmp_path / "in.jsonl", [dumps(GOOD), dumps({**GOOD, "id": "g2"})])
    write(tmp_path / "one.jsonl", [dumps(GOOD)])
    audit(tmp_path / "one.jsonl", tmp_path / "out.jsonl", scorer=KeywordScorer(), progress=False)
    old = [json.loads(x) for x in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    assert old[0].pop(lines.MARKER) == 1
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(x) + "\n" for x in old))
    assert run_cli(tmp_path) == 0
    assert [line["id"] for line in iter_lines(tmp_path / "out.jsonl")] == ["g", "g2"]
    assert summary_of(tmp_path)["records"]["skipped_already_done"] == 1


def test_a_negative_seed_is_refused(
    tmp_path: Path, keyword: KeywordScorer, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main `--seed -1` wrote every record as an error."""
    write(tmp_path / "in.jsonl", [dumps(GOOD)])
    with pytest.raises(SystemExit) as exit_info:
        run_cli(tmp_path, "--seed", "-1")
    assert exit_info.value.code == 2
    assert "argument --seed: must be at least 0, got -1" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()
    with pytest.raises(InputError, match="seed"):
        AuditConfig(seed=-1)
