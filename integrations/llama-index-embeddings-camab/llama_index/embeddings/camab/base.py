from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from pydantic import PrivateAttr

from camab_rag.embeddings import MiniLMEmbedder
from camab_rag.errors import InputError


class MiniLMEmbedding(BaseEmbedding):
    """all-MiniLM-L6-v2 sentence embeddings (384 dims, unit norm) from ``embedder``
    (default: a new :class:`camab_rag.embeddings.MiniLMEmbedder`, which loads on first use;
    any object with ``embed(texts)`` returning one row per text). The async forms run in
    a thread, so they never block the event loop."""

    _embedder: Any = PrivateAttr(default=None)

    def __init__(self, embedder: Any = None, **kwargs: Any) -> None:
        if unknown := sorted(set(kwargs) - set(type(self).model_fields)):  # pydantic drops them
            raise TypeError(f"MiniLMEmbedding() got an unexpected keyword {unknown[0]!r}")
        if embedder is not None and not callable(getattr(embedder, "embed", None)):
            raise InputError(
                "embedder must have an embed(texts) method (the model is built in: pass "
                f"nothing for all-MiniLM-L6-v2), got {type(embedder).__name__}"
            )
        super().__init__(**{"model_name": "all-MiniLM-L6-v2", **kwargs})
        self._embedder = MiniLMEmbedder() if embedder is None else embedder

    @classmethod
    def class_name(cls) -> str:
        return "MiniLMEmbedding"

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        rows = [[float(x) for x in row] for row in self._embedder.embed(texts)]
        if len(rows) != len(texts):
            raise InputError(f"the embedder gave {len(rows)} rows for {len(texts)} texts")
        return rows

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._get_text_embeddings([query])[0]

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return (await self._aget_text_embeddings([text]))[0]

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return (await self._aget_text_embeddings([query]))[0]
