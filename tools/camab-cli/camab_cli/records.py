"""The record format read by ``camab attribute`` and ``camab audit``.

A record is one RAG interaction, stored as one JSON object per line (JSONL), one row of a
Parquet file, or (for ``camab attribute``) a JSON file holding one object or a list::

    {"id": "q-17",                      # optional (string or integer); default: line number
     "question": "Who wrote Dune?",      # string, required
     "documents": [                      # non-empty list, required
         "Dune is a 1965 novel by Frank Herbert.",
         {"text": "...", "metadata": {"source": "wiki"}, "title": "Dune"},
         {"page_content": "..."}         # LangChain's field name works too
     ],
     "response": "Frank Herbert."}      # string; required for audit

``context`` is accepted for ``documents`` and ``answer`` for ``response`` (the names of
LangChain's retrieval chain); a single string is one document.

:func:`read_records` yields ``(line_number, Record | RecordError)`` so a batch job can
report a bad line and go on; every error names the line and the field, e.g.
``line 7: field 'documents' must be a list``. :func:`load_records` reads a whole input
(also JSON and standard input) and stops at the first bad record, naming the file, the
line (or list index) and the field, e.g. ``logs.jsonl:7: field 'question' is missing``.

Whatever its bytes, every non-blank line becomes a record or a named error: invalid UTF-8
or JSON, JSON nested deeper than :data:`MAX_DEPTH` (or than Python can decode), a line
over :data:`MAX_LINE_BYTES`, wrong types, a lone surrogate (``"\\udfff"``: no file can
hold it) in any string or a NUL in a field the model reads. Error messages are ASCII
(:func:`ascii_safe`), so writing them never fails.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from camab_rag.errors import InputError, TextError
from camab_rag.segments import SourceDocument
from camab_rag.text_gate import check_record

PARQUET_SUFFIXES = (".parquet", ".pq")
TEXT_KEYS = ("text", "page_content")
DOCUMENT_KEYS = ("documents", "context")
RESPONSE_KEYS = ("response", "answer")
MODEL_KEYS = frozenset({"id", "question", *DOCUMENT_KEYS, *RESPONSE_KEYS})
"""The fields whose text reaches the model or names the record (checked for NUL too)."""
MAX_LINE_BYTES = 32 * 1024 * 1024
"""Longest input line read (bytes): a longer one is an error line, never held in memory."""


def ascii_safe(text: str) -> str:
    """``text`` with every non-ASCII character escaped (``\\udfff``, ``\\xe9``): an error
    reason that any stream or file can take, whatever the input held."""
    return text.encode("ascii", "backslashreplace").decode("ascii")


class InputFileError(InputError):
    """An input file, or one of its records, cannot be used (the message says where)."""


@dataclass(frozen=True)
class Record:
    """One logged interaction, validated.

    Attributes:
        id: the record's ``id`` as a string (the line/row number when the record has none).
        line: 1-based line (JSONL) or row (Parquet) number in the input.
        question: the user's question.
        documents: the retrieved documents, normalised.
        response: the logged answer (``None`` when the record has none).
        extra: any other fields of the record, kept as they were.
        where: where the record came from, for messages (``file:line``, ``file[index]``).
    """

    id: str
    line: int
    question: str
    documents: list[SourceDocument]
    response: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    where: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The record in the input format (``parse_record(r.to_dict(), r.line)`` == ``r``)."""
        data: dict[str, Any] = dict(self.extra)
        data["id"] = self.id
        data["question"] = self.question
        data["documents"] = [_document_dict(doc) for doc in self.documents]
        if self.response is not None:
            data["response"] = self.response
        return data


@dataclass(frozen=True)
class RecordError:
    """Why one input line could not be used (``str(error)`` is the message to show)."""

    line: int
    message: str
    field: str | None = None
    id: str | None = None
    where: str | None = None

    def __post_init__(self) -> None:  # the message and the id are written as they are
        object.__setattr__(self, "message", ascii_safe(self.message))
        if self.id is not None:
            object.__setattr__(self, "id", ascii_safe(self.id))

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class _Invalid(Exception):
    def __init__(self, field_name: str | None, message: str) -> None:
        super().__init__(message)
        self.field_name = field_name
        self.message = message


def _document_dict(doc: SourceDocument) -> dict[str, Any]:
    data: dict[str, Any] = {"text": doc.text}
    if doc.metadata:
        data["metadata"] = dict(doc.metadata)
    return data


