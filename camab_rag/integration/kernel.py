"""What every framework integration shares: its keyword options (:class:`ChainOptions`),
:class:`Runs` attributing a captured :class:`ChainCall`, :class:`Attachment` (what an
answer and its documents carry) and :func:`attribution_of` / :func:`groundedness_of`
reading it back."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, fields, replace
from difflib import get_close_matches
from typing import Any, Generic, TypedDict, TypeVar
from uuid import UUID

from camab_rag.attributor import LOOP_ENDED, Pending, Worker
from camab_rag.captured import (
    CapturedAttribution,
    captured_steps,
    document_ranks,
    document_summary,
    reached_the_model,
    sentence_citations,
)
from camab_rag.citations import CitationPair, CitationRule, citation_pairs, source_location
from camab_rag.errors import InputError
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.methods import Method
from camab_rag.prompts import PromptPlan
from camab_rag.result import AttributionResult, check_finished
from camab_rag.runs import ProgressFn
from camab_rag.scorers.base import Prompt
from camab_rag.scorers.proxy import ScorerCache, _checked_scorer
from camab_rag.segments import Granularity, to_documents
from camab_rag.settings import (
    CHAIN_SETTINGS,
    FIELD_KNOBS,
    AttributionSettings,
    groundedness_filter,
    resolve_settings,
)
from camab_rag.steps import Steps, adrive, drive

T = TypeVar("T")
logger = logging.getLogger(__name__)

METADATA_KEY = "attribution"
"""The metadata key under which answers and documents carry their attribution."""


def chat_messages(messages: Iterable[Any]) -> list[dict[str, str]]:
    """``[{"role", "content"}]`` of LlamaIndex chat messages (``content``: their text)."""
    return [{"role": str(m.role.value), "content": m.content or ""} for m in messages]


def local_answer(
    generator: Any, prompt: Prompt, max_new_tokens: int, stop: Sequence[str] | None = None
) -> str:
    """What an in-process model (e.g. ``camab_rag.default_scorer()``, the weights that then
    attribute the answer) answers to ``prompt``, cut before the first ``stop`` marker."""
    text = str(generator.generate([prompt], max_new_tokens=max_new_tokens)[0])
    for marker in stop or []:
        if marker and marker in text:
            text = text[: text.index(marker)]
    return text


ProgressHook = Callable[[int, int], object]


class ProgressRelay:
    """One attribution's progress: ``hook(calls, total)``, then ``emit({"run_id", "calls",
    "total"})`` (an awaitable it returns runs as a task: :meth:`drain` awaits them)."""

    def __init__(
        self,
        hook: ProgressHook | None,
        emit: Callable[[dict[str, Any]], object] | None,
        run_id: str | None,
    ) -> None:
        self.hook, self.emit, self.run_id = hook, emit, run_id
        self._tasks: list[asyncio.Future[Any]] = []

    def __call__(self, calls: int, total: int) -> None:
        if self.hook is not None:
            self.hook(calls, total)
        if self.emit is None:
            return
        sent = self.emit({"run_id": self.run_id, "calls": calls, "total": total})
        if inspect.isawaitable(sent):
            self._tasks.append(asyncio.ensure_future(sent))

    async def drain(self) -> None:
        """Wait until every event sent so far is delivered (a failure is logged)."""
        tasks, self._tasks = self._tasks, []
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, BaseException):
                logger.warning("camab: a progress event failed: %s", outcome)


class AttributorOptions(TypedDict, total=False):
    """The options every integration object takes (keyword-only, all optional): the
    knobs of :func:`camab_rag.attribute` (each given wins over ``settings``' field),
    ``settings`` (default :data:`CHAIN_SETTINGS`: whole documents, a 120 s deadline),
    ``proxy`` (scores when the chain's model cannot), ``scorer_options`` (of the HTTP
    scorer built for a model) and ``progress(calls_made, total)``."""

    budget: int | None
    method: str | Method | None
    granularity: Granularity | None
    deadline_s: float | None
    groundedness: GroundednessFilter | bool | None
    settings: AttributionSettings | None
    proxy: object
    scorer_options: Mapping[str, Any] | None
    progress: ProgressHook | None


class ChainOptions(AttributorOptions, total=False):
    """:class:`AttributorOptions` and those of a chain step or callback handler: ``llm``
    (the chain's chat model, when no scorer is given), ``strict`` (re-raise attribution
    errors), ``background`` (attribute after returning, pending dicts filled in place),
    ``citations`` (native citations on the answer message)."""

    llm: object
    strict: bool
    background: bool
    citations: bool


def checked_options(
    owner: str, options: Mapping[str, Any], listed: type = ChainOptions
) -> AttributionSettings:
    """The settings of ``options`` (default :data:`CHAIN_SETTINGS`, each knob given in
    place): a name ``listed`` lacks is a ``TypeError`` naming it and ``owner``, a bad
    value an :class:`~camab_rag.errors.InputError`."""
    names = listed.__annotations__
    if unknown := sorted(set(options) - set(names)):
        name = unknown[0]
        hint = ""
        if name in {f.name for f in fields(AttributionSettings) if f.init}:
            hint = f": it is a setting, pass settings=CHAIN_SETTINGS.with_changes({name}=...)"
        elif close := get_close_matches(name, names, n=1):
            hint = f" (did you mean {close[0]!r}?)"
        raise TypeError(f"{owner}() got an unexpected keyword argument {name!r}{hint}")
    progress = options.get("progress")
    if progress is not None and not callable(progress):
        raise InputError(f"progress must be a function progress(calls, total), got {progress!r}")
    knobs = {name: options.get(name) for name in FIELD_KNOBS}
    settings = resolve_settings(options.get("settings"), CHAIN_SETTINGS, **knobs)
    _checked_scorer(options.get("proxy"), "proxy")
    return settings


def pending(run_id: str | None = None) -> dict[str, Any]:
    """The placeholder an answer or document carries while its attribution runs."""
    return {"status": "pending", "error": None, "run_id": run_id}


def fill(target: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """Replace ``target``'s content in place, so readers holding it see the result."""
    target.clear()
    target.update(values)
    return target


@dataclass
class ChainCall:
    """One captured chain call: ``scorer()`` is built inside the run; ``problem`` (why it
    cannot be attributed) becomes the failed result without a model call."""

    question: str
    answer: str
    documents: Any = ()
    scorer: Callable[[], Any] = lambda: None
    prompts: Sequence[Prompt] = ()
    progress: ProgressFn | None = None
    problem: Exception | None = None


def prompt_holds(prompts: Sequence[Prompt], documents: Sequence[Any]) -> bool:
    """Whether some of ``prompts`` holds every one of ``documents`` verbatim (they reached
    the model); ``False`` for none, or for documents the input gate refuses."""
    try:
        sources = to_documents(list(documents)) if documents else []
        return bool(sources) and reached_the_model(prompts, sources)
    except Exception:  # a refused document or a bad prompt: not shown to hold them
        return False


class ResultStore(OrderedDict[Hashable, T]):
    """Results by run or query id, the oldest dropped past ``limit``; a ``str`` key is
    read as the ``UUID`` it spells when ``uuid_keys`` (LangChain run ids)."""

    def __init__(self, limit: int, *, uuid_keys: bool = False) -> None:
        super().__init__()
        self.limit = limit
        self.uuid_keys = uuid_keys

    def key(self, key: object) -> Any:
        return UUID(key) if self.uuid_keys and isinstance(key, str) else key

    def __getitem__(self, key: object) -> T:
        return super().__getitem__(self.key(key))

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self.key(key))

    def add(self, key: Hashable, value: T) -> None:
        self[self.key(key)] = value
        while len(self) > self.limit:
            self.popitem(last=False)


