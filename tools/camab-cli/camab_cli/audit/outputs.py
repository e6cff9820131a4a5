"""The audit's output file: one JSON line per record, appended atomically, resumable.

Each result line is written with a single ``os.write`` of the whole line (newline
included) on a file opened with ``O_APPEND``, then flushed to disk with ``fsync``, so a
crash leaves at most one torn *last* line. :meth:`OutputFile.open` truncates such a torn
tail (a last line that is not newline-terminated or not valid JSON) before appending, and
collects the ids already done so a re-run skips them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from camab_rag.errors import InputError


@dataclass
class Recovery:
    """What :meth:`OutputFile.open` found in an existing output file."""

    done: dict[str, str] = field(default_factory=dict)  # id -> status of its last line
    torn_bytes: int = 0  # bytes of a torn last line that were cut


def iter_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """The complete, valid result lines of an output file, in order."""
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


def _valid_prefix(path: Path) -> tuple[int, dict[str, str]]:
    """Length of the prefix made of whole valid lines, and id -> status of those lines."""
    done: dict[str, str] = {}
    keep = 0
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                break
            try:
                data = json.loads(raw)
            except ValueError:
                if keep + len(raw) == path.stat().st_size:
                    break  # a torn last line that happens to end with a newline byte
                raise InputError(
                    f"{path}: byte {keep} is not a result line; refusing to append to a file "
                    "that is not an audit output"
                ) from None
            if not isinstance(data, dict) or "id" not in data:
                raise InputError(f"{path}: line at byte {keep} is not an audit result line")
            done[str(data["id"])] = str(data.get("status", "ok"))
            keep += len(raw)
    return keep, done


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
        """Open (or create) ``path`` for appending after cutting a torn last line."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        recovery = Recovery()
        if target.exists():
            keep, recovery.done = _valid_prefix(target)
            size = target.stat().st_size
            if keep < size:
                recovery.torn_bytes = size - keep
                with target.open("r+b") as handle:
                    handle.truncate(keep)
                    handle.flush()
                    os.fsync(handle.fileno())
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
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

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["OutputFile", "Recovery", "iter_lines"]
