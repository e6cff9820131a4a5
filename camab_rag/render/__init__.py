"""Renderers of a :class:`~camab_rag.citations.CitedAnswer`, called through its ``to_*``
methods; all treat document and model text as untrusted."""

__all__: list[str] = []
