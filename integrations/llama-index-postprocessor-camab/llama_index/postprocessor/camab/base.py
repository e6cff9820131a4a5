"""camab-rag for LlamaIndex: attribute a query engine's answer to its source nodes.

Three entry points share one capture mechanism:

* :class:`CamabQueryEngine` wraps any ``BaseQueryEngine``; after each ``query`` /
  ``aquery`` it attributes the response text to ``response.source_nodes``.
* :class:`CamabEventHandler` is an instrumentation event handler: attached once to the
  dispatcher, it attributes every completed query of every query engine in the app.
* :class:`CamabNodePostprocessor` re-orders or filters nodes that already carry an
  attribution (the second pass of "answer, attribute, re-answer from supporting nodes").

Capture: a span handler on the root dispatcher records the span tree (each span's parent
and instance), so retrieval events and LLM start events are assigned to the query whose
span encloses them. Concurrent queries (threads or ``asyncio`` tasks) have disjoint span
trees, so their nodes and prompts never mix. The prompt the LLM actually received (chat
messages or completion text) is captured from ``LLMChatStartEvent`` /
``LLMCompletionStartEvent``; subsets are scored by cutting ablated node text out of that
prompt (:class:`camab_rag.prompts.SpanRemovalPromptBuilder`). When no single captured
prompt contains every node (e.g. ``refine`` response mode, several LLM calls), the default
camab-rag template is used and ``prompt_source``/``prompt_note`` in the attribution say so.

Attribution never breaks a query: on failure the response is returned unchanged, with
``response.metadata["attribution"]["status"] == "error"`` and the error message.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.callbacks import CallbackManager
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.dispatcher import Dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import (
    LLMChatStartEvent,
    LLMCompletionStartEvent,
)
from llama_index.core.instrumentation.events.query import QueryEndEvent, QueryStartEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.span import active_span_id
from llama_index.core.instrumentation.span.simple import SimpleSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.prompts.mixin import PromptDictType, PromptMixinType
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, QueryType
from llama_index.postprocessor.camab.events import QueryProgress
from pydantic import ConfigDict, Field, PrivateAttr

from camab_rag.captured import (
    AttributionSettings,
    captured_steps,
    document_summary,
    reached_the_model,
)
from camab_rag.errors import InputError, NoContextError
from camab_rag.groundedness import (
    FilteredAnswer,
    GroundednessFilter,
)
from camab_rag.result import AttributionResult
from camab_rag.rounds import Steps, asynced, synced
from camab_rag.scorers.chat_clients import scorer_from_chat_client
from camab_rag.scorers.proxy import own_or_proxy
from camab_rag.scoring import Prompt
from camab_rag.segments import Granularity, SourceDocument

logger = logging.getLogger(__name__)

ATTRIBUTION_KEY = "attribution"
"""The metadata key under which responses and nodes carry their attribution."""

_MAX_SPAN_DEPTH = 10_000


# ---------------------------------------------------------------------- configuration
AttributionConfig = AttributionSettings
"""How each response is attributed: the core's one settings object
(:class:`camab_rag.captured.AttributionSettings`: budget, method, granularity, seed,
options, groundedness), validated when it is built."""


# ---------------------------------------------------------------------- capture
@dataclass
class LLMCall:
    """One LLM call inside a query: the prompt it received and the LLM object."""

    span_id: str
    prompt: Prompt
    llm: Any
    ancestors: frozenset[str]


@dataclass
class QueryRecord:
    """What was captured inside one query span."""

    span_id: str
    query: str = ""
    managed: bool = False
    retrieved: list[NodeWithScore] = field(default_factory=list)
    calls: list[LLMCall] = field(default_factory=list)

    def add_call(self, call: LLMCall) -> None:
        # A call made inside another call of this query (e.g. chat() implemented through
        # complete()) replaces it: the inner prompt is what the model actually received.
        self.calls = [c for c in self.calls if c.span_id not in call.ancestors]
        self.calls.append(call)

    @property
    def llm(self) -> Any:
        return self.calls[-1].llm if self.calls else None


class _SpanTree(BaseSpanHandler[SimpleSpan]):
    """Records each open span's parent and instance; tells the tracker when spans close."""

    _instances: dict[str, Any] = PrivateAttr(default_factory=dict)
    _on_close: Callable[[str], None] | None = PrivateAttr(default=None)

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
    ) -> SimpleSpan | None:
        if instance is not None:
            with self.lock:
                self._instances[id_] = instance
        return SimpleSpan(id_=id_, parent_id=parent_span_id, tags=tags or {})

    def _close(self, id_: str) -> SimpleSpan | None:
        with self.lock:
            self._instances.pop(id_, None)
            span = self.open_spans.get(id_)
        if self._on_close is not None:
            self._on_close(id_)
        return span

    def prepare_to_exit_span(
        self,
        id_: str,
        bound_args: Any,
        instance: Any | None = None,
        result: Any | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        return self._close(id_)

    def prepare_to_drop_span(
        self,
        id_: str,
        bound_args: Any,
        instance: Any | None = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        return self._close(id_)

    def chain(self, span_id: str | None) -> list[str]:
        """``span_id`` and its open ancestors, innermost first."""
        chain: list[str] = []
        seen: set[str] = set()
        current = span_id
        with self.lock:
            while current is not None and current not in seen and len(chain) < _MAX_SPAN_DEPTH:
                chain.append(current)
                seen.add(current)
                span = self.open_spans.get(current)
                current = span.parent_id if span is not None else None
        return chain

    def instance(self, span_id: str) -> Any:
        with self.lock:
            return self._instances.get(span_id)


class _TrackerEvents(BaseEventHandler):
    """Feeds dispatcher events to the process-wide tracker."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    tracker: Any = None

    @classmethod
    def class_name(cls) -> str:
        return "CamabTrackerEvents"

    def handle(self, event: BaseEvent, **kwargs: Any) -> Any:
        self.tracker.on_event(event)


class QueryTracker:
    """Assigns retrieval and LLM events to the query spans that enclose them.

    One tracker per process, attached to the root dispatcher by :func:`query_tracker`. A
    record lives as long as its query span is open.
    """

    def __init__(self) -> None:
        self.spans = _SpanTree()
        self.spans._on_close = self._span_closed
        self.events = _TrackerEvents(tracker=self)
        self._records: dict[str, QueryRecord] = {}
        self._lock = threading.Lock()

    def attach(self, dispatcher: Dispatcher) -> None:
        if not any(h is self.spans for h in dispatcher.span_handlers):
            dispatcher.add_span_handler(self.spans)
        if not any(h is self.events for h in dispatcher.event_handlers):
            dispatcher.add_event_handler(self.events)

    def open_record(self, span_id: str, *, query: str = "", managed: bool = False) -> QueryRecord:
        """Start (or take over) the record of a query span."""
        with self._lock:
            record = self._records.get(span_id)
            if record is None:
                record = self._records[span_id] = QueryRecord(span_id, query, managed)
            record.managed = record.managed or managed
            if query and not record.query:
                record.query = query
            return record

    def record(self, span_id: str | None) -> QueryRecord | None:
        if span_id is None:
            return None
        with self._lock:
            return self._records.get(span_id)

    def records_for(self, span_id: str | None) -> list[QueryRecord]:
        """The records of ``span_id`` and its enclosing spans, innermost first."""
        chain = self.spans.chain(span_id)
        with self._lock:
            return [self._records[s] for s in chain if s in self._records]

    def _span_closed(self, span_id: str) -> None:
        with self._lock:
            self._records.pop(span_id, None)

    def on_event(self, event: BaseEvent) -> None:
        if isinstance(event, QueryStartEvent):
            if event.span_id is not None:
                self.open_record(event.span_id, query=query_text(event.query))
        elif isinstance(event, RetrievalEndEvent):
            for record in self.records_for(event.span_id):
                record.retrieved.extend(event.nodes)
        elif isinstance(event, (LLMChatStartEvent, LLMCompletionStartEvent)):
            self._on_llm_start(event)

    def _on_llm_start(self, event: LLMChatStartEvent | LLMCompletionStartEvent) -> None:
        if event.span_id is None:
            return
        chain = self.spans.chain(event.span_id)
        records = self.records_for(event.span_id)
        if not records:
            return
        prompt: Prompt
        if isinstance(event, LLMChatStartEvent):
            prompt = [_message_dict(m) for m in event.messages]
        else:
            prompt = event.prompt
        llm = None
        for span_id in chain:
            candidate = self.spans.instance(span_id)
            if candidate is not None and _looks_like_llm(candidate):
                llm = candidate
                break
        call = LLMCall(event.span_id, prompt, llm, frozenset(chain[1:]))
        with self._lock:
            for record in records:
                record.add_call(call)


_TRACKER: QueryTracker | None = None
_TRACKER_LOCK = threading.Lock()


def query_tracker() -> QueryTracker:
    """The process-wide tracker, attached to the root dispatcher on first use."""
    global _TRACKER
    with _TRACKER_LOCK:
        if _TRACKER is None:
            _TRACKER = QueryTracker()
        _TRACKER.attach(get_dispatcher())
        return _TRACKER


def _looks_like_llm(obj: object) -> bool:
    from llama_index.core.base.llms.base import BaseLLM

    return isinstance(obj, BaseLLM)


def _message_dict(message: Any) -> dict[str, str]:
    role = getattr(message, "role", "user")
    role_text = str(getattr(role, "value", role))
    content = getattr(message, "content", None)
    return {"role": role_text, "content": content if isinstance(content, str) else ""}


def query_text(query: QueryType) -> str:
    """The query string of a ``str`` or ``QueryBundle``."""
    if isinstance(query, str):
        return query
    return str(getattr(query, "query_str", query))


# ---------------------------------------------------------------------- scorers
def scorer_from_llm(llm: object, **options: Any) -> Any:
    """The scorer for a LlamaIndex LLM.

    * an LLM that carries its own scorer (``llm.scorer`` with a ``score`` method, e.g.
      :class:`~llama_index.postprocessor.camab.local.CamabLocalLLM`) uses it;
    * an OpenAI-compatible LLM (``OpenAILike``, or ``OpenAI`` with an ``api_base``) gets the
      HTTP scorer of its server (:func:`camab_rag.scorers.chat_clients.scorer_from_chat_client`);
    * anything else (OpenAI's own API included) is an
      :class:`~camab_rag.errors.InputError` asking for ``scorer=`` or ``proxy=``.

    ``options`` go to the HTTP scorer (e.g. ``retry_budget_s``, ``timeout``).
    """
    if llm is None:
        raise InputError(
            "no scorer: pass scorer=camab_rag.default_scorer() (or an OpenAICompletionsScorer), "
            "or use an OpenAI-compatible LLM (OpenAILike / OpenAI with api_base)"
        )
    own = getattr(llm, "scorer", None)
    if callable(getattr(own, "score", None)):
        return own
    api_base = getattr(llm, "api_base", None)
    if not isinstance(api_base, str) or not api_base:
        raise InputError(
            f"cannot build a scorer from {type(llm).__name__}: it is not OpenAI-compatible "
            "(no api_base). Pass scorer=camab_rag.default_scorer() or "
            "scorer=camab_rag.OpenAICompletionsScorer(base_url, model)"
        )
    return scorer_from_chat_client(llm, **options)


class _ScorerCache:
    """One scorer per LLM object (an HTTP scorer keeps its connection pool), or per given
    scorer; with a ``proxy``, each falls back to it when its model cannot score (and a
    model found unable is not asked again)."""

    def __init__(self, proxy: Any = None, options: Mapping[str, Any] | None = None) -> None:
        self.proxy = checked_scorer(proxy, "proxy")
        self.options = dict(options or {})
        self._cache: dict[int, tuple[object, Any]] = {}
        self._lock = threading.Lock()

    def get(self, llm: object, scorer: Any = None) -> Any:
        source = scorer if scorer is not None else llm
        with self._lock:
            hit = self._cache.get(id(source))
            if hit is not None and hit[0] is source:
                return hit[1]
        if scorer is not None:
            built = own_or_proxy(lambda: scorer, self.proxy)
        else:
            built = own_or_proxy(lambda: scorer_from_llm(llm, **self.options), self.proxy)
        with self._lock:
            self._cache[id(source)] = (source, built)
        return built


# ---------------------------------------------------------------------- one attribution
@dataclass
class _Job:
    question: str
    response: Response
    nodes: list[NodeWithScore]
    documents: list[SourceDocument]
    prompts: list[Prompt]
    node_source: str
    scorer: Any


def node_documents(nodes: Sequence[NodeWithScore]) -> list[SourceDocument]:
    """Each node as the text the LLM saw (content with LLM metadata, stripped)."""
    documents = []
    for nws in nodes:
        node = nws.node
        text = node.get_content(metadata_mode=MetadataMode.LLM).strip()
        documents.append(SourceDocument(text, {"node_id": node.node_id}))
    return documents


def _prepare(
    response: object,
    question: str,
    record: QueryRecord | None,
    scorer: Any,
    scorers: _ScorerCache,
    config: AttributionConfig,
    fallback_llm: object = None,
) -> _Job:
    if not isinstance(response, Response):
        raise InputError(
            f"cannot attribute a {type(response).__name__}: only a plain Response (not "
            "streaming or structured output) has the final text to attribute"
        )
    text = response.response
    if not isinstance(text, str) or not text.strip():
        raise InputError("the response is empty: there is nothing to attribute")
    nodes = list(response.source_nodes)
    node_source = "response.source_nodes"
    calls = record.calls if record is not None else []
    if not nodes and record is not None and record.retrieved:
        retrieved = list(record.retrieved)
        if not reached_the_model([c.prompt for c in calls], node_documents(retrieved)):
            raise NoContextError(
                f"none of the {len(retrieved)} retrieved nodes reached the LLM "
                "(response.source_nodes is empty: e.g. a node post-processor discarded "
                "them all), so the answer has no retrieved context to come from"
            )
        nodes, node_source = retrieved, "retrieval events"
    if not nodes:
        raise NoContextError(
            "no nodes were retrieved for this query: the answer has no retrieved context "
            "to come from"
        )
    documents = node_documents(nodes)
    llm = record.llm if record is not None and record.llm is not None else fallback_llm
    scorer = scorers.get(llm, scorer)
    prompts = [call.prompt for call in calls]
    return _Job(question, response, nodes, documents, prompts, node_source, scorer)


def _apply(job: _Job, result: AttributionResult) -> None:
    """Put the attribution on the response: a copy of each node with its entry (score,
    rank, supporting sentences, segments), and the summary in the response's metadata."""
    if result.prompt_mode != "captured":
        logger.info("camab attribution of %r: %s", job.question[:80], result.prompt_note)
    entries = document_summary(result, len(job.documents), segments=True)
    new_nodes = [
        NodeWithScore(
            node=_with_attribution(
                nws.node, {**entry, "method": result.method, "n_queries": result.n_queries}
            ),
            score=nws.score,
        )
        for nws, entry in zip(job.nodes, entries)
    ]
    summary = {
        **result.to_dict(),
        "prompt_source": result.prompt_mode,
        "node_source": job.node_source,
        "node_ids": [nws.node.node_id for nws in job.nodes],
    }
    if job.node_source == "response.source_nodes":
        job.response.source_nodes = new_nodes
    else:
        summary["nodes"] = [
            {"node_id": n.node.node_id, **n.node.metadata[ATTRIBUTION_KEY]} for n in new_nodes
        ]
    _set_metadata(job.response, summary)


def _with_attribution(node: Any, info: dict[str, Any]) -> Any:
    """A copy of ``node`` whose metadata carries ``info`` (the original is untouched, so a
    node shared between queries never mixes attributions); the key is excluded from the
    text LlamaIndex sends to LLMs and embedding models."""
    llm_keys = list(node.excluded_llm_metadata_keys)
    embed_keys = list(node.excluded_embed_metadata_keys)
    for keys in (llm_keys, embed_keys):
        if ATTRIBUTION_KEY not in keys:
            keys.append(ATTRIBUTION_KEY)
    return node.model_copy(
        update={
            "metadata": {**node.metadata, ATTRIBUTION_KEY: info},
            "excluded_llm_metadata_keys": llm_keys,
            "excluded_embed_metadata_keys": embed_keys,
        }
    )


def _set_metadata(response: object, value: dict[str, Any]) -> None:
    if not hasattr(response, "metadata"):
        return
    metadata = getattr(response, "metadata", None)
    if not isinstance(metadata, dict):
        metadata = {}
        response.metadata = metadata
    metadata[ATTRIBUTION_KEY] = value


def _record_failure(response: object, question: str, error: BaseException) -> AttributionResult:
    logger.warning(
        "camab attribution failed (the response is returned unchanged): %s: %s",
        type(error).__name__,
        error,
    )
    text = getattr(response, "response", None)
    failed = AttributionResult.failed(
        error, question=question, response=text if isinstance(text, str) else ""
    )
    try:
        _set_metadata(response, {**failed.to_dict(), "prompt_source": None})
    except Exception:  # pragma: no cover - a response type that refuses attributes
        logger.exception("could not record the attribution failure on the response")
    return failed


def _apply_verdict(response: object, verdict: FilteredAnswer) -> None:
    """Put the filter's verdict in the attribution metadata; a blocked answer's text is
    replaced by the fallback (the original stays in ``groundedness.original_answer``)."""
    metadata = getattr(response, "metadata", None)
    if isinstance(metadata, dict) and isinstance(metadata.get(ATTRIBUTION_KEY), dict):
        metadata[ATTRIBUTION_KEY]["groundedness"] = verdict.to_dict()
    if verdict.blocked and isinstance(response, Response):
        response.response = verdict.answer


def _response_steps(
    response: RESPONSE_TYPE,
    question: str,
    *,
    scorer: Any = None,
    config: AttributionConfig | None = None,
    record: QueryRecord | None = None,
    llm: object = None,
    scorers: _ScorerCache | None = None,
) -> Steps[RESPONSE_TYPE]:
    """Attribute ``response`` in place; never raises (failures go to its metadata).

    With ``config.groundedness`` the answer is judged too (its verdict lands in
    ``metadata["attribution"]["groundedness"]``; ``mode="block"`` replaces an ungrounded
    ``response.response`` by the fallback)."""
    config = config or AttributionConfig()
    gate = config.groundedness
    try:
        job = _prepare(response, question, record, scorer, scorers or _ScorerCache(), config, llm)
        captured = yield from captured_steps(
            job.question,
            job.documents,
            job.response.response or "",
            job.scorer,
            config,
            prompts=job.prompts,
            progress=QueryProgress(job.question, config.options.get("progress")),
        )
        _apply(job, captured.result)
    except Exception as error:
        failed = _record_failure(response, question, error)
        if gate is not None:
            _apply_verdict(response, gate.judge(failed))  # no model call: judged closed
        return response
    if captured.verdict is not None:
        _apply_verdict(response, captured.verdict)
    return response


attribute_response = synced(_response_steps, "attribute_response")
aattribute_response = asynced(
    _response_steps,
    "aattribute_response",
    "Async :func:`attribute_response` (scores with ``scorer.ascore``).",
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


def attribute_when_consumed(
    response: StreamingResponse, attribute: Callable[[Response], object]
) -> StreamingResponse:
    """The stream as it came, attributed once consumed: right after its last token,
    ``attribute`` runs on the full ``Response`` and ``metadata["attribution"]`` and the
    source nodes of ``response`` carry the result (a blocking filter's verdict is recorded,
    but streamed text cannot be taken back)."""
    tokens = response.response_gen

    def attributed() -> Generator[str, None, None]:
        pieces = []
        for token in tokens:
            pieces.append(token)
            yield token
        final = Response("".join(pieces), list(response.source_nodes), response.metadata)
        attribute(final)
        response.source_nodes = final.source_nodes
        response.metadata = final.metadata
        response.response_txt = "".join(pieces)

    response.response_gen = attributed()
    return response


def aattribute_when_consumed(
    response: AsyncStreamingResponse, attribute: Callable[[Response], Awaitable[object]]
) -> AsyncStreamingResponse:
    """Async :func:`attribute_when_consumed` for ``aquery`` with ``streaming=True``."""
    tokens = response.response_gen

    async def attributed() -> AsyncGenerator[str, None]:
        pieces = []
        async for token in tokens:
            pieces.append(token)
            yield token
        final = Response("".join(pieces), list(response.source_nodes), response.metadata)
        await attribute(final)
        response.source_nodes = final.source_nodes
        response.metadata = final.metadata

    response.response_gen = attributed()
    return response


def checked_scorer(scorer: Any, name: str = "scorer") -> Any:
    """``scorer`` itself when it can score (or is ``None``); else a clear error."""
    if scorer is not None and not callable(getattr(scorer, "score", None)):
        raise InputError(f"{name} must have a score(requests) method (or be None)")
    return scorer


def _engine_llm(query_engine: object) -> object:
    """The LLM a query engine synthesizes with, if it exposes one."""
    synthesizer = getattr(query_engine, "_response_synthesizer", None)
    return getattr(synthesizer, "_llm", None)


# ---------------------------------------------------------------------- query engine
class CamabQueryEngine(BaseQueryEngine):
    """Wrap a query engine so every response carries its attribution.

    ``response.metadata["attribution"]`` holds the full result
    (:meth:`camab_rag.AttributionResult.to_dict` plus ``prompt_source``/``prompt_note``);
    each source node keeps its retrieval score and gains ``node.metadata["attribution"]``
    with ``score`` (sum of its segments' scores), ``rank`` (1 = most relied on),
    ``supporting_sentences`` (answer sentences it supports best) and ``segments``.

    Streaming (``streaming=True``): ``query`` returns the ``StreamingResponse`` and
    ``aquery`` the ``AsyncStreamingResponse`` as they came; right after the last token has
    been read, the response's metadata and source nodes carry the attribution.

    Progress: every scored batch sends an
    :class:`~llama_index.postprocessor.camab.AttributionProgressEvent` (``calls`` of
    ``budget``) to the instrumentation dispatcher, inside the query's span; a
    ``progress=lambda calls, budget: ...`` option is called too.

    Args:
        query_engine: any ``BaseQueryEngine`` (e.g. ``index.as_query_engine(llm=...)``).
        scorer: scores subsets of the context; ``None`` builds one from the engine's own
            LLM (an OpenAI-compatible server, or an LLM that carries a scorer).
        budget: model calls per attribution.
        method: ``"auto"`` (default: the best quality per model call), ``"camab"`` or a
            baseline (``"kernelshap"``, ``"contextcite"``, ``"loo"``).
        granularity: ``"chunk"`` (one unit per node) or ``"sentence"``.
        seed: makes attribution reproducible.
        groundedness: a :class:`~camab_rag.groundedness.GroundednessFilter`; its verdict
            goes to ``response.metadata["attribution"]["groundedness"]`` (at most two extra
            model calls) and ``mode="block"`` replaces an ungrounded ``response.response``
            by its fallback.
        proxy: a camab-rag scorer that scores in place of the engine's LLM when that LLM
            cannot (a hosted chat API gives no log-probabilities of a given text), e.g.
            ``camab_rag.default_scorer()``. Never silent: ``metadata["attribution"]
            ["scored_by"]`` names it with ``"proxy": True``.
        scorer_options: options of the HTTP scorer built from the engine's LLM when
            ``scorer`` is ``None`` (:class:`camab_rag.OpenAICompletionsScorer`), e.g.
            ``{"retry_budget_s": 1.0}``: the most seconds a dead server may cost in
            retries before the answer comes back with the error (default 3).
        **attribute_options: passed to :func:`camab_rag.attribute` (e.g. ``batch_size``).
    """

    def __init__(
        self,
        query_engine: BaseQueryEngine,
        scorer: Any = None,
        *,
        budget: int = 40,
        method: str = "auto",
        granularity: Granularity = "chunk",
        seed: int = 0,
        groundedness: GroundednessFilter | None = None,
        callback_manager: CallbackManager | None = None,
        proxy: Any = None,
        scorer_options: Mapping[str, Any] | None = None,
        **attribute_options: Any,
    ) -> None:
        if not isinstance(query_engine, BaseQueryEngine):
            raise InputError(
                f"query_engine must be a LlamaIndex BaseQueryEngine, got "
                f"{type(query_engine).__name__}"
            )
        self.query_engine = query_engine
        self.scorer = checked_scorer(scorer)
        self.config = AttributionConfig(
            budget, method, granularity, seed, attribute_options, groundedness
        )
        self._scorers = _ScorerCache(proxy, scorer_options)
        self._tracker = query_tracker()
        super().__init__(callback_manager or getattr(query_engine, "callback_manager", None))

    def _get_prompt_modules(self) -> PromptMixinType:
        return {"query_engine": self.query_engine}

    def _get_prompts(self) -> PromptDictType:
        return {}

    def retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """The wrapped engine's retrieval (no answer, so nothing to attribute)."""
        return self.query_engine.retrieve(query_bundle)

    def _begin(self, query_bundle: QueryBundle) -> str | None:
        span_id = active_span_id.get()
        if span_id is not None:
            self._tracker.open_record(span_id, query=query_bundle.query_str, managed=True)
        return span_id

    def _options(self, record: QueryRecord | None) -> dict[str, Any]:
        """What :func:`attribute_response` needs besides the response and question."""
        return {
            "scorer": self.scorer,
            "config": self.config,
            "record": record,
            "llm": _engine_llm(self.query_engine),
            "scorers": self._scorers,
        }

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        span_id = self._begin(query_bundle)
        response = self.query_engine.query(query_bundle)
        question, options = query_bundle.query_str, self._options(self._tracker.record(span_id))
        if isinstance(response, StreamingResponse):
            return attribute_when_consumed(
                response, lambda final: attribute_response(final, question, **options)
            )
        return attribute_response(response, question, **options)

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        span_id = self._begin(query_bundle)
        response = await self.query_engine.aquery(query_bundle)
        question, options = query_bundle.query_str, self._options(self._tracker.record(span_id))
        if isinstance(response, AsyncStreamingResponse):
            return aattribute_when_consumed(
                response, lambda final: aattribute_response(final, question, **options)
            )
        return await aattribute_response(response, question, **options)


# ---------------------------------------------------------------------- event handler
class CamabEventHandler(BaseEventHandler):
    """Attribute every completed query of every query engine (instrumentation handler).

    Attach once, e.g. ``CamabEventHandler.attach(scorer=camab_rag.default_scorer())``
    (or ``get_dispatcher().add_event_handler(CamabEventHandler(...))``). On each
    ``QueryEndEvent`` the response is attributed in place, exactly as
    :class:`CamabQueryEngine` does, using the nodes and LLM prompt captured inside that
    query's span, so concurrent queries never mix. Queries run through a
    :class:`CamabQueryEngine` are left to it.

    A streamed response (``streaming=True``, ``query`` or ``aquery``) is attributed once
    its stream has been consumed, as :class:`CamabQueryEngine` does.

    For ``aquery`` (inside a running event loop) attribution runs as a background task, so
    the loop is never blocked; the response's attribution shows ``status: "pending"`` until
    :meth:`aflush` has awaited it. ``query`` attributes inline, before it returns. Set
    ``background`` to force either way.

    ``groundedness`` (a :class:`~camab_rag.groundedness.GroundednessFilter`) judges each
    answer; its verdict goes to ``metadata["attribution"]["groundedness"]``. A filter with
    ``mode="block"`` needs the verdict before the query returns, so those queries are
    attributed inline (``background=True`` with a blocking filter is refused).

    Attributes:
        results: the most recent attributions (``maxlen`` 256), each
            ``{"query_id", "query", "attribution"}`` in completion order.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    scorer: Any = Field(default=None, description="scorer; None = from the query's LLM")
    budget: int = Field(default=40, description="model calls per attribution")
    method: str = Field(default="auto", description="attribution method")
    granularity: Any = Field(default="chunk", description="'chunk' or 'sentence'")
    seed: int = Field(default=0)
    background: bool | None = Field(
        default=None, description="run inside a running event loop as a task (None = auto)"
    )
    attribute_options: dict[str, Any] = Field(default_factory=dict)
    groundedness: Any = Field(default=None, description="a GroundednessFilter, or None")
    proxy: Any = Field(
        default=None, description="scorer used when the query's LLM cannot score (named so)"
    )
    scorer_options: dict[str, Any] = Field(
        default_factory=dict, description="options of the HTTP scorer built from the LLM"
    )

    _config: AttributionConfig = PrivateAttr()
    _tracker: QueryTracker = PrivateAttr()
    _scorers: _ScorerCache = PrivateAttr(default_factory=_ScorerCache)
    _pending: set[asyncio.Task[Any]] = PrivateAttr(default_factory=set)
    _results: collections.deque[dict[str, Any]] = PrivateAttr(
        default_factory=lambda: collections.deque(maxlen=256)
    )
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def model_post_init(self, context: Any, /) -> None:
        checked_scorer(self.scorer)
        self._scorers = _ScorerCache(self.proxy, self.scorer_options)
        self._config = AttributionConfig(
            self.budget,
            self.method,
            self.granularity,
            self.seed,
            dict(self.attribute_options),
            self.groundedness,
        )
        if self._blocks and self.background:
            raise InputError(
                "a GroundednessFilter with mode='block' must judge the answer before the "
                "query returns: use background=None/False, or mode='flag'"
            )
        self._tracker = query_tracker()

    @property
    def _blocks(self) -> bool:
        return self.groundedness is not None and self.groundedness.mode == "block"

    @classmethod
    def class_name(cls) -> str:
        return "CamabEventHandler"

    @classmethod
    def attach(cls, dispatcher: Dispatcher | None = None, **kwargs: Any) -> CamabEventHandler:
        """Create a handler and add it to ``dispatcher`` (default: the root dispatcher)."""
        handler = cls(**kwargs)
        target = dispatcher or get_dispatcher()
        target.add_event_handler(handler)
        return handler

    def detach(self, dispatcher: Dispatcher | None = None) -> None:
        """Remove this handler from ``dispatcher`` (default: the root dispatcher)."""
        target = dispatcher or get_dispatcher()
        target.event_handlers = [h for h in target.event_handlers if h is not self]

    @property
    def results(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._results)

    def handle(self, event: BaseEvent, **kwargs: Any) -> Any:
        if isinstance(event, QueryEndEvent):
            self._on_query_end(event)

    def _on_query_end(self, event: QueryEndEvent) -> None:
        records = self._tracker.records_for(event.span_id)
        record = records[0] if records and records[0].span_id == event.span_id else None
        if any(r.managed for r in records):
            return  # a CamabQueryEngine attributes this query itself
        response = event.response
        metadata = getattr(response, "metadata", None)
        if isinstance(metadata, Mapping) and ATTRIBUTION_KEY in metadata:
            return  # already attributed (an enclosing query returning the same response)
        question = query_text(event.query)
        query_id = event.span_id or ""
        if isinstance(response, (StreamingResponse, AsyncStreamingResponse)):
            self._on_stream(response, question, record, query_id)
            return
        loop = _running_loop()
        if self._blocks:  # the verdict must be in before the query returns
            background = False
        elif self.background is None:  # auto: a task for aquery(), inline for query()
            background = loop is not None and _span_method(event.span_id) == "aquery"
        else:
            background = self.background
        if background and loop is not None:
            _set_metadata(response, {"status": "pending", "error": None})
            task = loop.create_task(self._arun(response, question, record, query_id))
            with self._lock:
                self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        else:
            self._attribute(response, question, record, query_id)

    def _on_stream(
        self,
        response: StreamingResponse | AsyncStreamingResponse,
        question: str,
        record: QueryRecord | None,
        query_id: str,
    ) -> None:
        """A streamed answer is attributed when its stream has been consumed."""
        if isinstance(response, AsyncStreamingResponse):
            aattribute_when_consumed(
                response, lambda final: self._arun(final, question, record, query_id)
            )
        else:
            attribute_when_consumed(
                response, lambda final: self._attribute(final, question, record, query_id)
            )

    def _options(self, record: QueryRecord | None) -> dict[str, Any]:
        return {
            "scorer": self.scorer,
            "config": self._config,
            "record": record,
            "scorers": self._scorers,
        }

    def _attribute(
        self, response: Any, question: str, record: QueryRecord | None, query_id: str
    ) -> Any:
        attribute_response(response, question, **self._options(record))
        self._remember(query_id, question, response)
        return response

    async def _arun(
        self, response: Any, question: str, record: QueryRecord | None, query_id: str
    ) -> Any:
        await aattribute_response(response, question, **self._options(record))
        self._remember(query_id, question, response)
        return response

    def _remember(self, query_id: str, question: str, response: Any) -> None:
        metadata = getattr(response, "metadata", None) or {}
        with self._lock:
            self._results.append(
                {
                    "query_id": query_id,
                    "query": question,
                    "attribution": metadata.get(ATTRIBUTION_KEY),
                }
            )

    async def aflush(self) -> None:
        """Wait for every background attribution started so far."""
        while True:
            with self._lock:
                pending = [t for t in self._pending if not t.done()]
            if not pending:
                return
            await asyncio.gather(*pending, return_exceptions=True)


def _span_method(span_id: str | None) -> str:
    """The method name in a LlamaIndex span id (``"Class.method-<uuid4>"``)."""
    if not span_id or len(span_id) < 38 or span_id[-37] != "-":
        return ""
    return span_id[:-37].rsplit(".", 1)[-1]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# ---------------------------------------------------------------------- postprocessor
class CamabNodePostprocessor(BaseNodePostprocessor):
    """Re-order or filter nodes by the attribution they carry.

    A post-processor never sees the answer, so it works on nodes attributed by a first
    answer (``CamabQueryEngine`` or ``CamabEventHandler``): nodes are sorted by
    ``node.metadata["attribution"]["score"]`` (best first, ties keep their order), those
    under ``threshold`` are dropped, and at most ``top_k`` are kept. Use it for the second
    pass of "answer, attribute, re-answer from the supporting nodes only".

    Args:
        top_k: keep at most this many nodes (``None`` = all).
        threshold: drop nodes whose attribution score is below this (``None`` = none).
        missing: what to do with a node that carries no attribution: ``"error"`` (default,
            a clear ``ValueError``), ``"keep"`` (placed after attributed nodes, never
            filtered) or ``"drop"``.
    """

    top_k: int | None = Field(default=None, description="keep at most this many nodes")
    threshold: float | None = Field(default=None, description="minimum attribution score")
    missing: Literal["error", "keep", "drop"] = Field(default="error")

    def __init__(
        self,
        top_k: int | None = None,
        threshold: float | None = None,
        *,
        missing: Literal["error", "keep", "drop"] = "error",
        **kwargs: Any,
    ) -> None:
        if top_k is not None and (
            isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1
        ):
            raise InputError(f"top_k must be a positive integer or None, got {top_k!r}")
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not np.isfinite(threshold)
        ):
            raise InputError(f"threshold must be a finite number or None, got {threshold!r}")
        if missing not in ("error", "keep", "drop"):
            raise InputError(f"missing must be 'error', 'keep' or 'drop', got {missing!r}")
        super().__init__(top_k=top_k, threshold=threshold, missing=missing, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "CamabNodePostprocessor"

    def _postprocess_nodes(
        self,
        nodes: list[NodeWithScore],
        query_bundle: QueryBundle | None = None,
    ) -> list[NodeWithScore]:
        attributed: list[tuple[float, NodeWithScore]] = []
        unattributed: list[NodeWithScore] = []
        for nws in nodes:
            score = _attribution_score(nws)
            if score is not None:
                attributed.append((score, nws))
            elif self.missing == "error":
                raise ValueError(
                    f"node {nws.node.node_id} carries no metadata['{ATTRIBUTION_KEY}']['score']: "
                    "attribute a first answer with CamabQueryEngine (or CamabEventHandler) "
                    "and pass its response.source_nodes, or set missing='keep'/'drop'"
                )
            elif self.missing == "keep":
                unattributed.append(nws)
        ranked = [n for _, n in sorted(attributed, key=lambda pair: -pair[0])]
        if self.threshold is not None:
            ranked = [n for n in ranked if (_attribution_score(n) or 0.0) >= self.threshold]
        if self.top_k is not None:
            ranked = ranked[: self.top_k]
        return ranked + unattributed


def _attribution_score(nws: NodeWithScore) -> float | None:
    info = nws.node.metadata.get(ATTRIBUTION_KEY)
    if not isinstance(info, Mapping):
        return None
    score = info.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return None
    return float(score)


__all__ = [
    "ATTRIBUTION_KEY",
    "AttributionConfig",
    "CamabEventHandler",
    "CamabNodePostprocessor",
    "CamabQueryEngine",
    "QueryTracker",
    "aattribute_response",
    "attribute_response",
    "attribution_of",
    "query_tracker",
    "scorer_from_llm",
]
