"""The one door: :class:`Attributor`, between every caller and the engine.

It resolves its scorer once, merges the everyday knobs into one settings object and runs
one generator of model calls (:mod:`camab_rag.steps`) blocking, awaited or in the
background; :func:`attribute`, :func:`assess_answer` and their async twins are thin calls.
"""

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
from camab_rag.prompts import DEFAULT_SYSTEM_PROMPT, DEFAULT_USER_TEMPLATE, PromptBuilder
from camab_rag.result import AttributionResult, short_text
from camab_rag.runs import ProgressFn, whole_number
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
"""``True``: a default :class:`GroundednessFilter`; ``False`` / ``None``: no verdict."""


def _no_scorer(door: str) -> ScorerUnavailableError:
    """The error of a door given no scorer, in that door's words."""
    how = f"{door} needs one"
    if door == "Attributor":
        how = "pass scorer=, llm= or proxy= to Attributor"
    return ScorerUnavailableError(
        f"no scorer: {how}, e.g. scorer=camab_rag.default_scorer() (the embedded model, "
        "offline), scorer=camab_rag.OpenAICompletionsScorer(base_url=..., model=...) (a "
        "served model), camab_rag.Attributor(llm=<a LangChain or LlamaIndex chat model>) "
        "(scored by its own server or weights) or proxy=<a scorer> (scores for a model "
        "that cannot)"
    )


class Pending(Generic[T]):
    """An attribution running in the background (:meth:`Attributor.submit`), so a chat
    shows its answer first and its sources when ready: a worker thread, or a task of the
    running event loop. :meth:`result` / :meth:`aresult` are the only ways to wait."""

    def __init__(self, job: Future[T] | asyncio.Task[T], stop: threading.Event) -> None:
        self._job = job
        self._stop = stop
        self._cancel_called = False  # h.cancel() stopped it (not its event loop's end)

    def done(self) -> bool:
        """Whether it finished (with a result, an error or cancelled)."""
        return self._job.done()

    def cancel(self) -> bool:
        """Stop it before its next model call; ``False`` when it had already finished."""
        if self._job.done():
            return False
        self._cancel_called = True
        self._stop.set()
        self._job.cancel()
        return True

    def _cancelled(self) -> AttributionCancelledError:
        """The error of a cancelled attribution: by h.cancel(), or by its event loop."""
        return AttributionCancelledError(CANCELLED if self._cancel_called else LOOP_ENDED)

    def result(self, timeout: float | None = None) -> T:
        """The result, waiting at most ``timeout`` seconds (``None``: until it is done);
        raises the attribution's error, :class:`AttributionPendingError` when it is not
        done in time, :class:`AttributionCancelledError` when it was cancelled."""
        job = self._job
        if isinstance(job, asyncio.Task):
            if not job.done():
                raise AttributionPendingError(
                    "the attribution is still running in an event loop: await h.aresult()"
                )
            if job.cancelled():
                raise self._cancelled()
            return job.result()
        try:
            return job.result(timeout)
        except concurrent.futures.CancelledError:
            raise self._cancelled() from None
        except concurrent.futures.TimeoutError:
            raise AttributionPendingError(
                f"the attribution is still running after {timeout} s: call h.result() "
                "again (timeout=None waits until it is done) or await h.aresult()"
            ) from None

    async def aresult(self) -> T:
        """Await the result (same errors as :meth:`result`); cancelling the awaiting
        coroutine leaves the attribution running."""
        job = self._job
        awaited = job if isinstance(job, asyncio.Task) else asyncio.wrap_future(job)
        try:
            return await asyncio.shield(awaited)
        except asyncio.CancelledError:
            if self._job.cancelled():
                raise self._cancelled() from None
            raise


