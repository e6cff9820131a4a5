"""``CamabChatEngine``: every turn of a LlamaIndex chat engine attributed to its own nodes."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from typing import Any, TypeVar

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.base.response.schema import Response
from llama_index.core.chat_engine.types import (
    AGENT_CHAT_RESPONSE_TYPE,
    AgentChatResponse,
    BaseChatEngine,
    StreamingAgentChatResponse,
)
from llama_index.core.instrumentation import get_dispatcher
from llama_index.postprocessor.camab.capture import QueryRecord, streaming_for
from llama_index.postprocessor.camab.response import AttributingWrapper, ResponseAttributor
from llama_index.postprocessor.camab.streaming import aread_for, read_for, start_after_stream

from camab_rag.integration import (
    AttributionSettings,
    ChainRuns,
    InputError,
    ProgressFn,
    Steps,
    adrive,
    drive,
)

dispatcher = get_dispatcher(__name__)
_Turn = TypeVar("_Turn", AgentChatResponse, StreamingAgentChatResponse)


class CamabChatEngine(AttributingWrapper, BaseChatEngine):
    """Wrap a chat engine so each turn's answer carries its attribution.

    For retrieval chat engines (``chat_mode="context"`` or ``"condense_plus_context"``):
    each turn is attributed to the nodes retrieved for that turn, against the prompt the
    LLM received, with the same fields as
    :class:`~llama_index.postprocessor.camab.CamabQueryEngine`. ``chat``/``achat``
    attribute before returning; a stream is attributed in the background once read
    (``wait_for_attribution`` / ``await_attribution``).

    Args:
        chat_engine: the chat engine to wrap.
        scorer: scores subsets of the context; ``None`` builds one from the engine's LLM.
        settings, proxy, scorer_options, progress: as in
            :class:`~llama_index.postprocessor.camab.CamabQueryEngine`.
    """

    def __init__(
        self,
        chat_engine: BaseChatEngine,
        scorer: Any = None,
        *,
        settings: AttributionSettings | None = None,
        proxy: Any = None,
        scorer_options: Mapping[str, Any] | None = None,
        progress: ProgressFn | None = None,
    ) -> None:
        if not isinstance(chat_engine, BaseChatEngine):
            raise InputError(
                f"chat_engine must be a LlamaIndex BaseChatEngine, got {type(chat_engine).__name__}"
            )
        self.chat_engine = chat_engine
        self._attributor = ResponseAttributor(
            scorer, settings, proxy=proxy, scorer_options=scorer_options, progress=progress
        )

    # ------------------------------------------------------------------ turns
    @dispatcher.span
    def chat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> AGENT_CHAT_RESPONSE_TYPE:
        record = self._attributor.begin(message)
        response = self.chat_engine.chat(message, chat_history)
        return drive(self._turn_steps(response, message, record))

    @dispatcher.span
    async def achat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> AGENT_CHAT_RESPONSE_TYPE:
        record = self._attributor.begin(message)
        response = await self.chat_engine.achat(message, chat_history)
        return await adrive(self._turn_steps(response, message, record))

    def _turn_steps(
        self, response: AGENT_CHAT_RESPONSE_TYPE, message: str, record: QueryRecord | None
    ) -> Steps[AGENT_CHAT_RESPONSE_TYPE]:
        """A finished turn, attributed (one path for ``chat`` and ``achat``)."""
        if not isinstance(response, AgentChatResponse):
            return response  # an agent's stream: not a finished answer
        final = _as_response(response)
        yield from self._attributor.steps(final, message, record, self._llm)
        return _carry(final, response)

    @dispatcher.span
    def stream_chat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> StreamingAgentChatResponse:
        record = self._attributor.begin(message)
        with streaming_for(record):  # the engine's reader thread copies this context
            stream = self.chat_engine.stream_chat(message, chat_history)
        return _AttributedChatStream.wrap(
            stream, self._finish_steps(message, record), record, self._attributor.runs
        )

    @dispatcher.span
    async def astream_chat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> StreamingAgentChatResponse:
        record = self._attributor.begin(message)
        with streaming_for(record):  # the engine's reader task copies this context
            stream = await self.chat_engine.astream_chat(message, chat_history)
        return _AttributedChatStream.wrap(
            stream, self._finish_steps(message, record), record, self._attributor.runs
        )

    def _finish_steps(
        self, message: str, record: QueryRecord | None
    ) -> Callable[[Response], Steps[Any]]:
        """What a stream runs on its final answer once read (sync or async alike)."""
        return lambda final: self._attributor.steps(final, message, record, self._llm)

    def reset(self) -> None:
        self.chat_engine.reset()

    @property
    def chat_history(self) -> list[ChatMessage]:
        return self.chat_engine.chat_history

    @property
    def _llm(self) -> object:
        return getattr(self.chat_engine, "_llm", None)


class _AttributedChatStream(StreamingAgentChatResponse):
    """A chat stream that attributes its answer once its last token has been read."""

    @classmethod
    def wrap(
        cls,
        stream: StreamingAgentChatResponse,
        finish: Callable[[Response], Steps[Any]],
        record: QueryRecord | None,
        runs: ChainRuns[Any],
    ) -> StreamingAgentChatResponse:
        stream.__class__ = cls  # same fields: only the two generators change
        stream.__dict__["_camab_runs"] = runs  # where the background attribution runs
        stream.__dict__["_camab_finish"] = finish  # taken by whichever generator ends first
        stream.__dict__["_camab_record"] = record  # the turn its LLM call is captured for
        return stream

    @property
    def response_gen(self) -> Generator[str, None, None]:
        tokens = StreamingAgentChatResponse.response_gen.fget(self)  # type: ignore[attr-defined]
        yield from read_for(self.__dict__.get("_camab_record"), tokens)
        self._attribute_in_background(in_loop=False)

    async def async_response_gen(self) -> AsyncGenerator[str, None]:
        async for token in aread_for(
            self.__dict__.get("_camab_record"), super().async_response_gen()
        ):
            yield token
        self._attribute_in_background(in_loop=True)

    def _attribute_in_background(self, *, in_loop: bool) -> None:
        """Once the last token was read: the attribution starts without holding the
        reader up (``wait_for_attribution`` / ``await_attribution`` wait for it)."""
        finish = self.__dict__.pop("_camab_finish", None)  # the generator that ends first
        if finish is not None:
            final = _as_response(self)
            runs = self.__dict__["_camab_runs"]
            start_after_stream(
                self, finish(final), lambda: _carry(final, self), runs, in_loop=in_loop
            )


def _as_response(turn: AgentChatResponse | StreamingAgentChatResponse) -> Response:
    """The turn as the ``Response`` the attribution reads and annotates (a stream has no
    ``metadata`` until attributed)."""
    metadata = getattr(turn, "metadata", None) or {}
    return Response(turn.response, list(turn.source_nodes), dict(metadata))


def _carry(final: Response, turn: _Turn) -> _Turn:
    """Put the attribution back on the chat turn (a stream gains ``metadata``)."""
    turn.source_nodes = final.source_nodes
    turn.metadata = final.metadata  # type: ignore[attr-defined,union-attr,unused-ignore]
    if final.response is not None:
        turn.response = final.response  # a blocking filter's fallback
    return turn
