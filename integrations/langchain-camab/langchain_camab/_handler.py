"""What both callback handlers share: recording events, then on a finished root run
choosing the LLM call and attaching the result of the core's kernel
(:class:`camab_rag.integration.ChainRuns`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from camab_rag.integration import (
    CHAIN_SETTINGS,
    AttributionSettings,
    CapturedAttribution,
    ChainCall,
    ChainRuns,
    CredentialsRefusedError,
    NoContextError,
    ScorerCache,
    Steps,
    fill,
    own_or_proxy,
    pending,
    reached_the_model,
    to_documents,
)
from langchain_camab import _attach
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
from langchain_camab.result import ChainAttribution, KeptResults
from langchain_camab.scorer import (
    NO_KEY_FROM_RUN,
    ScorerUnavailableError,
    resolve_scorer,
    scorer_from_run,
)

logger = logging.getLogger(__name__)
HOW_TO_WAIT = (
    "Await handler.wait(run_id) before the event loop ends (e.g. at the end of the "
    "coroutine given to asyncio.run), or set background=False"
)


@dataclass
class _RootRun:
    """One root run ready to attribute: inputs resolved, placeholders attached."""

    capture: Capture
    call: LLMCall | None
    documents: list[Document]
    placeholders: list[dict[str, Any]] = field(default_factory=list)
    answer_placeholder: dict[str, Any] | None = None


class HandlerCore(KeptResults):
    """State and logic shared by the sync and async handlers (see their docstring)."""

    def __init__(
        self,
        scorer: object = None,
        *,
        settings: AttributionSettings | None = None,
        llm: object = None,
        proxy: object = None,
        scorer_options: Mapping[str, Any] | None = None,
        strict: bool = False,
        background: bool = False,
        progress: ProgressHook | None = None,
        citations: bool = False,
        question_keys: Sequence[str] = DEFAULT_QUESTION_KEYS,
        context_keys: Sequence[str] = DEFAULT_CONTEXT_KEYS,
        report_run_metadata: bool = True,
        max_results: int = 1000,
    ) -> None:
        super().__init__()
        self.settings = settings or CHAIN_SETTINGS
        _attach.check_filter(
            self.settings.groundedness, can_block=False, where=f"{type(self).__name__} observes and"
        )
        self.scorer = scorer
        self.llm = llm
        self.proxy = proxy
        self.scorer_options = dict(scorer_options or {})
        self.strict = strict
        self.background = background
        self.progress = progress
        self.citations = citations
        self.question_keys = tuple(question_keys)
        self.context_keys = tuple(context_keys)
        self.report_run_metadata = report_run_metadata
        self.runs: ChainRuns[ChainAttribution] = ChainRuns(
            self.settings, strict=strict, keep=max_results, uuid_keys=True, explain=self._explain
        )
        self._store = CaptureStore()
        self._scorers = ScorerCache()
        self._tool_names: dict[UUID, str | None] = {}
        # strict mode: let LangChain re-raise our errors into the chain
        self.raise_error = strict

    # ------------------------------------------------------------------ recording
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
        capture = self._store.track(
            run_id,
            parent_run_id,
            inputs=inputs,
            metadata=metadata if isinstance(metadata, dict) else None,
        )
        if self.report_run_metadata and capture.run_id == run_id and capture.metadata is not None:
            # Tracers keep the root run's metadata dict only when it is not empty: a
            # placeholder now makes them hold the dict the result is written into later.
            capture.metadata[_attach.RUN_METADATA_KEY] = pending(str(run_id))

    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._store.track(run_id, parent_run_id).queries.append(query)

    def on_retriever_end(
        self, documents: Sequence[Document], *, run_id: UUID, **kwargs: Any
    ) -> None:
        if self._store.is_root(run_id):  # a bare retriever call: nothing to attribute
            self._store.pop(run_id)
            return
        self._store.add_documents(run_id, list(documents))

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        capture = self._store.track(run_id, parent_run_id)
        if capture.run_id != run_id:
            name = serialized.get("name") if isinstance(serialized, dict) else None
            self._tool_names[run_id] = str(name) if name else None

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        name = self._tool_names.pop(run_id, None)
        if self._store.is_root(run_id):  # a bare tool call: nothing to attribute
            self._store.pop(run_id)
            return
        self._store.add_documents(run_id, tool_documents(output, name), tool=True)

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

    def _llm_start(
        self, prompt: Any, serialized: Any, run_id: UUID, parent: UUID | None, kwargs: Any
    ) -> None:
        self._store.track(run_id, parent)
        params = kwargs.get("invocation_params") or {}
        serialized = serialized if isinstance(serialized, dict) else None
        params = params if isinstance(params, dict) else {}
        self._store.add_llm_call(run_id, LLMCall(prompt, serialized, params))

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

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(run_id)

    on_llm_error = on_retriever_error = on_chain_error

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._tool_names.pop(run_id, None)
        self._forget(run_id)

    def _forget(self, run_id: UUID) -> None:
        if self._store.is_root(run_id):
            capture = self._store.pop(run_id)
            if capture is not None and capture.metadata is not None:
                capture.metadata.pop(_attach.RUN_METADATA_KEY, None)

    # ------------------------------------------------------------------ attribution
    def _take(self, run_id: UUID) -> _RootRun | None:
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
        return _RootRun(capture, _choose_call(capture.answered_calls(), documents), documents)

    def _steps(self, run: _RootRun) -> Steps[ChainAttribution]:
        """Attribute a root run and attach the result (a failure is the result)."""
        call = run.call
        chain_call = ChainCall(
            run.capture.question(self.question_keys),
            (call.answer or "") if call is not None else "",
            run.documents,
            scorer=lambda: self._scorer_for(call),
            prompts=[call.prompt] if call is not None else [],
            progress=self.progress,
            problem=self._problem(run),
        )
        return self.runs.steps(
            run.capture.run_id, chain_call, lambda attributed: self._publish(run, attributed)
        )

    def _start(self, run: _RootRun) -> None:
        """Background mode: show ``status="pending"`` until the result is ready."""
        run_id = str(run.capture.run_id)
        run.placeholders = [pending(run_id) for _ in run.documents]
        for doc, placeholder in zip(run.documents, run.placeholders):
            doc.metadata[_attach.METADATA_KEY] = placeholder
        if run.call is not None and run.call.message is not None:
            run.answer_placeholder = pending(run_id)
            _attach.annotate_message(run.call.message, run.answer_placeholder)

    def _all_placeholders(self, run: _RootRun) -> list[dict[str, Any] | None]:
        slot = (run.capture.metadata or {}).get(_attach.RUN_METADATA_KEY)
        return [*run.placeholders, run.answer_placeholder, slot]

    def _problem(self, run: _RootRun) -> Exception | None:
        """Why a root run cannot be attributed (``None``: it can)."""
        if run.call is None or run.call.answer is None:
            return ValueError(
                "no LLM answer was captured in this run: there is nothing to attribute"
            )
        if not run.documents and run.capture.queries:
            return NoContextError(
                "the retriever ran and returned no documents: the answer has no retrieved "
                "context to come from"
            )
        if not run.documents:
            return ValueError(
                "no documents were captured in this run (no retriever ran and the input has "
                f"none of the keys {list(self.context_keys)} holding Documents)"
            )
        return None

    def _explain(self, error: Exception) -> Exception:
        if isinstance(error, CredentialsRefusedError) and self.scorer is None and self.llm is None:
            return ScorerUnavailableError(f"{error}. {NO_KEY_FROM_RUN}")
        return error

    def _scorer_for(self, call: LLMCall | None) -> Any:
        options = self.scorer_options
        if self.scorer is not None or self.llm is not None or call is None:
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

    def _publish(self, run: _RootRun, attributed: CapturedAttribution) -> ChainAttribution:
        """The chain's result, put on the run's documents, answer and run metadata."""
        ok = attributed.result.status == "ok"
        result = ChainAttribution.from_result(
            attributed.result,
            run_id=str(run.capture.run_id),
            documents=tuple(run.documents) if ok else (),
            groundedness=attributed.verdict,
        )
        try:
            data = _attach.summarize(result, run.documents)
            _attach.annotate_documents(
                run.documents, result, extra=run.capture.documents, previous=run.placeholders
            )
            message = run.call.message if run.call is not None else None
            if message is not None:
                if run.answer_placeholder is not None:
                    data = fill(run.answer_placeholder, data)
                _attach.annotate_message(message, data)
                if self.citations and ok:
                    _attach.annotate_citations(message, result, run.documents)
            if self.report_run_metadata and run.capture.metadata is not None:
                # the dict tracers hold for the root run: they report it when it ends
                slot = run.capture.metadata.get(_attach.RUN_METADATA_KEY)
                if isinstance(slot, dict) and slot is not data:
                    fill(slot, data)
                else:
                    run.capture.metadata[_attach.RUN_METADATA_KEY] = data
        except Exception:  # pragma: no cover - reporting must never break the chain
            logger.exception("camab: could not attach the attribution metadata")
        return result


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
