"""One response attributed in place (one kernel call, :func:`camab_rag.integration.chain_steps`)
and the result put on the response and on copies of its nodes; never breaks a query (a
failure reads ``metadata["attribution"]["status"] == "error"``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.response.schema import RESPONSE_TYPE, Response
from llama_index.core.instrumentation.span import active_span_id
from llama_index.core.schema import MetadataMode, NodeWithScore
from llama_index.postprocessor.camab.capture import QueryRecord, query_tracker
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
    Steps,
    asynced,
    chain_steps,
    checked_scorer,
    document_summary,
    reached_the_model,
    synced,
)

logger = logging.getLogger(__name__)

ATTRIBUTION_KEY = "attribution"
"""The metadata key under which responses and nodes carry their attribution."""


def node_documents(nodes: Sequence[NodeWithScore]) -> list[SourceDocument]:
    """Each node as the text the LLM saw (content with LLM metadata, stripped)."""
    documents = []
    for nws in nodes:
        node = nws.node
        text = node.get_content(metadata_mode=MetadataMode.LLM).strip()
        documents.append(SourceDocument(text, {"node_id": node.node_id}))
    return documents


@dataclass
class _Job:
    """The response and the nodes one query attributes, and where the nodes came from."""

    response: Any
    nodes: list[NodeWithScore]
    node_source: str


def _nodes(response: object, record: QueryRecord | None) -> tuple[list[NodeWithScore], str]:
    """The nodes to attribute to: the response's sources, else the retrieved nodes that
    reached the LLM; raises when there is nothing to attribute."""
    if not isinstance(response, Response):
        raise InputError(
            f"cannot attribute a {type(response).__name__}: only a plain Response (not "
            "streaming or structured output) has the final text to attribute"
        )
    text = response.response
    if not isinstance(text, str) or not text.strip():
        raise InputError("the response is empty: there is nothing to attribute")
    if response.source_nodes:
        return list(response.source_nodes), "response.source_nodes"
    retrieved = list(record.retrieved) if record is not None else []
    if not retrieved:
        raise NoContextError(
            "no nodes were retrieved for this query: the answer has no retrieved context "
            "to come from"
        )
    prompts = [c.prompt for c in record.calls] if record is not None else []
    if not reached_the_model(prompts, node_documents(retrieved)):
        raise NoContextError(
            f"none of the {len(retrieved)} retrieved nodes reached the LLM "
            "(response.source_nodes is empty: e.g. a node post-processor discarded "
            "them all), so the answer has no retrieved context to come from"
        )
    return retrieved, "retrieval events"


def _apply(job: _Job, result: AttributionResult) -> None:
    """Put the attribution on the response: a copy of each node with its entry (score,
    rank, supporting sentences, segments), and the summary in the response's metadata."""
    if result.prompt_mode != "captured":
        logger.info("camab attribution of %r: %s", result.question[:80], result.prompt_note)
    entries = document_summary(result, len(job.nodes), segments=True)
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
    set_metadata(job.response, summary)


def _with_attribution(node: Any, info: dict[str, Any]) -> Any:
    """A copy of ``node`` carrying ``info`` (shared nodes never mix attributions), the key
    excluded from what LLMs and embedding models see."""
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


def set_metadata(response: object, value: dict[str, Any]) -> None:
    """Set ``response.metadata["attribution"]`` (creating the dict if needed)."""
    if not hasattr(response, "metadata"):
        return
    metadata = getattr(response, "metadata", None)
    if not isinstance(metadata, dict):
        metadata = {}
        response.metadata = metadata
    metadata[ATTRIBUTION_KEY] = value


def _attach(job: _Job, attributed: CapturedAttribution) -> Any:
    """The result (or the failure) and the filter's verdict on the response, in place; a
    blocked answer's text is replaced by the fallback (the original stays in
    ``groundedness.original_answer``)."""
    result, verdict, response = attributed.result, attributed.verdict, job.response
    try:
        if result.status == "ok":
            _apply(job, result)
        else:
            set_metadata(response, {**result.to_dict(), "prompt_source": None})
    except Exception:  # pragma: no cover - a response type that refuses attributes
        logger.exception("camab: could not put the attribution on the response")
    metadata = getattr(response, "metadata", None)
    if verdict is not None and isinstance(metadata, dict):
        if isinstance(metadata.get(ATTRIBUTION_KEY), dict):
            metadata[ATTRIBUTION_KEY]["groundedness"] = verdict.to_dict()
        if verdict.blocked and isinstance(response, Response):
            response.response = verdict.answer
    return response


def _response_steps(
    response: RESPONSE_TYPE,
    question: str,
    *,
    scorer: Any = None,
    config: AttributionSettings | None = None,
    record: QueryRecord | None = None,
    llm: object = None,
    scorers: ScorerCache | None = None,
    progress: ProgressFn | None = None,
) -> Steps[RESPONSE_TYPE]:
    """Attribute ``response`` in place; never raises (a failure goes to its metadata).
    A groundedness verdict lands in ``metadata["attribution"]["groundedness"]``."""
    settings = config or CHAIN_SETTINGS
    text = getattr(response, "response", None)
    call = ChainCall(question, text if isinstance(text, str) else "")
    job = _Job(response, [], "")
    try:
        job.nodes, job.node_source = _nodes(response, record)
    except Exception as error:
        call.problem = error
    else:
        cache = scorers or ScorerCache()
        llm = record.llm if record is not None and record.llm is not None else llm
        call.documents = node_documents(job.nodes)
        call.scorer = lambda: cache.get(llm, scorer)
        call.prompts = [c.prompt for c in record.calls] if record is not None else []
        call.progress = QueryProgress(question, progress)
    attributed = yield from chain_steps(call, settings)
    return _attach(job, attributed)  # type: ignore[no-any-return]


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


class ResponseAttributor:
    """What one wrapper attributes with: the scorer, the settings (default
    :data:`~camab_rag.integration.CHAIN_SETTINGS`), the scorers built from LLMs (with the
    ``proxy`` and ``scorer_options``), the ``progress`` hook, the query tracker and the
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

    def begin(self, query: str) -> QueryRecord | None:
        """The record of the active span, marked as attributed by this wrapper (so an event
        handler leaves the query to it)."""
        span_id = active_span_id.get()
        if span_id is None:
            return None
        return self.tracker.open_record(span_id, query=query, managed=True)

    def steps(
        self, response: RESPONSE_TYPE, question: str, record: QueryRecord | None, llm: object = None
    ) -> Steps[RESPONSE_TYPE]:
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


class AttributingWrapper:
    """What an engine wrapping its engine in a :class:`ResponseAttributor` exposes."""

    _attributor: ResponseAttributor

    @property
    def scorer(self) -> Any:
        """The scorer given (``None``: built from the LLM of each answer)."""
        return self._attributor.scorer

    @property
    def config(self) -> AttributionSettings:
        """The settings every answer is attributed with."""
        return self._attributor.config
