"""What both callback handlers share: the events they record (sync methods; the async
handler runs them as coroutines) and the work on a finished root run (choose the LLM call,
resolve the question and answer, attribute, publish).

Pure bookkeeping until a root run ends; the attribution itself is one core call
(:func:`langchain_camab._attribution.run_steps`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from camab_rag.background import Background, ResultStore, cancelled, fill, pending
from camab_rag.captured import reached_the_model
from camab_rag.errors import CredentialsRefusedError, NoContextError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.rounds import Steps, drive
from camab_rag.scorers.proxy import ScorerCache, own_or_proxy
from camab_rag.segments import Granularity, to_documents
from camab_rag.settings import CHAIN_SETTINGS
from langchain_camab import _attach
from langchain_camab._attribution import check_filter, failed, run_steps
from langchain_camab._capture import (
    DEFAULT_CONTEXT_KEYS,
    DEFAULT_QUESTION_KEYS,
    Capture,
    CaptureStore,
    LLMCall,
    tool_documents,
)
from langchain_camab._messages import message_text, to_chat_messages
from langchain_camab._progress import ProgressHook
from langchain_camab.result import ChainAttribution
from langchain_camab.scorer import (
    NO_KEY_FROM_RUN,
    ScorerUnavailableError,
    resolve_scorer,
    scorer_from_run,
)

logger = logging.getLogger(__name__)


class _Job:
    """One root run ready to attribute: inputs resolved, placeholders attached."""

    def __init__(self, capture: Capture, call: LLMCall | None, documents: list[Document]) -> None:
        self.capture = capture
        self.call = call
        self.documents = documents
        self.doc_placeholders: list[dict[str, Any]] = []
        self.answer_placeholder: dict[str, Any] | None = None


class HandlerCore:
    """State and logic shared by the sync and async handlers."""

    def __init__(
        self,
        scorer: object = None,
        *,
        budget: int = 40,
        method: str = "auto",
        granularity: Granularity = "chunk",
        llm: object = None,
        seed: int = 0,
        strict: bool = False,
        background: bool = False,
        question_keys: Sequence[str] = DEFAULT_QUESTION_KEYS,
        context_keys: Sequence[str] = DEFAULT_CONTEXT_KEYS,
        report_run_metadata: bool = True,
        max_results: int = 1000,
        groundedness: GroundednessFilter | None = None,
        progress: ProgressHook | None = None,
        citations: bool = False,
        proxy: object = None,
        scorer_options: Mapping[str, Any] | None = None,
        **method_options: Any,
    ) -> None:
        super().__init__()
        check_filter(groundedness, can_block=False, where=f"{type(self).__name__} observes and")
        self.scorer = scorer
        self.llm = llm
        self.proxy = proxy
        self.scorer_options = dict(scorer_options or {})
        self.settings = CHAIN_SETTINGS.with_changes(
            budget=budget,
            method=method,
            granularity=granularity,
            seed=seed,
            groundedness=groundedness,
            **method_options,
        )
        self.strict = strict
        self.background = background
        self.progress = progress
        self.citations = citations
        self.question_keys = tuple(question_keys)
        self.context_keys = tuple(context_keys)
        self.report_run_metadata = report_run_metadata
        self.results: ResultStore[ChainAttribution] = ResultStore(max_results, uuid_keys=True)
        self.last_result: ChainAttribution | None = None
        self._jobs: Background[ChainAttribution] = Background()
        self._store = CaptureStore()
        self._results_lock = threading.Lock()
        self._scorers = ScorerCache()
        self._tool_names: dict[UUID, str | None] = {}
        # strict mode: let LangChain re-raise our errors into the chain
        self.raise_error = strict

    def _background_key(self, run_id: UUID | str | None) -> UUID | None:
        """The key of a background attribution: a root run id (``None``: the latest)."""
        return UUID(run_id) if isinstance(run_id, str) else run_id

    def _finished(self, run_id: UUID | str | None) -> ChainAttribution | None:
        """The latest result when nothing ran in the background and none was asked for."""
        return self.last_result if run_id is None and not self._jobs else None

    # ------------------------------------------------------------------ recording
    def _chain_start(self, inputs: Any, run_id: UUID, parent: UUID | None, metadata: Any) -> None:
        capture = self._store.track(
            run_id, parent, inputs=inputs, metadata=metadata if isinstance(metadata, dict) else None
        )
        if self.report_run_metadata and capture.run_id == run_id and capture.metadata is not None:
            # Tracers keep the root run's metadata dict only when it is not empty: a
            # placeholder now makes them hold the dict the result is written into later.
            capture.metadata[_attach.RUN_METADATA_KEY] = pending(str(run_id))

    def _retriever_start(self, query: str, run_id: UUID, parent: UUID | None) -> None:
        capture = self._store.track(run_id, parent)
        capture.queries.append(query)

    def _tool_start(self, serialized: Any, run_id: UUID, parent: UUID | None) -> None:
        capture = self._store.track(run_id, parent)
        if capture.run_id != run_id:
            name = serialized.get("name") if isinstance(serialized, dict) else None
            self._tool_names[run_id] = str(name) if name else None

    def _tool_end(self, output: Any, run_id: UUID) -> None:
        name = self._tool_names.pop(run_id, None)
        if self._store.is_root(run_id):  # a bare tool call: nothing to attribute
            self._store.pop(run_id)
            return
        self._store.add_tool_documents(run_id, tool_documents(output, name))

    def _retriever_end(self, documents: Sequence[Document], run_id: UUID) -> None:
        if self._store.is_root(run_id):  # a bare retriever call: nothing to attribute
            self._store.pop(run_id)
            return
        self._store.add_documents(run_id, list(documents))

    def _llm_start(
        self,
        prompt: Any,
        serialized: Any,
        run_id: UUID,
        parent: UUID | None,
        kwargs: dict[str, Any],
    ) -> None:
        self._store.track(run_id, parent)
        params = kwargs.get("invocation_params") or {}
        self._store.add_llm_call(
            run_id,
            LLMCall(
                prompt,
                serialized if isinstance(serialized, dict) else None,
                params if isinstance(params, dict) else {},
            ),
        )

    def _llm_end(self, response: LLMResult, run_id: UUID) -> None:
        call = self._store.llm_call(run_id)
        if call is None or not response.generations or not response.generations[0]:
            return
        generation = response.generations[0][0]
        call.answer = generation.text
        if isinstance(generation, ChatGeneration):
            call.message = generation.message
            if not call.answer:
                call.answer = message_text(generation.message)

    # ------------------------------------------------------------------ attribution
    def _take(self, run_id: UUID) -> _Job | None:
        """Close a root run: its capture, the answer to attribute, the documents."""
        if not self._store.is_root(run_id):
            return None
        capture = self._store.pop(run_id)
        if capture is None:
            return None
        if not capture.llm_calls and not capture.documents:
            # not a RAG run (no model, no retriever): nothing to report
            if capture.metadata is not None:
                capture.metadata.pop(_attach.RUN_METADATA_KEY, None)
            return None
        documents = capture.unique_documents(self.context_keys)
        calls = capture.answered_calls()
        call = _choose_call(calls, documents)
        return _Job(capture, call, documents)

    def _inputs(self, job: _Job) -> tuple[str, str, Any]:
        """(question, answer, scorer) of a job; raises a clear error when one is missing."""
        if job.call is None or job.call.answer is None:
            raise ValueError(
                "no LLM answer was captured in this run: there is nothing to attribute"
            )
        if not job.documents and job.capture.queries:
            raise NoContextError(
                "the retriever ran and returned no documents: the answer has no retrieved "
                "context to come from"
            )
        if not job.documents:
            raise ValueError(
                "no documents were captured in this run (no retriever ran and the input has "
                f"none of the keys {list(self.context_keys)} holding Documents)"
            )
        return job.capture.question(self.question_keys), job.call.answer, self._scorer_for(job.call)

    def _scorer_for(self, call: LLMCall) -> Any:
        options = self.scorer_options
        if self.scorer is not None or self.llm is not None:
            return self._scorers.get(
                "configured", lambda: resolve_scorer(self.scorer, self.llm, self.proxy, options)
            )
        key = repr((call.serialized or {}).get("id")) + repr(sorted(map(str, call.params.items())))
        return self._scorers.get(
            key,
            lambda: own_or_proxy(
                lambda: scorer_from_run(call.serialized, call.params, **options), self.proxy
            ),
        )

    def _placeholders(self, job: _Job) -> None:
        """Background mode: show ``status="pending"`` until the result is ready."""
        run_id = str(job.capture.run_id)
        job.doc_placeholders = [pending(run_id) for _ in job.documents]
        for doc, placeholder in zip(job.documents, job.doc_placeholders):
            doc.metadata[_attach.METADATA_KEY] = placeholder
        if job.call is not None and job.call.message is not None:
            job.answer_placeholder = pending(run_id)
            _attach.annotate_message(job.call.message, job.answer_placeholder)

    def _cancelled(self, job: _Job) -> None:
        """A background task that will not finish (its event loop ended first): its
        placeholders say so, and how to wait for it, instead of "pending" for ever."""
        run_id = str(job.capture.run_id)
        how = (
            "Await handler.wait(run_id) before the event loop ends (e.g. at the end of the "
            "coroutine given to asyncio.run), or set background=False"
        )
        logger.warning("camab: attribution of run %s was cancelled unfinished. %s", run_id, how)
        slot = (job.capture.metadata or {}).get(_attach.RUN_METADATA_KEY)
        for placeholder in [*job.doc_placeholders, job.answer_placeholder, slot]:
            if isinstance(placeholder, dict) and placeholder.get("status") == "pending":
                fill(placeholder, cancelled(run_id, how))

    def _publish(self, job: _Job, result: ChainAttribution) -> None:
        """Store the result and put it on the run's documents, answer and run metadata."""
        with self._results_lock:
            self.results.add(job.capture.run_id, result)
            self.last_result = result
        try:
            data = _attach.summarize(result, job.documents)
            _attach.annotate_documents(
                job.documents,
                result,
                extra=job.capture.documents,
                previous=job.doc_placeholders or None,
            )
            if job.call is not None and job.call.message is not None:
                if job.answer_placeholder is not None:
                    data = fill(job.answer_placeholder, data)
                _attach.annotate_message(job.call.message, data)
                if self.citations and result.status == "ok":
                    _attach.annotate_citations(job.call.message, result, job.documents)
            if self.report_run_metadata and job.capture.metadata is not None:
                # the dict tracers hold for the root run: they report it when it ends
                slot = job.capture.metadata.get(_attach.RUN_METADATA_KEY)
                if isinstance(slot, dict) and slot is not data:
                    fill(slot, data)
                else:
                    job.capture.metadata[_attach.RUN_METADATA_KEY] = data
        except Exception:  # pragma: no cover - reporting must never break the chain
            logger.exception("camab: could not attach the attribution metadata")

    def _failure(self, job: _Job, error: BaseException) -> ChainAttribution:
        if isinstance(error, CredentialsRefusedError) and self.scorer is None and self.llm is None:
            error = ScorerUnavailableError(f"{error}. {NO_KEY_FROM_RUN}")
        if self.strict:
            raise error
        logger.warning("camab: attribution failed for run %s: %s", job.capture.run_id, error)
        return failed(
            error,
            run_id=str(job.capture.run_id),
            settings=self.settings,
            question=job.capture.question(self.question_keys),
            response=(job.call.answer or "") if job.call is not None else "",
        )

    def _attribute_steps(self, job: _Job) -> Steps[ChainAttribution]:
        """Attribute a job and publish the result (a failure becomes the result); a
        generator of model calls, driven by the sync or the async handler."""
        try:
            question, answer, scorer = self._inputs(job)
            result = yield from run_steps(
                question,
                job.documents,
                answer,
                scorer,
                self.settings,
                prompt=job.call.prompt if job.call is not None else None,
                run_id=str(job.capture.run_id),
                progress=self.progress,
            )
        except Exception as error:
            result = self._failure(job, error)
        self._publish(job, result)
        return result

    def _attribute(self, job: _Job) -> ChainAttribution:
        return drive(self._attribute_steps(job))

    def _forget(self, run_id: UUID) -> None:
        if self._store.is_root(run_id):
            capture = self._store.pop(run_id)
            if capture is not None and capture.metadata is not None:
                capture.metadata.pop(_attach.RUN_METADATA_KEY, None)


