"""Real parts for the LlamaIndex integration tests.

* ``hotpot_rows``: real HotpotQA dev rows, bundled in ``data/`` (see ``data/README.md``).
* ``index``: a real ``VectorStoreIndex`` over their paragraphs, embedded with the real
  all-MiniLM-L6-v2 (``MiniLMEmbedding`` of llama-index-embeddings-camab, loaded offline).
* ``llm``: the embedded SmolLM2 as a LlamaIndex chat LLM (``CamabLocalLLM`` of
  llama-index-llms-camab), sharing the session's in-process scorer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "data" / "hotpotqa_dev_sample.jsonl"
N_ROWS = 2
TOP_K = 3
MAX_NEW_TOKENS = 24


@pytest.fixture(scope="session")
def hotpot_rows() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as handle:
        return [json.loads(next(handle)) for _ in range(N_ROWS)]


@pytest.fixture(scope="session")
def scorer() -> Any:
    from camab_rag.scorers import default_scorer

    return default_scorer()


@pytest.fixture(scope="session")
def llm(scorer: Any) -> Any:
    from llama_index.llms.camab import CamabLocalLLM

    return CamabLocalLLM(scorer, max_new_tokens=MAX_NEW_TOKENS)


@pytest.fixture(scope="session")
def embed_model() -> Any:
    from llama_index.embeddings.camab import MiniLMEmbedding

    return MiniLMEmbedding()


@pytest.fixture(scope="session")
def index(hotpot_rows: list[dict[str, Any]], embed_model: Any) -> Any:
    from llama_index.core import Document, VectorStoreIndex

    documents = [
        Document(text="".join(sentences), metadata={"title": title})
        for row in hotpot_rows
        for title, sentences in row["context"]
    ]
    return VectorStoreIndex.from_documents(documents, embed_model=embed_model)


@pytest.fixture(scope="session")
def query_engine(index: Any, llm: Any) -> Any:
    return index.as_query_engine(llm=llm, similarity_top_k=TOP_K)
