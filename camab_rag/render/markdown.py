"""Markdown: the answer with ``[n]`` markers and a numbered source list; untrusted text is
backslash-escaped wherever a character could change the rendering, URLs percent-encoded."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import quote

from camab_rag.render.support import support_level
from camab_rag.render.text import (
    DISPUTED_MARK,
    answer_id,
    clean,
    has_highlights,
    notices,
    says_otherwise,
    sentence_note,
    source_note,
    split_highlights,
)

if TYPE_CHECKING:
    from camab_rag.render.cited_answer import CitedAnswer, Source

_ANYWHERE = re.compile(r"([\\`*_\[\]<>&|~$])")  # no [ or ]: no link opens, so ( and ! are safe
_MARKER = re.compile(r"^([ \t]*)([#+\-=])", re.MULTILINE)  # a block marker opens a line
_NUMBERED = re.compile(r"^([ \t]*\d+)(?=[.)])", re.MULTILINE)  # "1." opens a list
HIGHLIGHT_LEGEND = "Bold: the passage that supports the answer; italic: weak support"
OTHERWISE_MARK = "\u26a0 \u201c{}\u201d"  # a passage where a source says otherwise
NOTICE_MARKDOWN = {"proxy": "> **\u26a0 {}**", "empty": "**{}**"}  # the others in italics


def escape_markdown(text: str) -> str:
    """``text`` safe to embed in Markdown (control characters neutralised, line breaks kept)."""
    escaped = _ANYWHERE.sub(r"\\\1", clean(text))
    return _NUMBERED.sub(r"\1\\", _MARKER.sub(r"\1\\\2", escaped))  # "1\." and "\#"


def _inline(text: str) -> str:
    return " ".join(escape_markdown(text).split())


def link_destination(url: str) -> str:
    """An http(s) URL as a CommonMark link destination, in angle brackets, percent-encoded."""
    return "<" + quote(clean(url), safe=":/?#[]@!$&'()*+,;=%~-._") + ">"


def markers(answer: CitedAnswer, numbers: list[int], page: str, mark: str = "") -> str:
    """``[n]`` markers (``mark`` before ``n``) linking to the source's URL or list entry."""
    return "".join(f"[\\[{mark}{int(n)}\\]]({_target(answer, n, page)})" for n in numbers)


def _target(answer: CitedAnswer, n: int, page: str) -> str:
    """Where source ``n``'s marker links: its URL, else its entry in the list."""
    url = answer.source(n).url
    return link_destination(url) if url else f"#{page}-src-{int(n)}"


def _disputed(answer: CitedAnswer, numbers: list[int], page: str) -> str:
    """One ``[disputed by 1, 2]`` mark, each number a link, as the terminal writes it."""
    if len(numbers) < 2:
        return markers(answer, numbers, page, DISPUTED_MARK)
    links = ", ".join(f"[{int(n)}]({_target(answer, n, page)})" for n in numbers)
    return f"\\[{DISPUTED_MARK}{links}\\]"


def _source_text(answer: CitedAnswer, source: Source) -> str:
    parts = []
    for piece, mark in split_highlights(answer, source):
        body, score = _inline(piece), getattr(mark, "score", None)
        if mark is None or not body:
            parts.append(escape_markdown(piece))
        elif score is None:  # a passage where the source disagrees with the answer
            parts.append(f" {OTHERWISE_MARK.format(body)} ")
        else:
            wrap = "**" if support_level(score) >= 2 else "*"
            parts.append(f" {wrap}{body}{wrap} ")
    return " ".join("".join(parts).split())


def render_markdown(answer: CitedAnswer) -> str:
    """The cited answer as Markdown (CommonMark)."""
    page = answer_id(answer)
    lines: list[str] = []
    if answer.question:
        lines += [f"**Question:** {_inline(answer.question)}", ""]
    pieces = []
    for sentence in answer.sentences:
        marks = markers(answer, sentence.citations, page)
        marks += _disputed(answer, sentence.disputed, page)
        note = sentence_note(sentence)
        pieces.append(
            _inline(sentence.text)
            + (f" {marks}" if marks else "")
            + (f" *{_inline(note)}*" if note else "")
        )
    lines += [" ".join(pieces) if pieces else _inline(answer.answer), ""]
    for kind, line in notices(answer):
        lines += [NOTICE_MARKDOWN.get(kind, "*{}*").format(escape_markdown(line)), ""]
    if answer.sources:
        lines += ["**Sources**", ""]
        for source in answer.sources:
            label = _inline(source.label)
            if source.url:
                label = f"[{label}]({link_destination(source.url)})"
            lines.append(
                f'<a id="{page}-src-{int(source.number)}"></a>{source.number}\\. '
                f"**{label}** ({escape_markdown(source_note(source))})"
            )
            text = _source_text(answer, source)
            if text:
                lines.append(f"   > {text}")
            lines.append("")
        legend = [HIGHLIGHT_LEGEND] if has_highlights(answer) else []
        if says_otherwise(answer):
            legend.append(OTHERWISE_MARK.format("\u2026") + ": where a source says otherwise")
        if legend:
            lines.append(f"*{'; '.join(legend)}.*")
    return "\n".join(lines).rstrip() + "\n"
