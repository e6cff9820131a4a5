"""The audit's output file: one JSON line per record, appended atomically, resumable.

Each result line is written with a single ``os.write`` of the whole line (newline
included) on a file opened with ``O_APPEND``, then flushed to disk with ``fsync``, so a
crash leaves at most one torn *last* line. Bad input lines get an error line too
(``"bad_input": true``), matched on resume by input line and id, so a re-run neither
repeats nor loses them. :meth:`OutputFile.open` truncates such a torn
tail (a last line that is not a whole line but starts as every result line does) before
appending, and collects the ids already done so a re-run skips them. At the end of a run
(not on Ctrl-C) :meth:`OutputFile.reorder` puts the file back in input order, one line
per input line, when a re-run appended lines out of order.

A file is never lost: an existing file is only appended to when every line of it is an
audit result line, exactly: it carries the marker ``"camab_audit": 1``
(:data:`~camab_cli.audit.lines.MARKER`), or (outputs written before the marker) it has
exactly the keys and types of a result line. A user's JSONL, even one whose lines all have
``id`` and ``status``, is refused untouched; only a torn last line that starts as our
lines do is cut. The file is locked (``flock``) while a run writes it, so a second
run on the same output stops at once instead of writing every record twice.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from camab_cli.audit.lines import MARKER, VERSION
from camab_rag.errors import InputError


@dataclass
class Recovery:
    """What :meth:`OutputFile.open` found in an existing output file."""

    done: dict[str, str] = field(default_factory=dict)  # id -> status of its last line
    torn_bytes: int = 0  # bytes of a torn last line that were cut
    bad: set[tuple[int, str | None]] = field(default_factory=set)
    """``(input line, id)`` of the bad input lines already written (never redone)."""


def is_bad_input(line: dict[str, Any]) -> bool:
    """Whether ``line`` is the error line of an unusable input line, not a record's."""
    return line.get("bad_input") is True


def bad_key(line: dict[str, Any]) -> tuple[int, str | None]:
    """How a bad input line is matched on resume: its input line and id (if any)."""
    found = line.get("id")
    return int(line.get("line") or 0), None if found is None else str(found)


def iter_lines(path: str | Path, *, bad_input: bool = False) -> Iterator[dict[str, Any]]:
    """The complete, valid result lines of an output file, in order: the records' lines,
    or with ``bad_input=True`` only the error lines of unusable input lines."""
    for data in iter_all_lines(path):
        if is_bad_input(data) == bad_input:
            yield data


