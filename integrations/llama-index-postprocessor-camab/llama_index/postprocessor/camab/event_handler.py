"""``CamabEventHandler``: every completed query of every query engine attributed."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.dispatcher import Dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent
from llama_index.postprocessor.camab.answers import ATTRIBUTION_KEY
from llama_index.postprocessor.camab.attributor import STREAMS, AnswerAttributor
from llama_index.postprocessor.camab.spans import query_text
from pydantic import ConfigDict, PrivateAttr

from camab_rag.steps import drive

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from camab_rag import AttributionSettings
    from camab_rag.integration import AttributorOptions


class CamabEventHandler(BaseEventHandler):
    """Attribute every completed query of every query engine in place, as
    :class:`CamabQueryEngine` does (with its options), once
    ``CamabEventHandler.attach(scorer=...)`` added it to the root dispatcher.

    ``aquery`` in a running loop is attributed as a background task (pending until
    :meth:`aflush`), ``query`` inline; ``background`` forces either. ``results``: the
    latest 256 ``{"query_id", "query", "attribution"}``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _attributor: AnswerAttributor = PrivateAttr()
    _background: bool | None = PrivateAttr(default=None)
    _results: deque[dict[str, Any]] = PrivateAttr(default_factory=lambda: deque(maxlen=256))

    def __init__(
        self,
        scorer: Any = None,
        *,
        background: bool | None = None,
        **options: Unpack[AttributorOptions],
    ) -> None:
        super().__init__()
        refused = "it must judge the answer before the query returns: use background=None/False"
        self._attributor = AnswerAttributor(
            scorer,
            "CamabEventHandler",
            f"{refused}, or mode='flag'" if background else None,
            **options,
        )
        self._background = background

    @property
    def settings(self) -> AttributionSettings:
        """The settings every query is attributed with (the knobs merged in)."""
        return self._attributor.settings

    @classmethod
    def class_name(cls) -> str:
        return "CamabEventHandler"

    @classmethod
    def attach(cls, dispatcher: Dispatcher | None = None, **kwargs: Any) -> CamabEventHandler:
        """Create a handler and add it to ``dispatcher`` (default: the root one)."""
        handler = cls(**kwargs)
        (dispatcher or get_dispatcher()).add_event_handler(handler)
        return handler

    def detach(self, dispatcher: Dispatcher | None = None) -> None:
        """Remove this handler from ``dispatcher`` (default: the root one)."""
        target = dispatcher or get_dispatcher()
        target.event_handlers = [h for h in target.event_handlers if h is not self]

    @property
    def results(self) -> list[dict[str, Any]]:
        return list(self._results)  # a C-level copy: atomic, no lock needed

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if not isinstance(event, QueryEndEvent):
            return
        records = self._attributor.tracker.records_for(event.span_id)
        if any(r.managed for r in records):
            return  # a CamabQueryEngine attributes this query itself
        response = event.response
        if ATTRIBUTION_KEY in (getattr(response, "metadata", None) or {}):
            return  # already attributed (an enclosing query returning the same response)
        record = records[0] if records and records[0].span_id == event.span_id else None
        question, query_id = query_text(event.query), event.span_id or ""

        def remember(answer: object) -> None:
            metadata = getattr(answer, "metadata", None) or {}
            entry = {"query_id": query_id, "query": question}
            self._results.append({**entry, "attribution": metadata.get(ATTRIBUTION_KEY)})

        steps = self._attributor.turn(response, question, record, then=remember)
        if self.in_background(isinstance(response, STREAMS), ".aquery-" in query_id):
            self._attributor.start(response, steps, in_loop=True, key=query_id or uuid4().hex)
        else:
            drive(steps)

    def in_background(self, streamed: bool, async_call: bool) -> bool:
        """Never a stream (attributed once read) nor under a blocking filter; else
        ``background`` (default: an async call's), inside a running event loop."""
        gate = self._attributor.runs.gate
        if streamed or (gate is not None and gate.mode == "block"):
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return async_call if self._background is None else self._background

    async def aflush(self) -> None:
        """Wait for every background attribution started so far (cancelling the caller
        leaves them running)."""
        pending = self._attributor.runs.pending
        while jobs := [job for job in list(pending.values()) if not job.done()]:
            await asyncio.gather(*(job.aresult() for job in jobs), return_exceptions=True)
