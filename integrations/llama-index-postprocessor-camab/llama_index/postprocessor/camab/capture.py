"""Capture each query's nodes and LLM prompts (LlamaIndex's spans and events feed
:class:`~llama_index.postprocessor.camab.spans.SpanRecords`); send attribution progress events."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent, llm
from llama_index.core.instrumentation.events.query import QueryStartEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.span.simple import SimpleSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.schema import QueryType
from llama_index.postprocessor.camab.spans import SpanRecords

from camab_rag.integration import chat_messages

_RECORDS = SpanRecords(lambda instance: isinstance(instance, BaseLLM))


class _Spans(BaseSpanHandler[SimpleSpan]):
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
    ) -> None:
        _RECORDS.open_span(id_, parent_span_id, instance)

    def prepare_to_exit_span(self, id_: str, *args: Any, **kwargs: Any) -> None:
        _RECORDS.close_span(id_)

    def prepare_to_drop_span(self, id_: str, *args: Any, **kwargs: Any) -> None:
        _RECORDS.close_span(id_)


class _Events(BaseEventHandler):
    @classmethod
    def class_name(cls) -> str:
        return "CamabTrackerEvents"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, QueryStartEvent) and event.span_id is not None:
            _RECORDS.open_record(event.span_id, query_text(event.query))
        elif isinstance(event, RetrievalEndEvent):
            _RECORDS.add_documents(event.span_id, list(event.nodes))
        elif isinstance(event, llm.LLMChatStartEvent) and event.span_id is not None:
            _RECORDS.add_call(event.span_id, chat_messages(event.messages))
        elif isinstance(event, llm.LLMCompletionStartEvent) and event.span_id is not None:
            _RECORDS.add_call(event.span_id, event.prompt)
        elif isinstance(event, (llm.LLMChatEndEvent, llm.LLMCompletionEndEvent)):
            _RECORDS.add_answer(event.span_id, event.response)  # an empty one is no answer


_HOOKS = (_Spans(), _Events())
_LOCK = threading.Lock()


def query_tracker() -> SpanRecords:
    """The process-wide records, fed by the root dispatcher (hooked on first use)."""
    dispatcher = get_dispatcher()
    with _LOCK:
        if not any(h is _HOOKS[0] for h in dispatcher.span_handlers):
            dispatcher.add_span_handler(_HOOKS[0])
        if not any(h is _HOOKS[1] for h in dispatcher.event_handlers):
            dispatcher.add_event_handler(_HOOKS[1])
    return _RECORDS


def query_text(query: QueryType) -> str:
    """The query string of a ``str`` or ``QueryBundle``."""
    return query if isinstance(query, str) else str(getattr(query, "query_str", query))


class AttributionProgressEvent(BaseEvent):
    """Sent every few model calls of an attribution, in the query's span: ``calls`` of
    ``total`` made (the last has ``calls == total``)."""

    query: str
    calls: int
    total: int

    @classmethod
    def class_name(cls) -> str:
        return "AttributionProgressEvent"


def progress_events(query: str) -> Callable[[dict[str, Any]], None]:
    """Send one query's progress as an :class:`AttributionProgressEvent`."""

    def emit(sent: dict[str, Any]) -> None:
        event = AttributionProgressEvent(query=query, calls=sent["calls"], total=sent["total"])
        get_dispatcher(__name__).event(event)

    return emit
