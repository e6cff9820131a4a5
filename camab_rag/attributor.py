"""The one door, :class:`Attributor`: one scorer, one settings object, run blocking, awaited
or in the background; :func:`attribute` and :func:`assess_answer` are thin calls of it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from camab_rag.deadline import bounded
from camab_rag.engine import CustomBuilder, attribution_steps, check_prior
from camab_rag.errors import (
    AttributionCancelledError,
    AttributionPendingError,
    InputError,
    ScorerUnavailableError,
)
from camab_rag.groundedness import GroundednessFilter, GroundednessReport
from camab_rag.groundedness.gain import answer_steps
from camab_rag.groundedness.report import DEFAULT_BLOCK_ON, BlockOn
from camab_rag.methods import Method
from camab_rag.prompts import PromptBuilder
from camab_rag.result import AttributionResult, short_text
from camab_rag.runs import JUDGE_ONLY, ProgressFn, whole_number
from camab_rag.scorers import resolve_scorer
from camab_rag.scorers.base import ChatMessage, Prompt
from camab_rag.segments import Granularity
from camab_rag.settings import AttributionSettings, groundedness_filter, resolve_settings
from camab_rag.steps import Steps, adrive, asynced, drive, guarded, synced

CANCELLED = (
    "the attribution was cancelled by h.cancel() before it finished: it has no result; "
    "submit it again to get one"
)
LOOP_ENDED = (
    "the attribution was cancelled before it finished: its event loop stopped or cancelled "
    "the task first, so it has no result. Keep the loop running until it is done: await it "
    "(h.aresult(); an integration's await_result(), aflush() or wait(), "
    "await_attribution(response)), or set background=False where the object takes it"
)
T = TypeVar("T")
Groundedness = GroundednessFilter | bool | None


def _no_scorer(door: str) -> ScorerUnavailableError:
    how = "pass scorer=, llm= or proxy= to Attributor" if door == "Attributor" else ""
    return ScorerUnavailableError(
        f"no scorer: {how or door + ' needs one'}, e.g. scorer=camab_rag.default_scorer() "
        "(the embedded model, offline), scorer=camab_rag.OpenAICompletionsScorer(base_url="
        "..., model=...) (a served model), camab_rag.Attributor(llm=<a LangChain or "
        "LlamaIndex chat model>) (scored by its own server or weights) or proxy=<a scorer> "
        "(scores for a model that cannot)"
    )


class Pending(Generic[T]):
    """An attribution running in the background: :meth:`result` / :meth:`aresult` wait for it."""

    def __init__(self, job: Future[T] | asyncio.Task[T], stop: threading.Event) -> None:
        self._job, self._stop = job, stop  # stop: set by h.cancel() alone

    def done(self) -> bool:
        return self._job.done()

    def cancel(self) -> bool:
        """Stop it before its next model call; ``False`` when it had already finished."""
        if self._job.done():
            return False
        self._stop.set()
        self._job.cancel()
        return True

    def _cancelled(self) -> AttributionCancelledError:
        return AttributionCancelledError(CANCELLED if self._stop.is_set() else LOOP_ENDED)

    def result(self, timeout: float | None = None) -> T:
        """The result, waiting at most ``timeout`` seconds (``None``: until done); raises its
        error, :class:`AttributionPendingError` if not done, or the cancellation error."""
        job = self._job
        if isinstance(job, asyncio.Task) and not job.done():
            raise AttributionPendingError(
                "the attribution is still running in an event loop: await h.aresult()"
            )
        try:
            return job.result() if isinstance(job, asyncio.Task) else job.result(timeout)
        except (asyncio.CancelledError, concurrent.futures.CancelledError):
            raise self._cancelled() from None
        except TimeoutError:
            if job.done():  # the attribution's own error
                raise
            raise AttributionPendingError(
                f"the attribution is still running after {timeout} s: call h.result() "
                "again (timeout=None waits until it is done) or await h.aresult()"
            ) from None

    async def aresult(self) -> T:
        """Await the result; cancelling the awaiting coroutine leaves it running."""
        job = self._job
        awaited = job if isinstance(job, asyncio.Task) else asyncio.wrap_future(job)
        try:
            return await asyncio.shield(awaited)
        except asyncio.CancelledError:
            if self._job.cancelled():
                raise self._cancelled() from None
            raise


class Worker:
    """One background thread, started on first use: attributions never compete for the model."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def start(
        self, steps: Steps[T], in_loop: bool, on_cancel: Callable[[], None] | None = None
    ) -> Pending[T]:
        """Run ``steps`` as a task of the running loop if ``in_loop``, else in the thread."""
        stop = threading.Event()

        def not_stopped() -> None:
            if stop.is_set():
                raise AttributionCancelledError(CANCELLED)

        steps = guarded(steps, not_stopped)
        if not in_loop:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(1, thread_name_prefix="camab")
                return Pending(self._executor.submit(drive, steps), stop)
        cancelled = on_cancel or (lambda: None)

        async def run() -> T:
            try:
                return await adrive(steps)
            except GeneratorExit:  # closed unfinished; a cancelled task calls back below
                cancelled()
                raise

        task = asyncio.get_running_loop().create_task(run())
        task.add_done_callback(lambda done: cancelled() if done.cancelled() else None)
        return Pending(task, stop)

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)


