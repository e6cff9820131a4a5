"""Attribute a framework's answer object: what an integration object attributes with
(:class:`AnswerAttributor`: the scorer, given or built from the answer's model, the
settings, the proxy, the progress hook, the background runs), which documents the answer
came from (:func:`answer_documents`) and what it then carries
(:meth:`AnswerAttribution.metadata`).

The integration keeps what needs its framework's types: reading its answer object,
copying its documents with their entries, its streams.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from camab_rag.captured import CapturedAttribution, document_summary, reached_the_model
from camab_rag.engine import ProgressFn
from camab_rag.errors import InputError, NoContextError
from camab_rag.integration.answer_metadata import set_attribution
from camab_rag.integration.background import pending
from camab_rag.integration.chain_runs import ChainCall, ChainRuns, chain_steps
from camab_rag.integration.span_records import SpanRecord
from camab_rag.scorers.base import Prompt
from camab_rag.scorers.chat_clients import ChatAPICannotScoreError, scorer_from_chat_client
from camab_rag.scorers.echo import PROXY_FIX
from camab_rag.scorers.proxy import ScorerCache, checked_scorer, own_or_proxy
from camab_rag.segments import SourceDocument, to_documents
from camab_rag.settings import CHAIN_SETTINGS, AttributionSettings
from camab_rag.steps import Steps

if TYPE_CHECKING:
    from typing_extensions import Unpack

logger = logging.getLogger(__name__)
ToDocuments = Callable[[Sequence[Any]], list[SourceDocument]]


def model_scorer(
    model: object, *, compatible: str = "an OpenAI-compatible model", **options: Any
) -> Any:
    """The scorer of a chain's model object: its own ``scorer`` (an in-process model), else
    the HTTP scorer (built with ``options``) of the OpenAI-compatible server its
    ``api_base`` names. Else a typed error says what to pass (``compatible`` names the
    framework's OpenAI-compatible models)."""
    if model is None:
        raise InputError(
            "no scorer: pass scorer=camab_rag.default_scorer() (or an OpenAICompletionsScorer), "
            f"or use {compatible}"
        )
    own = getattr(model, "scorer", None)
    if callable(getattr(own, "score", None)):
        return own
    api_base = getattr(model, "api_base", None)
    if not isinstance(api_base, str) or not api_base:
        cause = (
            f"cannot build a scorer from {type(model).__name__}: it is not OpenAI-compatible "
            "(no api_base)"
        )
        raise ChatAPICannotScoreError(
            f"{PROXY_FIX}, or scorer=camab_rag.OpenAICompletionsScorer(base_url, model) for a "
            f"server that scores a given text (`camab serve`): {cause}",
            reason=cause,
        )
    return scorer_from_chat_client(model, **options)


def answer_documents(
    answer: object,
    sources: Sequence[Any],
    retrieved: Sequence[Any],
    prompts: Sequence[Prompt],
    as_documents: ToDocuments = to_documents,
) -> tuple[list[Any], bool]:
    """The documents to attribute ``answer`` to: its own ``sources``, else the
    ``retrieved`` documents when they reached the model (some of ``prompts`` holds them
    all); and whether they are its own sources. Raises a typed error when there are none."""
    if not isinstance(answer, str) or not answer.strip():
        raise InputError("the response is empty: there is nothing to attribute")
    if sources:
        return list(sources), True
    if not retrieved:
        raise NoContextError(
            "no nodes were retrieved for this query: the answer has no retrieved context "
            "to come from"
        )
    if not reached_the_model(prompts, as_documents(retrieved)):
        raise NoContextError(
            f"none of the {len(retrieved)} retrieved nodes reached the LLM "
            "(response.source_nodes is empty: e.g. a node post-processor discarded "
            "them all), so the answer has no retrieved context to come from"
        )
    return list(retrieved), False


@dataclass(frozen=True)
class AnswerAttribution:
    """An answer's attribution over ``documents`` (as the framework holds them;
    ``own_sources``: the answer's own, else retrieved ones)."""

    attributed: CapturedAttribution
    documents: list[Any]
    own_sources: bool

    def metadata(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The answer's summary (the result, ``prompt_source``, the filter's verdict) and
        each document's entry (none unless the attribution is ok)."""
        result, verdict = self.attributed.result, self.attributed.verdict
        summary: dict[str, Any] = {**result.to_dict(), "prompt_source": None}
        entries: list[dict[str, Any]] = []
        if result.status == "ok":
            if result.prompt_mode != "captured":
                logger.info("camab attribution of %r: %s", result.question[:80], result.prompt_note)
            extra = {"method": result.method, "n_queries": result.n_queries}
            summaries = document_summary(result, len(self.documents), segments=True)
            entries = [{**entry, **extra} for entry in summaries]
            summary["prompt_source"] = result.prompt_mode
        if verdict is not None:
            summary["groundedness"] = verdict.to_dict()
        return summary, entries

    @property
    def replacement(self) -> str | None:
        """A blocking filter's fallback for the answer (``None``: the answer stands)."""
        verdict = self.attributed.verdict
        return verdict.answer if verdict is not None and verdict.blocked else None


class AttributorOptions(TypedDict, total=False):
    """What an integration object takes besides its scorer: ``settings`` (default
    :data:`~camab_rag.settings.CHAIN_SETTINGS`), ``proxy`` (scores in place of a model
    that cannot), ``scorer_options`` (of the HTTP scorer built from a model), ``progress``
    (called as ``progress(calls_made, total)``)."""

    settings: AttributionSettings | None
    proxy: Any
    scorer_options: Mapping[str, Any] | None
    progress: ProgressFn | None


class AnswerAttributor:
    """What an integration object attributes its answers with: the scorer (given, else
    ``scorer_from_model(model, **scorer_options)`` once per model, with the proxy), the
    settings, the progress hook and ``runs`` (background attributions). :meth:`call_steps`
    attributes one answer; ``as_documents`` reads the framework's documents."""

    def __init__(
        self,
        scorer: Any = None,
        scorer_from_model: Callable[..., Any] = model_scorer,
        as_documents: ToDocuments = to_documents,
        **options: Unpack[AttributorOptions],
    ) -> None:
        if unknown := sorted(set(options) - set(AttributorOptions.__annotations__)):
            raise TypeError(f"got an unexpected keyword argument {unknown[0]!r}")
        settings = options.get("settings")
        if settings is not None and not isinstance(settings, AttributionSettings):
            kind = type(settings).__name__
            raise InputError(f"settings must be an AttributionSettings, got {kind}")
        self.scorer = checked_scorer(scorer)
        self.settings = settings or CHAIN_SETTINGS
        self.progress = options.get("progress")
        self.proxy = checked_scorer(options.get("proxy"), "proxy")
        self.options = dict(options.get("scorer_options") or {})
        self.scorer_from_model = scorer_from_model
        self.as_documents = as_documents
        self._scorers = ScorerCache()
        self.runs: ChainRuns[Any] = ChainRuns(self.settings, keep=256)
        self._recent: deque[dict[str, Any]] = deque(maxlen=256)
        self._lock = threading.Lock()

    def remember(self, entry: dict[str, Any]) -> None:
        """Keep ``entry`` among the :attr:`recent` ones (thread-safe)."""
        with self._lock:
            self._recent.append(entry)

    @property
    def recent(self) -> list[dict[str, Any]]:
        """The latest 256 entries remembered, oldest first."""
        with self._lock:
            return list(self._recent)

    def scorer_for(self, model: object) -> Any:
        """The given scorer, else ``model``'s (with the proxy), built once per object."""
        source = self.scorer if self.scorer is not None else model

        def own() -> Any:
            if self.scorer is not None:
                return self.scorer
            return self.scorer_from_model(model, **self.options)

        return self._scorers.get(id(source), lambda: own_or_proxy(own, self.proxy), owner=source)

    def in_background(self, choice: bool | None, streamed: bool, async_call: bool) -> bool:
        """Whether a handler attributes an answer in the background: never a stream (it
        is attributed once read) nor under a blocking filter (it judges the answer before
        it is returned); else ``choice``, by default (``None``) an async call's; only
        inside a running event loop."""
        gate = self.settings.groundedness
        if streamed or (gate is not None and gate.mode == "block"):
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return async_call if choice is None else choice

    def start(
        self, answer: object, steps: Steps[Any], how_to_wait: str, *, in_loop: bool, key: Any = None
    ) -> None:
        """Attribute ``answer`` in the background, its ``metadata["attribution"]`` pending
        until ``steps`` fill it: kept on the answer (:func:`wait_for_attribution`), a task
        of the running loop if ``in_loop`` (else the worker thread); with a ``key``, a task
        kept under it (:meth:`ChainRuns.aflush`). ``how_to_wait`` if the loop ends first."""
        set_attribution(answer, placeholder := pending(key))
        if key is None:
            self.runs.start_on(answer, steps, [placeholder], how_to_wait, in_loop=in_loop)
        else:
            self.runs.astart(key, steps, [placeholder], how_to_wait)

    def call_steps(
        self,
        call: ChainCall,
        model: object = None,
        sources: Sequence[Any] = (),
        record: SpanRecord | None = None,
    ) -> Steps[AnswerAttribution]:
        """Attribute ``call`` to the documents :func:`answer_documents` picks (its answer's
        ``sources``, else those ``record`` retrieved), in the prompts ``record`` captured,
        scored by the scorer of its model (else ``model``'s). Never raises: the call's
        ``problem``, or why there are no documents, is the failed result."""
        retrieved: list[Any] = []
        if record is not None:
            model = record.model if record.model is not None else model
            call.prompts, retrieved = record.prompts, list(record.documents)
        documents: list[Any] = []
        own = bool(sources)
        if call.problem is None:
            try:
                documents, own = answer_documents(
                    call.answer, sources, retrieved, call.prompts, self.as_documents
                )
            except Exception as error:  # never raises: the failed result
                call.problem = error
        call.documents = self.as_documents(documents)
        call.scorer = lambda: self.scorer_for(model)
        attributed = yield from chain_steps(call, self.settings)
        return AnswerAttribution(attributed, documents, own)


__all__ = [
    "AnswerAttribution",
    "AnswerAttributor",
    "AttributorOptions",
    "answer_documents",
    "model_scorer",
]
