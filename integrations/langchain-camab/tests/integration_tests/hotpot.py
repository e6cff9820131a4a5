"""Real parts for the integration tests: HotpotQA documents, a BM25 retriever, a RAG chain."""

from __future__ import annotations

import importlib.util
import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from pydantic import ConfigDict, PrivateAttr
from rank_bm25 import BM25Okapi

REPO = Path(__file__).resolve().parents[4]
DATA = REPO / "data" / "hotpotqa_dev_sample.jsonl"  # bundled rows (data/README.md)


def repo_tests_module(filename: str) -> Any:
    """A helper module of camab-rag's own tests (``tests/<filename>`` at the repository
    root, e.g. the vLLM server or the chat-only server), loaded by its path."""
    path = REPO / "tests" / filename
    spec = importlib.util.spec_from_file_location(f"camab_tests_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer the question in a few words, using only the context."),
        ("human", "Context:\n{context}\n\nQuestion: {question}"),
    ]
)


@dataclass(frozen=True)
class Example:
    id: str
    question: str
    answer: str
    gold_titles: frozenset[str]
    model_answer: str = ""  # what the plain chain answered (set by ``easy_examples``)


def load_rows(n: int) -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as handle:
        return [json.loads(line) for _, line in zip(range(n), handle)]


def examples(rows: Sequence[dict[str, Any]]) -> list[Example]:
    return [
        Example(r["id"], r["question"], r["answer"], frozenset(t for t, _ in r["supporting_facts"]))
        for r in rows
    ]


def corpus(rows: Sequence[dict[str, Any]]) -> list[Document]:
    """Every paragraph of every row, one Document each (title in metadata)."""
    seen: set[str] = set()
    docs: list[Document] = []
    for row in rows:
        for title, sentences in row["context"]:
            text = "".join(sentences).strip()
            if text and text not in seen:
                seen.add(text)
                docs.append(Document(text, metadata={"title": title}))
    return docs


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


class BM25Retriever(BaseRetriever):
    """A real BM25 retriever (rank_bm25) over title + text; returns fresh copies."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    documents: list[Document]
    k: int = 4
    _index: Any = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self._index = BM25Okapi(
            [_tokens(f"{d.metadata.get('title', '')} {d.page_content}") for d in self.documents]
        )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        scores = self._index.get_scores(_tokens(query))
        best = sorted(range(len(scores)), key=lambda i: -scores[i])[: self.k]
        return [
            Document(self.documents[i].page_content, metadata=dict(self.documents[i].metadata))
            for i in best
        ]


def format_docs(docs: Sequence[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def rag_chain(retriever: BaseRetriever, llm: BaseChatModel) -> Runnable[Any, Any]:
    """The textbook LCEL RAG chain: retriever -> prompt -> chat model (answer message)."""
    return (
        {"context": retriever | RunnableLambda(format_docs), "question": RunnablePassthrough()}
        | PROMPT
        | llm
    )


def normalize(text: str) -> str:
    """HotpotQA's answer normalisation: lower case, no punctuation, no articles."""
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(w for w in text.split() if w not in ("a", "an", "the"))


def is_correct(answer: str, gold: str) -> bool:
    return normalize(gold) in normalize(answer)