def _finished(value: T) -> Pending[T]:
    future: Future[T] = Future()
    future.set_result(value)
    return Pending(future, threading.Event())


class Runs(Generic[T]):
    """The attributions of one integration object, kept by key (a run or query id), and
    what it is built from (:meth:`of` its keyword options): :meth:`steps` attributes a
    :class:`ChainCall`, :meth:`go` / :meth:`ago` now or in the background (:meth:`start`),
    :meth:`job` gives a key's handle."""

    background: bool = False
    progress: ProgressHook | None = None
    citations: bool = False

    def __init__(
        self,
        settings: AttributionSettings = CHAIN_SETTINGS,
        gate: GroundednessFilter | None = None,
        *,
        strict: bool = False,
        keep: int = 1000,
        uuid_keys: bool = False,
        explain: Callable[[Exception], Exception] | None = None,
    ) -> None:
        self.settings, self.strict, self.keep, self.explain = settings, strict, keep, explain
        self.gate, self.scorers = gate, ScorerCache()
        self.results: ResultStore[T] = ResultStore(keep, uuid_keys=uuid_keys)
        self.last_result: T | None = None
        self.pending: OrderedDict[Hashable, Pending[T]] = OrderedDict()
        self.key = self.results.key
        self.worker = Worker()
        self._lock = threading.Lock()

    def record(self, key: object, value: T) -> T:
        """Keep ``value`` as the latest result and, with a key, under it."""
        with self._lock:
            self.last_result = value
            if key is not None:
                self.results.add(self.key(key), value)
        return value

    @classmethod
    def of(
        cls,
        owner: str,
        scorer: object,
        options: Mapping[str, Any],
        *,
        blocking_refused: str | None = None,
        needs_scorer: str | None = None,
        explain: Callable[[Exception], Exception] | None = None,
        uuid_keys: bool = False,
        listed: type = ChainOptions,
    ) -> Runs[Any]:
        """Check ``options`` and build the runs. ``owner`` names the object in errors,
        ``blocking_refused`` says why it cannot block, ``needs_scorer`` why it needs a
        scorer; ``explain`` rewrites errors when no scorer or ``llm`` is given (the object
        builds scorers from what it traces)."""
        settings = checked_options(owner, options, listed)
        _checked_scorer(scorer)
        llm, proxy = options.get("llm"), options.get("proxy")
        if needs_scorer is not None and scorer is None and llm is None and proxy is None:
            raise InputError(
                f"{owner} needs scorer=... (e.g. camab_rag.default_scorer()), llm=<the "
                f"chain's chat model> (scored by its own server) or proxy=...: {needs_scorer}"
            )
        gate = groundedness_filter(
            options.get("groundedness"), settings, blocking_refused=blocking_refused
        )
        runs: Runs[Any] = cls(
            settings,
            gate,
            strict=bool(options.get("strict", False)),
            uuid_keys=uuid_keys,
            explain=explain if scorer is None and llm is None else None,
        )
        runs.scorers = ScorerCache(scorer, llm, proxy, dict(options.get("scorer_options") or {}))
        runs.background = bool(options.get("background", False))
        runs.progress = options.get("progress")
        runs.citations = bool(options.get("citations", False))
        return runs

    def steps(
        self, key: object, call: ChainCall, finish: Callable[[CapturedAttribution], T]
    ) -> Steps[T]:
        """Attribute ``call`` in the prompt its model received, judge it, ``finish`` it and
        keep the result; an error is the failed result (rewritten by ``explain``), raised
        only when ``strict``."""
        try:
            if call.problem is not None:
                raise call.problem
            attributed = yield from captured_steps(
                call.question,
                call.documents,
                call.answer,
                call.scorer(),
                self.settings,
                prompts=list(call.prompts),
                progress=call.progress,
                groundedness=self.gate,
            )
        except Exception as raised:
            error = self.explain(raised) if self.explain is not None else raised
            if self.strict and error is raised:
                raise
            if self.strict:
                raise error from raised
            logger.warning("camab: attribution failed: %s", error)
            result = AttributionResult.failed(
                error,
                question=call.question,
                response=call.answer,
                method=self.settings.method_instance.name,
                budget=self.settings.budget,
            )
            if self.gate is not None:  # judged without a model call: "block" blocks it
                result = replace(result, groundedness=self.gate.judge(result))
            attributed = CapturedAttribution(result, [], PromptPlan("none", None, None))
        return self.record(key, finish(attributed))

    def go(self, key: object, steps: Steps[T]) -> None:
        """Run ``steps`` now, or with ``background`` in the worker thread."""
        if self.background:
            self.start(key, steps)
        else:
            drive(steps)

    async def ago(
        self, key: object, steps: Steps[T], placeholders: Sequence[dict[str, Any] | None]
    ) -> None:
        """Async :meth:`go`: in the background a task of the running loop (:meth:`start`)."""
        if self.background:
            self.start(key, steps, placeholders, in_loop=True)
        else:
            await adrive(steps)

    def start(
        self,
        key: object,
        steps: Steps[T],
        placeholders: Sequence[dict[str, Any] | None] = (),
        *,
        in_loop: bool = False,
    ) -> Pending[T]:
        """Run ``steps`` in the background: a task of the running loop if ``in_loop`` (its
        ``placeholders`` read "cancelled" if the loop ends first), else the worker thread;
        the handle is kept under ``key``, the oldest finished dropped past ``keep``."""
        marked: list[bool] = []

        def on_cancel() -> None:  # pending placeholders read "cancelled" (a typed error)
            if marked:
                return
            marked.append(True)
            logger.warning("camab: attribution %s: %s", key, LOOP_ENDED)
            cancelled = {"status": "cancelled", "error": LOOP_ENDED}
            for placeholder in placeholders:
                if isinstance(placeholder, dict) and placeholder.get("status") == "pending":
                    fill(placeholder, {**cancelled, "run_id": None if key is None else str(key)})

        job = self.worker.start(steps, in_loop, on_cancel)
        self._keep(self.key(key), job)
        return job

    def _keep(self, key: Hashable, job: Pending[T]) -> None:
        with self._lock:
            earlier = self.pending.pop(key, None)
            if earlier is not None and not earlier.done():
                self.pending[(key, id(earlier))] = earlier
            self.pending[key] = job
            finished = [k for k, j in self.pending.items() if j.done() and k != key]
            for old in finished[: max(len(self.pending) - self.keep, 0)]:
                del self.pending[old]

    def job(self, key: object = None) -> Pending[T]:
        """The handle under ``key`` (``None``: the latest); a kept result is a finished
        handle, an unknown key an :class:`~camab_rag.errors.InputError`."""
        with self._lock:
            if key is None:
                if self.pending:
                    return next(reversed(self.pending.values()))
                if self.last_result is not None:
                    return _finished(self.last_result)
                raise InputError("nothing was attributed yet: there is no result to wait for")
            job = self.pending.get(self.key(key))
            if job is not None:
                return job
            if key in self.results:
                return _finished(self.results[key])
        raise InputError(f"no attribution under {key!r}: it was never started or was dropped")


