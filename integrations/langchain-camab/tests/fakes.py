"""Test doubles for the pure-logic unit tests (the integration tests use real parts)."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, Generation, LLMResult
from langchain_core.retrievers import BaseRetriever

from camab_cli.audit.simulated import keyword_logprobs
from camab_rag.scorers.base import BaseScorer, ChatMessage, Prompt, ResponseLogprobs, ScoreRequest


def said(answer: str, message: BaseMessage | None = None) -> LLMResult:
    """What a model call returns to the callbacks: its text, or its message."""
    if message is None:
        return LLMResult(generations=[[Generation(text=answer)]])
    return LLMResult(generations=[[ChatGeneration(message=message)]])


def chat_messages(prompt: Prompt) -> Sequence[ChatMessage]:
    """The messages of a chat prompt (fails the test on a plain-text prompt)."""
    assert not isinstance(prompt, str), f"expected a chat prompt, got text: {prompt[:80]!r}"
    return prompt


class KeywordScorer(BaseScorer):
    """Each answer word is likely (-0.1) when the prompt contains it, unlikely (-3)
    otherwise: the documents holding the answer's words matter."""

    def __init__(self) -> None:
        self.calls: list[ScoreRequest] = []
        self._lock = threading.Lock()

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        with self._lock:
            self.calls.extend(requests)
        return [keyword_logprobs(request) for request in requests]


class FailingScorer(BaseScorer):
    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        raise RuntimeError("scorer is down")


class KeywordRetriever(BaseRetriever):
    """Returns the documents sharing a word with the query (fresh copies, in order)."""

    documents: list[Document]
    k: int = 3

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        words = {w.lower() for w in re.findall(r"\w+", query) if len(w) > 3}
        hits = [
            d
            for d in self.documents
            if words & {w.lower() for w in re.findall(r"\w+", d.page_content)}
        ]
        return [Document(d.page_content, metadata=dict(d.metadata)) for d in hits[: self.k]]