def _parse_document(item: object, index: int, list_key: str = "documents") -> SourceDocument:
    name = f"{list_key}[{index}]"
    if isinstance(item, str):
        return SourceDocument(item)
    if not isinstance(item, Mapping):
        raise _Invalid(
            name,
            f"field '{name}' must be a string or an object with 'text' or 'page_content', "
            f"got {_json_type(item)}",
        )
    key = next((k for k in TEXT_KEYS if item.get(k) is not None), None)
    if key is None:
        null = next((k for k in TEXT_KEYS if k in item), None)
        if null is not None:
            raise _Invalid(f"{name}.{null}", f"field '{name}.{null}' is null; it must be a string")
        raise _Invalid(name, f"field '{name}' has no 'text' or 'page_content'")
    text = item[key]
    if not isinstance(text, str):
        raise _Invalid(f"{name}.{key}", f"field '{name}.{key}' must be a string")
    metadata = item.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, Mapping):
        raise _Invalid(f"{name}.metadata", f"field '{name}.metadata' must be an object")
    meta = dict(metadata)
    title = item.get("title")
    if title is not None:
        if not isinstance(title, str):
            raise _Invalid(f"{name}.title", f"field '{name}.title' must be a string")
        meta.setdefault("title", title)
    return SourceDocument(text, meta)


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _absent(data: Mapping[str, Any], keys: tuple[str, ...], kind: str, hint: str = "") -> str:
    """Why a required field (named by any of ``keys``) has no value: given as JSON
    ``null`` (named as written), or left out (named by its first key)."""
    null = next((k for k in keys if k in data), None)
    if null is not None:
        return f"field '{null}' is null; it must be {kind}"
    return f"field '{keys[0]}' is missing{hint}"


def _record_id(data: Mapping[str, Any], line: int) -> str:
    raw = data.get("id")
    if raw is None:
        return str(line)
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise _Invalid("id", f"field 'id' must be a string or an integer, got {_json_type(raw)}")
    text = str(raw)
    if not text.strip():
        raise _Invalid("id", "field 'id' is empty")
    return text


def check_text(data: Mapping[str, Any]) -> None:
    """Every string of a decoded record, keys included, through the core's input gate
    (:func:`camab_rag.text_gate.check_record`): no lone surrogate anywhere, no NUL in a
    field the model reads (:data:`MODEL_KEYS`), nesting at most :data:`MAX_DEPTH`.

    Raises:
        _Invalid: naming the field and the character position.
    """
    try:
        check_record(data, text_keys=MODEL_KEYS)
    except TextError as error:
        raise _Invalid(error.field or None, str(error)) from None


def _parse(data: object, line: int, require_response: bool) -> Record:
    if not isinstance(data, Mapping):
        raise _Invalid(None, f"a record must be a JSON object, got {_json_type(data)}")
    check_text(data)
    record_id = _record_id(data, line)
    question = data.get("question")
    if question is None:
        raise _Invalid("question", _absent(data, ("question",), "a string"))
    if not isinstance(question, str):
        raise _Invalid("question", f"field 'question' must be a string, got {_json_type(question)}")
    if not question.strip():
        raise _Invalid("question", "field 'question' is empty")
    docs_key = next((k for k in DOCUMENT_KEYS if data.get(k) is not None), DOCUMENT_KEYS[0])
    documents = data.get(docs_key)
    if documents is None:
        docs_key = next((k for k in DOCUMENT_KEYS if k in data), docs_key)
        why = _absent(data, DOCUMENT_KEYS, "a list of documents", " (a list of documents)")
        raise _Invalid(docs_key, why)
    if isinstance(documents, str):
        documents = [documents]
    if not isinstance(documents, (list, tuple)):
        raise _Invalid(docs_key, f"field '{docs_key}' must be a list, got {_json_type(documents)}")
    if not documents:
        raise _Invalid(docs_key, f"field '{docs_key}' is empty: nothing to attribute to")
    docs = [_parse_document(item, i, docs_key) for i, item in enumerate(documents)]
    if not any(doc.text.strip() for doc in docs):
        raise _Invalid(docs_key, f"field '{docs_key}' holds no text: nothing to attribute to")
    response_key = next((k for k in RESPONSE_KEYS if data.get(k) is not None), RESPONSE_KEYS[0])
    response = data.get(response_key)
    if response is None:
        if require_response:
            response_key = next((k for k in RESPONSE_KEYS if k in data), response_key)
            raise _Invalid(response_key, _absent(data, RESPONSE_KEYS, "a string"))
    elif not isinstance(response, str):
        raise _Invalid(
            response_key,
            f"field '{response_key}' must be a string, got {_json_type(response)}",
        )
    elif not response.strip():
        hint = "" if require_response else " (leave it out to generate the answer)"
        raise _Invalid(
            response_key, f"field '{response_key}' is empty: there is nothing to attribute{hint}"
        )
    known = {"id", "question", docs_key, response_key}
    extra = {k: v for k, v in data.items() if k not in known}
    return Record(record_id, line, question, docs, response, extra)


