"""Attribution progress as a LlamaIndex instrumentation event."""

from __future__ import annotations

from collections.abc import Callable

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events import BaseEvent

ProgressHook = Callable[[int, int], object]
_dispatcher = get_dispatcher(__name__)


class AttributionProgressEvent(BaseEvent):
    """Sent every few model calls of an attribution, inside the query's span: ``calls``
    of ``total`` made so far (the last event has ``calls == total``)."""

    query: str
    calls: int
    total: int

    @classmethod
    def class_name(cls) -> str:
        return "AttributionProgressEvent"


class QueryProgress:
    """The core's ``progress(calls, total)`` hook for one query: the user's ``hook``
    (the ``progress=`` option), then an :class:`AttributionProgressEvent`."""

    def __init__(self, query: str, hook: ProgressHook | None = None) -> None:
        self.query = query
        self.hook = hook

    def __call__(self, calls: int, total: int) -> None:
        if self.hook is not None:
            self.hook(calls, total)
        _dispatcher.event(AttributionProgressEvent(query=self.query, calls=calls, total=total))
