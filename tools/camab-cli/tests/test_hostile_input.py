"""Issue 50: every input line ends as a result or a named error line, whatever its bytes;
nothing finished is lost on Ctrl-C (``camab attribute`` and the shared JSONL reader)."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from fakes import KeywordScorer

from camab_cli import cli, records
from camab_cli.records import Record, RecordError, load_rows, read_records
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest

GOOD = {
    "id": "g",
    "question": "Who wrote Dune?",
    "documents": ["Dune is a novel by Frank Herbert.", "Paris is in France."],
    "response": "Frank Herbert wrote Dune.",
}
SURROGATE = "\udfff"
DEEP = "[" * 200_000 + "]" * 200_000


def nest(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def dumps(data: Any) -> str:
    return json.dumps(data)  # ensure_ascii: a lone surrogate is written as \udfff


def write(path: Path, lines: Sequence[str | bytes]) -> Path:
    path.write_bytes(b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines))
    return path


HOSTILE: list[tuple[str | bytes, str, str | None]] = [
    # (line, what its error says, the field it names: None when it names none)
    (dumps({**GOOD, "id": "s1", "question": f"Q {SURROGATE}"}), "lone surrogate", "question"),
    (dumps({**GOOD, "id": "s2", "response": f"r{SURROGATE}"}), "lone surrogate", "response"),
    (dumps({**GOOD, "id": f"b{SURROGATE}"}), "lone surrogate U+DFFF at character 1", "id"),
    (
        dumps({**GOOD, "id": "s4", "documents": [{"text": "x", "title": f"T{SURROGATE}"}]}),
        "lone surrogate",
        "documents[0].title",
    ),
    (
        dumps({**GOOD, "id": "s5", "documents": ["ok", f"d{SURROGATE}"]}),
        "surrogate",
        "documents[1]",
    ),
    (
        dumps({**GOOD, "id": "n1", "question": "Q\x00"}),
        "a NUL character (U+0000) at character 1",
        "question",
    ),
    (DEEP, "nested too deeply", None),
    (
        dumps({**GOOD, "id": "d2", "meta": nest(120)}),
        "meta is nested more than 100 levels",
        None,
    ),
    (b'{"id": "u", "question": "caf\xe9"}', "not valid UTF-8", None),
    ('{"id": "big", "n": ' + "9" * 5000 + "}", "not readable JSON", None),
    (dumps({**GOOD, "id": "t1", "question": ["a"]}), "must be a string, got a list", "question"),
    (dumps([1, 2]), "must be a JSON object, got a list", None),
    ("null", "must be a JSON object, got null", None),
]


def hostile_file(path: Path) -> Path:
    good2 = {**GOOD, "id": "g2", "response": "Paris is in France."}
    return write(path, [dumps(GOOD), *(line for line, _, _ in HOSTILE), dumps(good2)])


def test_the_reader_names_every_hostile_line_and_reads_on(tmp_path: Path) -> None:
    """On main the deep line was a raw RecursionError (0 lines read), the long integer a raw
    ValueError, and the surrogates passed as records no file could hold."""
    results = list(read_records(hostile_file(tmp_path / "in.jsonl")))
    assert [line for line, _ in results] == list(range(1, len(HOSTILE) + 3))
    first, *bad, last = (item for _, item in results)
    assert isinstance(first, Record) and isinstance(last, Record) and last.id == "g2"
    for error, (_, says, field) in zip(bad, HOSTILE):
        assert isinstance(error, RecordError), error
        assert says in error.message
        assert str(error).isascii()
        if field is not None:
            assert error.field == field and field in error.message
    assert bad[2].id == "b\\udfff"  # named, escaped


def test_a_line_over_the_size_limit_is_an_error_and_the_next_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "MAX_LINE_BYTES", 1000)
    huge = dumps({**GOOD, "id": "huge", "response": "x " * 3000})
    path = write(tmp_path / "in.jsonl", [huge, dumps(GOOD)])
    (_, error), (_, record) = list(read_records(path))
    assert isinstance(error, RecordError) and isinstance(record, Record)
    assert error.message == f"the line is {len(huge) + 1} bytes long, over the limit of 1000"
    [error, record] = load_rows(str(path))  # camab attribute's reader too
    assert isinstance(error, RecordError) and error.where == f"{path}:1"


# ------------------------------------------------------------------ camab attribute
def keyword(monkeypatch: pytest.MonkeyPatch, scorer: Any = None) -> Any:
    scorer = scorer if scorer is not None else KeywordScorer()
    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: scorer)
    return scorer


def test_attribute_accounts_for_every_hostile_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: a raw RecursionError, 0 lines written (and a raw UnicodeEncodeError for a
    surrogate in an id or title)."""
    keyword(monkeypatch)
    path = hostile_file(tmp_path / "in.jsonl")
    out = tmp_path / "out.jsonl"
    code = cli.main(["attribute", str(path), "--format", "json", "--out", str(out), "-q"])
    assert code == 1
    written = [json.loads(line) for line in out.read_bytes().splitlines()]
    assert [w["where"] for w in written] == [f"{path}:{n}" for n in range(1, len(HOSTILE) + 3)]
    assert [w["status"] for w in written] == ["ok", *["error"] * len(HOSTILE), "ok"]
    out.read_bytes().decode("utf-8")  # whole UTF-8: nothing unwritable got through
    err = capsys.readouterr().err
    assert f"{len(HOSTILE)} of {len(HOSTILE) + 2} records failed; the other 2 were written" in err
    assert f"{path}:4 (id 'b\\\\udfff'): id holds a lone surrogate" in err


