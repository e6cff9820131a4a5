"""Running the attribution of a captured chain call: the kernel both integrations share.

An integration captures one chain call (:class:`ChainCall`: the question, the answer, the
documents as the chain holds them, the prompts its model received) and gives it to the
:class:`ChainRuns` of its object, which

* attributes it with the object's one :class:`~camab_rag.settings.AttributionSettings`
  (:func:`_chain_steps`, over :func:`camab_rag.captured._captured_steps`), inline
  (:meth:`~ChainRuns.run`, :meth:`~ChainRuns.arun`) or in the background
  (:meth:`~ChainRuns.start`: a worker thread; :meth:`~ChainRuns.astart`: a task of the
  running loop, whose placeholders read "cancelled" if the loop ends first);
* never breaks the host chain: an error becomes a failed result (unless ``strict``), and
  a blocking groundedness filter judges that failure closed (:func:`failed_attribution`);
* keeps the results by key (``results``, ``last_result``) for :meth:`~ChainRuns.wait`
  and :meth:`~ChainRuns.await_result`.

The integration turns each :class:`~camab_rag.captured.CapturedAttribution` into its
framework's types (its ``finish``): :func:`answer_summary` is the answer's metadata,
:func:`native_citations` the data behind the frameworks' citation types.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from uuid import UUID

from camab_rag.captured import (
    CapturedAttribution,
    _captured_steps,
    document_ranks,
    sentence_citations,
)
from camab_rag.citations import CitationRule, citation_pairs, source_location
from camab_rag.engine import ProgressFn
from camab_rag.groundedness import FilteredAnswer
from camab_rag.integration.background import CANCELLED, Background, ResultStore, cancelled, fill
from camab_rag.prompts import PromptPlan
from camab_rag.result import AttributionResult
from camab_rag.scorers.base import Prompt
from camab_rag.segments import to_documents
from camab_rag.settings import CHAIN_SETTINGS, AttributionSettings
from camab_rag.steps import Steps, adrive, drive

T = TypeVar("T")
logger = logging.getLogger(__name__)


@dataclass
class ChainCall:
    """What an integration captured of one chain call.

    ``documents`` are as the chain holds them (strings, LangChain ``Document``, LlamaIndex
    nodes, :class:`~camab_rag.segments.SourceDocument`); ``scorer()`` gives the scorer (called once,
    inside the run, so an error building it is recorded like any other); ``problem`` is
    why the call cannot be attributed (no answer or no documents captured): it becomes the
    failed result without a model call.
    """

    question: str
    answer: str
    documents: Any = ()
    scorer: Callable[[], Any] = lambda: None
    prompts: Sequence[Prompt] = ()
    progress: ProgressFn | None = None
    problem: Exception | None = None


def failed_attribution(
    error: BaseException | str, call: ChainCall, settings: AttributionSettings
) -> CapturedAttribution:
    """Why a call was not attributed, as its result (``status="error"`` or
    ``"no_context"``): the chain's answer goes on. A groundedness filter judges the
    failure without a model call, so ``on_error="block"`` blocks what it cannot judge."""
    result = AttributionResult.failed(
        error,
        question=call.question,
        response=call.answer,
        method=settings.method_instance.name,
        budget=settings.budget,
    )
    gate = settings.groundedness
    verdict = gate.judge(result) if gate is not None else None
    return CapturedAttribution(result, [], PromptPlan("none", None, None), verdict)


def _chain_steps(
    call: ChainCall,
    settings: AttributionSettings,
    *,
    strict: bool = False,
    explain: Callable[[Exception], Exception] | None = None,
) -> Steps[CapturedAttribution]:
    """Attribute ``call`` in the prompt its model received and judge it with the settings'
    filter, as a generator of model calls; never raises unless ``strict`` (an error is
    the failed result, :func:`failed_attribution`). ``explain`` may rewrite an error into
    one that says what to do about it."""
    try:
        if call.problem is not None:
            raise call.problem
        return (
            yield from _captured_steps(
                call.question,
                call.documents,
                call.answer,
                call.scorer(),
                settings,
                prompts=list(call.prompts),
                progress=call.progress,
            )
        )
    except Exception as raised:
        error = explain(raised) if explain is not None else raised
        if strict and error is raised:
            raise
        if strict:
            raise error from raised
        logger.warning("camab: attribution failed: %s", error)
        return failed_attribution(error, call, settings)


@dataclass
class ChainRuns(Generic[T]):
    """The attributions of one integration object: run inline or in the background,
    kept by key (a run or query id), the oldest dropped past ``keep``.

    ``finish`` (given to :meth:`steps`) turns an attribution into what the integration
    keeps (e.g. attaches it to the answer and returns the framework's result type);
    ``uuid_keys`` reads a ``str`` key as the ``UUID`` it spells (LangChain run ids).
    """

    settings: AttributionSettings = CHAIN_SETTINGS
    strict: bool = False
    keep: int = 1000
    uuid_keys: bool = False
    explain: Callable[[Exception], Exception] | None = None
    last_result: T | None = None
    results: ResultStore[T] = field(init=False)

    def __post_init__(self) -> None:
        self.results = ResultStore(self.keep, uuid_keys=self.uuid_keys)
        self._jobs: Background[T] = Background(self.keep)
        self._lock = threading.Lock()

    def key(self, key: object) -> Hashable:
        """``key`` as results and jobs are kept under (``None``: the latest)."""
        if self.uuid_keys and isinstance(key, str):
            return UUID(key)
        return key

    def record(self, key: object, value: T) -> T:
        """Keep ``value`` as the latest result and, with a key, under it."""
        with self._lock:
            self.last_result = value
            if key is not None:
                self.results.add(self.key(key), value)
        return value

    def steps(
        self, key: object, call: ChainCall, finish: Callable[[CapturedAttribution], T]
    ) -> Steps[T]:
        """Attribute ``call`` (:func:`_chain_steps`), ``finish`` it and keep the result."""
        attributed = yield from _chain_steps(
            call, self.settings, strict=self.strict, explain=self.explain
        )
        return self.record(key, finish(attributed))

    def run(self, steps: Steps[T]) -> T:
        """Run ``steps`` now with blocking calls."""
        return drive(steps)

    async def arun(self, steps: Steps[T]) -> T:
        """Run ``steps`` now, awaiting each call."""
        return await adrive(steps)

    def start(self, key: object, steps: Steps[T]) -> Future[T]:
        """Run ``steps`` in the worker thread; :meth:`wait` gives the result."""
        return self._jobs.start(self.key(key), steps)

    def astart(
        self,
        key: object,
        steps: Steps[T],
        placeholders: Sequence[dict[str, Any] | None] = (),
    ) -> asyncio.Task[T]:
        """Run ``steps`` as a task of the running loop. If the loop ends first, the
        ``placeholders`` still pending read "cancelled" (:func:`cancelled`)."""

        def on_cancel() -> None:
            run_id = None if key is None else str(key)
            logger.warning("camab: attribution %s: %s", key, CANCELLED)
            for placeholder in placeholders:
                if isinstance(placeholder, dict) and placeholder.get("status") == "pending":
                    fill(placeholder, cancelled(run_id))

        return self._jobs.astart(self.key(key), steps, on_cancel=on_cancel)

    def start_on(
        self,
        answer: object,
        steps: Steps[T],
        placeholders: Sequence[dict[str, Any] | None] = (),
        *,
        in_loop: bool,
    ) -> None:
        """Run ``steps`` in the background for ``answer`` (a streamed answer that cannot
        wait): a task of the running loop if ``in_loop``, else the worker thread; the job
        is kept on ``answer`` for :func:`wait_on` / :func:`await_on`."""
        key = id(answer)
        job = self.astart(key, steps, placeholders) if in_loop else self.start(key, steps)
        setattr(answer, _ANSWER_JOB, job)

    @property
    def pending(self) -> Mapping[Any, Any]:
        """Background attributions by key (a ``Future`` or an ``asyncio.Task``; a copy)."""
        return self._jobs.snapshot()

    def _done(self, key: object) -> T | None:
        """The latest result when nothing ran in the background and none was asked for."""
        return self.last_result if key is None and not self._jobs else None

    def wait(self, key: object = None, timeout: float | None = None) -> T:
        """The result under ``key`` (the latest when ``None``), waiting for a background
        thread's attribution."""
        done = self._done(key)
        if done is not None:
            return done
        return self._jobs.wait(self.key(key), timeout, finished=self.results)

    async def await_result(self, key: object = None) -> T:
        """Async :meth:`wait` (a task or a thread's attribution); cancelling the caller
        leaves the attribution running."""
        done = self._done(key)
        if done is not None:
            return done
        return await self._jobs.await_result(self.key(key), finished=self.results)

    async def aflush(self) -> None:
        """Await every background attribution started so far."""
        await self._jobs.aflush()

    def close(self) -> None:
        """Wait for the worker thread's attributions and stop it."""
        self._jobs.close()


_ANSWER_JOB = "_camab_attribution_job"


def wait_on(answer: object, timeout: float | None = None) -> bool:
    """Wait (up to ``timeout`` seconds) for the attribution :meth:`ChainRuns.start_on`
    started for ``answer``; ``False`` when none was started. One running in an event loop
    cannot be waited for here: a ``TypeError`` says to await it."""
    job = getattr(answer, _ANSWER_JOB, None)
    if isinstance(job, asyncio.Task):
        raise TypeError(
            "the attribution runs in its event loop: await it with await_attribution(response)"
        )
    if job is not None:
        job.result(timeout)
    return job is not None


async def await_on(answer: object) -> bool:
    """Async :func:`wait_on` (a task or a thread's attribution); cancelling the caller
    leaves the attribution running."""
    job = getattr(answer, _ANSWER_JOB, None)
    if job is not None:
        await asyncio.shield(job if isinstance(job, asyncio.Task) else asyncio.wrap_future(job))
    return job is not None


# ---------------------------------------------------------------------- what is attached
def answer_summary(
    result: AttributionResult,
    titles: Sequence[str | None] = (),
    *,
    run_id: str | None = None,
    verdict: FilteredAnswer | None = None,
) -> dict[str, Any]:
    """The compact, JSON-ready attribution an integration attaches to an answer.

    Keys: ``status``, ``error``, ``method``, ``budget``, ``n_queries``, ``exact`` (every
    subset was scored), ``prompt_tokens``, ``wall_time_s``, ``prompt_mode``,
    ``prompt_note``, ``run_id``, ``documents`` (per document: ``index``, ``score``,
    ``rank``, ``title`` from ``titles``), ``top_documents`` (indices, best first),
    ``citations`` (per answer sentence: ``sentence`` and its supporting ``document`` or
    ``None``), ``groundedness`` (the filter's verdict, ``None`` without one) and
    ``scored_by`` (``{"model", "proxy", "reason"}``).
    """
    data: dict[str, Any] = {
        "status": result.status,
        "error": result.error,
        "method": result.method,
        "budget": result.budget,
        "n_queries": result.n_queries,
        "exact": result.exact,
        "prompt_tokens": result.prompt_tokens,
        "wall_time_s": round(result.wall_time_s, 3),
        "prompt_mode": result.prompt_mode,
        "prompt_note": result.prompt_note,
        "run_id": run_id,
        "documents": [],
        "top_documents": [],
        "citations": [],
        "groundedness": verdict.to_dict() if verdict is not None else None,
        "scored_by": result.scored_by.to_dict() if result.scored_by is not None else None,
    }
    if result.status != "ok":
        return data
    scores = result.document_scores
    ranks = document_ranks(result)
    data["documents"] = [
        {
            "index": i,
            "score": float(scores[i]),
            "rank": ranks[i],
            "title": titles[i] if i < len(titles) else None,
        }
        for i in range(len(scores))
    ]
    data["top_documents"] = result.top_documents(len(scores))
    data["citations"] = [
        {"sentence": text, "document": doc_index}
        for text, doc_indices in sentence_citations(result)
        for doc_index in (doc_indices if doc_indices else [None])
    ]
    return data


# ---------------------------------------------------------------------- native citations
@dataclass(frozen=True)
class NativeCitation:
    """One answer sentence citing one document: the fields the frameworks' citation
    types carry (LangChain ``Citation``, LlamaIndex ``CitationBlock``)."""

    start: int
    """The sentence's span in the answer text."""
    end: int
    cited_text: str
    """The document's segment that supports the sentence most."""
    doc_index: int
    number: int
    """The source's number in :func:`camab_rag.cite`'s list (``[1]``...)."""
    title: str | None
    source: str | None
    """Where the document comes from (:func:`~camab_rag.citations.source_location`)."""
    score: float


def native_citations(
    result: AttributionResult, documents: Sequence[Any], *, rule: CitationRule | None = None
) -> list[NativeCitation]:
    """The citations :func:`camab_rag.cite` decides for ``result.response``, in answer
    order, over ``documents`` as the chain holds them (only what the attribution supports
    is cited, never every retrieved document)."""
    docs = to_documents(documents)
    return [
        NativeCitation(
            start=pair.sentence.start,
            end=pair.sentence.end,
            cited_text=pair.cited_text,
            doc_index=pair.source.doc_index,
            number=pair.source.number,
            title=pair.source.title,
            source=source_location(docs[pair.source.doc_index].metadata),
            score=pair.score,
        )
        for pair in citation_pairs(result, documents, rule=rule)
    ]


__all__ = [
    "ChainCall",
    "ChainRuns",
    "NativeCitation",
    "answer_summary",
    "await_on",
    "failed_attribution",
    "native_citations",
    "wait_on",
]