class Attributor:
    """Attributes answers to their context with one scorer (``scorer``; ``llm=``, a chat model
    scored by its own server or weights; or ``proxy=``) and one settings object, whose fields
    the knobs override here and per call. ``prior``: a free scorer whose scores are the prior;
    ``prompt_builder``: a builder or a factory of them; ``keep``: how many :attr:`results`."""

    def __init__(
        self,
        scorer: Any = None,
        *,
        llm: Any = None,
        proxy: Any = None,
        budget: int | None = None,
        method: str | Method | None = None,
        granularity: Granularity | None = None,
        deadline_s: float | None = None,
        groundedness: Groundedness = None,
        settings: AttributionSettings | None = None,
        prior: Any = None,
        prompt_builder: CustomBuilder | None = None,
        keep: int = 32,
    ) -> None:
        whole_number(keep, "keep", 0, " (results kept)")
        if scorer is None and llm is None and proxy is None:
            raise _no_scorer("Attributor")
        self.scorer = resolve_scorer(scorer, llm=llm, proxy=proxy)
        self.settings = resolve_settings(
            settings, budget=budget, method=method, granularity=granularity, deadline_s=deadline_s
        )
        self.groundedness = groundedness_filter(groundedness, self.settings)
        check_prior(prior, self.settings)
        self.prior, self.prompt_builder = prior, prompt_builder
        self._kept: deque[AttributionResult] = deque(maxlen=keep)
        self._worker = Worker()

    def _run_steps(
        self,
        question: str,
        context: object,
        response: str,
        *,
        history: Sequence[ChatMessage] | None = None,
        prompt: Prompt | None = None,
        progress: ProgressFn | None = None,
        **knobs: Any,
    ) -> Steps[AttributionResult]:
        """Checked here (a bad knob raises at the call, not in a handle), run when driven."""
        given = knobs.pop("groundedness", None)
        settings = resolve_settings(self.settings, **knobs)
        if settings.judge_only:  # judging alone is assess_answer()
            raise InputError(JUDGE_ONLY)
        gate = groundedness_filter(self.groundedness if given is None else given, settings)
        check_prior(self.prior, settings)
        steps = attribution_steps(
            question,
            context,
            response,
            self.scorer,
            settings,
            groundedness=gate,
            prompts=None if prompt is None else [prompt],
            progress=progress,
            history=history,
            prompt_builder=self.prompt_builder,
            prior=self.prior,
        )
        return self._kept_after(steps)

    def _kept_after(self, steps: Steps[AttributionResult]) -> Steps[AttributionResult]:
        self._kept.append(result := (yield from steps))
        return result

    run = synced(
        _run_steps,
        "run",
        """Attribute ``response`` to the segments of ``context`` (arguments as
        :func:`attribute`'s; ``knobs`` override this attributor's for this call only).""",
    )
    arun = asynced(
        _run_steps, "arun", "Async :meth:`run`: each batch is scored with ``scorer.ascore``."
    )

    def submit(self, *args: Any, **kwargs: Any) -> Pending[AttributionResult]:
        """Start :meth:`run` (same arguments) in the background: a task of the running event
        loop, else this attributor's one worker thread; bad knobs raise here."""
        steps = self._run_steps(*args, **kwargs)
        try:
            in_loop = asyncio.get_running_loop() is not None
        except RuntimeError:
            in_loop = False
        return self._worker.start(steps, in_loop)

    def close(self) -> None:
        """Wait for the background attributions and stop the worker thread."""
        self._worker.close()

    @property
    def results(self) -> list[AttributionResult]:
        """The recent results (at most ``keep``), newest last."""
        return list(self._kept)

    def summary(self) -> str:
        """The recent results in words: each answer, what ``cite()`` cites, verdict, calls."""
        kept = list(self._kept)  # a snapshot: the worker thread may append
        if not kept:
            return "No answers attributed yet."
        lines = [f"{len(kept)} answer{'s' if len(kept) > 1 else ''} attributed (newest last):"]
        lines += [f"{n}. {_describe(item)}" for n, item in enumerate(kept, 1)]
        return "\n".join(lines)