class InterruptingScorer(KeywordScorer):
    """Sends this process a real SIGINT (Ctrl-C) when asked to score ``response``."""

    def __init__(self, response: str) -> None:
        super().__init__()
        self.response = response

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        if any(r.response == self.response for r in requests):
            os.kill(os.getpid(), signal.SIGINT)
        return super().score(requests)


@pytest.mark.parametrize("fmt", ["json", "html", "terminal"])
def test_ctrl_c_at_record_3_of_3_keeps_records_1_and_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
) -> None:
    """On main Ctrl-C at record 3 of 3 wrote nothing, though 1 and 2 were done."""
    keyword(monkeypatch, InterruptingScorer("Interrupt here."))
    rows = [
        {**GOOD, "id": "a"},
        {**GOOD, "id": "b", "response": "Paris is in France."},
        {**GOOD, "id": "c", "response": "Interrupt here."},
    ]
    path = write(tmp_path / "in.jsonl", [dumps(row) for row in rows])
    out = tmp_path / f"out.{fmt}"
    code = cli.main(["attribute", str(path), "--format", fmt, "--out", str(out), "-q"])
    assert code == 130
    text = out.read_text(encoding="utf-8")
    if fmt == "json":
        assert [json.loads(line)["id"] for line in text.splitlines()] == ["a", "b"]
    elif fmt == "html":
        assert text.count('<div class="camab-cite"') == 2
        assert text.rstrip().endswith("</body></html>")  # a whole page
    else:
        assert text.count("Frank Herbert") >= 1 and "Paris is in France." in text
    assert "interrupted at record 3 of 3: the 2 records before it are done" in (
        capsys.readouterr().err
    )


