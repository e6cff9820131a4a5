"""One response attributed in place: its nodes as documents, one core call
(:func:`camab_rag.captured.captured_steps`), the result put on the response and on copies of
its nodes. :class:`ResponseAttributor` is what the query engine, the chat engine and the
event handler share.

Attribution never breaks a query: on failure the response is returned unchanged, with
``response.metadata["attribution"]["status"] == "error"`` and the error message.
"""

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

from camab_rag import AttributionSettings
from camab_rag.captured import (
    captured_steps,
    document_summary,
    reached_the_model,
)
from camab_rag.errors import InputError, NoContextError
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.result import AttributionResult
from camab_rag.rounds import Steps, adrive, asynced, drive, synced
from camab_rag.scorers.proxy import checked_scorer
from camab_rag.scoring import Prompt
from camab_rag.segments import Granularity, SourceDocument
from camab_rag.settings import CHAIN_SETTINGS

logger = logging.getLogger(__name__)

ATTRIBUTION_KEY = "attribution"
"""The metadata key under which responses and nodes carry their attribution."""


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
    scorers: ScorerCache,
    config: AttributionSettings,
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
    set_metadata(job.response, summary)


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


def set_metadata(response: object, value: dict[str, Any]) -> None:
    if not hasattr(response, "metadata"):
        return
    metadata = getattr(response, "metadata", None)
    if not isinstance(metadata, dict):
        metadata = {}
        response.metadata = metadata
    metadata[ATTRIBUTION_KEY] = value


def _record_failure(response: object, question: str, error: BaseException) -> AttributionResult:
    logger.warning(
        "camab attribution failed (recorded in the response's metadata): %s: %s",
        type(error).__name__,
        error,
    )
    text = getattr(response, "response", None)
    failed = AttributionResult.failed(
        error, question=question, response=text if isinstance(text, str) else ""
    )
    try:
        set_metadata(response, {**failed.to_dict(), "prompt_source": None})
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
    config: AttributionSettings | None = None,
    record: QueryRecord | None = None,
    llm: object = None,
    scorers: ScorerCache | None = None,
    progress: Any = None,
) -> Steps[RESPONSE_TYPE]:
    """Attribute ``response`` in place; never raises (failures go to its metadata).

    With ``config.groundedness`` the answer is judged too (its verdict lands in
    ``metadata["attribution"]["groundedness"]``; ``mode="block"`` replaces an ungrounded
    ``response.response`` by the fallback)."""
    config = config or CHAIN_SETTINGS
    gate = config.groundedness
    try:
        job = _prepare(response, question, record, scorer, scorers or ScorerCache(), config, llm)
        captured = yield from captured_steps(
            job.question,
            job.documents,
            job.response.response or "",
            job.scorer,
            config,
            prompts=job.prompts,
            progress=QueryProgress(job.question, progress),
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


class ResponseAttributor:
    """The scorer, the settings (validated once), the scorers built from LLMs and the query
    tracker of one wrapper; attributes a query's response in place.

    Args:
        scorer: scores subsets of the context; ``None`` builds one from the query's LLM.
        budget, method, granularity, seed, groundedness: the
            :class:`~camab_rag.AttributionSettings`.
        proxy: scores in place of an LLM that cannot (named so in the result).
        scorer_options: options of the HTTP scorer built from an LLM.
        attribute_options: passed to :func:`camab_rag.attribute` (e.g. ``batch_size``).
    """

    def __init__(
        self,
        scorer: Any = None,
        *,
        budget: int = 40,
        method: str = "auto",
        granularity: Granularity = "chunk",
        seed: int = 0,
        groundedness: GroundednessFilter | None = None,
        proxy: Any = None,
        scorer_options: Mapping[str, Any] | None = None,
        attribute_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.scorer = checked_scorer(scorer)
        options = dict(attribute_options or {})
        self.progress = options.pop("progress", None)
        self.config = CHAIN_SETTINGS.with_changes(
            budget=budget,
            method=method,
            granularity=granularity,
            seed=seed,
            groundedness=groundedness,
            **options,
        )
        self.scorers = ScorerCache(proxy, scorer_options)
        self.tracker = query_tracker()

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
        """:meth:`attribute` as a generator of model calls."""
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

    def attribute(
        self, response: RESPONSE_TYPE, question: str, record: QueryRecord | None, llm: object = None
    ) -> RESPONSE_TYPE:
        """Attribute ``response`` in place (never raises) and return it."""
        return drive(self.steps(response, question, record, llm))

    async def aattribute(
        self, response: RESPONSE_TYPE, question: str, record: QueryRecord | None, llm: object = None
    ) -> RESPONSE_TYPE:
        """Async :meth:`attribute` (scores with ``scorer.ascore``)."""
        return await adrive(self.steps(response, question, record, llm))


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
