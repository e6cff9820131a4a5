"""Wrapped engines whose answers carry their attribution, and :class:`CamabEventHandler`
attributing every query of every engine."""

from __future__ import annotations

import asyncio
from collections import deque
from functools import partial
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.base.response.schema import RESPONSE_TYPE
from llama_index.core.callbacks import CallbackManager
from llama_index.core.chat_engine.types import (
    AGENT_CHAT_RESPONSE_TYPE,
    BaseChatEngine,
    StreamingAgentChatResponse,
)
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.dispatcher import Dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent
from llama_index.core.prompts.mixin import PromptMixinType
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.postprocessor.camab.answers import ATTRIBUTION_KEY
from llama_index.postprocessor.camab.attributor import STREAMS, AnswerAttributor
from llama_index.postprocessor.camab.spans import query_text
from pydantic import ConfigDict, PrivateAttr

from camab_rag.errors import InputError
from camab_rag.steps import drive

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from camab_rag import AttributionSettings
    from camab_rag.integration import AttributorOptions

dispatcher = get_dispatcher(__name__)
History = list[ChatMessage] | None


class _Wrapper:
    _attributor: AnswerAttributor

    def _wrap(self, inner: object, kind: type, name: str, scorer: Any, options: Any) -> None:
        if not isinstance(inner, kind):
            kinds = f"a LlamaIndex {kind.__name__}, got {type(inner).__name__}"
            raise InputError(f"{name} must be {kinds}")
        self._attributor = AnswerAttributor(scorer, type(self).__name__, **options)

    @property
    def settings(self) -> AttributionSettings:
        """The settings every answer is attributed with (the knobs merged in)."""
        return self._attributor.settings


class CamabQueryEngine(_Wrapper, BaseQueryEngine):
    """Wrap a query engine so every response carries its attribution (``response.metadata
    ["attribution"]``, each source node's ``metadata["attribution"]``); a stream is
    attributed in the background once read to the end. ``scorer``: ``None`` builds it from
    the engine's LLM. ``options``: the knobs of :func:`camab_rag.attribute` (a blocking
    ``groundedness`` filter replaces an unsupported answer) and ``AttributorOptions``."""

    def __init__(
        self,
        query_engine: BaseQueryEngine,
        scorer: Any = None,
        *,
        callback_manager: CallbackManager | None = None,
        **options: Unpack[AttributorOptions],
    ) -> None:
        self._wrap(query_engine, BaseQueryEngine, "query_engine", scorer, options)
        self.query_engine = query_engine
        super().__init__(callback_manager or getattr(query_engine, "callback_manager", None))

    def _get_prompt_modules(self) -> PromptMixinType:
        return {"query_engine": self.query_engine}

    def retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.query_engine.retrieve(query_bundle)

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        ask = self.query_engine.query
        return self._attributor.answer(query_bundle.query_str, self._llm, ask, query_bundle)

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        ask = self.query_engine.aquery
        return await self._attributor.aanswer(query_bundle.query_str, self._llm, ask, query_bundle)

    @property
    def _llm(self) -> object:
        return getattr(getattr(self.query_engine, "_response_synthesizer", None), "_llm", None)


class CamabChatEngine(_Wrapper, BaseChatEngine):
    """Wrap a retrieval chat engine so each turn is attributed to the nodes retrieved for
    it, as :class:`CamabQueryEngine` does (same ``scorer`` and ``options``)."""

    def __init__(
        self, chat_engine: BaseChatEngine, scorer: Any = None, **options: Unpack[AttributorOptions]
    ) -> None:
        self._wrap(chat_engine, BaseChatEngine, "chat_engine", scorer, options)
        self.chat_engine = chat_engine

    @dispatcher.span
    def chat(self, message: str, chat_history: History = None) -> AGENT_CHAT_RESPONSE_TYPE:
        ask = self.chat_engine.chat
        return self._attributor.answer(message, self._llm, ask, message, chat_history)

    @dispatcher.span
    async def achat(self, message: str, chat_history: History = None) -> AGENT_CHAT_RESPONSE_TYPE:
        ask = self.chat_engine.achat
        return await self._attributor.aanswer(message, self._llm, ask, message, chat_history)

    @dispatcher.span
    def stream_chat(self, message: str, chat_history: History = None) -> StreamingAgentChatResponse:
        ask = self.chat_engine.stream_chat
        return self._attributor.answer(message, self._llm, ask, message, chat_history)

    @dispatcher.span
    async def astream_chat(
        self, message: str, chat_history: History = None
    ) -> StreamingAgentChatResponse:
        ask = self.chat_engine.astream_chat
        return await self._attributor.aanswer(message, self._llm, ask, message, chat_history)

    def reset(self) -> None:
        self.chat_engine.reset()

    @property
    def chat_history(self) -> list[ChatMessage]:
        return self.chat_engine.chat_history

    @property
    def _llm(self) -> object:
        return getattr(self.chat_engine, "_llm", None)


class CamabEventHandler(_Wrapper, BaseEventHandler):
    """Attribute every completed query of every query engine in place, as
    :class:`CamabQueryEngine` does (with its options), once ``CamabEventHandler.attach(
    scorer=...)`` added it to the root dispatcher. ``aquery`` in a running loop is
    attributed as a background task (pending until :meth:`aflush`), ``query`` inline;
    ``background`` forces either. ``results``: the latest 256 ``{"query_id", "query",
    "attribution"}``."""

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
        refused_if = f"{refused}, or mode='flag'" if background else None
        self._attributor = AnswerAttributor(scorer, "CamabEventHandler", refused_if, **options)
        self._background = background

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
        remember = partial(self._remember, {"query_id": query_id, "query": question})
        steps = self._attributor.turn(response, question, record, then=remember)
        if self.in_background(isinstance(response, STREAMS), ".aquery-" in query_id):
            self._attributor.start(response, steps, in_loop=True, key=query_id or uuid4().hex)
        else:
            drive(steps)

    def _remember(self, entry: dict[str, Any], answer: object) -> None:
        metadata = getattr(answer, "metadata", None) or {}
        self._results.append({**entry, "attribution": metadata.get(ATTRIBUTION_KEY)})

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
