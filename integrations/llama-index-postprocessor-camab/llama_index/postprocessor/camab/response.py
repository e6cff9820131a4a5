"""Attach an attribution to a LlamaIndex answer: the summary in its metadata, a copy of each
node with its own entry; a failure reads ``metadata["attribution"]["status"] == "error"``,
never an exception."""

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
from llama_index.postprocessor.camab.capture import QueryProgress, query_tracker
from llama_index.postprocessor.camab.scorers import ScorerCache

from camab_rag import integration as core

T = TypeVar("T")
logger = logging.getLogger(__name__)
ATTRIBUTION_KEY = "attribution"
"""The metadata key under which responses and nodes carry their attribution."""


def node_documents(nodes: Sequence[NodeWithScore]) -> list[core.SourceDocument]:
    """Each node as the text the LLM saw (content with LLM metadata, stripped)."""
    return [
        core.SourceDocument(n.node.get_content(MetadataMode.LLM).strip(), {"node_id": n.node_id})
        for n in nodes
    ]


def answer_nodes(response: object, record: core.SpanRecord | None) -> tuple[list[Any], str]:
    """The nodes to attribute ``response`` to (the response's sources, else the retrieved
    nodes that reached the LLM) and where they came from; raises when there are none."""
    if not isinstance(response, Response):
        raise core.InputError(
            f"cannot attribute a {type(response).__name__}: only a plain Response (not "
            "streaming or structured output) has the final text to attribute"
        )
    if not isinstance(response.response, str) or not response.response.strip():
        raise core.InputError("the response is empty: there is nothing to attribute")
    if response.source_nodes:
        return list(response.source_nodes), "response.source_nodes"
    retrieved = list(record.documents) if record is not None else []
    if not retrieved:
        raise core.NoContextError(
            "no nodes were retrieved for this query: the answer has no retrieved context "
            "to come from"
        )
    if not core.reached_the_model(record.prompts if record else [], node_documents(retrieved)):
        raise core.NoContextError(
            f"none of the {len(retrieved)} retrieved nodes reached the LLM "
            "(response.source_nodes is empty: e.g. a node post-processor discarded "
            "them all), so the answer has no retrieved context to come from"
        )
    return retrieved, "retrieval events"


def _with_attribution(node: Any, info: dict[str, Any]) -> Any:
    """A copy of ``node`` carrying ``info`` (shared nodes never mix attributions), the key
    excluded from what LLMs and embedding models see."""
    update: dict[str, Any] = {"metadata": {**node.metadata, ATTRIBUTION_KEY: info}}
    for name in ("excluded_llm_metadata_keys", "excluded_embed_metadata_keys"):
        keys = list(getattr(node, name))
        update[name] = keys if ATTRIBUTION_KEY in keys else [*keys, ATTRIBUTION_KEY]
    return node.model_copy(update=update)


def set_metadata(response: object, value: dict[str, Any]) -> None:
    """Set ``response.metadata["attribution"]`` (creating the dict if needed)."""
    if not isinstance(getattr(response, "metadata", None), dict):
        response.metadata = {}  # type: ignore[attr-defined]
    response.metadata[ATTRIBUTION_KEY] = value  # type: ignore[attr-defined]


def attach(response: Any, nodes: list[Any], source: str, done: core.CapturedAttribution) -> Any:
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
            entries = core.document_summary(result, len(nodes), segments=True)
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
                    {"node_id": n.node_id, **n.node.metadata[ATTRIBUTION_KEY]} for n in nodes
                ]
        if verdict is not None:
            summary["groundedness"] = verdict.to_dict()
            if verdict.blocked and isinstance(response, Response):
                response.response = verdict.answer
        set_metadata(response, summary)
    except Exception:  # pragma: no cover - a response type that refuses attributes
        logger.exception("camab: could not put the attribution on the response")
    return response


def _info(response: object, key: str | None = None, hint: str = "") -> Any:
    """``response.metadata["attribution"]`` (or its ``key``), else a ``KeyError``."""
    metadata = getattr(response, "metadata", None)
    info = metadata.get(ATTRIBUTION_KEY) if isinstance(metadata, Mapping) else None
    if key is not None:
        info = info.get(key) if isinstance(info, Mapping) else None
    if info is None:
        where = f"[{ATTRIBUTION_KEY!r}]" + (f"[{key!r}]" if key else "")
        raise KeyError(hint or f"the response has no metadata{where}")
    return info


def attribution_of(response: object) -> core.AttributionResult:
    """The :class:`~camab_rag.AttributionResult` stored on a response.

    Raises:
        KeyError: the response carries no attribution.
    """
    return core.AttributionResult.from_dict(_info(response))


def groundedness_of(response: object) -> core.FilteredAnswer:
    """The groundedness verdict stored on a response by a filter-equipped engine/handler.

    Raises:
        KeyError: the response carries no verdict (no ``groundedness=`` filter was set).
    """
    return core.FilteredAnswer.from_dict(_info(response, "groundedness"))


NOT_YET = (
    "this response has no attribution yet: a streamed answer is attributed once its stream "
    "has been read to the end"
)


def wait_for_attribution(response: object, timeout: float | None = None) -> dict[str, Any]:
    """The ``metadata["attribution"]`` of an answer, waiting (up to ``timeout`` seconds)
    for the attribution of a sync stream that was read to the end.

    Raises:
        KeyError: a stream not read to the end yet (nothing to wait for).
        TypeError: an async stream's attribution: ``await await_attribution(response)``.
        TimeoutError: not finished within ``timeout``.
    """
    core.wait_on(response, timeout, "await_attribution(response)")
    return dict(_info(response, hint=NOT_YET))