def iter_all_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every complete, valid line of an output file (records' and bad input lines)."""
    source = Path(path)
    if not source.exists():
        return
    with source.open("rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                break  # a torn tail
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            if isinstance(data, dict) and "id" in data:
                yield data


_LINE_START = re.compile(
    rb'\{"'
    + MARKER.encode()
    + rb'": '
    + str(VERSION).encode()
    + rb', "id": (?:"(?:[^"\\]|\\.)*"|null), "line": \d+, "status": "'
)
"""How every result line starts (``json.dumps`` of :func:`~camab_cli.audit.lines.result_line`)."""
_ID_START = b'{"' + MARKER.encode() + b'": ' + str(VERSION).encode() + b', "id": '
_LEGACY_START = b'{"id": "'
_REQUIRED = frozenset({"id", "line", "status", "error", "attribution", "cost"})
_LEGACY_KEYS = _REQUIRED | {"citations", "documents", "groundedness"}


def _torn(raw: bytes, after_results: bool) -> bool:
    """Whether ``raw``, the last line, is one of our result lines cut short: it starts as
    every result line does; or, after whole result lines (the file is ours), it starts
    as they do at least as far as it goes (a crash may cut the line anywhere)."""
    if _LINE_START.match(raw):
        return True
    if not after_results or not raw:
        return False
    return any(start.startswith(raw[: len(start)]) for start in (_ID_START, _LEGACY_START))


def _is_result(data: object) -> bool:
    """Whether ``data`` is exactly a result line: the marker, or (written before it) the
    keys and types of one, nothing else."""
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        return False
    if MARKER in data:
        return data[MARKER] == VERSION and "id" in data
    return (
        _REQUIRED <= data.keys() <= _LEGACY_KEYS
        and isinstance(data["id"], str)
        and isinstance(data["line"], int)
        and isinstance(data["attribution"], dict)
        and isinstance(data["cost"], dict)
    )


def _valid_prefix(path: Path) -> tuple[int, dict[str, str], set[tuple[int, str | None]]]:
    """Length of the prefix made of whole result lines, id -> status of the records'
    lines and the keys of the bad input lines; an :class:`InputError` when a line is not
    a result line (other than a torn last one)."""
    done: dict[str, str] = {}
    bad: set[tuple[int, str | None]] = set()
    keep = 0
    size = path.stat().st_size
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                data = json.loads(raw) if raw.endswith(b"\n") else None
            except ValueError:
                data = None
            if not _is_result(data):
                if data is None and keep + len(raw) == size and _torn(raw, bool(done or bad)):
                    break  # a torn last line of ours: cut and redone
                raise InputError(
                    f"{path}: line {number} is not a camab audit result line: refusing to "
                    "write to a file that is not this command's output (choose another --out)"
                )
            assert isinstance(data, dict)
            if is_bad_input(data):
                bad.add(bad_key(data))
            else:
                done[str(data["id"])] = str(data.get("status", "ok"))
            keep += len(raw)
    return keep, done, bad


def in_input_order(lines: list[dict[str, Any]]) -> list[int]:
    """The positions of ``lines`` (an output file's lines, as written) to keep, in input
    order: one line per input line, as the summary counts them (the last line of each
    id; a bad input line's error line only while no record line names its input line,
    i.e. until it is fixed), ordered by input line number (ties as written)."""
    last_record: dict[str, int] = {}
    last_bad: dict[tuple[int, str | None], int] = {}
    for position, line in enumerate(lines):
        if is_bad_input(line):
            last_bad[bad_key(line)] = position
        else:
            last_record[str(line["id"])] = position
    recorded = {lines[p].get("line") for p in last_record.values()}
    kept = list(last_record.values())
    kept += [p for key, p in last_bad.items() if key[0] not in recorded]
    return sorted(kept, key=lambda p: (int(lines[p].get("line") or 0), p))


def _lock(fd: int, path: Path) -> None:
    """Hold an exclusive lock on the output for this run (released when ``fd`` closes)."""
    if sys.platform == "win32":  # pragma: no cover - no flock; Windows runs are not locked
        return
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise InputError(
            f"{path} is being written by another camab audit run (it is locked): wait for "
            "it to end, or choose another --out"
        ) from None


class OutputFile:
    """Append-only, crash-safe JSONL writer (use :meth:`open`)."""

    def __init__(self, path: Path, fd: int, recovery: Recovery, fsync: bool = True) -> None:
        self.path = path
        self.recovery = recovery
        self.written = 0
        self._fd = fd
        self._fsync = fsync

    @classmethod
    def open(cls, path: str | Path, *, fsync: bool = True) -> OutputFile:
        """Open (or create) ``path`` for appending, locked for this run, after checking
        every line is a result line and cutting a torn last one (see the module
        docstring)."""
        target = Path(path)
        if target.is_dir():
            raise InputError(f"{target} is a directory, not an output file")
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _lock(fd, target)
            recovery = Recovery()
            keep, recovery.done, recovery.bad = _valid_prefix(target)
            size = os.fstat(fd).st_size
            if keep < size:
                recovery.torn_bytes = size - keep
                os.ftruncate(fd, keep)
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        return cls(target, fd, recovery, fsync)

    def write(self, line: dict[str, Any]) -> None:
        """Append one result line atomically (one write of the whole line, then fsync)."""
        data = (json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:  # a regular file takes the whole write; loop only for safety
            written = os.write(self._fd, view)
            view = view[written:]
        if self._fsync:
            os.fsync(self._fd)
        self.written += 1

    def reorder(self) -> bool:
        """Put the file in input order, one line per input line (:func:`in_input_order`):
        a re-run appends what it adds (a fixed bad line's record, a retried record), so
        its lines would follow the others and repeat an input line. Written to a new file
        in the same directory, synced, locked, then moved over the output in one step
        (a crash leaves the old file or the new one whole). Returns whether it changed
        anything (a file already in order is left as it is)."""
        spans: list[tuple[int, int]] = []  # (offset, length) of each line: not held whole
        lines: list[dict[str, Any]] = []  # what in_input_order reads of each line
        offset = 0
        with self.path.open("rb") as source:
            for raw in source:
                if raw.endswith(b"\n"):
                    data = json.loads(raw)
                    lines.append({k: data.get(k) for k in ("id", "line", "bad_input")})
                    spans.append((offset, len(raw)))
                offset += len(raw)
        keep = in_input_order(lines)
        if keep == list(range(len(spans))):
            return False
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            os.fchmod(fd, stat.S_IMODE(os.fstat(self._fd).st_mode))
            _lock(fd, Path(name))
            with self.path.open("rb") as source, os.fdopen(os.dup(fd), "wb") as target:
                for position in keep:
                    start, length = spans[position]
                    source.seek(start)
                    target.write(source.read(length))
                target.flush()
                os.fsync(target.fileno())
            os.replace(name, self.path)
        except BaseException:
            os.close(fd)
            Path(name).unlink(missing_ok=True)
            raise
        os.close(self._fd)
        self._fd = fd
        return True

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