class Worker:
    """One background thread, started on first use: attributions never compete for the
    model."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def start(
        self, steps: Steps[T], in_loop: bool, on_cancel: Callable[[], None] | None = None
    ) -> Pending[T]:
        """Run ``steps`` in the background: a task of the running event loop if
        ``in_loop`` (``on_cancel()`` runs once when the task is cancelled before it ends:
        its loop ended first), else this worker's thread."""
        stop = threading.Event()
        if not in_loop:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(1, thread_name_prefix="camab")
                return Pending(self._executor.submit(drive, _stoppable(steps, stop)), stop)
        cancelled = on_cancel or (lambda: None)

        async def run() -> T:
            try:
                return await adrive(_stoppable(steps, stop))
            except (asyncio.CancelledError, GeneratorExit):
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
    """Attributes answers to their context with one scorer and one set of settings.

    Args:
        scorer: a scorer; or ``llm=``: a framework's chat model, scored by its own server
            or weights; or ``proxy=``: a scorer for a model that cannot score (alone, or
            beside ``scorer``/``llm``). Resolved once here.
        budget, method, granularity, deadline_s, groundedness: the everyday knobs, over
            ``settings``' fields; each call may give them again. ``groundedness``: ``True``
            (a default filter), a :class:`GroundednessFilter` or ``False``/``None``; a
            judged result carries its verdict (``result.groundedness``).
        settings: the rest (:class:`~camab_rag.settings.AttributionSettings`: plain data).
        prior: a scorer whose calls cost nothing: it attributes first and its scores become
            the prior of the target's run (``budget`` counts the target's calls only).
        prompt_builder: instead of the template, a builder or a factory
            ``(question, documents, segments) -> builder``.
        keep: how many recent results :attr:`results` holds (newest last).

    A bad knob or no usable scorer raises :class:`~camab_rag.errors.InputError` here.
    """

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

    # ------------------------------------------------------------------ one code path
    def _settings(
        self, knobs: dict[str, Any]
    ) -> tuple[AttributionSettings, GroundednessFilter | None]:
        """One call's settings and filter: this attributor's, with ``knobs`` in place."""
        knobs = dict(knobs)
        given = knobs.pop("groundedness", None)
        chosen = resolve_settings(self.settings, **knobs)
        gate = groundedness_filter(self.groundedness if given is None else given, chosen)
        check_prior(self.prior, chosen)  # a method given for this call must suit it
        return chosen, gate

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
        """The attribution, then the filter's verdict, within the deadline; kept."""
        settings, gate = self._settings(knobs)
        result = yield from attribution_steps(
            question,
            context,
            response,
            self.scorer,
            settings,
            groundedness=gate,
            prompt=prompt,
            progress=progress,
            history=history,
            prompt_builder=self.prompt_builder,
            prior=self.prior,
        )
        self._kept.append(result)
        return result

    # ------------------------------------------------------------------ public calls
    run = synced(
        _run_steps,
        "run",
        """Attribute ``response`` to the segments of ``context`` (arguments as
        :func:`attribute`'s; ``knobs`` override this attributor's for this call only).""",
    )
    arun = asynced(
        _run_steps, "arun", "Async :meth:`run`: each batch is scored with ``scorer.ascore``."
    )

    def submit(
        self,
        question: str,
        context: object,
        response: str,
        *,
        history: Sequence[ChatMessage] | None = None,
        prompt: Prompt | None = None,
        progress: ProgressFn | None = None,
        **knobs: Any,
    ) -> Pending[AttributionResult]:
        """Start :meth:`run` in the background (a task of the running event loop, else this
        attributor's one worker thread); bad knobs raise here, not in the handle."""
        self._settings(knobs)
        steps = self._run_steps(
            question, context, response, history=history, prompt=prompt, progress=progress, **knobs
        )
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._worker.start(steps, in_loop=False)
        return self._worker.start(steps, in_loop=True)

    def close(self) -> None:
        """Wait for the background attributions and stop the worker thread."""
        self._worker.close()

    # ------------------------------------------------------------------ what it did
    @property
    def results(self) -> list[AttributionResult]:
        """The recent results (at most ``keep``), newest last."""
        return list(self._kept)

    def summary(self) -> str:
        """The recent results in words, newest last: each answer, the documents
        :func:`~camab_rag.citations.cite` cites for it (or why none), its verdict when
        judged, the calls it cost."""
        kept = list(self._kept)
        if not kept:
            return "No answers attributed yet."
        noun = "answer" if len(kept) == 1 else "answers"
        lines = [f"{len(kept)} {noun} attributed (newest last):"]
        for number, item in enumerate(kept, 1):
            lines.append(f"{number}. {_describe(item)}")
        return "\n".join(lines)


def _describe(result: AttributionResult) -> str:
    """One kept attribution in words, naming the sources cite() shows for it."""
    answer = f'"{short_text(result.response)}"'
    if result.status != "ok":
        return f"{answer}: not attributed ({result.status}: {result.error})"
    words = [f"{answer}: {_sources_in_words(result)}"]
    verdict = result.groundedness
    if verdict is not None:
        abstained = "abstained: no claim to check" if verdict.abstained else None
        words.append(abstained or verdict.verdict or "groundedness unknown")
    words.append(f"{result.n_queries} model calls")
    return "; ".join(words)


def _sources_in_words(result: AttributionResult) -> str:
    """The documents cite() cites for the answer, and those disputing it, in words."""
    from camab_rag.citations import cite
    from camab_rag.render.text import no_sources_text

    try:
        cited = cite(result)  # with the result's verdict
    except InputError:  # no segments to cite
        return "no documents"
    if cited.uninformative:
        return f"the citations carry no information ({cited.uninformative})"
    numbers = {n for sentence in cited.sentences for n in sentence.citations}
    against = {n for sentence in cited.sentences for n in sentence.disputed}
    backing = [src.doc_index + 1 for src in cited.sources if src.number in numbers]
    disputing = [src.doc_index + 1 for src in cited.sources if src.number in against]
    backing = list(dict.fromkeys(backing))  # a document cited by segment: once
    disputing = [d for d in dict.fromkeys(disputing) if d not in backing]
    if backing:
        text = f"from {_documents(backing)}"
    else:
        text = (no_sources_text(cited) or "").rstrip(".").lower() or "no source cited"
    if disputing:
        verb = "disputes" if len(disputing) == 1 else "dispute"
        text += f" ({_documents(disputing)} {verb} it)"
    return text


