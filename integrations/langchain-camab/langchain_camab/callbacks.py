"""Callback handlers that attribute a chain's answer when its root run ends, against the
exact prompt its LLM received; a failure is recorded, never raised, unless ``strict=True``.
Args: ``scorer`` (``None``: ``llm``'s, else that of the model the callbacks see),
``question_keys`` / ``context_keys`` and ``ChainOptions``. What the callbacks trace is
filed under its root run (:class:`RootRuns`: concurrent roots never mix)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from camab_rag.errors import AttributionPendingError, InputError, NoContextError, WrongTypeError
from camab_rag.integration import METADATA_KEY, Attachment, ChainCall, Runs, fill, prompt_holds
from langchain_camab.chat_models import explain_refused_key, scorer_from_run
from langchain_camab.native import (
    RUN_METADATA_KEY,
    annotate,
    cannot_block,
    chat_of,
    last_user_text,
    to_chat_messages,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from camab_rag.attributor import Pending
    from camab_rag.integration import ChainOptions, Prompt, Steps
    from camab_rag.result import AttributionResult
logger = logging.getLogger(__name__)

QUESTION_KEYS = ("input", "question", "query")
CONTEXT_KEYS = ("context", "documents", "docs")


RUNNING = "is still being attributed: handler.wait(run_id) or handler.await_result(run_id)"


class Results(Mapping[Any, "AttributionResult"]):
    """Finished results by run id; reading a run still attributed in the background raises
    :class:`AttributionPendingError` (a ``KeyError``), not a bare ``KeyError``."""

    def __init__(self, runs: Runs[AttributionResult]) -> None:
        self.runs = runs

    def __getitem__(self, run_id: object) -> AttributionResult:
        try:
            return self.runs.results[run_id]
        except KeyError:
            job = self.runs.pending.get(self.runs.results.key(run_id))
            if job is not None and not job.done():
                raise AttributionPendingError(f"run {run_id} {RUNNING}") from None
            raise

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self.runs.results))

    def __len__(self) -> int:
        return len(self.runs.results)


class Kept:
    """The results and handles of an object whose attributions run in ``runs``."""

    runs: Runs[AttributionResult]

    @property
    def results(self) -> Mapping[Any, AttributionResult]:
        return Results(self.runs)

    @property
    def last_result(self) -> AttributionResult | None:
        """The latest root run's result; :class:`AttributionPendingError` while it runs."""
        if self.runs.pending and not self.runs.job().done():
            raise AttributionPendingError(f"the latest run {RUNNING}")
        return self.runs.last_result

    @property
    def pending(self) -> dict[Any, Pending[AttributionResult]]:
        """The background attributions not finished yet, by run id."""
        return {key: job for key, job in list(self.runs.pending.items()) if not job.done()}

    async def await_result(self, run_id: object = None) -> AttributionResult:
        """Await a background attribution; cancelling the caller leaves it running."""
        return await self.runs.job(run_id).aresult()

    def wait(self, run_id: object = None, timeout: float | None = None) -> AttributionResult:
        """Block until a background attribution is done, up to ``timeout`` seconds."""
        return self.runs.job(run_id).result(timeout)


@dataclass
class LLMCall:
    """One LLM call of a root run: its prompt, its model and, once it ends, its answer."""

    prompt: Prompt
    model: Any = None
    answer: str | None = None
    message: Any = None


@dataclass
class RootRun:
    """Everything recorded under one root run."""

    run_id: Hashable
    inputs: Any = None
    metadata: dict[str, Any] | None = None
    queries: list[str] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    tool_documents: list[Document] = field(default_factory=list)
    llm_calls: list[LLMCall] = field(default_factory=list)
    descendants: set[Hashable] = field(default_factory=set)
    llm_by_run: dict[Hashable, LLMCall] = field(default_factory=dict)


def input_keys(option: str, keys: str | Sequence[str]) -> tuple[str, ...]:
    """``keys`` as a tuple of input keys (one string is one key, never its characters)."""
    found = (keys,) if isinstance(keys, str) else tuple(keys)
    if not found or not all(isinstance(k, str) for k in found):
        raise WrongTypeError(f"{option} must be a key (a string) or a list of them, got {keys!r}")
    return found


