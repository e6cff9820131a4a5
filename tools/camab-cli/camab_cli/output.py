"""``camab attribute``'s output, written one record at a time.

Why: a batch that is interrupted (Ctrl-C) or that meets a record it cannot write must keep
what is done. How: each record is rendered on its own and written (then flushed) as soon
as it is attributed, to standard output or to ``--out`` (created on the first write,
never replacing a file unless ``--force``); :meth:`RecordWriter.close` ends the document
(the HTML page's closing tags) on every exit path. A record whose text cannot be encoded
is not written at all (no half line) and is reported as an error instead.

Formats: ``json`` is one JSON object per record (JSON Lines; a single record is one
indented object), each starting with the marker ``"camab_attribute": 1`` and with
``status`` ``"ok"`` or ``"error"``; ``terminal`` and ``markdown`` are the cited answers one
after another; ``html`` is one page (a fragment per record). Errors appear in the ``json``
output and, for every format, on standard error.

Resuming (``--resume``, JSON Lines only): :func:`done_records` reads what an earlier run
wrote, refusing a file any line of which is not ours, so the rest can be appended.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, Any

from camab_cli.records import ascii_safe
from camab_rag.errors import InputError

SEPARATOR = "\n" + "-" * 60 + "\n\n"
MARKER = "camab_attribute"
"""The first key of every ``json`` object ``camab attribute`` writes (value 1)."""
_START = b'{"' + MARKER.encode() + b'": 1, '


def writable(text: str) -> str:
    """``text`` when UTF-8 can hold it, else its ASCII-escaped form (e.g. a file name
    with undecodable bytes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return ascii_safe(text)
    return text


def error_object(
    where: str | None, line: int, record_id: str | None, reason: str
) -> dict[str, Any]:
    """The ``json`` output's line for a record that failed (ASCII-safe reason)."""
    return {
        MARKER: 1,
        "where": writable(where or f"line {line}"),
        "line": line,
        "id": None if record_id is None else writable(record_id),
        "status": "error",
        "error": ascii_safe(reason),
    }


def record_key(line: int, record_id: str | None) -> tuple[int, str | None]:
    """How a resumed run knows a record: its input line and its id, as written."""
    return line, None if record_id is None else writable(record_id)


def done_records(path: str | Path) -> set[tuple[int, str | None]]:
    """The :func:`record_key` of every record an earlier ``camab attribute --format json``
    run wrote to ``path`` (results and errors alike), cutting a torn last line of ours
    (a crash in the middle of a write).

    Raises:
        InputError: a line is not one of ours (the file is never touched then).
    """
    target = Path(path)
    keys: set[tuple[int, str | None]] = set()
    keep = 0
    data = target.read_bytes()
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        if not raw.endswith(b"\n") and raw.startswith(_START):
            break  # torn by a crash: cut below, its record done again
        try:
            item = json.loads(raw)
        except ValueError:
            item = None
        ours = isinstance(item, dict) and item.get(MARKER) == 1
        if not ours or not isinstance(item.get("line"), int) or not raw.endswith(b"\n"):
            raise InputError(
                f"--out {path}: line {number} is not a line camab attribute --format json "
                "wrote: refusing to append to a file that is not its output"
            )
        keys.add(record_key(item["line"], item.get("id")))
        keep += len(raw)
    if keep < len(data):
        with target.open("r+b") as handle:
            handle.truncate(keep)
    return keys


class RecordWriter:
    """Writes rendered records as they come.

    Args:
        out: the file to write (``None``: standard output).
        fmt: ``terminal``, ``markdown``, ``html`` or ``json``.
        total: how many records the input holds (one record: a whole JSON object or HTML
            page instead of lines or fragments).
        force: replace an existing ``out`` (checked before the run by ``check_out``).
        color: ANSI colours for ``terminal`` (``None``: when the stream is a terminal).
        append: add to an existing ``out`` (``--resume``; JSON Lines even for one record).
    """

    def __init__(
        self,
        out: str | None,
        fmt: str,
        *,
        total: int,
        force: bool = False,
        color: bool | None = None,
        stdout: IO[str] | None = None,
        append: bool = False,
    ) -> None:
        self.out = out
        self.fmt = fmt
        self.single = total == 1 and not append
        self.force = force
        self.append = append
        self.color = color
        self.written = 0  # records written (results and error objects)
        self._stdout = stdout if stdout is not None else sys.stdout
        self._file: IO[str] | None = None
        self._pieces = 0  # results rendered into the document so far
        self._html_open = False

    # ------------------------------------------------------------------ records
    def result(self, outcome: Any) -> str | None:
        """Write one attributed record; ``None`` once written, else why it could not be
        (ASCII-safe; nothing of it was written). An ``OSError`` (disk full, a closed pipe)
        is raised: no later record could be written either."""
        try:
            text = self._render(outcome)
            self._emit(text)
        except (UnicodeError, ValueError, TypeError) as exc:
            return ascii_safe(f"the result could not be written ({type(exc).__name__}: {exc})")
        self._html_open = self.fmt == "html" and not self.single
        self._pieces += 1
        self.written += 1
        return None

    def error(self, where: str | None, line: int, record_id: str | None, reason: str) -> None:
        """Record a failed record (an error object in the ``json`` format)."""
        if self.fmt != "json":
            return
        data = error_object(where, line, record_id, reason)
        self._emit(_json_text(data, self.single))
        self.written += 1

    def close(self) -> None:
        """End the document (the HTML page's closing tags) and close ``out``."""
        try:
            if self._html_open:
                self._html_open = False
                self._emit("\n</body></html>\n")
        finally:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ rendering
    def _render(self, outcome: Any) -> str:
        cited = outcome.cited
        if self.fmt == "json":
            return _json_text(json_object(outcome), self.single)
        if self.fmt == "html":
            if self.single:
                return str(cited.to_html(title="camab: answer with citations"))
            fragment = str(cited.to_html(full_page=False))
            if self._html_open:
                return f"\n<hr>\n{fragment}"
            head, _, _ = str(cited.to_html(title="camab: answers with citations")).partition(
                "<body>"
            )
            return f"{head}<body>\n{fragment}"
        separator = SEPARATOR if self._pieces else ""
        if self.fmt == "markdown":
            return separator + str(cited.to_markdown())
        return separator + str(cited.to_terminal(color=self.color, stream=self._stdout))

    def _emit(self, text: str) -> None:
        text.encode("utf-8")  # a lone surrogate fails here, before anything is written
        stream = self._stream()
        stream.write(text)
        stream.flush()

    def _stream(self) -> IO[str]:
        if self.out is None:
            return self._stdout
        if self._file is None:
            mode = "a" if self.append else "w" if self.force else "x"
            self._file = Path(self.out).open(mode, encoding="utf-8", newline="")  # noqa: SIM115 (closed by close())
        return self._file


def json_object(outcome: Any) -> dict[str, Any]:
    """The ``json`` output's object for an attributed record."""
    return {
        MARKER: 1,
        "where": writable(outcome.record.where or f"line {outcome.record.line}"),
        "line": outcome.record.line,
        "id": writable(outcome.record.id),
        "status": "ok",
        "response_generated": outcome.generated,
        "citations": outcome.cited.to_dict(),
        "attribution": outcome.result.to_dict(),
    }


def _json_text(data: dict[str, Any], single: bool) -> str:
    if single:
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return json.dumps(data, ensure_ascii=False) + "\n"
