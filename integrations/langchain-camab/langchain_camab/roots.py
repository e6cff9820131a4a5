"""The callback handlers' kernel: :class:`RootRuns` files what LangChain traces per root
run and, when a root run ends, attributes it and attaches the result to each document
(duplicates of a text get the same entry), the answer message and the run's metadata slot
(pending placeholders first in the background, filled in place when done)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from camab_rag.integration import METADATA_KEY, Attachment, ChainAttribution
from langchain_camab.native import annotate, message_text
from langchain_camab.run_tree import ClosedRun, LLMCall, RunReading, RunTree

if TYPE_CHECKING:
    from camab_rag.attributor import Pending
    from camab_rag.integration import ChainParts, Prompt, Runs, Steps
logger = logging.getLogger(__name__)


class Kept:
    """``results``, ``last_result`` and ``pending`` of an object whose attributions run in
    ``runs``, and :meth:`await_result`: a thin call of the kept
    :class:`~camab_rag.attributor.Pending` (:meth:`~camab_rag.attributor.Pending.aresult`)."""

    runs: Runs[ChainAttribution]

    @property
    def results(self) -> Mapping[Any, ChainAttribution]:
        """Results by run id, oldest dropped first."""
        return self.runs.results

    @property
    def last_result(self) -> ChainAttribution | None:
        """The latest result."""
        return self.runs.last_result

    @property
    def pending(self) -> dict[Any, Pending[ChainAttribution]]:
        """Background attributions by run id (their handles; a copy)."""
        return dict(self.runs.pending)

    async def await_result(self, run_id: object = None) -> ChainAttribution:
        """Await a background attribution (the latest when ``run_id`` is ``None``);
        cancelling the caller leaves it running."""
        return await self.runs.job(run_id).aresult()


class Waited(Kept):
    """:class:`Kept` whose background attributions can also be waited for."""

    def wait(self, run_id: object = None, timeout: float | None = None) -> ChainAttribution:
        """Block until a background attribution (the latest when ``run_id`` is ``None``)
        is done, up to ``timeout`` seconds (:meth:`~camab_rag.attributor.Pending.result`)."""
        return self.runs.job(run_id).result(timeout)


@dataclass
class RootRuns:
    """Root runs filed as traced, attributed when they end; ``slot_key`` names the root
    run's metadata entry that receives the summary (``None``: none)."""

    reading: RunReading
    parts: ChainParts
    slot_key: str | None = None
    tree: RunTree = field(default_factory=RunTree)
    tool_names: dict[Hashable, str | None] = field(default_factory=dict)

    def started(
        self, run_id: Hashable, parent_id: Hashable | None, inputs: Any, metadata: object
    ) -> None:
        """A chain run started; a root one gets a pending metadata slot (tracers keep a
        root run's metadata dict only when it is not empty: the result is written into it)."""
        held = metadata if isinstance(metadata, dict) else None
        run = self.tree.track(run_id, parent_id, inputs=inputs, metadata=held)
        if self.slot_key and run.run_id == run_id and run.metadata is not None:
            run.metadata[self.slot_key] = Attachment.placeholders(str(run_id), 0).answer

    def retriever_started(self, run_id: Hashable, parent_id: Hashable | None, query: str) -> None:
        """A retriever started with ``query`` (the question when the input holds none)."""
        self.tree.track(run_id, parent_id).queries.append(query)

    def llm_started(
        self, run_id: Hashable, parent_id: Hashable | None, prompt: Prompt, model: Any
    ) -> None:
        """A model call started with the exact ``prompt``; ``model`` identifies the model
        (for the integration's ``scorer_for``)."""
        self.tree.track(run_id, parent_id)
        self.tree.add_llm_call(run_id, LLMCall(prompt, model))

    def llm_ended(self, run_id: Hashable, answer: str, message: object = None) -> None:
        """A model call answered: its text and the framework's answer object (``message``,
        which receives the summary)."""
        call = self.tree.llm_call(run_id)
        if call is not None:
            call.answer, call.message = answer, message

    def add(self, run_id: Hashable, documents: Sequence[Document], tool: bool = False) -> None:
        """Documents a retriever or tool returned (alone, as a root: nothing to attribute)."""
        if self.tree.is_root(run_id):
            self.tree.pop(run_id)
        else:
            self.tree.add_documents(run_id, documents, tool=tool)

    def tool_started(self, run_id: Hashable, parent_id: Hashable | None, name: object) -> None:
        """A tool started; its name is the source of a text it returns."""
        if self.tree.track(run_id, parent_id).run_id != run_id:
            self.tool_names[run_id] = str(name) if name else None

    def tool_ended(self, run_id: Hashable, output: object) -> None:
        """A tool returned (see :func:`tool_documents`)."""
        name = self.tool_names.pop(run_id, None)
        self.add(run_id, tool_documents(output, name), tool=True)

    def failed(self, run_id: Hashable) -> None:
        """A run failed: a root one is forgotten, its metadata slot removed."""
        self.tool_names.pop(run_id, None)
        if self.tree.is_root(run_id):
            self._drop_slot(self.tree.pop(run_id))

    def _drop_slot(self, run: Any) -> None:
        if self.slot_key and run is not None and run.metadata is not None:
            run.metadata.pop(self.slot_key, None)

    def ended(
        self, run_id: Hashable, scorer_for: Callable[[LLMCall | None], Any]
    ) -> tuple[Steps[ChainAttribution], list[Any]] | None:
        """A run ended: for a root RAG run, the steps that attribute and attach it and, in
        the background, the placeholders put on its documents, answer and metadata."""
        run = self.tree.pop(run_id) if self.tree.is_root(run_id) else None
        closed = self.reading.close(run) if run is not None else None
        if run is None or closed is None:  # not a RAG run (no model, no retriever)
            self._drop_slot(run)
            return None
        attachment = None
        if self.parts.background:
            attachment = Attachment.placeholders(str(run_id), len(closed.documents))
            for doc, placeholder in zip(closed.documents, attachment.documents):
                self._set_entry(doc, placeholder)
            message = closed.call.message if closed.call else None
            annotate(message, attachment.answer, None, [])
        call = closed.chain_call(lambda: scorer_for(closed.call), self.parts.progress)
        steps = self.parts.runs.steps(
            run_id, call, lambda done: self._publish(closed, attachment, done)
        )
        slot = (run.metadata or {}).get(self.slot_key) if self.slot_key else None
        return steps, [*attachment.all(), slot] if attachment is not None else []

    def finish(self, run_id: Hashable, scorer_for: Callable[[LLMCall | None], Any]) -> None:
        """A run ended: attribute a root RAG run now, or start it in the worker thread."""
        job = self.ended(run_id, scorer_for)
        if job is not None and self.parts.background:
            self.parts.runs.start(run_id, job[0])
        elif job is not None:
            self.parts.runs.run(job[0])

    async def afinish(self, run_id: Hashable, scorer_for: Callable[[LLMCall | None], Any]) -> None:
        """Async :meth:`finish`: in the background a task of the running loop, whose
        placeholders read "cancelled" if the loop ends first."""
        job = self.ended(run_id, scorer_for)
        if job is not None and self.parts.background:
            self.parts.runs.start(run_id, job[0], job[1], in_loop=True)
        elif job is not None:
            await self.parts.runs.arun(job[0])

    def _publish(
        self, closed: ClosedRun, attachment: Attachment | None, done: Any
    ) -> ChainAttribution:
        """The run's result, put on its documents, answer message and metadata slot."""
        run, documents = closed.run, closed.documents
        result = ChainAttribution.of(done, str(run.run_id), documents)
        try:
            if attachment is None:
                attachment = Attachment.of(result, documents)
            else:
                attachment.fill(result, documents)
            entries = {d.page_content: e for d, e in zip(documents, attachment.documents)}
            for doc in (*documents, *run.documents):  # duplicates get the same entry
                if doc.page_content in entries:
                    self._set_entry(doc, entries[doc.page_content])
            message = closed.call.message if closed.call is not None else None
            cited = result if self.parts.citations else None
            annotate(message, attachment.answer, cited, documents)
            if self.slot_key and run.metadata is not None:
                slot = run.metadata.get(self.slot_key)
                if isinstance(slot, dict):  # filled in place: tracers hold it
                    slot.clear()
                    slot.update(attachment.answer)
                else:
                    run.metadata[self.slot_key] = attachment.answer
        except Exception:  # pragma: no cover - reporting must never break the chain
            logger.exception("camab: could not attach the attribution metadata")
        return result

    def _set_entry(self, doc: object, entry: dict[str, Any]) -> None:
        if isinstance(doc, Document):
            doc.metadata[METADATA_KEY] = entry


def tool_documents(output: object, tool_name: str | None) -> list[Document]:
    """The documents a tool returned: its documents (or an ``artifact`` of them, as
    LangChain's ``response_format="content_and_artifact"`` retrieval tools give), else
    its text as one document named after the tool."""
    for candidate in (getattr(output, "artifact", None), output):
        if isinstance(candidate, Document):
            return [candidate]
        docs = candidate if isinstance(candidate, Sequence) else ()
        if docs and all(isinstance(d, Document) for d in docs):
            return list(docs)
    content = message_text(output) if isinstance(output, BaseMessage) else output
    content = content if isinstance(content, str) else str(content) if content is not None else ""
    if not content.strip():
        return []
    return [Document(content, metadata={"source": tool_name} if tool_name else {})]
