"""Renderers of a :class:`~camab_rag.citations.CitedAnswer`, called through it
(``to_markdown()``, ``to_html()``, ``to_terminal()``, ``to_json()``); all treat document
and model text as untrusted."""

from __future__ import annotations

__all__: list[str] = []