class RootRuns:
    """Root runs filed by LangChain's callbacks (thread-safe), attributed in ``runs`` when
    they end, scored by ``scorer_for(the chosen LLM call)``."""

    def __init__(
        self,
        runs: Runs[AttributionResult],
        scorer_for: Callable[[LLMCall | None], Any] = lambda call: None,
        question_keys: str | Sequence[str] = QUESTION_KEYS,
        context_keys: str | Sequence[str] = CONTEXT_KEYS,
    ) -> None:
        self.runs, self.scorer_for = runs, scorer_for
        self.question_keys = input_keys("question_keys", question_keys)
        self.context_keys = input_keys("context_keys", context_keys)
        self.tool_names: dict[Hashable, str | None] = {}
        self._lock = threading.Lock()
        self._roots: dict[Hashable, RootRun] = {}
        self._root_of: dict[Hashable, Hashable] = {}

    def track(
        self, run_id: Hashable, parent_id: Hashable | None, inputs: Any = None, metadata: Any = None
    ) -> RootRun:
        """File ``run_id`` under its root (a run with no known parent is a root)."""
        with self._lock:
            root = self._root_of.get(parent_id) if parent_id is not None else None
            if root is None or root not in self._roots:
                run = self._roots.setdefault(run_id, RootRun(run_id, inputs, metadata))
                self._root_of[run_id] = run_id
                return run
            self._root_of[run_id] = root
            self._roots[root].descendants.add(run_id)
            return self._roots[root]

    def get(self, run_id: Hashable) -> RootRun | None:
        """The root run ``run_id`` descends from (``None`` if untracked)."""
        with self._lock:
            root = self._root_of.get(run_id)
            return self._roots.get(root) if root is not None else None

    def pop(self, run_id: Hashable) -> RootRun | None:
        """Forget a root run and its descendants; return it."""
        with self._lock:
            if self._root_of.get(run_id) != run_id:
                return None
            run = self._roots.pop(run_id)
            for descendant in (*run.descendants, run_id):
                self._root_of.pop(descendant, None)
            return run

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        """A root run gets a pending metadata slot (tracers keep only a non-empty dict)."""
        metadata, run_id = kw.get("metadata"), kw["run_id"]
        held = metadata if isinstance(metadata, dict) else None
        run = self.track(run_id, kw.get("parent_run_id"), inputs, held)
        if run.run_id == run_id and run.metadata is not None:
            run.metadata[RUN_METADATA_KEY] = Attachment.placeholders(str(run_id), 0).answer

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[BaseMessage]], **kw: Any
    ) -> None:
        self._llm_start(to_chat_messages(messages[0]), serialized, kw)

    def on_llm_start(self, serialized: Any, prompts: list[str], **kw: Any) -> None:
        self._llm_start(prompts[0], serialized, kw)

    def _llm_start(self, prompt: Prompt, serialized: Any, kw: dict[str, Any]) -> None:
        params = kw.get("invocation_params")
        params = params if isinstance(params, dict) else {}
        model = (serialized if isinstance(serialized, dict) else None, params)
        run, call = self.track(kw["run_id"], kw.get("parent_run_id")), LLMCall(prompt, model)
        with self._lock:
            run.llm_calls.append(call)
            run.llm_by_run[kw["run_id"]] = call

    def llm_ended(self, run_id: Hashable, response: LLMResult) -> None:
        """A model call answered: its text and its message (which gets the summary)."""
        run = self.get(run_id)
        call = run.llm_by_run.get(run_id) if run is not None else None
        if call is not None and response.generations and response.generations[0]:
            generation = response.generations[0][0]
            message = generation.message if isinstance(generation, ChatGeneration) else None
            call.message = message
            call.answer = generation.text or (message.text if message is not None else "")

    def on_retriever_start(self, serialized: Any, query: str, **kw: Any) -> None:
        self.track(kw["run_id"], kw.get("parent_run_id")).queries.append(query)

    def on_retriever_end(
        self, documents: Sequence[Document], *, run_id: Hashable, tool: bool = False, **kw: Any
    ) -> None:
        """Documents a retriever or tool returned (alone, as a root: nothing to attribute)."""
        if self.pop(run_id) is None and (run := self.get(run_id)) is not None:
            with self._lock:
                (run.tool_documents if tool else run.documents).extend(documents)

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:
        name = serialized.get("name") if isinstance(serialized, dict) else None
        if self.track(kw["run_id"], kw.get("parent_run_id")).run_id != kw["run_id"]:
            self.tool_names[kw["run_id"]] = str(name) if name else None

    def on_tool_end(self, output: Any, *, run_id: Hashable, **kw: Any) -> None:
        name = self.tool_names.pop(run_id, None)
        self.on_retriever_end(tool_documents(output, name), run_id=run_id, tool=True)

    def on_chain_error(self, error: BaseException, *, run_id: Hashable, **kw: Any) -> None:
        self.tool_names.pop(run_id, None)
        self._drop_slot(self.pop(run_id))

    on_llm_error = on_retriever_error = on_tool_error = on_chain_error

    def _drop_slot(self, run: RootRun | None) -> None:
        if run is not None and run.metadata is not None:
            run.metadata.pop(RUN_METADATA_KEY, None)

    def question(self, run: RootRun) -> str:
        """The root input string, else its first ``question_keys`` string, else the last
        user message of its ``messages`` or of itself, else the first retriever query."""
        inputs = run.inputs
        if isinstance(inputs, str):
            return inputs
        if isinstance(inputs, Mapping):
            for key in self.question_keys:
                if isinstance(inputs.get(key), str):
                    return str(inputs[key])
            asked = last_user_text(chat_of(inputs.get("messages")))
            if asked:
                return asked
        return last_user_text(chat_of(inputs)) or (run.queries[0] if run.queries else "")

    def documents(self, run: RootRun) -> list[Document]:
        """Retrieved documents (exact duplicates once), else what the run's tools returned,
        else those in the root input under ``context_keys``."""
        documents = list(run.documents) or list(run.tool_documents)
        if not documents and isinstance(run.inputs, Mapping):
            for key in self.context_keys:
                value = run.inputs.get(key)
                given = value if isinstance(value, Sequence) else ()
                if given and all(isinstance(d, Document) for d in given):
                    documents = list(given)
                    break
        unique: dict[str, Document] = {}
        for doc in documents:
            unique.setdefault(doc.page_content, doc)
        return list(unique.values())

    @staticmethod
    def chosen_call(run: RootRun, documents: Sequence[Document]) -> LLMCall | None:
        """The last answered LLM call whose prompt holds every document, else the last."""
        calls = [c for c in run.llm_calls if c.answer is not None and c.answer.strip()]
        chosen = (c for c in reversed(calls) if prompt_holds([c.prompt], documents))
        return next(chosen, calls[-1] if calls else None)

    def problem(
        self, run: RootRun, call: LLMCall | None, documents: list[Document]
    ) -> Exception | None:
        """Why a root run cannot be attributed (``None``: it can)."""
        if call is None or call.answer is None:
            return InputError(
                "no LLM answer was captured in this run: there is nothing to attribute"
            )
        if not documents and run.queries:
            return NoContextError(
                "the retriever ran and returned no documents: the answer has no retrieved "
                "context to come from"
            )
        if not documents:
            return InputError(
                "no documents were captured in this run (no retriever ran and the input has "
                f"none of the keys {list(self.context_keys)} holding Documents): retrieve "
                "with a BaseRetriever (e.g. vectorstore.as_retriever(); a RunnableLambda is "
                "no retriever run), or put CamabAttributor after a chain that returns them"
            )
        return None

    def ended(self, run_id: Hashable) -> tuple[Steps[AttributionResult], list[Any]] | None:
        """For a root RAG run that ended: the steps attributing it, and in the background
        the placeholders put on its documents, answer and metadata."""
        run = self.pop(run_id)
        if run is None or not (run.llm_calls or run.documents):
            self._drop_slot(run)
            return None
        documents = self.documents(run)
        chosen = self.chosen_call(run, documents)
        message = chosen.message if chosen is not None else None
        attachment = Attachment.placeholders(str(run_id), len(documents))
        if self.runs.background:  # shown until the attribution fills them in place
            for doc, placeholder in zip(documents, attachment.documents):
                doc.metadata[METADATA_KEY] = placeholder
            annotate(message, attachment.answer, None, [])
        call = ChainCall(
            self.question(run),
            (chosen.answer or "") if chosen is not None else "",
            documents,
            scorer=lambda: self.scorer_for(chosen),
            prompts=[chosen.prompt] if chosen is not None else [],
            progress=self.runs.progress,
            problem=self.problem(run, chosen, documents),
        )
        publish = partial(self._publish, run, documents, message, attachment)
        steps = self.runs.steps(run_id, call, publish)
        slot = (run.metadata or {}).get(RUN_METADATA_KEY)
        return steps, [*attachment.all(), slot] if self.runs.background else []

    def _publish(
        self,
        run: RootRun,
        docs: list[Document],
        message: object,
        attachment: Attachment,
        result: AttributionResult,
    ) -> AttributionResult:
        try:
            attachment.fill(result, docs)
            entries = {d.page_content: e for d, e in zip(docs, attachment.documents)}
            for doc in (*docs, *run.documents):  # duplicates get the same entry
                if doc.page_content in entries:
                    doc.metadata[METADATA_KEY] = entries[doc.page_content]
            cited = result if self.runs.citations else None
            annotate(message, attachment.answer, cited, docs)
            if run.metadata is not None:
                slot = run.metadata.setdefault(RUN_METADATA_KEY, {})
                fill(slot, attachment.answer)  # in place: tracers hold it
        except Exception:  # pragma: no cover - reporting must never break the chain
            logger.exception("camab: could not attach the attribution metadata")
        return result