def parse_record(data: object, line: int, *, require_response: bool = True) -> Record:
    """Validate one decoded record.

    Raises:
        InputError: naming the line and field, e.g. ``line 7: field 'documents' must be a
            list``.
    """
    result = try_parse_record(data, line, require_response=require_response)
    if isinstance(result, RecordError):
        raise InputError(str(result))
    return result


def try_parse_record(
    data: object, line: int, *, require_response: bool = True
) -> Record | RecordError:
    """Like :func:`parse_record`, returning a :class:`RecordError` instead of raising."""
    try:
        return _parse(data, line, require_response)
    except _Invalid as invalid:
        return RecordError(line, invalid.message, invalid.field_name, _raw_id(data))
    except (RecursionError, ValueError, TypeError) as exc:  # a value no check foresaw
        return RecordError(line, f"unreadable record ({type(exc).__name__}: {exc})")


def _raw_id(data: object) -> str | None:
    raw = data.get("id") if isinstance(data, Mapping) else None
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        return None
    try:
        return str(raw)
    except ValueError:  # an integer too long to write in decimal
        return None


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark some Windows tools write at a file's start."""


def raw_lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes | int]]:
    """``(line number, bytes)`` of each line, or ``(line number, length)`` for a line over
    :data:`MAX_LINE_BYTES` (read past in pieces, never held whole); a byte order mark
    opening the file is dropped."""
    number = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if number == 1 and raw.startswith(BOM):  # a UTF-8 byte order mark is no content
            raw = raw[len(BOM) :]
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield number, raw
            continue
        length = len(raw)
        while raw and not raw.endswith(b"\n"):
            raw = handle.readline(1 << 20)
            length += len(raw)
        yield number, length


BLANK = object()
"""What :func:`decode_line` returns for a blank line (skipped: not a record)."""


