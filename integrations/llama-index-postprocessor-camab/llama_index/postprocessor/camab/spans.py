"""The query spans enclosing each model call or retrieval (concurrent queries never mix),
from LlamaIndex's span and event hooks; a stream's late model call goes to its query."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent, llm
from llama_index.core.instrumentation.events.query import QueryStartEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.span.simple import SimpleSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.schema import QueryType

from camab_rag.errors import InputError
from camab_rag.integration import chat_messages

if TYPE_CHECKING:
    from camab_rag.integration import Prompt


@dataclass
class ModelCall:
    """A model call: its prompt, model, enclosing spans and, once it ended, its text."""

    span_id: str
    prompt: Prompt
    model: Any = None
    ancestors: frozenset[str] = frozenset()
    answer: str | None = None


@dataclass
class SpanRecord:
    """What was captured inside one query span; ``managed``: a wrapper attributes it."""

    span_id: str
    question: str = ""
    managed: bool = False
    documents: list[Any] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)

    def add_call(self, call: ModelCall) -> None:
        """Keep ``call``; it replaces a call of this query it is made inside (the inner
        prompt is what the model received)."""
        self.calls = [c for c in self.calls if c.span_id not in call.ancestors]
        self.calls.append(call)

    @property
    def prompts(self) -> list[Prompt]:
        return [c.prompt for c in self.calls]

    @property
    def model(self) -> Any:
        return self.calls[-1].model if self.calls else None

    def placeholder(self, answer: str) -> InputError | None:
        """Why ``answer`` is not the model's: every model call ended having written
        nothing, so it is the framework's placeholder ("Empty Response")."""
        written = [call.answer for call in self.calls]
        if not written or None in written or any(w and w.strip() for w in written):
            return None
        if not answer.strip():
            return None
        return InputError(
            f"every model call of this query wrote nothing, so {answer[:40]!r} is the "
            "framework's placeholder for an empty answer: nothing to attribute"
        )


STREAMING_FOR: contextvars.ContextVar[SpanRecord | None] = contextvars.ContextVar(
    "camab_streaming_for", default=None
)


@contextmanager
def streaming_for(record: SpanRecord | None) -> Iterator[None]:
    """Within this block (and threads or tasks it starts), model calls that no open query
    span encloses are filed under ``record``."""
    marker = STREAMING_FOR.set(record)
    try:
        yield
    finally:
        STREAMING_FOR.reset(marker)


def read_for(
    record: SpanRecord | None, tokens: Iterable[str], end: Callable[[str], object]
) -> Generator[str, None, None]:
    """``tokens``, each pulled :func:`streaming_for` ``record``, then ``end(text)``."""
    pieces: list[str] = []
    iterator = iter(tokens)
    while True:
        with streaming_for(record):
            token = next(iterator, None)
        if token is None:
            break
        pieces.append(token)
        yield token
    end("".join(pieces))


async def aread_for(
    record: SpanRecord | None, tokens: AsyncIterable[str], end: Callable[[str], object]
) -> AsyncGenerator[str, None]:
    """Async :func:`read_for`."""
    pieces: list[str] = []
    iterator = aiter(tokens)
    while True:
        with streaming_for(record):
            token = await anext(iterator, None)
        if token is None:
            break
        pieces.append(token)
        yield token
    end("".join(pieces))


class SpanRecords:
    """The open spans (parent and instance by id) and open query spans' records;
    ``is_model`` tells a model among the enclosing spans. Thread-safe."""

    def __init__(self, is_model: Callable[[object], bool]) -> None:
        self.is_model = is_model
        self._spans: dict[str, tuple[str | None, Any]] = {}
        self._records: dict[str, SpanRecord] = {}
        self._lock = threading.Lock()

    def open_span(self, span_id: str, parent_id: str | None, instance: Any = None) -> None:
        with self._lock:
            self._spans[span_id] = (parent_id, instance)

    def close_span(self, span_id: str) -> None:
        with self._lock:
            self._spans.pop(span_id, None)
            self._records.pop(span_id, None)

    def chain(self, span_id: str | None) -> list[str]:
        chain: list[str] = []
        with self._lock:
            while span_id is not None and span_id not in chain:  # a few spans deep
                chain.append(span_id)
                span_id = self._spans.get(span_id, (None, None))[0]
        return chain

    def open_record(self, span_id: str, question: str = "", managed: bool = False) -> SpanRecord:
        with self._lock:
            record = self._records.setdefault(span_id, SpanRecord(span_id))
            record.managed = record.managed or managed
            record.question = record.question or question
            return record

    def records_for(self, span_id: str | None) -> list[SpanRecord]:
        chain = self.chain(span_id)
        with self._lock:
            return [self._records[s] for s in chain if s in self._records]

    def add_documents(self, span_id: str | None, documents: list[Any]) -> None:
        for record in self.records_for(span_id):
            with self._lock:
                record.documents.extend(documents)

    def add_answer(self, span_id: str | None, response: Any) -> None:
        text = getattr(response, "text", None)
        if text is None:
            text = getattr(getattr(response, "message", None), "content", None) or ""
        for record in self.records_for(span_id):
            with self._lock:
                for call in record.calls:
                    if call.span_id == span_id:
                        call.answer = str(text)

    def add_call(self, span_id: str, prompt: Prompt) -> ModelCall | None:
        """A model call in ``span_id``, for every query enclosing it (else the
        :func:`streaming_for` record)."""
        chain = self.chain(span_id)
        records = self.records_for(span_id) or [r for r in [STREAMING_FOR.get()] if r]
        if not records:
            return None
        with self._lock:
            instances = [self._spans.get(s, (None, None))[1] for s in chain]
            model = next((i for i in instances if i is not None and self.is_model(i)), None)
            call = ModelCall(span_id, prompt, model, frozenset(chain[1:]))
            for record in records:
                record.add_call(call)
        return call


_RECORDS = SpanRecords(lambda instance: isinstance(instance, BaseLLM))


class _Spans(BaseSpanHandler[SimpleSpan]):
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
    dispatcher = get_dispatcher()
    with _LOCK:
        if not any(h is _HOOKS[0] for h in dispatcher.span_handlers):
            dispatcher.add_span_handler(_HOOKS[0])
        if not any(h is _HOOKS[1] for h in dispatcher.event_handlers):
            dispatcher.add_event_handler(_HOOKS[1])
    return _RECORDS


def query_text(query: QueryType) -> str:
    return query if isinstance(query, str) else str(getattr(query, "query_str", query))


class AttributionProgressEvent(BaseEvent):
    """Sent every few model calls of an attribution, in the query's span."""

    query: str
    calls: int
    total: int

    @classmethod
    def class_name(cls) -> str:
        return "AttributionProgressEvent"


def progress_events(query: str) -> Callable[[dict[str, Any]], None]:
    def emit(sent: dict[str, Any]) -> None:
        event = AttributionProgressEvent(query=query, calls=sent["calls"], total=sent["total"])
        get_dispatcher(__name__).event(event)

    return emit