def tool_documents(output: object, tool_name: str | None) -> list[Document]:
    """The documents (or ``artifact`` documents) a tool returned, else its text as one
    document named after the tool."""
    for candidate in (getattr(output, "artifact", None), output):
        if isinstance(candidate, Document):
            return [candidate]
        docs = candidate if isinstance(candidate, Sequence) else ()
        if docs and all(isinstance(d, Document) for d in docs):
            return list(docs)
    content = output.text if isinstance(output, BaseMessage) else output
    content = content if isinstance(content, str) else str(content) if content is not None else ""
    if not content.strip():
        return []
    return [Document(content, metadata={"source": tool_name} if tool_name else {})]


class _Handler(RootRuns, Kept):
    def __init__(
        self,
        scorer: object = None,
        *,
        question_keys: Sequence[str] = QUESTION_KEYS,
        context_keys: Sequence[str] = CONTEXT_KEYS,
        **options: Unpack[ChainOptions],
    ) -> None:
        owner = type(self).__name__
        refused = cannot_block(f"{owner} observes and")
        runs = Runs.of(
            owner,
            scorer,
            options,
            blocking_refused=refused,
            explain=explain_refused_key,
            uuid_keys=True,
        )
        self.settings, self.scorers = runs.settings, runs.scorers
        RootRuns.__init__(self, runs, self._scorer_for, question_keys, context_keys)
        self.raise_error = runs.strict  # strict: LangChain re-raises our errors into the chain

    def _scorer_for(self, call: LLMCall | None) -> Any:
        """The configured scorer, else that of the model the callbacks saw."""
        if call is None:
            return self.scorers.get()
        serialized, params = call.model
        key = repr((serialized or {}).get("id")) + repr(sorted(map(str, params.items())))
        return self.scorers.get(call.model, partial(scorer_from_run, serialized, params), key)