def _documents(numbers: Sequence[int]) -> str:
    """``document 2`` or ``documents 1, 3 and 6``."""
    if len(numbers) == 1:
        return f"document {numbers[0]}"
    listed = ", ".join(str(n) for n in numbers[:-1])
    return f"documents {listed} and {numbers[-1]}"


def _stoppable(steps: Steps[T], stop: threading.Event) -> Steps[T]:
    """``steps``, ended with :class:`AttributionCancelledError` before its next model call
    once ``stop`` is set (a running thread cannot be cancelled from outside)."""

    def not_stopped() -> None:
        if stop.is_set():
            raise AttributionCancelledError(CANCELLED)

    return (yield from guarded(steps, not_stopped))


# ---------------------------------------------------------------------- thin calls
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
    """:func:`attribute` as a generator of model calls, through a throwaway Attributor."""
    if scorer is None:
        raise _no_scorer("attribute()")
    door = Attributor(
        scorer,
        budget=budget,
        method=method,
        granularity=granularity,
        deadline_s=deadline_s,
        groundedness=groundedness,
        settings=settings,
        keep=0,
    )
    steps = door._run_steps(
        question, context, response, history=history, prompt=prompt, progress=progress
    )
    return (yield from steps)


attribute = synced(
    _attribute_steps,
    "attribute",
    """Attribute ``response`` to the segments of ``context``: ``Attributor(scorer,
    settings=settings).run(...)``, for one answer.

    Args:
        question: the user's question.
        context: a string or a sequence of documents (strings, mappings with ``text`` or
            ``page_content``, LangChain ``Document``, LlamaIndex nodes).
        response: the answer to explain (scored as given, never regenerated).
        scorer: a :class:`~camab_rag.scorers.base.Scorer` (``camab_rag.default_scorer()``,
            ``camab_rag.OpenAICompletionsScorer(...)``, ...).
        budget, method, granularity, deadline_s, groundedness: the everyday knobs, each
            given (not ``None``) over the field of ``settings`` (default 40 distinct calls,
            ``"auto"``, ``"sentence"``, no deadline, no filter). A ``groundedness`` filter
            (``True``: a default one) judges the answer from the full and empty contexts,
            scored outside ``budget`` (``n_queries`` may be ``budget + 2``); the result
            carries its verdict (``result.groundedness``; :func:`~camab_rag.cite` shows it).
        prompt: the prompt the model really received (text or chat messages): the
            documents are found in it and cut out of it for each subset; when a
            document's text is not in it verbatim the default template is used instead
            (``result.prompt_mode`` / ``result.prompt_note`` say so).
        progress: called as ``progress(calls_made, total)`` every few model calls; the
            last call has ``calls_made == total``. An exception it raises is logged.
        history: the earlier chat messages (``{"role": ..., "content": ...}``, oldest
            first), placed before the question in the default template; context the
            answer may rest on (the empty anchor leaves them out).
        settings: everything else: :class:`~camab_rag.settings.AttributionSettings`.
    """,
)
aattribute = asynced(
    _attribute_steps,
    "aattribute",
    """Async :func:`attribute`, with the same arguments: each batch of subsets is scored
    with ``scorer.ascore``.""",
)


def _assess_steps(
    question: str,
    context: object,
    answer: str,
    scorer: Any,
    *,
    threshold: float | None = None,
    prompt_builder: PromptBuilder | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    history: Sequence[ChatMessage] | None = None,
    block_on: BlockOn = DEFAULT_BLOCK_ON,
    deadline_s: float | None = None,
) -> Steps[GroundednessReport]:
    """:func:`assess_answer` as a generator of model calls (scorer resolved by the door)."""
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
        user_template=user_template,
        system_prompt=system_prompt,
        history=history,
        block_on=block_on,
    )
    return (yield from bounded(steps, door.settings.deadline_s))


assess_answer = synced(
    _assess_steps,
    "assess_answer",
    """Judge whether ``context`` supports ``answer`` to ``question``, with no attribution:
    two model calls (the answer scored with the full context and with none, one batch),
    by an :class:`Attributor`'s scorer.

    Returns a :class:`~camab_rag.groundedness.GroundednessReport` with the answer's score
    and verdict, each sentence's, the unsupported spans and every token's log-probs. The
    verdict is calibrated; a ``threshold`` in the gate's score units replaces it by
    ``score >= threshold``. ``history``: earlier chat messages, which count as context;
    ``prompt_builder`` (e.g. the prompt the model really received) replaces the template.
    ``block_on``: ``"facts"`` (default) makes the answer ``unsupported`` only when it also
    leaves a number, date or name unchecked (a reworded right answer is ``uncertain``);
    ``"any"``: the stricter calibrated verdict as it stands. ``deadline_s``: as
    :func:`attribute`'s, the most seconds the two calls may take (past it a
    :class:`~camab_rag.errors.DeadlineExceededError`).
    """,
)
aassess_answer = asynced(
    _assess_steps,
    "aassess_answer",
    "Async :func:`assess_answer` (scores with ``scorer.ascore``).",
)