async def await_attribution(response: object) -> dict[str, Any]:
    """Async :func:`wait_for_attribution` (for sync and async streams alike); cancelling
    the caller leaves the attribution running."""
    await core.await_on(response)
    return dict(_info(response, hint=NOT_YET))


STREAMS = (StreamingResponse, AsyncStreamingResponse, StreamingAgentChatResponse)
HOW_TO_WAIT = (
    "Await await_attribution(response) before the event loop ends (e.g. at the end of the "
    "coroutine given to asyncio.run)"
)


class ResponseAttributor:
    """What a wrapper or handler attributes with: the scorer, the settings (default
    :data:`~camab_rag.integration.CHAIN_SETTINGS`), the scorers built from LLMs (with the
    ``proxy`` and ``scorer_options``), the ``progress`` hook, the query records and the
    runs (background attributions of streamed answers)."""

    def __init__(
        self,
        scorer: Any = None,
        settings: core.AttributionSettings | None = None,
        proxy: Any = None,
        scorer_options: Mapping[str, Any] | None = None,
        progress: core.ProgressFn | None = None,
    ) -> None:
        self.scorer = core.checked_scorer(scorer)
        self.config = settings or core.CHAIN_SETTINGS
        self.progress = progress
        self.scorers = ScorerCache(proxy, scorer_options)
        self.tracker = query_tracker()
        self.runs: core.ChainRuns[Any] = core.ChainRuns(self.config, keep=256)

    def begin(self, query: str) -> core.SpanRecord | None:
        """The record of the active span, marked as attributed by this wrapper (so an event
        handler leaves the query to it)."""
        span_id = active_span_id.get()
        return None if span_id is None else self.tracker.open_record(span_id, query, True)

    def steps(
        self, response: Any, question: str, record: core.SpanRecord | None, llm: object = None
    ) -> core.Steps[Any]:
        """Attribute ``response`` in place (never raises), as a generator of model calls."""
        text = getattr(response, "response", None)
        call = core.ChainCall(question, text if isinstance(text, str) else "")
        nodes: list[Any] = []
        source = ""
        try:
            nodes, source = answer_nodes(response, record)
        except Exception as error:
            call.problem = error
        if record is not None:
            llm = record.model if record.model is not None else llm
            call.prompts = record.prompts
        call.documents = node_documents(nodes)
        call.scorer = lambda: self.scorers.get(llm, self.scorer)
        call.progress = QueryProgress(question, self.progress)
        attributed = yield from core.chain_steps(call, self.config)
        return attach(response, nodes, source, attributed)

    def turn(
        self,
        turn: T,
        question: str,
        record: core.SpanRecord | None,
        llm: object = None,
        then: Callable[[T], object] = lambda turn: None,
    ) -> core.Steps[T]:
        """Attribute a finished answer (a ``Response`` in place, a chat turn through a copy),
        or make a stream attribute itself in the background once read; ``then(turn)`` runs
        after the attribution."""
        answer: Any = turn

        def attributed(final: Any) -> core.Steps[T]:
            yield from self.steps(final, question, record, llm)
            if final is not answer:  # carry the attribution back to the turn
                answer.source_nodes, answer.metadata = final.source_nodes, final.metadata
                if not isinstance(answer, (StreamingResponse, AsyncStreamingResponse)):
                    answer.response = final.response  # a blocking filter's fallback
            then(turn)
            return turn

        if isinstance(answer, AgentChatResponse):
            metadata = dict(getattr(answer, "metadata", None) or {})
            final = Response(answer.response, list(answer.source_nodes), metadata)
            return (yield from attributed(final))
        if not isinstance(answer, STREAMS):
            return (yield from attributed(answer))

        def end(text: str, in_loop: bool) -> None:  # the stream was read to the end
            if isinstance(answer, StreamingAgentChatResponse):
                text = answer.response
            else:
                answer.response_txt = text
            metadata = getattr(answer, "metadata", None) or {}
            final = Response(text, list(answer.source_nodes), dict(metadata))
            set_metadata(answer, placeholder := core.pending())
            self.runs.start_on(
                answer, attributed(final), [placeholder], HOW_TO_WAIT, in_loop=in_loop
            )

        if isinstance(answer, StreamingAgentChatResponse):
            _ChatStream.wrap(answer, record, end)
        elif isinstance(answer, AsyncStreamingResponse):
            answer.response_gen = core.aread_for(
                record, answer.response_gen, lambda t: end(t, True)
            )
        else:
            answer.response_gen = core.read_for(
                record, answer.response_gen, lambda t: end(t, False)
            )
        return turn


class _ChatStream(StreamingAgentChatResponse):
    """A chat stream that calls ``end`` once its last token has been read (by whichever
    of its two generators ends first)."""

    @classmethod
    def wrap(
        cls, stream: Any, record: core.SpanRecord | None, end: Callable[[str, bool], None]
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
        return core.read_for(self.__dict__.get("_camab", (None,))[0], tokens, self._end(False))

    def async_response_gen(self) -> AsyncGenerator[str, None]:
        record = self.__dict__.get("_camab", (None,))[0]
        return core.aread_for(record, super().async_response_gen(), self._end(True))


def _attribute_steps(
    response: Any,
    question: str,
    *,
    scorer: Any = None,
    config: core.AttributionSettings | None = None,
    llm: object = None,
    progress: core.ProgressFn | None = None,
) -> core.Steps[Any]:
    """Attribute ``response`` in place; never raises (a failure goes to its metadata).
    A groundedness verdict lands in ``metadata["attribution"]["groundedness"]``."""
    return ResponseAttributor(scorer, config, progress=progress).steps(
        response, question, None, llm
    )


attribute_response = core.synced(_attribute_steps, "attribute_response")
aattribute_response = core.asynced(
    _attribute_steps, "aattribute_response", "Async :func:`attribute_response` (``ascore``)."
)
