"""Renderers of a :class:`~camab_rag.citations.CitedAnswer`: Markdown, HTML, terminal, JSON.

Call them through the answer: ``cited.to_markdown()``, ``cited.to_html()``,
``cited.to_terminal()``, ``cited.to_json()``. Modules: ``markdown``, ``html`` (also
``HtmlView``), ``terminal`` (also ``use_color``), ``json_render``; ``cited_answer`` (the
model they draw), ``support`` and ``text`` (shared by the renderers).

Every renderer treats document and model text as untrusted: control characters (terminal
escapes, bidirectional overrides) are neutralised, HTML is escaped, Markdown special
characters are backslash-escaped.
"""

from __future__ import annotations

__all__: list[str] = []
