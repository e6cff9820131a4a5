"""How the engines and the handler attribute an answer: a ``Response`` in place, a chat
turn through a copy, a stream once read to the end."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.chat_engine.types import AgentChatResponse, StreamingAgentChatResponse
from llama_index.core.instrumentation.span import active_span_id
from llama_index.postprocessor.camab.answers import (
    ANSWER_JOB,
    answer_documents,
    attach,
    node_documents,
    set_attribution,
)
from llama_index.postprocessor.camab.spans import (
    SpanRecord,
    aread_for,
    progress_events,
    query_tracker,
    read_for,
    streaming_for,
)

from camab_rag.errors import InputError
from camab_rag.integration import Attachment, AttributorOptions, ChainCall, ProgressRelay, Runs
from camab_rag.scorers.proxy import is_openai_endpoint, register_model_reader
from camab_rag.steps import adrive, drive

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from camab_rag.integration import Steps

T = TypeVar("T")
STREAMS = (StreamingResponse, AsyncStreamingResponse, StreamingAgentChatResponse)


class AnswerAttributor:
    """How the engines and the handler attribute answers; ``owner`` names one in errors."""

    def __init__(
        self,
        scorer: Any = None,
        owner: str = "CamabQueryEngine",
        blocking_refused: str | None = None,
        **options: Unpack[AttributorOptions],
    ) -> None:
        self.runs = runs = Runs.of(
            owner, scorer, options, listed=AttributorOptions, blocking_refused=blocking_refused
        )
        self.settings, self.scorers = runs.settings, runs.scorers
        self.tracker = query_tracker()

    def begin(self, question: str) -> SpanRecord | None:
        """The active span's record, marked as this wrapper's (a global handler leaves it)."""
        span_id = active_span_id.get()
        return None if span_id is None else self.tracker.open_record(span_id, question, True)

    def steps(
        self, response: Any, question: str, record: SpanRecord | None, llm: object = None
    ) -> Steps[Any]:
        """Attribute ``response`` in place to its source nodes (else to the nodes ``record``
        retrieved that reached the model), in the prompts ``record`` captured, scored by
        its model's scorer (else ``llm``'s); never raises."""
        text = getattr(response, "response", None)
        call = ChainCall(question, text if isinstance(text, str) else "")
        call.progress = ProgressRelay(self.runs.progress, progress_events(question), None)
        if not isinstance(response, Response):
            call.problem = InputError(
                f"cannot attribute a {type(response).__name__}: only a plain Response (not "
                "streaming or structured output) has the final text to attribute"
            )
        sources = response.source_nodes if isinstance(response, Response) else []
        retrieved: list[Any] = []
        if record is not None:
            llm = record.model if record.model is not None else llm
            call.prompts, retrieved = record.prompts, list(record.documents)
            call.problem = call.problem or record.placeholder(call.answer)
        documents: list[Any] = []
        own = bool(sources)
        try:  # never raises: e.g. no documents, or the input gate refused one: the failed result
            if call.problem is None:
                documents, own = answer_documents(call.answer, sources, retrieved, call.prompts)
            call.documents = node_documents(documents)
        except Exception as error:
            call.problem = call.problem or error
        call.scorer = partial(self.scorers.get, llm)
        finish = lambda attributed: attach(response, attributed, documents, own)  # noqa: E731
        return (yield from self.runs.steps(None, call, finish))

    def turn(
        self,
        turn: T,
        question: str,
        record: SpanRecord | None,
        llm: object = None,
        then: Callable[[T], object] = lambda turn: None,
    ) -> Steps[T]:
        """Attribute a ``Response`` in place, a chat turn through a copy, or a stream in the
        background once read; then ``then(turn)``."""
        answer: Any = turn

        def attributed(final: Any) -> Steps[T]:
            yield from self.steps(final, question, record, llm)
            if final is not answer:  # carry the attribution back to the turn
                answer.source_nodes, answer.metadata = final.source_nodes, final.metadata
                if not isinstance(answer, (StreamingResponse, AsyncStreamingResponse)):
                    answer.response = final.response  # a blocking filter's fallback
            then(turn)
            return turn

        if isinstance(answer, AgentChatResponse):
            return (yield from attributed(_as_response(answer, answer.response)))
        if not isinstance(answer, STREAMS):
            return (yield from attributed(answer))

        def end(text: str, in_loop: bool) -> None:  # the stream was read to the end
            if not isinstance(answer, StreamingAgentChatResponse):
                answer.response_txt = text
            self.start(answer, attributed(_as_response(answer, text)), in_loop=in_loop)

        if isinstance(answer, StreamingAgentChatResponse):
            _ChatStream.wrap(answer, record, end)
            return turn
        in_loop = isinstance(answer, AsyncStreamingResponse)
        read: Any = aread_for if in_loop else read_for
        answer.response_gen = read(record, answer.response_gen, partial(end, in_loop=in_loop))
        return turn

    def answer(self, question: str, llm: object, ask: Callable[..., T], *args: Any) -> T:
        """``ask(*args)`` the wrapped engine inside ``question``'s record, then attribute
        its answer (:meth:`turn`)."""
        record = self.begin(question)
        with streaming_for(record):
            answer = ask(*args)
        return drive(self.turn(answer, question, record, llm))

    async def aanswer(
        self, question: str, llm: object, ask: Callable[..., Awaitable[T]], *args: Any
    ) -> T:
        """Async :meth:`answer`."""
        record = self.begin(question)
        with streaming_for(record):
            answer = await ask(*args)
        return await adrive(self.turn(answer, question, record, llm))

    def start(self, answer: object, steps: Steps[Any], *, in_loop: bool, key: Any = None) -> None:
        """Attribute ``answer`` in the background, pending until ``steps`` fill it; the
        handle is kept under ``key`` (a stream's, with no key, on the answer too)."""
        placeholder = Attachment.placeholders(key, 0).answer
        set_attribution(answer, placeholder)
        kept = id(answer) if key is None else key
        job = self.runs.start(kept, steps, [placeholder], in_loop=in_loop)
        if key is None:  # a stream: its handle on the answer, for wait_for_attribution
            setattr(answer, ANSWER_JOB, job)


def _as_response(answer: Any, text: str) -> Response:
    return Response(text, list(answer.source_nodes), dict(getattr(answer, "metadata", None) or {}))


class _ChatStream(StreamingAgentChatResponse):
    """A chat stream calling ``end`` once read (by whichever generator ends first)."""

    @classmethod
    def wrap(cls, stream: Any, record: SpanRecord | None, end: Callable[[str, bool], None]) -> None:
        stream.__class__ = cls  # same fields: only the two generators change
        stream.__dict__["_camab"] = (record, end)

    def _end(self, in_loop: bool, text: str) -> None:
        end = self.__dict__.pop("_camab", (None, None))[1]
        if end is not None:
            end(self.response, in_loop)  # the text as the engine keeps it (stripped)

    @property
    def response_gen(self) -> Generator[str, None, None]:
        tokens = StreamingAgentChatResponse.response_gen.fget(self)  # type: ignore[attr-defined]
        return read_for(self.__dict__.get("_camab", (None,))[0], tokens, partial(self._end, False))

    def async_response_gen(self) -> AsyncGenerator[str, None]:
        record = self.__dict__.get("_camab", (None,))[0]
        return aread_for(record, super().async_response_gen(), partial(self._end, True))


def attribute_response(
    response: Any,
    question: str,
    *,
    scorer: Any = None,
    llm: object = None,
    **options: Unpack[AttributorOptions],
) -> Any:
    """Attribute ``response`` in place, scored by ``scorer`` (default: ``llm``'s); never
    raises. ``options``: as :class:`CamabQueryEngine`'s."""
    attributor = AnswerAttributor(scorer, "attribute_response", **options)
    return drive(attributor.steps(response, question, None, llm))


async def aattribute_response(
    response: Any,
    question: str,
    *,
    scorer: Any = None,
    llm: object = None,
    **options: Unpack[AttributorOptions],
) -> Any:
    """Async :func:`attribute_response` (``ascore``)."""
    attributor = AnswerAttributor(scorer, "aattribute_response", **options)
    return await adrive(attributor.steps(response, question, None, llm))


def without_openai_key(llm: object) -> object:
    """``llm``, or a copy without its API key when that key is OpenAI's own and ``llm``
    talks to another server (``OpenAILike`` reads it when given none: not to be sent)."""
    key, base = getattr(llm, "api_key", None), getattr(llm, "api_base", None)
    if not (isinstance(key, str) and key and isinstance(base, str)) or is_openai_endpoint(base):
        return llm
    module = sys.modules.get("openai")
    openai_keys = {os.environ.get("OPENAI_API_KEY"), getattr(module, "api_key", None)}
    return llm if key not in openai_keys else llm.model_copy(update={"api_key": ""})  # type: ignore[attr-defined]


register_model_reader(without_openai_key)
