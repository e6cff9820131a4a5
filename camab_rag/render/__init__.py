"""Renderers of a :class:`~camab_rag.citations.CitedAnswer`: Markdown, HTML, terminal, JSON.

Call them through the answer (``cited.to_markdown()``, ``to_html()``, ``to_terminal()``,
``to_json()``). Every renderer treats document and model text as untrusted.
"""

from __future__ import annotations

__all__: list[str] = []