_SUMMARY = "status error method budget n_queries exact prompt_tokens wall_time_s prompt_mode"
_SUMMARY += " prompt_note run_id"


def answer_summary(result: AttributionResult, titles: Sequence[str | None] = ()) -> dict[str, Any]:
    """The JSON-ready attribution an integration attaches to an answer: the result's
    figures, each document's ``index``/``score``/``rank``/``title``, each sentence's
    ``citations`` and the ``groundedness`` verdict."""
    data: dict[str, Any] = {name: getattr(result, name) for name in _SUMMARY.split()}
    data.update(wall_time_s=round(result.wall_time_s, 3), documents=[], top_documents=[])
    data.update(citations=[], groundedness=None, scored_by=None)
    for name in ("groundedness", "scored_by"):
        if (value := getattr(result, name)) is not None:
            data[name] = value.to_dict()
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
    cited = sentence_citations(result)
    data["top_documents"] = top_documents(result, cited)
    data["citations"] = [
        {"sentence": text, "document": doc_index}
        for text, doc_indices in cited
        for doc_index in (doc_indices if doc_indices else [None])
    ]
    return data


def top_documents(
    result: AttributionResult, cited: Sequence[tuple[str, list[int]]] | None = None
) -> list[int]:
    """The documents :func:`camab_rag.cite` cites for some answer sentence (the sources
    a reader is shown), most relied-on first; ``cited``: its citations, when known."""
    cited = sentence_citations(result) if cited is None else cited
    held = {d for _, docs in cited for d in docs}
    return [i for i in result.top_documents(len(result.document_scores)) if i in held]


