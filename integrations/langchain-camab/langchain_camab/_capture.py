"""What a callback handler records of a chain run, filed per root run (by
``parent_run_id``, so concurrent ``batch`` roots never mix); no model calls."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from camab_rag.integration import Prompt
from langchain_camab._messages import message_text

DEFAULT_QUESTION_KEYS = ("input", "question", "query")
DEFAULT_CONTEXT_KEYS = ("context", "documents", "docs")


@dataclass
class LLMCall:
    """One LLM call inside a root run: the exact prompt and, once it ends, the answer."""

    prompt: Prompt
    serialized: Mapping[str, Any] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    answer: str | None = None
    message: BaseMessage | None = None


@dataclass
class Capture:
    """Everything seen under one root run."""

    run_id: UUID
    inputs: Any = None
    metadata: dict[str, Any] | None = None
    queries: list[str] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    tool_documents: list[Document] = field(default_factory=list)
    llm_calls: list[LLMCall] = field(default_factory=list)
    descendants: set[UUID] = field(default_factory=set)
    llm_by_run: dict[UUID, LLMCall] = field(default_factory=dict)

    def question(self, keys: Sequence[str] = DEFAULT_QUESTION_KEYS) -> str:
        """The user's question: the root input itself when it is a string, else the first
        of ``keys`` holding a string, else the last human message of the input's
        ``messages`` (chat models, agents), else the first retriever query, else ``""``."""
        if isinstance(self.inputs, str):
            return self.inputs
        if isinstance(self.inputs, Mapping):
            for key in keys:
                value = self.inputs.get(key)
                if isinstance(value, str):
                    return value
            asked = _last_human_text(self.inputs.get("messages"))
            if asked:
                return asked
        asked = _last_human_text(self.inputs)
        if asked:
            return asked
        return self.queries[0] if self.queries else ""

    def unique_documents(self, keys: Sequence[str] = DEFAULT_CONTEXT_KEYS) -> list[Document]:
        """Retrieved documents in retrieval order, exact duplicates (same text) once; when
        no retriever ran, what the run's tools returned (an agent's retrieval tool), else
        the documents passed in the root input under ``keys``."""
        documents = list(self.documents) or list(self.tool_documents)
        if not documents and isinstance(self.inputs, Mapping):
            for key in keys:
                value = self.inputs.get(key)
                if (
                    isinstance(value, Sequence)
                    and value
                    and all(isinstance(d, Document) for d in value)
                ):
                    documents = list(value)
                    break
        seen: set[str] = set()
        unique: list[Document] = []
        for doc in documents:
            if doc.page_content not in seen:
                seen.add(doc.page_content)
                unique.append(doc)
        return unique

    def answered_calls(self) -> list[LLMCall]:
        return [c for c in self.llm_calls if c.answer is not None and c.answer.strip()]


class CaptureStore:
    """Thread-safe map of root run id -> :class:`Capture`, and run id -> root id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._captures: dict[UUID, Capture] = {}
        self._root_of: dict[UUID, UUID] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._captures)

    def track(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        *,
        inputs: Any = None,
        metadata: dict[str, Any] | None = None,
    ) -> Capture:
        """File ``run_id`` under its root (a run with no known parent is a root)."""
        with self._lock:
            root = self._root_of.get(parent_run_id) if parent_run_id is not None else None
            if root is None or root not in self._captures:
                capture = self._captures.get(run_id)
                if capture is None:
                    capture = Capture(run_id, inputs=inputs, metadata=metadata)
                    self._captures[run_id] = capture
                self._root_of[run_id] = run_id
                return capture
            self._root_of[run_id] = root
            capture = self._captures[root]
            capture.descendants.add(run_id)
            return capture

    def is_root(self, run_id: UUID) -> bool:
        with self._lock:
            return self._root_of.get(run_id) == run_id

    def _root_capture(self, run_id: UUID) -> Capture | None:
        root = self._root_of.get(run_id)
        return self._captures.get(root) if root is not None else None

    def get(self, run_id: UUID) -> Capture | None:
        """The capture of the root ``run_id`` descends from (``None`` if untracked)."""
        with self._lock:
            return self._root_capture(run_id)

    def add_documents(
        self, run_id: UUID, documents: Sequence[Document], *, tool: bool = False
    ) -> None:
        with self._lock:
            capture = self._root_capture(run_id)
            if capture is not None:
                (capture.tool_documents if tool else capture.documents).extend(documents)

    def add_llm_call(self, run_id: UUID, call: LLMCall) -> None:
        with self._lock:
            capture = self._root_capture(run_id)
            if capture is not None:
                capture.llm_calls.append(call)
                capture.llm_by_run[run_id] = call

    def llm_call(self, run_id: UUID) -> LLMCall | None:
        with self._lock:
            capture = self._root_capture(run_id)
            return capture.llm_by_run.get(run_id) if capture is not None else None

    def pop(self, root_id: UUID) -> Capture | None:
        """Forget a finished root run and all its descendants; return its capture."""
        with self._lock:
            capture = self._captures.pop(root_id, None)
            if capture is None:
                return None
            for run_id in (*capture.descendants, root_id):
                self._root_of.pop(run_id, None)
            return capture


def _last_human_text(messages: object) -> str:
    """The text of the last human message in a list of messages (``""`` if none)."""
    if not isinstance(messages, Sequence) or isinstance(messages, str):
        return ""
    for message in reversed(messages):
        if isinstance(message, BaseMessage) and message.type == "human":
            return message_text(message)
    return ""


def tool_documents(output: object, tool_name: str | None) -> list[Document]:
    """The documents a tool returned: its ``Document`` list (or a ``ToolMessage`` artifact
    of them, as ``response_format="content_and_artifact"`` retrieval tools give), else its
    text as one document named after the tool."""
    artifact = getattr(output, "artifact", None)
    for candidate in (artifact, output):
        if isinstance(candidate, Document):
            return [candidate]
        if (
            isinstance(candidate, Sequence)
            and candidate
            and all(isinstance(d, Document) for d in candidate)
        ):
            return list(candidate)
    content = message_text(output) if isinstance(output, BaseMessage) else output
    if not isinstance(content, str):
        content = str(content) if content is not None else ""
    if not content.strip():
        return []
    return [Document(content, metadata={"source": tool_name} if tool_name else {})]
