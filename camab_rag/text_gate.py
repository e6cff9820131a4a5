"""One gate for every text that enters camab-rag: a lone surrogate, a NUL, an oversized
string or input nested too deep raises :class:`~camab_rag.errors.TextError` naming the
field and position before any model call."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from camab_rag.errors import TextError, TextTypeError

MAX_CHARS = 4_000_000  # per field: about a million tokens, more than any model's context
MAX_DEPTH = 100  # nesting of lists and mappings (real input nests a few levels)
RECORD_TEXT_KEYS = ("question", "documents", "context", "response", "answer")  # no NUL here
RENDERED_METADATA = ("title", "url", "source", "file_path")  # what renderers show: checked


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def check_text(value: object, field: str, *, max_chars: int = MAX_CHARS, nul: bool = True) -> str:
    """``value`` when it is usable text, else a :class:`TextError` naming ``field``: a lone
    surrogate or a NUL (unless ``nul=False``), or over ``max_chars`` characters."""
    if not isinstance(value, str):
        raise TextTypeError(
            f"{field} must be a string, got {_type_name(value)}", field=field, reason="type"
        )
    if len(value) > max_chars:
        raise TextError(
            f"{field} is {len(value):,} characters long, over the limit of {max_chars:,} "
            "(more than any model's context): cut it, or split it into documents",
            field=field,
            reason="size",
        )
    position = value.find("\x00") if nul else -1
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            position = error.start if position < 0 else min(position, error.start)
    if position < 0:
        return value
    if value[position] == "\x00":
        what, reason = "a NUL character (U+0000)", "nul"
        why = "NUL is not text (often binary data or a C string read as text); remove it"
    else:
        what, reason = f"a lone surrogate U+{ord(value[position]):04X}", "surrogate"
        why = (
            "the text is not valid Unicode (often a broken \\u escape in JSON); fix or "
            "remove that character"
        )
    raise TextError(
        f"{field} holds {what} at character {position}: {why}",
        field=field,
        position=position,
        reason=reason,
    )


def check_texts(fields: Mapping[str, object]) -> None:
    for field, value in fields.items():
        check_text(value, field)


def _child(path: str, key: object) -> str:
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}" if path else key
    shown = f"{key!r:.60}" if isinstance(key, str) else str(key)
    return f"{path}[{shown}]"


def check_value(
    value: object,
    field: str,
    *,
    root: str = "the value",
    nul_keys: Collection[str] | None = None,
) -> Any:
    """``value`` when every string in it (keys too) passes :func:`check_text` and it nests at
    most :data:`MAX_DEPTH` deep, else a :class:`TextError` naming the path; ``nul_keys``:
    refuse NUL only under these top-level keys."""
    stack: list[tuple[object, str, int, bool]] = [(value, field, 0, nul_keys is None)]
    while stack:
        item, path, depth, nul = stack.pop()
        if isinstance(item, str):
            check_text(item, path or root, nul=nul)
            continue
        if not isinstance(item, (Mapping, list, tuple)):
            continue
        if depth >= MAX_DEPTH:  # named by its top field: the path is MAX_DEPTH long
            where = field or re.split(r"[.\[]", path, maxsplit=1)[0] or root
            raise TextError(
                f"{where} is nested more than {MAX_DEPTH} levels deep: lists and mappings "
                "this deep are not a prompt, a record or metadata",
                field=where,
                reason="depth",
            )
        children: list[tuple[object, str, int, bool]] = []
        if isinstance(item, Mapping):
            for key, child in item.items():
                if isinstance(key, str):
                    check_text(key, f"a key of {path or root}", nul=nul)
                below = nul or (depth == 0 and nul_keys is not None and key in nul_keys)
                children.append((child, _child(path, key), depth + 1, below))
        else:
            children = [(c, f"{path}[{i}]", depth + 1, nul) for i, c in enumerate(item)]
        stack.extend(reversed(children))  # popped in order: the first bad value is named
    return value


def check_document(text: str, metadata: Mapping[str, Any], index: int) -> None:
    """A document's :data:`RENDERED_METADATA` values, then its text."""
    for key in RENDERED_METADATA:
        if metadata.get(key) is not None:
            check_value(metadata[key], f"document {index}'s metadata {key!r}")
    title = metadata.get("title")
    named = f" ({str(title)!r:.60})" if isinstance(title, (str, int, float)) and title else ""
    check_text(text, f"document {index}{named}")


def check_record(
    record: object, where: str = "", *, text_keys: Collection[str] = RECORD_TEXT_KEYS
) -> Mapping[str, Any]:
    """A decoded record (a tool's JSON input line) checked by :func:`check_value`."""
    if not isinstance(record, Mapping):
        raise TextTypeError(
            f"{where or 'a record'} must be a JSON object, got {_type_name(record)}",
            field=where,
            reason="type",
        )
    checked: Mapping[str, Any] = check_value(record, where, root="the record", nul_keys=text_keys)
    return checked
