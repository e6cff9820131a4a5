"""Terminal rendering: ANSI colours on a TTY (:func:`use_color`), else plain text; document
and model text is cleaned of control characters, so it cannot inject escapes."""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from typing import IO, TYPE_CHECKING

from camab_rag.render.support import support_level, support_words
from camab_rag.render.text import (
    DISAGREES,
    DISPUTED_MARK,
    clean,
    has_highlights,
    notices,
    sentence_note,
    shown_highlights,
    source_note,
    unsupported_pieces,
)

if TYPE_CHECKING:
    from camab_rag.render.cited_answer import CitedAnswer

RESET, BOLD, DIM, UNDERLINE, RED, GREEN, YELLOW, CYAN = (
    f"\x1b[{c}m" for c in (0, 1, 2, 4, 31, 32, 33, 36)
)
PROXY = "\x1b[1;30;43m"  # black on yellow: hard to miss
NOTICE_STYLE = {
    "pass": GREEN,
    "check": YELLOW,
    "fail": RED,
    "proxy": PROXY,
    "empty": RED,
    "uncited": DIM,
}
LEVEL_STYLE = {3: PROXY, 2: YELLOW, 1: "\x1b[2;33m"}  # strong, support, weak
BAR_LEGEND = "the passage that supports the answer; a longer bar is stronger"
NO_BAR_LEGEND = "no bar: the passage holds the answer, the model's support too weak to measure"
NO_BREAK = "\u00a0"  # a space textwrap does not break at

DISPUTED_LINES = 3
"""Lines of a disputing source's text the terminal shows (it has no highlight)."""


def use_color(stream: IO[str] | None = None) -> bool:
    """Whether to colour output to ``stream`` (default ``sys.stdout``): a terminal, with
    ``NO_COLOR`` unset and ``TERM`` not ``dumb``, or ``FORCE_COLOR`` set."""
    if os.environ.get("NO_COLOR") or os.environ.get("FORCE_COLOR"):
        return not os.environ.get("NO_COLOR")
    isatty = getattr(stream if stream is not None else sys.stdout, "isatty", None)
    return os.environ.get("TERM") != "dumb" and bool(isatty and isatty())


def _one_line(text: str) -> str:
    return " ".join(clean(text).split())


def render_terminal(
    answer: CitedAnswer, *, color: bool | None = None, stream: IO[str] | None = None
) -> str:
    """The cited answer for a terminal (coloured if ``color``; see :func:`use_color`)."""
    colored = use_color(stream) if color is None else color
    cols = max(40, min(shutil.get_terminal_size((100, 24)).columns, 120))

    def style(code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if colored else text

    out: list[str] = []
    if answer.question:
        out += textwrap.wrap(
            f"{style(BOLD, 'Question:')} {_one_line(answer.question)}", cols, break_long_words=False
        )
    pieces = []
    for sentence in answer.sentences:
        marks = "".join(f"[{n}]" for n in sentence.citations)
        if sentence.disputed:
            disputed = f"{DISPUTED_MARK}{', '.join(map(str, sentence.disputed))}"
            marks += f"[{disputed.replace(' ', NO_BREAK)}]"  # never wrapped apart
        parts = [(re.sub(r"\s+", " ", clean(p)), bad) for p, bad in unsupported_pieces(sentence)]
        text = "".join(style(UNDERLINE + RED, p) if bad else p for p, bad in parts)
        note = sentence_note(sentence)
        pieces.append(
            text
            + (style(BOLD + CYAN, marks) if marks else "")
            + (" " + style(RED if sentence.supported is False else DIM, note) if note else "")
        )
    text = " ".join(pieces) if pieces else _one_line(answer.answer)
    out += textwrap.wrap(f"{style(BOLD, 'Answer:')} {text}", cols, break_long_words=False)
    for kind, line in notices(answer):  # a verdict or proxy notice: one line, never wrapped
        one = kind in ("pass", "check", "fail", "proxy")
        lines = [("! " if kind == "proxy" else "") + line] if one else textwrap.wrap(line, cols)
        out += ["", *(style(NOTICE_STYLE[kind], part) for part in lines)]
    bare = False  # a highlight shown without a bar ("holds the answer")
    if answer.sources:
        out += ["", style(BOLD, "Sources")]
        indent = " " * 6

        def marked(label: str, text: str, tint: str) -> list[str]:
            body = textwrap.wrap(_one_line(text), cols - len(indent) - len(label))
            pads = [label] + [" " * len(label)] * (len(body) - 1)
            return [indent + pad + style(tint, line) for pad, line in zip(pads, body)]

        for source in answer.sources:
            head = f"{style(BOLD + CYAN, f'[{source.number}]')} {_one_line(source.label)}"
            note = style(RED if source.disputes else DIM, f"({_one_line(source_note(source))})")
            out.append(f"  {head} {note}")
            if source.url:
                out.append(indent + style(DIM, _one_line(source.url)))
            shown = shown_highlights(answer, source)
            bare = bare or any(not support_level(h.score) for h in shown)
            if source.disputes and not shown and not source.disputing:  # what it says instead
                width = cols - len(indent)
                said = textwrap.wrap(_one_line(source.text), width, max_lines=DISPUTED_LINES)
                out += [indent + style(DIM, line) for line in said]
            words = max((len(support_words(h.score)) for h in shown), default=0)
            blocks: list[tuple[int, list[str]]] = []  # (where in the source, its lines)
            for highlight in shown:
                filled = max(0, min(8, round(highlight.strength * 8)))
                bar = f"{'█' * filled}{'·' * (8 - filled)}"
                bar = bar if colored else f"[{'#' * filled}{' ' * (8 - filled)}]"
                if not support_level(highlight.score):  # "holds the answer": no empty bar
                    bar = " " * len(bar)
                label = f"{bar} {support_words(highlight.score):<{words}} "
                tint = LEVEL_STYLE[max(support_level(highlight.score), 1)]
                blocks.append((highlight.start, marked(label, highlight.text, tint)))
            for passage in source.disputing:  # where it says otherwise
                blocks.append((passage.start, marked(f"{DISAGREES}: ", passage.text, RED)))
            for _, block in sorted(blocks, key=lambda block: block[0]):  # the source's order
                out += block
    if has_highlights(answer):  # words only: the figures are in to_dict() for developers
        legend = f"bar: {BAR_LEGEND}" + (f"; {NO_BAR_LEGEND}" if bare else "")
        out += ["", style(DIM, legend)]
    return "\n".join(out) + "\n"