def _choose_call(calls: list[LLMCall], documents: list[Document]) -> LLMCall | None:
    """The LLM call to attribute: the last one whose prompt holds every document's text
    (the answer step of a RAG chain), else the last one that answered."""
    if not calls:
        return None
    if documents:
        sources = to_documents(documents)
        for call in reversed(calls):
            try:
                if reached_the_model([call.prompt], sources):
                    return call
            except Exception:  # pragma: no cover - a bad prompt just is not chosen
                continue
    return calls[-1]


class CaptureEvents(HandlerCore):
    """The LangChain events of the sync handler; the async handler runs the same ones as
    coroutines (see the end of this module)."""

    def _finish(self, run_id: UUID) -> None:
        raise NotImplementedError  # the handler attributes the run that ended

    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._chain_start(inputs, run_id, parent_run_id, metadata)

    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._retriever_start(query, run_id, parent_run_id)

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._retriever_end(documents, run_id)

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._tool_start(serialized, run_id, parent_run_id)

    def on_tool_end(
        self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._tool_end(output, run_id)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._llm_start(to_chat_messages(messages[0]), serialized, run_id, parent_run_id, kwargs)

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._llm_start(prompts[0], serialized, run_id, parent_run_id, kwargs)

    def on_llm_end(
        self, response: LLMResult, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._llm_end(response, run_id)
        self._finish(run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(run_id)

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(run_id)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._tool_names.pop(run_id, None)
        self._forget(run_id)


HANDLER_ARGS_DOC = """
    Args:
        scorer: a camab-rag scorer (``camab_rag.default_scorer()``,
            ``camab_rag.OpenAICompletionsScorer(...)``). ``None``: built from the chain's own
            model (an OpenAI-compatible ``ChatOpenAI`` with a base URL, or
            :class:`~langchain_camab.CamabChatModel`).
        budget: model calls per attribution.
        method: ``"auto"`` (default: the best quality per model call), ``"camab"`` or a
            baseline (``"kernelshap"``, ``"contextcite"``, ``"loo"``).
        granularity: ``"chunk"`` (one unit per document) or ``"sentence"``.
        llm: the chain's chat model, to build the scorer from when ``scorer`` is ``None``
            (otherwise it is rebuilt from what callbacks see of the model).
        seed: makes attribution reproducible.
        strict: re-raise attribution errors into the chain (default: record them in the
            result, ``status="error"``, and let the chain's answer through).
        groundedness: a :class:`~camab_rag.groundedness.GroundednessFilter` with
            ``mode="flag"``: its verdict goes to ``result.groundedness`` and the answer's
            ``response_metadata["attribution"]["groundedness"]`` (at most two extra model
            calls). A callback cannot replace the answer: to block, use
            :class:`~langchain_camab.CamabAttributor` after the chain.
        background: return from the chain at once and attribute in the background; the
            documents and answer show ``{"status": "pending"}`` until then.
        question_keys: root input keys that may hold the question.
        context_keys: root input keys that may hold documents when no retriever ran.
        report_run_metadata: add the summary to the root run's metadata (key
            ``camab_attribution``) so tracers that report at run end show it.
        max_results: results kept in ``.results`` (oldest dropped first).
        progress: called as ``progress(calls_made, total)`` every few model calls (the
            root run has ended by then, so a handler has no run to send events to).
        citations: also put LangChain ``Citation`` annotations on the answer message, in
            place: its content becomes one text block carrying them (opt in where
            consumers read ``content_blocks``).
        proxy: a camab-rag scorer that scores in place of the chain's model when that
            model cannot (a hosted chat API gives no log-probabilities of a given text):
            e.g. ``camab_rag.default_scorer()``. Never silent: the result's ``scored_by``
            and the answer's metadata name the proxy (``"proxy": True``).
        scorer_options: options of the HTTP scorer built from the chain's model when
            ``scorer`` is ``None`` (:class:`camab_rag.OpenAICompletionsScorer`), e.g.
            ``{"retry_budget_s": 1.0, "timeout": 20}``: a refused connection costs the
            retry budget (default 3 s), a hung server ``timeout`` (60 s) plus it.
        **method_options: passed to the method (e.g. ``batch_size=4``); ``deadline_s``
            (default 120, ``None``: none) is the most seconds one attribution may take,
            the worst case of any failure (plus one batch of an in-process model): past
            it the attribution stops with an error and the chain goes on.
"""
