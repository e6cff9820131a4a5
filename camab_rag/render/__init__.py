"""Renderers of a :class:`~camab_rag.citations.CitedAnswer`: Markdown, HTML, terminal, JSON.

Every renderer treats document and model text as untrusted: control characters (terminal
escapes, bidirectional overrides) are neutralised, HTML is escaped, Markdown special
characters are backslash-escaped.
"""

from __future__ import annotations

from camab_rag.render.html import HtmlView, render_html
from camab_rag.render.json_render import render_json
from camab_rag.render.markdown import render_markdown
from camab_rag.render.terminal import render_terminal, use_color

__all__ = [
    "HtmlView",
    "render_html",
    "render_json",
    "render_markdown",
    "render_terminal",
    "use_color",
]
