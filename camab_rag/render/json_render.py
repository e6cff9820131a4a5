"""Plain JSON for front ends."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from camab_rag.render.cited_answer import CitedAnswer

_HTML_SAFE = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def render_json(answer: CitedAnswer, *, indent: int | None = 2, html_safe: bool = True) -> str:
    """``answer.to_dict()`` as JSON; ``html_safe`` escapes ``<``, ``>``, ``&`` and the
    JavaScript line separators, so it can sit in a ``<script>`` block."""
    text = json.dumps(answer.to_dict(), ensure_ascii=False, indent=indent, allow_nan=False)
    if html_safe:
        for raw, escaped in _HTML_SAFE.items():
            text = text.replace(raw, escaped)
    return text
