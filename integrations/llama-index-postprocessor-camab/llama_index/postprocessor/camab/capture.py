"""Capture which nodes and which LLM prompt belong to which query: a span handler records
the span tree, so retrieval and LLM start events go to the query span enclosing them
(concurrent queries never mix)."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.dispatcher import Dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import (
    LLMChatStartEvent,
    LLMCompletionStartEvent,
)
from llama_index.core.instrumentation.events.query import QueryStartEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.span.simple import SimpleSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.schema import NodeWithScore, QueryType
from pydantic import ConfigDict, PrivateAttr

from camab_rag.integration import Prompt

_MAX_SPAN_DEPTH = 10_000


@dataclass
class LLMCall:
    """One LLM call inside a query: the prompt it received and the LLM object."""

    span_id: str
    prompt: Prompt
    llm: Any
    ancestors: frozenset[str]


@dataclass
class QueryRecord:
    """What was captured inside one query span."""

    span_id: str
    query: str = ""
    managed: bool = False
    retrieved: list[NodeWithScore] = field(default_factory=list)
    calls: list[LLMCall] = field(default_factory=list)

    def add_call(self, call: LLMCall) -> None:
        # A call made inside another call of this query (e.g. chat() implemented through
        # complete()) replaces it: the inner prompt is what the model actually received.
        self.calls = [c for c in self.calls if c.span_id not in call.ancestors]
        self.calls.append(call)

    @property
    def llm(self) -> Any:
        return self.calls[-1].llm if self.calls else None


STREAMING_FOR: contextvars.ContextVar[QueryRecord | None] = contextvars.ContextVar(
    "camab_streaming_for", default=None
)
"""The record of a streamed query while its stream is being read: LlamaIndex starts a
streamed answer's LLM call lazily, after the query span has closed, so its start event is
assigned here rather than through the span tree (see :mod:`.streaming`)."""


@contextmanager
def streaming_for(record: QueryRecord | None) -> Iterator[None]:
    """Within this block (and in threads or tasks it starts, which copy the context), LLM
    calls no open query span encloses are captured for ``record``."""
    marker = STREAMING_FOR.set(record)
    try:
        yield
    finally:
        STREAMING_FOR.reset(marker)


class _SpanTree(BaseSpanHandler[SimpleSpan]):
    """Records each open span's parent and instance; tells the tracker when spans close."""

    _instances: dict[str, Any] = PrivateAttr(default_factory=dict)
    _on_close: Callable[[str], None] | None = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "CamabSpanTree"

    def new_span(
        self,
        id_: str,
        bound_args: Any,
        instance: Any | None = None,
        parent_span_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        if instance is not None:
            with self.lock:
                self._instances[id_] = instance
        return SimpleSpan(id_=id_, parent_id=parent_span_id, tags=tags or {})

    def _close(self, id_: str) -> SimpleSpan | None:
        with self.lock:
            self._instances.pop(id_, None)
            span = self.open_spans.get(id_)
        if self._on_close is not None:
            self._on_close(id_)
        return span

    def prepare_to_exit_span(
        self,
        id_: str,
        bound_args: Any,
        instance: Any | None = None,
        result: Any | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        return self._close(id_)

    def prepare_to_drop_span(
        self,
        id_: str,
        bound_args: Any,
        instance: Any | None = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        return self._close(id_)

    def chain(self, span_id: str | None) -> list[str]:
        """``span_id`` and its open ancestors, innermost first."""
        chain: list[str] = []
        seen: set[str] = set()
        current = span_id
        with self.lock:
            while current is not None and current not in seen and len(chain) < _MAX_SPAN_DEPTH:
                chain.append(current)
                seen.add(current)
                span = self.open_spans.get(current)
                current = span.parent_id if span is not None else None
        return chain

    def instance(self, span_id: str) -> Any:
        with self.lock:
            return self._instances.get(span_id)


class _TrackerEvents(BaseEventHandler):
    """Feeds dispatcher events to the process-wide tracker."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    tracker: Any = None

    @classmethod
    def class_name(cls) -> str:
        return "CamabTrackerEvents"

    def handle(self, event: BaseEvent, **kwargs: Any) -> Any:
        self.tracker.on_event(event)


class QueryTracker:
    """Assigns retrieval and LLM events to the query spans that enclose them.

    One tracker per process, attached to the root dispatcher by :func:`query_tracker`. A
    record lives as long as its query span is open.
    """

    def __init__(self) -> None:
        self.spans = _SpanTree()
        self.spans._on_close = self._span_closed
        self.events = _TrackerEvents(tracker=self)
        self._records: dict[str, QueryRecord] = {}
        self._lock = threading.Lock()

    def attach(self, dispatcher: Dispatcher) -> None:
        if not any(h is self.spans for h in dispatcher.span_handlers):
            dispatcher.add_span_handler(self.spans)
        if not any(h is self.events for h in dispatcher.event_handlers):
            dispatcher.add_event_handler(self.events)

    def open_record(self, span_id: str, *, query: str = "", managed: bool = False) -> QueryRecord:
        """Start (or take over) the record of a query span."""
        with self._lock:
            record = self._records.get(span_id)
            if record is None:
                record = self._records[span_id] = QueryRecord(span_id, query, managed)
            record.managed = record.managed or managed
            if query and not record.query:
                record.query = query
            return record

    def records_for(self, span_id: str | None) -> list[QueryRecord]:
        """The records of ``span_id`` and its enclosing spans, innermost first."""
        chain = self.spans.chain(span_id)
        with self._lock:
            return [self._records[s] for s in chain if s in self._records]

    def _span_closed(self, span_id: str) -> None:
        with self._lock:
            self._records.pop(span_id, None)

    def on_event(self, event: BaseEvent) -> None:
        if isinstance(event, QueryStartEvent):
            if event.span_id is not None:
                self.open_record(event.span_id, query=query_text(event.query))
        elif isinstance(event, RetrievalEndEvent):
            for record in self.records_for(event.span_id):
                record.retrieved.extend(event.nodes)
        elif isinstance(event, (LLMChatStartEvent, LLMCompletionStartEvent)):
            self._on_llm_start(event)

    def _on_llm_start(self, event: LLMChatStartEvent | LLMCompletionStartEvent) -> None:
        if event.span_id is None:
            return
        chain = self.spans.chain(event.span_id)
        records = self.records_for(event.span_id)
        streamed = STREAMING_FOR.get()
        if not records and streamed is not None:
            records = [streamed]
        if not records:
            return
        from llama_index.core.base.llms.base import BaseLLM

        prompt: Prompt
        if isinstance(event, LLMChatStartEvent):
            prompt = chat_messages(event.messages)
        else:
            prompt = event.prompt
        llm = None
        for span_id in chain:
            candidate = self.spans.instance(span_id)
            if isinstance(candidate, BaseLLM):
                llm = candidate
                break
        call = LLMCall(event.span_id, prompt, llm, frozenset(chain[1:]))
        with self._lock:
            for record in records:
                record.add_call(call)


_TRACKER: QueryTracker | None = None
_TRACKER_LOCK = threading.Lock()


def query_tracker() -> QueryTracker:
    """The process-wide tracker, attached to the root dispatcher on first use."""
    global _TRACKER
    with _TRACKER_LOCK:
        if _TRACKER is None:
            _TRACKER = QueryTracker()
        _TRACKER.attach(get_dispatcher())
        return _TRACKER


def chat_messages(messages: Sequence[Any]) -> list[dict[str, str]]:
    """LlamaIndex chat messages as camab-rag's ``[{"role", "content"}]``."""
    out = []
    for message in messages:
        role = getattr(message, "role", "user")
        content = getattr(message, "content", None)
        text = content if isinstance(content, str) else ""
        out.append({"role": str(getattr(role, "value", role)), "content": text})
    return out


def query_text(query: QueryType) -> str:
    """The query string of a ``str`` or ``QueryBundle``."""
    if isinstance(query, str):
        return query
    return str(getattr(query, "query_str", query))