def test_a_record_that_cannot_be_written_becomes_an_error_and_the_rest_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fault injection: one rendering holds a lone surrogate (no reader lets one through)."""
    from camab_cli.output import RecordWriter

    keyword(monkeypatch)
    render = RecordWriter._render

    def poisoned(self: RecordWriter, outcome: Any) -> str:
        text = render(self, outcome)
        return text + SURROGATE if outcome.record.id == "b" else text

    monkeypatch.setattr(RecordWriter, "_render", poisoned)
    rows = [{**GOOD, "id": "a"}, {**GOOD, "id": "b"}, {**GOOD, "id": "c"}]
    path = write(tmp_path / "in.jsonl", [dumps(row) for row in rows])
    out = tmp_path / "out.jsonl"
    assert cli.main(["attribute", str(path), "--format", "json", "--out", str(out), "-q"]) == 1
    written = [json.loads(line) for line in out.read_bytes().splitlines()]
    assert [(w["id"], w["status"]) for w in written] == [("a", "ok"), ("b", "error"), ("c", "ok")]
    assert written[1]["error"].startswith("the result could not be written (UnicodeEncodeError")
    assert written[1]["error"].isascii()


def test_ctrl_c_then_resume_accounts_for_every_line_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main `camab attribute` had no resume, and Ctrl-C lost every finished record."""
    path = hostile_file(tmp_path / "in.jsonl")
    more = [{**GOOD, "id": f"m{i}"} for i in range(8)]
    more[5]["response"] = "Interrupt here."
    with path.open("a") as handle:
        handle.write("".join(dumps(row) + "\n" for row in more))
    total = len(HOSTILE) + 2 + len(more)
    out = tmp_path / "out.jsonl"
    argv = ["attribute", str(path), "--format", "json", "--out", str(out), "--resume", "-q"]
    keyword(monkeypatch, InterruptingScorer("Interrupt here."))
    assert cli.main([*argv, "--budget", "4"]) == 130
    first = [json.loads(line)["line"] for line in out.read_bytes().splitlines()]
    assert first == list(range(1, total - 2))  # everything before the interrupted record
    with out.open("ab") as handle:  # a crash in the middle of a write: a torn line of ours
        handle.write(b'{"camab_attribute": 1, "where": "x", "li')
    keyword(monkeypatch)
    capsys.readouterr()
    assert cli.main([*argv[:-1], "--budget", "4"]) == 0  # not quiet: says what it skips
    assert f"resuming: {len(first)} records already in" in capsys.readouterr().err
    objects = [json.loads(line) for line in out.read_bytes().splitlines()]
    assert [o["line"] for o in objects] == list(range(1, total + 1))  # each once, in order
    assert [o["status"] for o in objects].count("error") == len(HOSTILE)
    assert cli.main([*argv, "--budget", "4"]) == 0  # nothing left: nothing written
    assert len(out.read_bytes().splitlines()) == total


def test_resume_never_appends_to_a_file_it_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    keyword(monkeypatch)
    path = write(tmp_path / "in.jsonl", [dumps(GOOD)])
    mine = tmp_path / "mine.jsonl"
    content = b'{"line": 1, "id": "g", "status": "ok"}\n{"line": 2, "status": "ok"}'
    mine.write_bytes(content)
    argv = ["attribute", str(path), "--format", "json", "--out", str(mine), "--resume", "-q"]
    assert cli.main(argv) == 2
    assert "line 1 is not a line camab attribute --format json wrote" in capsys.readouterr().err
    assert mine.read_bytes() == content
    assert cli.main([*argv[:2], "--out", str(tmp_path / "o.md"), "--resume"]) == 2
    assert "--resume needs --out and --format json" in capsys.readouterr().err


def test_an_output_that_fails_stops_the_run_with_a_named_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A full disk or a closed pipe is no one record's fault: stop, say so, no traceback."""
    import io

    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    keyword(monkeypatch)
    monkeypatch.setattr("sys.stdout", ClosedPipe())
    path = write(tmp_path / "in.jsonl", [dumps({**GOOD, "id": f"r{i}"}) for i in range(3)])
    assert cli.main(["attribute", str(path), "--format", "json", "-q"]) == 1
    err = capsys.readouterr().err
    assert "cannot write to standard output ([Errno 32] Broken pipe); stopped at record 1" in err


def test_a_byte_order_mark_is_no_content_and_a_cut_line_names_its_column(tmp_path: Path) -> None:
    """Fresh-user review: a UTF-8 BOM from a Windows tool lost the first record ("Unexpected
    UTF-8 BOM"), and a line cut short named column 1 of a line 2 that is not there."""
    cut = '{"id": "broken", "question": "x"'
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + dumps(GOOD).encode() + b"\n" + cut.encode() + b"\n")
    (_, first), (_, second) = list(read_records(path))
    assert isinstance(first, Record) and first.question == GOOD["question"]
    assert isinstance(second, RecordError)
    assert second.message == f"not valid JSON (Expecting ',' delimiter, column {len(cut) + 1})"
    listed = tmp_path / "list.json"  # a whole-file JSON document with a BOM too
    listed.write_bytes(b"\xef\xbb\xbf" + json.dumps([GOOD, GOOD]).encode())
    assert [type(row) for row in load_rows(str(listed))] == [Record, Record]