class CamabCallbackHandler(_Handler, BaseCallbackHandler):
    """Attribute the answer of every root run to its retrieved documents:
    ``handler.results[run_id]`` is a finished root run's result, ``handler.last_result``
    the latest; the answer message gets ``response_metadata["attribution"]`` and each
    retrieved ``Document`` ``metadata["attribution"]``. Arguments: see the module."""

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self.llm_ended(run_id, response)
        self.on_chain_end(None, run_id=run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if (job := self.ended(run_id)) is not None:
            self.runs.go(run_id, job[0])

    def close(self) -> None:
        """Wait for background work and stop its thread."""
        self.runs.worker.close()


class AsyncCamabCallbackHandler(_Handler, AsyncCallbackHandler):  # type: ignore[misc]
    """The async :class:`CamabCallbackHandler` (scores with ``scorer.ascore``). It runs
    inline, before other handlers see the root run's end, so tracers report the
    attribution in the run's metadata; with ``background=True`` the attribution is a task
    of the running loop (``handler.pending[run_id]``, ``await handler.wait(run_id)``)."""

    run_inline = True

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self.llm_ended(run_id, response)
        await self.on_chain_end(None, run_id=run_id)

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if (job := self.ended(run_id)) is not None:
            await self.runs.ago(run_id, *job)

    wait = Kept.await_result  # type: ignore[assignment]  # await handler.wait(run_id)