def decode_line(number: int, raw: bytes | int) -> object:
    """One JSONL line decoded, a :class:`RecordError` naming why it cannot be, or
    :data:`BLANK` for a blank line."""
    if isinstance(raw, int):
        return RecordError(
            number, f"the line is {raw} bytes long, over the limit of {MAX_LINE_BYTES}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return RecordError(number, f"not valid UTF-8 ({exc.reason} at byte {exc.start})")
    if not text.strip():
        return BLANK
    try:  # without its line end, so a line cut short names its own last column
        return json.loads(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        return RecordError(number, f"not valid JSON ({exc.msg}, column {exc.colno})")
    except RecursionError:
        return RecordError(number, "not readable JSON: nested too deeply to decode")
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        return RecordError(number, f"not readable JSON ({exc})")


def _is_list_start(text: str, data: object) -> bool:
    """Whether a file's first line opens a JSON list of records (``[`` alone, or a list
    of objects on one line) rather than holding one bad record."""
    if text.strip() == "[":
        return True
    return isinstance(data, list) and bool(data) and all(isinstance(x, Mapping) for x in data)


def _jsonl_rows(path: Path) -> Iterator[tuple[int, object | RecordError]]:
    first = True
    with path.open("rb") as handle:
        for line_no, raw in raw_lines(handle):
            data = decode_line(line_no, raw)
            if data is BLANK:
                continue
            if (
                first
                and isinstance(raw, bytes)
                and _is_list_start(raw.decode("utf-8", "replace"), data)
            ):
                raise InputError(
                    f"{path}: holds a JSON list (what `camab attribute` reads), but this "
                    "reads JSON Lines, one record per line, or Parquet: convert it, e.g. "
                    f"jq -c '.[]' {path.name} > {path.stem}.jsonl"
                )
            first = False
            yield line_no, data


def _parquet_rows(path: Path) -> Iterator[tuple[int, object | RecordError]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{path}: reading Parquet needs pyarrow: pip install 'camab-rag[parquet]'"
        ) from None
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    row = 0
    for batch in parquet.iter_batches(batch_size=1024):
        for item in batch.to_pylist():
            row += 1
            yield row, item


def is_parquet(path: str | Path) -> bool:
    """Whether ``path`` is read as Parquet (by its suffix)."""
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def read_records(
    path: str | Path, *, require_response: bool = True
) -> Iterator[tuple[int, Record | RecordError]]:
    """Read logged records from a JSONL or Parquet (``.parquet``/``.pq``) file.

    Yields ``(line_number, Record | RecordError)`` for every non-blank line (row), in
    order, so a batch job can report bad records and go on. A record whose ``id`` repeats
    an earlier record's is an error (ids key resumable output). Blank lines are skipped.

    Raises:
        InputError: the file itself cannot be read (missing, or Parquet without pyarrow).
    """
    source = Path(path)
    if not source.is_file():
        raise InputError(f"{source}: no such input file")
    rows = _parquet_rows(source) if is_parquet(source) else _jsonl_rows(source)
    seen: dict[str, int] = {}
    for line_no, data in rows:
        if isinstance(data, RecordError):
            yield line_no, data
            continue
        result = try_parse_record(data, line_no, require_response=require_response)
        if isinstance(result, Record):
            first = seen.get(result.id)
            if first is not None:
                result = RecordError(
                    line_no, f"field 'id' {result.id!r} repeats line {first}", "id", result.id
                )
            else:
                seen[result.id] = line_no
        yield line_no, result


def _read_bytes(path: str | Path, stdin: IO[str] | None) -> tuple[str, bytes]:
    if str(path) == "-":
        stream = stdin or sys.stdin
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            return "<stdin>", bytes(buffer.read())
        return "<stdin>", stream.read().encode("utf-8", "surrogateescape")
    source = Path(path)
    if not source.exists():
        raise InputFileError(f"{path}: no such file")
    if source.is_dir():
        raise InputFileError(f"{path}: is a directory, expected a JSON, JSONL or Parquet file")
    return str(path), source.read_bytes()


def _document_rows(name: str, data: bytes) -> Iterator[tuple[str, int, object]] | None:
    """``(where, index, decoded object)`` of a JSON file (one object or a list); ``None``
    when it is JSON Lines after all (several objects, one per line)."""
    try:
        text = data.decode("utf-8-sig")  # a byte order mark opening the file is dropped
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith("{") and exc.msg == "Extra data":
            return None  # several objects, one per line
        raise InputFileError(
            f"{name}:{exc.lineno}: invalid JSON ({exc.msg}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise InputFileError(f"{name}: not readable JSON: nested too deeply to decode") from None
    except ValueError as exc:
        raise InputFileError(ascii_safe(f"{name}: not readable JSON ({exc})")) from None
    if not isinstance(document, list):
        return iter([(name, 1, document)])
    if not document:
        raise InputFileError(f"{name}: the list of records is empty")
    return ((f"{name}[{index}]", index + 1, item) for index, item in enumerate(document))


def _line_rows(name: str, data: bytes) -> Iterator[tuple[str, int, object | RecordError]]:
    """``(where, line, decoded object or RecordError)`` of each non-blank JSONL line."""
    for number, raw in raw_lines(io.BytesIO(data)):
        decoded = decode_line(number, raw)
        if decoded is not BLANK:
            yield f"{name}:{number}", number, decoded


def load_rows(
    path: str | Path, *, require_response: bool = False, stdin: IO[str] | None = None
) -> list[Record | RecordError]:
    """Every record of an input, in order, each a :class:`Record` or the
    :class:`RecordError` that says why its line (list item, row) cannot be used; both carry
    ``where`` (``file:line``, ``file[index]``, ``file`` or ``file:row``). A bad line does
    not stop the others (JSON Lines: whatever its bytes).

    ``path`` is a JSON file (one object, or a list of objects), a JSONL file (one object
    per line, blank lines skipped), a Parquet file, or ``-`` for standard input.

    Raises:
        InputFileError: the input as a whole cannot be read (missing, a directory, empty,
            a JSON document that does not decode, no records).
    """
    rows: Iterator[tuple[str, int, object | RecordError]] | None
    if str(path) != "-" and is_parquet(path) and Path(path).is_file():
        rows = ((f"{path}:{row}", row, data) for row, data in _parquet_rows(Path(path)))
    else:
        name, data = _read_bytes(path, stdin)
        if not data.strip():
            raise InputFileError(f"{name}: the file is empty")
        jsonl = name.endswith((".jsonl", ".ndjson"))
        rows = None if jsonl else _document_rows(name, data)
        if rows is None:
            rows = _line_rows(name, data)
    results: list[Record | RecordError] = []
    for where, line, item in rows:
        if isinstance(item, RecordError):
            results.append(replace(item, where=where))
            continue
        result = try_parse_record(item, line, require_response=require_response)
        results.append(replace(result, where=where))
    if not results:
        raise InputFileError(f"{path}: no records")
    return results


def load_records(
    path: str | Path, *, require_response: bool = False, stdin: IO[str] | None = None
) -> list[Record]:
    """Every record of an input, validated; stops at the first bad one (see
    :func:`load_rows`, which goes on).

    Raises:
        InputFileError: naming the file, the line or index, and the field, e.g.
            ``logs.jsonl:2: field 'documents' is missing (a list of documents)``.
    """
    records = []
    for result in load_rows(path, require_response=require_response, stdin=stdin):
        if isinstance(result, RecordError):
            raise InputFileError(f"{result.where}: {result.message}")
        records.append(result)
    return records
