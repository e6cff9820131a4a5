"""Wrapped engines whose answers carry their attribution."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from llama_index.core.prompts.mixin import PromptMixinType
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.postprocessor.camab.attributor import AnswerAttributor

from camab_rag.errors import InputError

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
        """The settings every answer is attributed with."""
        return self._attributor.settings


class CamabQueryEngine(_Wrapper, BaseQueryEngine):
    """Wrap a query engine so every response carries its attribution
    (``response.metadata["attribution"]``, each source node's ``metadata["attribution"]``);
    a stream is attributed in the background once read to the end.

    ``scorer``: ``None`` builds it from the engine's LLM. ``options``: the knobs of
    :func:`camab_rag.attribute` (a blocking ``groundedness`` filter replaces an
    unsupported answer) and :class:`~camab_rag.integration.AttributorOptions`.
    """

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
        self,
        chat_engine: BaseChatEngine,
        scorer: Any = None,
        **options: Unpack[AttributorOptions],
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