def titles(documents: Sequence[Any]) -> list[str | None]:
    """Each document's metadata ``title`` or ``source`` (``None`` if none)."""
    metadata = [getattr(d, "metadata", None) or {} for d in documents]
    names = [
        m.get("title") or m.get("source") if isinstance(m, Mapping) else None for m in metadata
    ]
    return [str(n) if n is not None else None for n in names]


@dataclass
class Attachment:
    """The answer's summary and each document's entry: pending ``placeholders()`` filled
    in place (:meth:`fill`), or :meth:`of` a finished result."""

    answer: dict[str, Any]
    documents: list[dict[str, Any]]

    @classmethod
    def placeholders(cls, run_id: str | None, n_documents: int) -> Attachment:
        return cls(pending(run_id), [pending(run_id) for _ in range(n_documents)])

    @classmethod
    def of(
        cls, result: AttributionResult, documents: Sequence[Any], *, segments: bool = False
    ) -> Attachment:
        """What to attach for ``result`` (``segments``: each entry lists its segments')."""
        summary = answer_summary(result, titles(documents))
        return cls(summary, document_summary(result, len(documents), segments=segments))

    def fill(self, result: AttributionResult, documents: Sequence[Any]) -> Attachment:
        """Fill the placeholders in place with what :meth:`of` gives."""
        final = Attachment.of(result, documents)
        fill(self.answer, final.answer)
        for target, values in zip(self.documents, final.documents):
            fill(target, values)
        return self

    def all(self) -> list[dict[str, Any]]:
        return [self.answer, *self.documents]


