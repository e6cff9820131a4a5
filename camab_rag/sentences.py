"""Rule-based sentence splitting across scripts: a terminator (and closers) before
whitespace, or a line break, ends a sentence; abbreviations, initials and ordinals do not."""

from __future__ import annotations

import re

_TERMINATORS = ".!?…。！？؟۔।॥።"
_CLOSERS = "\"'”’»)]}》」』"
_CITATIONS = r"(?:\[[^\]\s]{1,12}\])*"  # "Alwar.[2] In 1998"
_BOUNDARY = re.compile(
    rf"(?:(?P<term>[{re.escape(_TERMINATORS)}]+)[{re.escape(_CLOSERS)}]*{_CITATIONS}(?=\s)"
    rf"|[。！？]+[{re.escape(_CLOSERS)}]*{_CITATIONS}"
    rf"|\n\s*\n"
    rf"|\n)"
)
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt vs etc eg ie al fig no nos vol pp approx dept est "  # noqa: SIM905
    "nr inc ltd co corp gen gov sen rep col lt sgt capt jan feb mar apr jun jul aug "
    "sep sept oct nov dec u.s u.k e.g i.e a.m p.m ca cf op ed eds г гг ул им т.е т.д "
    "др проф стр см".split()
)


def _is_false_boundary(text: str, end: int) -> bool:
    """Whether the '.' ending at ``end`` belongs to an abbreviation, an initial or an ordinal."""
    if text[end - 1] != ".":
        return False
    start = end - 1
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "([\"'":
        start -= 1
    word = text[start : end - 1].lower()
    if not word:
        return False
    if word in _ABBREVIATIONS or word.rsplit(".", 1)[-1] in _ABBREVIATIONS:
        return True
    following = text[end:].lstrip()
    if word.isdigit() and following[:1].islower():  # "3. März"
        return True
    if len(word) <= 2 and "\u0900" <= word[0] <= "\u0dff":  # Indic: "కి.మీ."
        return True
    if len(word) == 1 and word.isalpha() and word not in {"i", "a"}:  # "J. R. R. Tolkien"
        return bool(following) and following[0].isupper()
    return False


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` spans of the sentences of ``text``, surrounding whitespace excluded."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if match.group("term") and _is_false_boundary(text, match.end("term")):
            continue
        _append_span(text, cursor, end, spans)
        cursor = end
    _append_span(text, cursor, len(text), spans)
    return spans


def _append_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    piece = text[start:end]
    start, end = start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())
    if end > start:
        spans.append((start, end))
