"""One attach path for every LlamaIndex answer: a query's ``Response``, a chat turn, or a
stream (attributed in the background once read to the end). The result goes on the
answer's metadata and on copies of its nodes; a failure reads
``metadata["attribution"]["status"] == "error"``, never an exception."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from typing import Any, TypeVar

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.chat_engine.types import AgentChatResponse, StreamingAgentChatResponse
from llama_index.core.instrumentation.span import active_span_id
from llama_index.core.schema import MetadataMode, NodeWithScore
from llama_index.postprocessor.camab.capture import query_tracker
from llama_index.postprocessor.camab.events import QueryProgress
from llama_index.postprocessor.camab.scorers import ScorerCache

from camab_rag.integration import (
    CHAIN_SETTINGS,
    AttributionResult,
    AttributionSettings,
    CapturedAttribution,
    ChainCall,
    ChainRuns,
    FilteredAnswer,
    InputError,
    NoContextError,
    ProgressFn,
    SourceDocument,
    SpanRecord,
    Steps,
    aread_for,
    asynced,
    await_on,
    chain_steps,
    checked_scorer,
    document_summary,
    pending,
    reached_the_model,
    read_for,
    synced,
    wait_on,
)

T = TypeVar("T")
logger = logging.getLogger(__name__)
ATTRIBUTION_KEY = "attribution"
"""The metadata key under which responses and nodes carry their attribution."""
STREAMS = (StreamingResponse, AsyncStreamingResponse, StreamingAgentChatResponse)
HOW_TO_WAIT = (
    "Await await_attribution(response) before the event loop ends (e.g. at the end of the "
    "coroutine given to asyncio.run)"
)


def node_documents(nodes: Sequence[NodeWithScore]) -> list[SourceDocument]:
    """Each node as the text the LLM saw (content with LLM metadata, stripped)."""
    return [
        SourceDocument(n.node.get_content(MetadataMode.LLM).strip(), {"node_id": n.node.node_id})
        for n in nodes
    ]


def _nodes(response: object, record: SpanRecord | None) -> tuple[list[NodeWithScore], str]:
    """The response's sources, else the retrieved nodes that reached the LLM; raises when
    there is nothing to attribute."""
    if not isinstance(response, Response):
        raise InputError(
            f"cannot attribute a {type(response).__name__}: only a plain Response (not "
            "streaming or structured output) has the final text to attribute"
        )
    if not isinstance(response.response, str) or not response.response.strip():
        raise InputError("the response is empty: there is nothing to attribute")
    if response.source_nodes:
        return list(response.source_nodes), "response.source_nodes"
    retrieved = list(record.documents) if record is not None else []
    if not retrieved:
        raise NoContextError(
            "no nodes were retrieved for this query: the answer has no retrieved context "
            "to come from"
        )
    if not reached_the_model(record.prompts if record else [], node_documents(retrieved)):
        raise NoContextError(
            f"none of the {len(retrieved)} retrieved nodes reached the LLM "
            "(response.source_nodes is empty: e.g. a node post-processor discarded "
            "them all), so the answer has no retrieved context to come from"
        )
    return retrieved, "retrieval events"


def _with_attribution(node: Any, info: dict[str, Any]) -> Any:
    """A copy of ``node`` carrying ``info`` (shared nodes never mix attributions), the key
    excluded from what LLMs and embedding models see."""
    excluded = {
        f"excluded_{k}_metadata_keys": [
            *[
                key
                for key in getattr(node, f"excluded_{k}_metadata_keys")
                if key != ATTRIBUTION_KEY
            ],
            ATTRIBUTION_KEY,
        ]
        for k in ("llm", "embed")
    }
    return node.model_copy(
        update={"metadata": {**node.metadata, ATTRIBUTION_KEY: info}, **excluded}
    )


def set_metadata(response: object, value: dict[str, Any]) -> None:
    """Set ``response.metadata["attribution"]`` (creating the dict if needed)."""
    if not isinstance(getattr(response, "metadata", None), dict):
        response.metadata = {}  # type: ignore[attr-defined]
    response.metadata[ATTRIBUTION_KEY] = value  # type: ignore[attr-defined]


def _attach(
    response: Any, nodes: list[NodeWithScore], source: str, done: CapturedAttribution
) -> Any:
    """The result (a copy of each node with its entry, the summary in the response's
    metadata) and the filter's verdict, in place; a blocked answer's text is replaced by
    the fallback (the original stays in ``groundedness.original_answer``)."""
    result, verdict = done.result, done.verdict
    summary: dict[str, Any] = {**result.to_dict(), "prompt_source": None}
    try:
        if result.status == "ok":
            if result.prompt_mode != "captured":
                logger.info("camab attribution of %r: %s", result.question[:80], result.prompt_note)
            extra = {"method": result.method, "n_queries": result.n_queries}
            entries = document_summary(result, len(nodes), segments=True)
            nodes = [
                NodeWithScore(node=_with_attribution(n.node, {**e, **extra}), score=n.score)
                for n, e in zip(nodes, entries)
            ]
            summary.update(prompt_source=result.prompt_mode, node_source=source)
            summary["node_ids"] = [n.node.node_id for n in nodes]
            if source == "response.source_nodes":
                response.source_nodes = nodes
            else:
                summary["nodes"] = [
                    {"node_id": n.node.node_id, **n.node.metadata[ATTRIBUTION_KEY]} for n in nodes
                ]
        if verdict is not None:
            summary["groundedness"] = verdict.to_dict()
            if verdict.blocked and isinstance(response, Response):
                response.response = verdict.answer
        set_metadata(response, summary)
    except Exception:  # pragma: no cover - a response type that refuses attributes
        logger.exception("camab: could not put the attribution on the response")
    return response


def _response_steps(
    response: Any,
    question: str,
    *,
    scorer: Any = None,
    config: AttributionSettings | None = None,
    record: SpanRecord | None = None,
    llm: object = None,
    scorers: ScorerCache | None = None,
    progress: ProgressFn | None = None,
) -> Steps[Any]:
    """Attribute ``response`` in place; never raises (a failure goes to its metadata).
    A groundedness verdict lands in ``metadata["attribution"]["groundedness"]``."""
    text = getattr(response, "response", None)
    call = ChainCall(question, text if isinstance(text, str) else "")
    nodes: list[NodeWithScore] = []
    source = ""
    try:
        nodes, source = _nodes(response, record)
    except Exception as error:
        call.problem = error
    cache = scorers or ScorerCache()
    llm = record.model if record is not None and record.model is not None else llm
    call.documents = node_documents(nodes)
    call.scorer = lambda: cache.get(llm, scorer)
    call.prompts = record.prompts if record is not None else []
    call.progress = QueryProgress(question, progress)
    return _attach(
        response, nodes, source, (yield from chain_steps(call, config or CHAIN_SETTINGS))
    )


attribute_response = synced(_response_steps, "attribute_response")
aattribute_response = asynced(
    _response_steps, "aattribute_response", "Async :func:`attribute_response` (``ascore``)."
)


def attribution_of(response: object) -> AttributionResult:
    """The :class:`~camab_rag.AttributionResult` stored on a response.

    Raises:
        KeyError: the response carries no attribution.
    """
    metadata = getattr(response, "metadata", None)
    if not isinstance(metadata, Mapping) or ATTRIBUTION_KEY not in metadata:
        raise KeyError(f"the response has no metadata[{ATTRIBUTION_KEY!r}]")
    return AttributionResult.from_dict(metadata[ATTRIBUTION_KEY])


def groundedness_of(response: object) -> FilteredAnswer:
    """The groundedness verdict stored on a response by a filter-equipped engine/handler.

    Raises:
        KeyError: the response carries no verdict (no ``groundedness=`` filter was set).
    """
    metadata = getattr(response, "metadata", None)
    data = metadata.get(ATTRIBUTION_KEY) if isinstance(metadata, Mapping) else None
    if not isinstance(data, Mapping) or data.get("groundedness") is None:
        raise KeyError(f"the response has no metadata[{ATTRIBUTION_KEY!r}]['groundedness']")
    return FilteredAnswer.from_dict(data["groundedness"])


class ResponseAttributor:
    """What a wrapper or handler attributes with: the scorer, the settings (default
    :data:`~camab_rag.integration.CHAIN_SETTINGS`), the scorers built from LLMs (with the
    ``proxy`` and ``scorer_options``), the ``progress`` hook, the query records and the
    runs (background attributions of streamed answers)."""

    def __init__(
        self,
        scorer: Any = None,
        settings: AttributionSettings | None = None,
        *,
        proxy: Any = None,
        scorer_options: Mapping[str, Any] | None = None,
        progress: ProgressFn | None = None,
    ) -> None:
        self.scorer = checked_scorer(scorer)
        self.config = settings or CHAIN_SETTINGS
        self.progress = progress
        self.scorers = ScorerCache(proxy, scorer_options)
        self.tracker = query_tracker()
        self.runs: ChainRuns[Any] = ChainRuns(self.config, keep=256)

    def begin(self, query: str) -> SpanRecord | None:
        """The record of the active span, marked as attributed by this wrapper (so an event
        handler leaves the query to it)."""
        span_id = active_span_id.get()
        return None if span_id is None else self.tracker.open_record(span_id, query, True)

    def steps(
        self, response: Any, question: str, record: SpanRecord | None, llm: object = None
    ) -> Steps[Any]:
        """Attribute ``response`` in place (never raises), as a generator of model calls."""
        return _response_steps(
            response,
            question,
            scorer=self.scorer,
            config=self.config,
            record=record,
            llm=llm,
            scorers=self.scorers,
            progress=self.progress,
        )

    def turn(
        self,
        turn: T,
        question: str,
        record: SpanRecord | None,
        llm: object = None,
        then: Callable[[T], object] = lambda turn: None,
    ) -> Steps[T]:
        """Attribute a finished answer (a ``Response`` in place, a chat turn through a copy),
        or make a stream attribute itself in the background once read; ``then(turn)`` runs
        after the attribution."""
        answer: Any = turn

        def attributed(final: Any) -> Steps[T]:
            yield from self.steps(final, question, record, llm)
            if final is not answer:  # carry the attribution back to the turn
                answer.source_nodes, answer.metadata = final.source_nodes, final.metadata
                if not isinstance(answer, (StreamingResponse, AsyncStreamingResponse)):
                    answer.response = final.response  # a blocking filter's fallback
            then(turn)
            return turn

        if not isinstance(answer, STREAMS):
            return (yield from attributed(_as_response(answer)))

        def end(text: str, in_loop: bool) -> None:  # the stream was read to the end
            if isinstance(answer, StreamingAgentChatResponse):
                text = answer.response
            else:
                answer.response_txt = text
            metadata = getattr(answer, "metadata", None) or {}
            final = Response(text, list(answer.source_nodes), dict(metadata))
            placeholder = pending()
            set_metadata(answer, placeholder)
            self.runs.start_on(
                answer, attributed(final), [placeholder], HOW_TO_WAIT, in_loop=in_loop
            )

        if isinstance(answer, StreamingAgentChatResponse):
            _ChatStream.wrap(answer, record, end)
        elif isinstance(answer, AsyncStreamingResponse):
            answer.response_gen = aread_for(record, answer.response_gen, lambda t: end(t, True))
        else:
            answer.response_gen = read_for(record, answer.response_gen, lambda t: end(t, False))
        return turn


def _as_response(turn: Any) -> Any:
    """A chat turn as the ``Response`` the attribution reads and annotates."""
    if isinstance(turn, AgentChatResponse):
        return Response(turn.response, list(turn.source_nodes), dict(turn.metadata or {}))
    return turn


class _ChatStream(StreamingAgentChatResponse):
    """A chat stream that calls ``end`` once its last token has been read (by whichever
    of its two generators ends first)."""

    @classmethod
    def wrap(
        cls,
        stream: StreamingAgentChatResponse,
        record: SpanRecord | None,
        end: Callable[[str, bool], None],
    ) -> None:
        stream.__class__ = cls  # same fields: only the two generators change
        stream.__dict__["_camab"] = (record, end)

    def _end(self, in_loop: bool) -> Callable[[str], None]:
        def once(text: str) -> None:
            end = self.__dict__.pop("_camab", (None, None))[1]
            if end is not None:
                end(text, in_loop)

        return once

    @property
    def response_gen(self) -> Generator[str, None, None]:
        tokens = StreamingAgentChatResponse.response_gen.fget(self)  # type: ignore[attr-defined]
        return read_for(self.__dict__.get("_camab", (None,))[0], tokens, self._end(False))

    def async_response_gen(self) -> AsyncGenerator[str, None]:
        record = self.__dict__.get("_camab", (None,))[0]
        return aread_for(record, super().async_response_gen(), self._end(True))


def _attribution(response: object, started: bool) -> dict[str, Any]:
    metadata = getattr(response, "metadata", None)
    if not started and not (isinstance(metadata, dict) and ATTRIBUTION_KEY in metadata):
        raise KeyError(
            "this response has no attribution yet: a streamed answer is attributed once "
            "its stream has been read to the end"
        )
    return dict(response.metadata[ATTRIBUTION_KEY])  # type: ignore[attr-defined]


def wait_for_attribution(response: object, timeout: float | None = None) -> dict[str, Any]:
    """The ``metadata["attribution"]`` of an answer, waiting (up to ``timeout`` seconds)
    for the attribution of a sync stream that was read to the end.

    Raises:
        KeyError: a stream not read to the end yet (nothing to wait for).
        TypeError: an async stream's attribution: ``await await_attribution(response)``.
        TimeoutError: not finished within ``timeout``.
    """
    return _attribution(response, wait_on(response, timeout, "await_attribution(response)"))


async def await_attribution(response: object) -> dict[str, Any]:
    """Async :func:`wait_for_attribution` (for sync and async streams alike); cancelling
    the caller leaves the attribution running."""
    return _attribution(response, await await_on(response))
