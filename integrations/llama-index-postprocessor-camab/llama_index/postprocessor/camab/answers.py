"""What the engines and the handler attribute with (:class:`AnswerAttributor`), which
documents an answer came from (:func:`answer_documents`), what it then carries, and
waiting for a stream's attribution (:func:`wait_for_attribution`)."""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from llama_index.postprocessor.camab.spans import SpanRecord, streaming_for

from camab_rag.errors import AttributionPendingError, InputError, NoContextError
from camab_rag.integration import (
    METADATA_KEY,
    Attachment,
    AttributorOptions,
    ChainCall,
    ChainParts,
    prompt_holds,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from camab_rag.integration import Prompt, Steps

logger = logging.getLogger(__name__)
T = TypeVar("T")
ANSWER_JOB = "_camab_attribution_job"
"""The attribute of a streamed answer holding its background attribution's handle."""
NOT_YET = (
    "this response has no attribution yet: a streamed answer is attributed once its stream "
    "has been read to the end"
)


def set_attribution(answer: object, value: dict[str, Any]) -> None:
    """Set ``answer.metadata["attribution"]`` (creating the dict if needed)."""
    if not isinstance(getattr(answer, "metadata", None), dict):
        answer.metadata = {}  # type: ignore[attr-defined]
    answer.metadata[METADATA_KEY] = value  # type: ignore[attr-defined]


def _info(response: object) -> dict[str, Any]:
    metadata = getattr(response, "metadata", None)
    info = metadata.get(METADATA_KEY) if isinstance(metadata, Mapping) else None
    if info is None:
        raise KeyError(NOT_YET)
    return dict(info)


def wait_for_attribution(response: object, timeout: float | None = None) -> dict[str, Any]:
    """The ``metadata["attribution"]`` of an answer, waiting (up to ``timeout`` seconds)
    for a stream's background attribution: its handle's
    :meth:`~camab_rag.attributor.Pending.result`.

    Raises:
        KeyError: a stream not read to the end yet (nothing to wait for).
        AttributionPendingError: not finished within ``timeout``, or an async stream's
            attribution still running in its event loop (``await await_attribution``).
    """
    job = getattr(response, ANSWER_JOB, None)
    if job is not None and not job.done():
        try:
            job.result(timeout)
        except AttributionPendingError as error:
            raise AttributionPendingError(
                f"{error} (for a response: await await_attribution(response))"
            ) from None
    return _info(response)


async def await_attribution(response: object) -> dict[str, Any]:
    """Async :func:`wait_for_attribution` (sync and async streams alike): its handle's
    :meth:`~camab_rag.attributor.Pending.aresult`; cancelling the caller leaves the
    attribution running."""
    job = getattr(response, ANSWER_JOB, None)
    if job is not None and not job.done():
        await job.aresult()
    return _info(response)


ToDocuments = Callable[[Sequence[Any]], list[Any]]


def answer_documents(
    answer: object,
    sources: Sequence[Any],
    retrieved: Sequence[Any],
    prompts: Sequence[Prompt],
    as_documents: ToDocuments | None = None,
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
    if as_documents is not None:
        as_documents(retrieved)  # a node the input gate refuses: its error, not "none reached"
    if not prompt_holds(prompts, retrieved, *([as_documents] if as_documents else [])):
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

    attributed: Any  # camab_rag.captured.CapturedAttribution
    documents: list[Any]
    own_sources: bool

    def metadata(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The answer's summary (the result and the filter's verdict) and
        each document's entry (none unless the attribution is ok)."""
        result, verdict = self.attributed.result, self.attributed.verdict
        summary: dict[str, Any] = result.to_dict()
        entries: list[dict[str, Any]] = []
        if result.status == "ok":
            if result.prompt_mode != "captured":
                logger.info("camab attribution of %r: %s", result.question[:80], result.prompt_note)
            extra = {"method": result.method, "n_queries": result.n_queries}
            summaries = Attachment.of(result, self.documents, segments=True).documents
            entries = [{**entry, **extra} for entry in summaries]
        if verdict is not None:
            summary["groundedness"] = verdict.to_dict()
        return summary, entries

    @property
    def replacement(self) -> str | None:
        """A blocking filter's fallback for the answer (``None``: the answer stands)."""
        verdict = self.attributed.verdict
        return verdict.answer if verdict is not None and verdict.blocked else None


class AnswerAttributor:
    """What an integration object attributes its answers with (its scorer, settings,
    filter and runs); :meth:`call_steps` attributes one answer; ``owner`` names the object
    in errors."""

    def __init__(
        self,
        scorer: Any = None,
        as_documents: ToDocuments | None = None,
        owner: str = "AnswerAttributor",
        blocking_refused: str | None = None,
        **options: Unpack[AttributorOptions],
    ) -> None:
        self.parts = ChainParts.of(
            owner, scorer, options, listed=AttributorOptions, blocking_refused=blocking_refused
        )
        self.settings, self.scorers, self.runs = (
            self.parts.settings,
            self.parts.scorers,
            self.parts.runs,
        )
        self.scorer = scorer
        self.as_documents = as_documents
        self._recent: deque[dict[str, Any]] = deque(maxlen=256)
        self._lock = threading.Lock()

    def remember(self, entry: dict[str, Any]) -> None:
        """Keep ``entry`` among the :attr:`recent` ones (thread-safe)."""
        with self._lock:
            self._recent.append(entry)

    def remembered(self, query_id: str, question: str) -> Callable[[object], None]:
        """A ``then`` for :meth:`turn`: remember ``{"query_id", "query", "attribution"}``
        (the answer's ``metadata["attribution"]``, ``None`` if it has none)."""

        def remember(answer: object) -> None:
            metadata = getattr(answer, "metadata", None) or {}
            entry = {"query_id": query_id, "query": question}
            self.remember({**entry, "attribution": metadata.get(METADATA_KEY)})

        return remember

    @property
    def recent(self) -> list[dict[str, Any]]:
        """The latest 256 entries remembered, oldest first."""
        with self._lock:
            return list(self._recent)

    def in_background(self, choice: bool | None, streamed: bool, async_call: bool) -> bool:
        """Whether a handler attributes an answer in the background: never a stream (it
        is attributed once read) nor under a blocking filter (it judges the answer before
        it is returned); else ``choice``, by default (``None``) an async call's; only
        inside a running event loop."""
        gate = self.parts.groundedness
        if streamed or (gate is not None and gate.mode == "block"):
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return async_call if choice is None else choice

    def begin(self, question: str) -> SpanRecord | None:
        """The record of ``question``'s call (an integration reads its framework's spans)."""
        return None

    def turn(
        self, answer: T, question: str, record: SpanRecord | None, llm: object = None
    ) -> Steps[T]:
        """Attribute ``answer`` (an integration reads its framework's answer types)."""
        raise NotImplementedError

    def answer(self, question: str, llm: object, ask: Callable[..., T], *args: Any) -> T:
        """``ask(*args)`` the wrapped engine inside ``question``'s record (:meth:`begin`; a
        stream's reader thread copies it), then attribute its answer (:meth:`turn`)."""
        record = self.begin(question)
        with streaming_for(record):
            answer = ask(*args)
        return self.runs.run(self.turn(answer, question, record, llm))

    async def aanswer(
        self, question: str, llm: object, ask: Callable[..., Awaitable[T]], *args: Any
    ) -> T:
        """Async :meth:`answer`."""
        record = self.begin(question)
        with streaming_for(record):
            answer = await ask(*args)
        return await self.runs.arun(self.turn(answer, question, record, llm))

    def finish(self, answer: object, steps: Steps[Any], background: bool, key: str = "") -> None:
        """Attribute ``answer`` by ``steps`` now, or in the ``background`` as a task of the
        running loop kept under ``key`` (a key of its own when empty)."""
        if background:
            self.start(answer, steps, in_loop=True, key=key or uuid.uuid4().hex)
        else:
            self.runs.run(steps)

    def start(self, answer: object, steps: Steps[Any], *, in_loop: bool, key: Any = None) -> None:
        """Attribute ``answer`` in the background, its ``metadata["attribution"]`` pending
        until ``steps`` fill it: a task of the running loop if ``in_loop`` (else the worker
        thread), its :class:`~camab_rag.attributor.Pending` handle kept in ``runs`` under
        ``key`` (``aflush`` awaits it) and, without a key (a stream), on the answer too
        (:func:`wait_for_attribution`)."""
        placeholder = Attachment.placeholders(key, 0).answer
        set_attribution(answer, placeholder)
        job = self.runs.start(
            key if key is not None else id(answer), steps, [placeholder], in_loop=in_loop
        )
        if key is None:  # a stream: its handle on the answer, for wait_for_attribution
            setattr(answer, ANSWER_JOB, job)

    async def aflush(self) -> None:
        """Await every background attribution started so far (each handle's
        :meth:`~camab_rag.attributor.Pending.aresult`; an error stays in its handle);
        cancelling the caller leaves them running."""
        while jobs := [job for job in list(self.runs.pending.values()) if not job.done()]:
            await asyncio.gather(*(job.aresult() for job in jobs), return_exceptions=True)

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
            call.problem = call.problem or record.placeholder(call.answer)
        documents: list[Any] = []
        own = bool(sources)
        if call.problem is None:
            try:
                documents, own = answer_documents(
                    call.answer, sources, retrieved, call.prompts, self.as_documents
                )
            except Exception as error:  # never raises: the failed result
                call.problem = error
        try:
            as_documents = self.as_documents
            call.documents = as_documents(documents) if as_documents else documents
        except Exception as error:  # e.g. the input gate refused a document: the failed result
            call.problem = call.problem or error
        call.scorer = partial(self.scorers.get, model)
        finish = lambda attributed: AnswerAttribution(attributed, documents, own)  # noqa: E731
        done: AnswerAttribution = yield from self.runs.steps(None, call, finish)
        return done
