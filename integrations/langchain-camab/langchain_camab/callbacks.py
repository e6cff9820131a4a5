"""Callback handlers that attribute a chain's answer when its root run ends.

Pass one in ``config={"callbacks": [handler]}``: it files the retrieved documents and each
LLM call's exact prompt and answer under their root run (:class:`camab_rag.integration.RunTree`),
and attributes the answer when the root run ends; a failure is recorded
(``status="error"``), never raised, unless ``strict=True``.

Args (both handlers):
    scorer: a camab-rag scorer; ``None``: built from the chain's model (``llm``, else what
        callbacks see of it: an OpenAI-compatible ``ChatOpenAI`` or ``CamabChatModel``).
    settings: :class:`~camab_rag.AttributionSettings`; its groundedness filter must be
        ``mode="flag"`` (to block, put :class:`~langchain_camab.CamabAttributor` after the
        chain).
    llm, proxy, scorer_options: the chain's chat model; a scorer used when that model
        cannot score (named in ``scored_by``); the HTTP scorer's options.
    strict, background, progress: re-raise errors; attribute in the background (pending
        dicts meanwhile); ``progress(calls_made, total)``.
    citations: also put LangChain ``Citation`` annotations on the answer message.
    question_keys, context_keys: root input keys holding the question / the documents.
    report_run_metadata: add the summary to the root run's metadata (``camab_attribution``).
    max_results: results kept in ``.results`` (oldest dropped first).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from camab_rag.integration import (
    CHAIN_SETTINGS,
    CONTEXT_KEYS,
    METADATA_KEY,
    QUESTION_KEYS,
    Attachment,
    AttributionSettings,
    CapturedAttribution,
    ChainAttribution,
    ChainRuns,
    ClosedRun,
    CredentialsRefusedError,
    KeptResults,
    LLMCall,
    Prompt,
    RunReading,
    RunTree,
    ScorerCache,
    Steps,
    fill,
    pending,
)
from langchain_camab import native
from langchain_camab.native import RUN_METADATA_KEY, ProgressHook
from langchain_camab.scorer import NO_KEY_FROM_RUN, ScorerUnavailableError, scorer_for_call

logger = logging.getLogger(__name__)
HOW_TO_WAIT = (
    "Await handler.wait(run_id) before the event loop ends (e.g. at the end of the "
    "coroutine given to asyncio.run), or set background=False"
)


class _Handler(KeptResults):
    """Recording and attaching, shared by the sync and async handlers."""

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
        question_keys: Sequence[str] = QUESTION_KEYS,
        context_keys: Sequence[str] = CONTEXT_KEYS,
        report_run_metadata: bool = True,
        max_results: int = 1000,
    ) -> None:
        super().__init__()
        self.settings = settings or CHAIN_SETTINGS
        where = f"{type(self).__name__} observes and"
        native.check_filter(self.settings.groundedness, can_block=False, where=where)
        self.scorer, self.llm, self.proxy = scorer, llm, proxy
        self.scorer_options = dict(scorer_options or {})
        self.strict, self.background, self.progress = strict, background, progress
        self.citations, self.report_run_metadata = citations, report_run_metadata
        self.reading: RunReading[Document] = RunReading(
            text_of=lambda d: d.page_content,
            is_document=lambda d: isinstance(d, Document),
            user_text=native.last_human_text,
            question_keys=tuple(question_keys),
            context_keys=tuple(context_keys),
        )
        self.runs: ChainRuns[ChainAttribution] = ChainRuns(
            self.settings, strict=strict, keep=max_results, uuid_keys=True, explain=self._explain
        )
        self._tree: RunTree[Document] = RunTree()
        self._scorers = ScorerCache()
        self._tool_names: dict[UUID, str | None] = {}
        self.raise_error = strict  # strict: LangChain re-raises our errors into the chain

    # ------------------------------------------------------------------ recording
    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        run_id, metadata = kw["run_id"], kw.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else None
        run = self._tree.track(run_id, kw.get("parent_run_id"), inputs=inputs, metadata=metadata)
        if self.report_run_metadata and run.run_id == run_id and run.metadata is not None:
            # Tracers keep the root run's metadata dict only when it is not empty: a
            # placeholder now makes them hold the dict the result is written into later.
            run.metadata[RUN_METADATA_KEY] = pending(str(run_id))

    def on_retriever_start(self, serialized: Any, query: str, **kw: Any) -> None:
        self._tree.track(kw["run_id"], kw.get("parent_run_id")).queries.append(query)

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:
        run_id = kw["run_id"]
        if self._tree.track(run_id, kw.get("parent_run_id")).run_id != run_id:
            name = serialized.get("name") if isinstance(serialized, dict) else None
            self._tool_names[run_id] = str(name) if name else None

    def on_retriever_end(self, documents: Sequence[Document], *, run_id: UUID, **kw: Any) -> None:
        self._add(run_id, list(documents))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        self._add(run_id, tool_documents(output, self._tool_names.pop(run_id, None)), tool=True)

    def _add(self, run_id: UUID, documents: list[Document], tool: bool = False) -> None:
        if self._tree.is_root(run_id):  # a bare retriever or tool call: nothing to attribute
            self._tree.pop(run_id)
        else:
            self._tree.add_documents(run_id, documents, tool=tool)

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[BaseMessage]], **kw: Any
    ) -> None:
        self._llm_start(native.to_chat_messages(messages[0]), serialized, kw)

    def on_llm_start(self, serialized: Any, prompts: list[str], **kw: Any) -> None:
        self._llm_start(prompts[0], serialized, kw)

    def _llm_start(self, prompt: Prompt, serialized: Any, kw: dict[str, Any]) -> None:
        run_id, params = kw["run_id"], kw.get("invocation_params")
        self._tree.track(run_id, kw.get("parent_run_id"))
        params = params if isinstance(params, dict) else {}
        model = (serialized if isinstance(serialized, dict) else None, params)
        self._tree.add_llm_call(run_id, LLMCall(prompt, model))

    def _llm_end(self, response: LLMResult, run_id: UUID) -> None:
        call = self._tree.llm_call(run_id)
        if call is None or not response.generations or not response.generations[0]:
            return
        generation = response.generations[0][0]
        call.answer = generation.text
        if isinstance(generation, ChatGeneration):
            call.message = generation.message
            call.answer = call.answer or native.message_text(generation.message)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._tool_names.pop(run_id, None)
        if self._tree.is_root(run_id):
            run = self._tree.pop(run_id)
            if run is not None and run.metadata is not None:
                run.metadata.pop(RUN_METADATA_KEY, None)

    on_llm_error = on_retriever_error = on_tool_error = on_chain_error

    # ------------------------------------------------------------------ attribution
    def _job(self, run_id: UUID) -> tuple[Steps[ChainAttribution], list[Any]] | None:
        """Close a root run: the steps that attribute and attach it and, in the background,
        the placeholders put on its documents, answer message and run metadata."""
        run = self._tree.pop(run_id) if self._tree.is_root(run_id) else None
        closed = self.reading.close(run) if run is not None else None
        if run is None or closed is None:  # not a RAG run (no model, no retriever)
            if run is not None and run.metadata is not None:
                run.metadata.pop(RUN_METADATA_KEY, None)
            return None
        attachment = None
        if self.background:
            attachment = Attachment.placeholders(str(run_id), len(closed.documents))
            for doc, placeholder in zip(closed.documents, attachment.documents):
                doc.metadata[METADATA_KEY] = placeholder
            native.annotate(closed.call.message if closed.call else None, attachment.answer)
        call = closed.chain_call(lambda: self._scorer_for(closed.call), self.progress)
        steps = self.runs.steps(run_id, call, lambda done: self._publish(closed, attachment, done))
        slot = (run.metadata or {}).get(RUN_METADATA_KEY)
        return steps, [*attachment.all(), slot] if attachment is not None else []

    def _explain(self, error: Exception) -> Exception:
        if isinstance(error, CredentialsRefusedError) and self.scorer is None and self.llm is None:
            return ScorerUnavailableError(f"{error}. {NO_KEY_FROM_RUN}")
        return error

    def _scorer_for(self, call: LLMCall | None) -> Any:
        own = self.scorer is not None or self.llm is not None or call is None
        return scorer_for_call(self, self._scorers, None if own else call)

    def _publish(
        self,
        closed: ClosedRun[Document],
        attachment: Attachment | None,
        attributed: CapturedAttribution,
    ) -> ChainAttribution:
        """The chain's result, put on the run's documents, answer and run metadata."""
        run, documents = closed.run, closed.documents
        result = ChainAttribution.of(attributed, str(run.run_id), documents)
        try:
            if attachment is None:
                attachment = Attachment.of(result, documents)
            else:
                attachment.fill(result, documents)
            entries = {d.page_content: e for d, e in zip(documents, attachment.documents)}
            for doc in (*documents, *run.documents):  # duplicates get the same entry
                if doc.page_content in entries:
                    doc.metadata[METADATA_KEY] = entries[doc.page_content]
            message = closed.call.message if closed.call is not None else None
            cited = result if self.citations else None
            native.annotate(message, attachment.answer, cited, documents)
            if self.report_run_metadata and run.metadata is not None:
                # the dict tracers hold for the root run: they report it when it ends
                slot = run.metadata.get(RUN_METADATA_KEY)
                if isinstance(slot, dict):
                    fill(slot, attachment.answer)
                else:
                    run.metadata[RUN_METADATA_KEY] = attachment.answer
        except Exception:  # pragma: no cover - reporting must never break the chain
            logger.exception("camab: could not attach the attribution metadata")
        return result


def tool_documents(output: object, tool_name: str | None) -> list[Document]:
    """The documents a tool returned: its ``Document`` list (or a ``ToolMessage`` artifact
    of them, as ``response_format="content_and_artifact"`` retrieval tools give), else its
    text as one document named after the tool."""
    for candidate in (getattr(output, "artifact", None), output):
        if isinstance(candidate, Document):
            return [candidate]
        if (
            isinstance(candidate, Sequence)
            and candidate
            and all(isinstance(d, Document) for d in candidate)
        ):
            return list(candidate)
    content = native.message_text(output) if isinstance(output, BaseMessage) else output
    content = content if isinstance(content, str) else str(content) if content is not None else ""
    if not content.strip():
        return []
    return [Document(content, metadata={"source": tool_name} if tool_name else {})]


class CamabCallbackHandler(_Handler, BaseCallbackHandler):
    """Attribute the answer of every root run to its retrieved documents.

    ``handler.results[run_id]`` is the :class:`~langchain_camab.ChainAttribution` of a
    finished root run, ``handler.last_result`` the latest one. The answer message (when
    the chain's model returned one) gets ``response_metadata["attribution"]`` and each
    retrieved ``Document`` gets ``metadata["attribution"]``. Arguments: see
    :mod:`langchain_camab.callbacks`.
    """

    @property
    def futures(self) -> Mapping[Any, Any]:
        """Background attributions by root run id (``concurrent.futures.Future``; a copy)."""
        return self.runs.pending

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self._llm_end(response, run_id)
        self.on_chain_end(None, run_id=run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        job = self._job(run_id)
        if job is not None and self.background:
            self.runs.start(run_id, job[0])
        elif job is not None:
            self.runs.run(job[0])

    def wait(
        self, run_id: UUID | str | None = None, timeout: float | None = None
    ) -> ChainAttribution:
        """The result of a root run (the latest when ``run_id`` is ``None``), waiting for
        a background attribution."""
        return self.runs.wait(run_id, timeout)

    def close(self) -> None:
        """Wait for background work and stop its thread."""
        self.runs.close()


class AsyncCamabCallbackHandler(_Handler, AsyncCallbackHandler):  # type: ignore[misc]
    """The async :class:`CamabCallbackHandler` (scores with ``scorer.ascore``).

    It runs inline (``run_inline``: LangChain calls its plain recording methods directly
    and awaits the two that attribute), before other handlers see the root run's end, so
    tracers report the attribution in the run's metadata. With ``background=True`` the
    attribution is an ``asyncio.Task`` in ``handler.tasks[run_id]``;
    ``await handler.wait(run_id)``.
    """

    run_inline = True

    @property
    def tasks(self) -> Mapping[Any, Any]:
        """Background attributions by root run id (``asyncio.Task``; a copy)."""
        return self.runs.pending

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self._llm_end(response, run_id)
        await self.on_chain_end(None, run_id=run_id)

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        job = self._job(run_id)
        if job is not None and self.background:
            self.runs.astart(run_id, job[0], job[1], HOW_TO_WAIT)
        elif job is not None:
            await self.runs.arun(job[0])

    async def wait(self, run_id: UUID | str | None = None) -> ChainAttribution:
        """The result of a root run (the latest when ``run_id`` is ``None``), awaiting a
        background attribution."""
        return await self.runs.await_result(run_id)
