"""Issue 50 item 7: property-based tests of the CLI's JSONL reader and of the commands on
top of it. Arbitrary Unicode (lone surrogates, control characters), deep nesting, huge
lines, invalid bytes and wrong types: every non-blank line becomes a record or a named
ASCII error, ``camab audit`` and ``camab attribute`` account for each, and nothing is
written outside ``--out`` and its summary. Bounded: a few dozen examples each."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fakes import KeywordScorer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from camab_cli import cli, records
from camab_cli.audit import ScorerSpec
from camab_cli.audit.cli import main as audit_main
from camab_cli.audit.outputs import iter_lines
from camab_cli.records import Record, RecordError, read_records

LIMIT = 4000  # MAX_LINE_BYTES in these tests: a "huge" line stays cheap
CHARS = st.one_of(
    st.characters(),
    st.characters(categories=["Cs", "Cc", "Zl", "Zp", "Co"]),  # surrogates, controls
    st.sampled_from(["\x00", "\u2028", "\x85", "\ufeff", '"', "\\"]),
)
TEXT = st.one_of(st.text(CHARS, max_size=30), st.sampled_from(["Frank Herbert.", "Dune"]))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=8,
)
DOCUMENTS = st.one_of(
    st.lists(st.one_of(TEXT, st.fixed_dictionaries({"text": TEXT}, optional={"title": VALUES})))
    .filter(bool)
    .map(lambda docs: docs[:4]),
    VALUES,
)
RECORDS = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(TEXT, st.integers(), VALUES),
        "question": st.one_of(TEXT, VALUES),
        "documents": DOCUMENTS,
        "response": st.one_of(TEXT, VALUES),
        "extra": VALUES,
    },
)


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


TEXT_LINES = st.one_of(
    RECORDS.map(json.dumps),  # ensure_ascii: a lone surrogate travels as \udXXX
    VALUES.map(json.dumps),
    st.integers(min_value=1, max_value=3000).map(_deep),
    st.just(_deep(200_000)),
    st.integers(min_value=LIMIT, max_value=3 * LIMIT).map(lambda n: '{"q": "' + "x" * n + '"}'),
    st.just('{"n": ' + "7" * 5000 + "}"),
)
LINES = st.one_of(
    TEXT_LINES.map(str.encode),
    st.binary(max_size=60).map(lambda raw: raw.replace(b"\n", b" ")),  # any bytes
)
GOOD = json.dumps(
    {
        "id": "first",
        "question": "Who wrote Dune?",
        "documents": ["Dune is a novel by Frank Herbert.", "Paris is in France."],
        "response": "Frank Herbert wrote Dune.",
    }
)


def write_lines(path: Path, lines: list[bytes]) -> int:
    """Write a good first line then ``lines``; returns how many lines are not blank."""
    encoded = [GOOD.encode(), *lines]
    path.write_bytes(b"\n".join(encoded) + b"\n")
    return sum(1 for raw in encoded if not _blank(raw))


def _blank(raw: bytes) -> bool:
    try:
        return not raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return False


def _check_reader(path: Path, expected: int) -> list[Record | RecordError]:
    items = [item for _, item in read_records(path)]
    assert len(items) == expected
    for item in items:
        if isinstance(item, RecordError):
            assert str(item).isascii() and (item.id is None or item.id.isascii())
        else:
            json.dumps(item.to_dict(), ensure_ascii=False).encode("utf-8")  # writable
    return items


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINES, max_size=6))
def test_every_line_is_a_record_or_a_named_ascii_error(lines: list[bytes]) -> None:
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as tmp:
        patch.setattr(records, "MAX_LINE_BYTES", LIMIT)
        path = Path(tmp) / "in.jsonl"
        _check_reader(path, write_lines(path, lines))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINES, min_size=1, max_size=5))
def test_audit_and_attribute_account_for_every_line_and_write_only_their_output(
    lines: list[bytes],
) -> None:
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as tmp:
        patch.setattr(records, "MAX_LINE_BYTES", LIMIT)
        patch.setattr(ScorerSpec, "build", lambda self: KeywordScorer())
        patch.setattr(cli, "build_scorer", lambda args, progress: KeywordScorer())
        folder = Path(tmp)
        source = folder / "in.jsonl"
        expected = write_lines(source, lines)
        items = _check_reader(source, expected)
        numbers = [line for line, _ in read_records(source)]
        out = folder / "out.jsonl"
        code = audit_main([str(source), "--out", str(out), "--budget", "3", "--no-progress"])
        assert code in (0, 1)
        summary: dict[str, Any] = json.loads((folder / "out.jsonl.summary.json").read_text())
        results = [line["line"] for line in iter_lines(out)]
        bad = [b["line"] for b in summary["bad_records"]]
        assert sorted(results + bad) == numbers  # each line once, result or named error
        assert sorted(p.name for p in folder.iterdir()) == [
            "in.jsonl",
            "out.jsonl",
            "out.jsonl.summary.json",
        ]
        if all(isinstance(item, RecordError) for item in items):
            return
        attributed = folder / "attributed.jsonl"
        argv = ["attribute", str(source), "--format", "json", "--out", str(attributed)]
        assert cli.main([*argv, "--budget", "3", "-q"]) in (0, 1)
        text = attributed.read_bytes()
        single = len(numbers) == 1  # one record: one indented object
        objects = [json.loads(text)] if single else [json.loads(x) for x in text.splitlines()]
        assert [o["where"] for o in objects] == [f"{source}:{n}" for n in numbers]
        assert {p.name for p in folder.iterdir()} == {
            "in.jsonl",
            "out.jsonl",
            "out.jsonl.summary.json",
            "attributed.jsonl",
        }