def native_citations(
    result: AttributionResult, documents: Sequence[Any], *, rule: CitationRule | None = None
) -> list[tuple[CitationPair, str | None]]:
    """The citations :func:`camab_rag.cite` decides for ``result.response``, in answer
    order, over ``documents`` as the chain holds them, each with its source location."""
    docs = to_documents(documents)
    return [
        (pair, source_location(docs[pair.source.doc_index].metadata))
        for pair in citation_pairs(result, documents, rule=rule)
    ]


def _attached(source: object) -> Any:
    for attr in ("response_metadata", "metadata"):
        metadata = getattr(source, attr, None)
        if isinstance(metadata, Mapping):
            return metadata.get(METADATA_KEY)
    if isinstance(source, Mapping) and isinstance(source.get(METADATA_KEY), Mapping):
        return source[METADATA_KEY]
    return source


def attribution_of(response: object) -> AttributionResult:
    """The result stored on an answer (its ``metadata["attribution"]``), with the
    groundedness verdict stored beside it.

    Raises:
        AttributionPendingError: its attribution is still running (wait for it first).
        AttributionCancelledError: it was cancelled (its event loop ended first).
        KeyError: the answer carries no attribution (both errors above are ones too).
    """
    info = _attached(response)
    if not isinstance(info, Mapping) or info is response:
        raise KeyError(f"the response has no metadata[{METADATA_KEY!r}]")
    check_finished(info)
    return AttributionResult.from_dict(info)


def groundedness_of(source: object) -> FilteredAnswer:
    """The groundedness verdict of an :class:`~camab_rag.AttributionResult`, of an answer or a chain
    step's output carrying the summary, or of the summary dict itself.

    Raises:
        AttributionPendingError: the attribution (and so its verdict) is still running.
        KeyError: no verdict there (no ``groundedness=`` filter was set).
    """
    if isinstance(source, AttributionResult):
        if source.groundedness is None:
            raise KeyError("the result has no groundedness verdict (no groundedness= filter)")
        return source.groundedness
    data = _attached(source)
    check_finished(data)
    verdict = data.get("groundedness") if isinstance(data, Mapping) else None
    if not isinstance(verdict, Mapping):
        raise KeyError("no ['attribution']['groundedness'] verdict (no groundedness= filter)")
    return FilteredAnswer.from_dict(verdict)
