"""Fixtures with real parts: the embedded SmolLM2 model, HotpotQA documents, BM25.

The model loads once per session (the first run on a fresh machine converts it into the
cache, about a minute). ``easy_examples`` picks, among the first HotpotQA rows, questions
the small model answers correctly with both gold paragraphs retrieved: gold alignment only
means something when the answer is right.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from langchain_camab import CamabChatModel
from langchain_core.documents import Document

from tests.integration_tests.hotpot import (
    BM25Retriever,
    Example,
    corpus,
    examples,
    is_correct,
    load_rows,
    rag_chain,
)

N_ROWS = 40  # corpus: every paragraph of these rows (about 400 documents)
N_EASY = 3
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def smollm2() -> Any:
    from camab_rag.scorers import default_scorer

    return default_scorer()


@pytest.fixture(scope="session")
def documents() -> list[Document]:
    return corpus(load_rows(N_ROWS))


@pytest.fixture(scope="session")
def retriever(documents: list[Document]) -> BM25Retriever:
    return BM25Retriever(documents=documents, k=4)


@pytest.fixture(scope="session")
def chat_model(smollm2: Any) -> CamabChatModel:
    return CamabChatModel(generator=smollm2, max_new_tokens=24)


@pytest.fixture(scope="session")
def easy_examples(retriever: BM25Retriever, chat_model: CamabChatModel) -> list[Example]:
    """Questions answered correctly, with both gold paragraphs among the retrieved four."""
    chain = rag_chain(retriever, chat_model)
    chosen: list[Example] = []
    for example in examples(load_rows(N_ROWS)):
        titles = {d.metadata["title"] for d in retriever.invoke(example.question)}
        if not example.gold_titles <= titles:
            continue
        if example.answer.lower() in ("yes", "no"):
            continue  # a yes/no answer says little about which document it came from
        if is_correct(str(chain.invoke(example.question).content), example.answer):
            chosen.append(example)
        if len(chosen) == N_EASY:
            break
    if len(chosen) < 2:
        pytest.fail(f"only {len(chosen)} HotpotQA questions were answered correctly")
    return chosen