def _describe(result: AttributionResult) -> str:
    answer = f'"{short_text(result.response)}"'
    if result.status != "ok":
        return f"{answer}: not attributed ({result.status}: {result.error})"
    words = [f"{answer}: {_sources_in_words(result)}"]
    if (verdict := result.groundedness) is not None:
        abstained = "abstained: no claim to check" if verdict.abstained else None
        words.append(abstained or verdict.verdict or "groundedness unknown")
    return "; ".join([*words, f"{result.n_queries} model calls"])


def _sources_in_words(result: AttributionResult) -> str:
    from camab_rag.citations import cite
    from camab_rag.render.text import no_sources_text

    try:
        cited = cite(result)
    except InputError:  # no segments to cite
        return "no documents"
    if cited.uninformative:
        return f"the citations carry no information ({cited.uninformative})"
    numbers = {n for sentence in cited.sentences for n in sentence.citations}
    against = {n for sentence in cited.sentences for n in sentence.disputed}
    backing = list(dict.fromkeys(s.doc_index + 1 for s in cited.sources if s.number in numbers))
    disputing = [src.doc_index + 1 for src in cited.sources if src.number in against]
    disputing = [d for d in dict.fromkeys(disputing) if d not in backing]
    text = (no_sources_text(cited) or "").rstrip(".").lower() or "no source cited"
    text = f"from {_documents(backing)}" if backing else text
    if disputing:
        verb = "disputes" if len(disputing) == 1 else "dispute"
        text += f" ({_documents(disputing)} {verb} it)"
    return text


def _documents(numbers: Sequence[int]) -> str:
    if len(numbers) == 1:
        return f"document {numbers[0]}"
    return f"documents {', '.join(str(n) for n in numbers[:-1])} and {numbers[-1]}"


def _attribute_steps(
    question: str,
    context: object,
    response: str,
    scorer: Any,
    *,
    budget: int | None = None,
    method: str | Method | None = None,
    granularity: Granularity | None = None,
    deadline_s: float | None = None,
    groundedness: Groundedness = None,
    prompt: Prompt | None = None,
    progress: ProgressFn | None = None,
    history: Sequence[ChatMessage] | None = None,
    settings: AttributionSettings | None = None,
) -> Steps[AttributionResult]:
    if scorer is None:
        raise _no_scorer("attribute()")
    knobs: dict[str, Any] = dict(budget=budget, method=method, granularity=granularity)
    knobs.update(deadline_s=deadline_s, groundedness=groundedness, settings=settings)
    door = Attributor(scorer, keep=0, **knobs)
    return door._run_steps(
        question, context, response, history=history, prompt=prompt, progress=progress
    )


attribute = synced(
    _attribute_steps,
    "attribute",
    """Attribute ``response`` to the segments of ``context`` (a string or documents:
    strings, mappings, LangChain Documents, LlamaIndex nodes) with ``scorer``, as
    ``Attributor(scorer, ...).run(...)`` does. The knobs override ``settings``' fields
    (40 calls, ``"auto"``, ``"sentence"``, no deadline, no filter); a filter's verdict
    (``n_queries`` up to ``budget + 2``) is in ``result.groundedness``. ``prompt``: the
    prompt the model received (the documents are cut out of it; else the template,
    ``result.prompt_note`` says why); ``progress(calls_made, total)``; ``history``: earlier
    chat messages, placed before the question.""",
)
aattribute = asynced(
    _attribute_steps,
    "aattribute",
    "Async :func:`attribute`: each batch of subsets is scored with ``scorer.ascore``.",
)


def _assess_steps(
    question: str,
    context: object,
    answer: str,
    scorer: Any,
    *,
    threshold: float | None = None,
    prompt_builder: PromptBuilder | None = None,
    history: Sequence[ChatMessage] | None = None,
    block_on: BlockOn = DEFAULT_BLOCK_ON,
    deadline_s: float | None = None,
) -> Steps[GroundednessReport]:
    if scorer is None:
        raise _no_scorer("assess_answer()")
    door = Attributor(scorer, deadline_s=deadline_s, keep=0)
    steps = answer_steps(
        question,
        context,
        answer,
        door.scorer,
        threshold=threshold,
        prompt_builder=prompt_builder,
        history=history,
        block_on=block_on,
    )
    return (yield from bounded(steps, door.settings.deadline_s))


assess_answer = synced(
    _assess_steps,
    "assess_answer",
    """Judge whether ``context`` supports ``answer`` to ``question`` with two model calls
    (the full context and none) and no attribution: a GroundednessReport. ``threshold``
    replaces the calibrated verdict by ``score >= threshold``; ``block_on="facts"`` says
    ``unsupported`` only when a number, date or name is also unchecked, ``"any"`` keeps
    the stricter verdict; ``history`` counts as context.""",
)
aassess_answer = asynced(
    _assess_steps,
    "aassess_answer",
    "Async :func:`assess_answer` (scores with ``scorer.ascore``).",
)
