"""Fixtures with real parts: the embedded SmolLM2 model, HotpotQA documents, BM25.

The model loads once per session (the first run on a fresh machine converts it into the
cache, about a minute). ``easy_examples`` keeps the candidate questions the small model
answers correctly with both gold paragraphs retrieved: gold alignment only means something
when the answer is right.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import pytest
from langchain_camab import CamabChatModel
from langchain_core.documents import Document

from tests import standard_model
from tests.integration_tests.hotpot import (
    BM25Retriever,
    Example,
    corpus,
    examples,
    is_correct,
    load_rows,
    rag_chain,
)

N_ROWS = 120  # corpus: every paragraph of the first 120 rows (about 1200 documents)
N_EASY = 3
# Candidates: running this chain over the first 120 rows, SmolLM2-135M answered 4 of the
# ~40 questions whose gold paragraphs BM25 retrieves (yes/no questions left out). One of
# them (5a80721b...) is "right" by string match but copies a distractor paragraph's
# sentence, so its answer is not grounded in the gold evidence and is left out. Scanning
# every row costs minutes of generation, so the tests start from these and still check
# each answer (a candidate the model now gets wrong is dropped).
CANDIDATES = (
    "5a8704f8554299211dda2ba4",
    "5ae533535542993aec5ec173",
    "5ae21937554299234fd043d3",
)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def smollm2() -> Any:
    return standard_model.smollm2()  # the one the standard suites use: one load per run


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
    """Questions answered correctly, with both gold paragraphs among the retrieved four,
    each with the chain's answer (``model_answer``: the tests compare with it, not rerun it)."""
    chain = rag_chain(retriever, chat_model)
    chosen: list[Example] = []
    for example in examples(load_rows(N_ROWS)):
        if example.id not in CANDIDATES:
            continue
        titles = {d.metadata["title"] for d in retriever.invoke(example.question)}
        if not example.gold_titles <= titles:
            continue
        answer = str(chain.invoke(example.question).content)
        if is_correct(answer, example.answer):
            chosen.append(replace(example, model_answer=answer))
        if len(chosen) == N_EASY:
            break
    if len(chosen) < 2:
        pytest.fail(f"only {len(chosen)} HotpotQA questions were answered correctly")
    return chosen
