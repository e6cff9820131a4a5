"""The kernel every framework integration builds on: its options, :class:`Runs` attributing
a captured :class:`ChainCall`, what an answer carries (:class:`Attachment`), read back."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import KW_ONLY, InitVar, dataclass, field, fields, replace
from difflib import get_close_matches
from typing import Any, Generic, TypedDict, TypeVar
from uuid import UUID

from camab_rag.attributor import LOOP_ENDED, Pending, Worker
from camab_rag.citations import CitationPair, CitationRule, citation_pairs, cite, source_location
from camab_rag.conflicts import disputes
from camab_rag.engine import attribution_steps
from camab_rag.errors import InputError
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.methods import Method
from camab_rag.prompts import plan_prompt
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

__all__ = [  # camab_rag.integration's names
    "METADATA_KEY",
    "Attachment",
    "AttributorOptions",
    "ChainCall",
    "ChainOptions",
    "ProgressRelay",
    "Prompt",
    "Runs",
    "Steps",
    "attribution_of",
    "chat_messages",
    "groundedness_of",
    "local_answer",
    "native_citations",
    "prompt_holds",
    "top_documents",
]

T = TypeVar("T")
logger = logging.getLogger(__name__)
METADATA_KEY = "attribution"  # where answers and documents carry their attribution


def chat_messages(messages: Iterable[Any]) -> list[dict[str, str]]:
    """``[{"role", "content"}]`` of LlamaIndex chat messages (``content``: their text)."""
    return [{"role": str(m.role.value), "content": m.content or ""} for m in messages]


def local_answer(
    generator: Any, prompt: Prompt, max_new_tokens: int, stop: Sequence[str] | None = None
) -> str:
    """What an in-process model answers to ``prompt``, cut before the first ``stop``."""
    text = str(generator.generate([prompt], max_new_tokens=max_new_tokens)[0])
    for marker in filter(None, stop or []):
        text = text.split(marker, 1)[0]
    return text


@dataclass
class ProgressRelay:
    """One attribution's progress to ``hook`` and ``emit`` (awaited by :meth:`drain`)."""

    hook: ProgressFn | None
    emit: Callable[[dict[str, Any]], object] | None
    run_id: str | None
    _tasks: list[asyncio.Future[Any]] = field(default_factory=list)

    def __call__(self, calls: int, total: int) -> None:
        if self.hook is not None:
            self.hook(calls, total)
        sent = self.emit and self.emit({"run_id": self.run_id, "calls": calls, "total": total})
        if inspect.isawaitable(sent):
            self._tasks.append(asyncio.ensure_future(sent))

    async def drain(self) -> None:
        tasks, self._tasks = self._tasks, []
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, BaseException):
                logger.warning("camab: a progress event failed: %s", outcome)


class AttributorOptions(TypedDict, total=False):
    """The keyword options of every integration object (``settings``: :data:`CHAIN_SETTINGS`)."""

    budget: int | None
    method: str | Method | None
    granularity: Granularity | None
    deadline_s: float | None
    groundedness: GroundednessFilter | bool | None
    settings: AttributionSettings | None
    proxy: object
    scorer_options: Mapping[str, Any] | None
    progress: ProgressFn | None


class ChainOptions(AttributorOptions, total=False):
    """And a chain step's or handler's (``strict``: re-raise; ``background``: after returning)."""

    llm: object
    strict: bool
    background: bool
    citations: bool


def pending(run_id: str | None = None) -> dict[str, Any]:
    return {"status": "pending", "error": None, "run_id": run_id}


def fill(target: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """Replace ``target``'s content in place, so readers holding it see the result."""
    target.clear()
    target.update(values)
    return target


@dataclass
class ChainCall:
    """One captured chain call; a ``problem`` is the failed result, without a model call."""

    question: str
    answer: str
    documents: Any = ()
    scorer: Callable[[], Any] = lambda: None
    prompts: Sequence[Prompt] = ()
    progress: ProgressFn | None = None
    problem: Exception | None = None


def prompt_holds(prompts: Sequence[Prompt], documents: Sequence[Any]) -> bool:
    """Whether some of ``prompts`` holds every one of ``documents`` verbatim."""
    try:
        sources = to_documents(list(documents)) if documents else []
        return bool(sources) and plan_prompt(prompts, sources, "chunk").mode == "captured"
    except Exception:  # a refused document or a bad prompt: not shown to hold them
        return False


class ResultStore(OrderedDict[Hashable, T]):
    """Results by id, the oldest dropped past ``limit`` (``uuid_keys``: a ``str`` is a UUID)."""

    def __init__(self, limit: int, *, uuid_keys: bool = False) -> None:
        super().__init__()
        self.limit, self.uuid_keys = limit, uuid_keys

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


@dataclass(eq=False, repr=False)  # a plain object: no scorer options shown
class Runs(Generic[T]):
    """The attributions of one integration object, now or in the background, by run id."""

    settings: AttributionSettings = CHAIN_SETTINGS
    gate: GroundednessFilter | None = None
    _: KW_ONLY
    strict: bool = False
    keep: int = 1000
    uuid_keys: InitVar[bool] = False
    explain: Callable[[Exception], Exception] | None = None
    background: bool = False
    progress: ProgressFn | None = None
    citations: bool = False
    scorers: ScorerCache = field(default_factory=ScorerCache)

    def __post_init__(self, uuid_keys: bool) -> None:
        self.results: ResultStore[T] = ResultStore(self.keep, uuid_keys=uuid_keys)
        self.last_result: T | None = None
        self.pending: OrderedDict[Hashable, Pending[T]] = OrderedDict()
        self.worker, self._lock = Worker(), threading.Lock()

    def record(self, key: object, value: T) -> T:
        with self._lock:
            self.last_result = value
            if key is not None:
                self.results.add(key, value)
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
        """The runs of ``options`` (a name ``listed`` lacks: a ``TypeError`` naming ``owner``)."""
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
            raise InputError(
                f"progress must be a function progress(calls, total), got {progress!r}"
            )
        knobs = {name: options.get(name) for name in FIELD_KNOBS}
        settings = resolve_settings(options.get("settings"), CHAIN_SETTINGS, **knobs)
        _checked_scorer(options.get("proxy"), "proxy")
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
        return cls(
            settings,
            gate,
            strict=bool(options.get("strict", False)),
            uuid_keys=uuid_keys,
            explain=explain if scorer is None and llm is None else None,
            background=bool(options.get("background", False)),
            progress=progress,
            citations=bool(options.get("citations", False)),
            scorers=ScorerCache(scorer, llm, proxy, dict(options.get("scorer_options") or {})),
        )

    def steps(
        self, key: object, call: ChainCall, finish: Callable[[AttributionResult], T]
    ) -> Steps[T]:
        """Attribute and judge ``call``, ``finish`` the result and keep it; an error is the
        failed result (rewritten by ``explain``), raised only when ``strict``."""
        try:
            if call.problem is not None:
                raise call.problem
            result = yield from attribution_steps(
                call.question,
                call.documents,
                call.answer,
                call.scorer(),
                self.settings,
                groundedness=self.gate,
                prompts=list(call.prompts),
                progress=call.progress,
            )
        except Exception as raised:
            error = self.explain(raised) if self.explain is not None else raised
            if self.strict:
                raise error from (None if error is raised else raised)
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
        documents = tuple(call.documents) if result.status == "ok" else ()
        run_id = None if key is None else str(key)
        return self.record(key, finish(replace(result, run_id=run_id, documents=documents)))

    def go(self, key: object, steps: Steps[T]) -> None:
        if self.background:
            self.start(key, steps)
        else:
            drive(steps)

    async def ago(
        self, key: object, steps: Steps[T], placeholders: Sequence[dict[str, Any] | None]
    ) -> None:
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
        """Run ``steps`` in the background under ``key``, ``placeholders`` until it ends."""

        def on_cancel() -> None:
            logger.warning("camab: attribution %s: %s", key, LOOP_ENDED)
            cancelled = {"status": "cancelled", "error": LOOP_ENDED}
            for placeholder in placeholders:
                if isinstance(placeholder, dict) and placeholder.get("status") == "pending":
                    fill(placeholder, {**cancelled, "run_id": None if key is None else str(key)})

        job = self.worker.start(steps, in_loop, on_cancel)
        with self._lock:
            key = self.results.key(key)
            earlier = self.pending.pop(key, None)
            if earlier is not None and not earlier.done():
                self.pending[(key, id(earlier))] = earlier
            self.pending[key] = job
            finished = [k for k, j in self.pending.items() if j.done() and k != key]
            for old in finished[: max(len(self.pending) - self.keep, 0)]:
                del self.pending[old]
        return job

    def job(self, key: object = None) -> Pending[T]:
        """The handle under ``key`` (``None``: the latest); an unknown key: an InputError."""
        with self._lock:
            if key is None:
                if self.pending:
                    return next(reversed(self.pending.values()))
                if self.last_result is not None:
                    return _finished(self.last_result)
                raise InputError("nothing was attributed yet: there is no result to wait for")
            job = self.pending.get(self.results.key(key))
            if job is not None:
                return job
            if key in self.results:
                return _finished(self.results[key])
        raise InputError(f"no attribution under {key!r}: it was never started or was dropped")


def document_ranks(result: AttributionResult) -> list[int]:
    """1-based rank of each document by its score (ties: earlier document first)."""
    order = result.top_documents(len(result.document_scores))
    return [order.index(i) + 1 for i in range(len(order))]


def _cited(result: AttributionResult) -> list[tuple[str, list[int]]]:
    """Each answer sentence and the documents ``cite()`` cites for it."""
    cited = cite(result)
    return [(s.text, [cited.source(n).doc_index for n in s.citations]) for s in cited.sentences]


def document_summary(
    result: AttributionResult, n_documents: int, *, segments: bool = False
) -> list[dict[str, Any]]:
    """What each of ``n_documents`` documents carries: ``status``, ``score``, ``rank``,
    ``supporting_sentences``, ``disputes`` (``segments``: each segment's too)."""
    if result.status != "ok":
        return [{"status": result.status, "error": result.error} for _ in range(n_documents)]
    scores, ranks, cited = result.document_scores, document_ranks(result), _cited(result)
    disputed = disputes(result)
    summary = []
    for i in range(n_documents):
        entry: dict[str, Any] = {
            "status": "ok",
            "score": float(scores[i]) if i < len(scores) else 0.0,
            "rank": ranks[i] if i < len(ranks) else len(ranks) + 1,
            "supporting_sentences": [text for text, docs in cited for d in docs if d == i],
            "disputes": disputed.get(i, []),
        }
        if segments:
            entry["segments"] = [
                {"text": segment.text, "score": float(score)}
                for segment, score in zip(result.segments, result.scores)
                if segment.doc_index == i
            ]
        summary.append(entry)
    return summary


_SUMMARY = "status error method budget n_queries exact prompt_tokens wall_time_s prompt_mode"
_SUMMARY += " prompt_note run_id"


def answer_summary(result: AttributionResult, titles: Sequence[str | None] = ()) -> dict[str, Any]:
    """The JSON-ready attribution an answer carries: the result's figures, its documents,
    each sentence's ``citations`` and the ``groundedness`` verdict."""
    data: dict[str, Any] = {name: getattr(result, name) for name in _SUMMARY.split()}
    data.update(wall_time_s=round(result.wall_time_s, 3), documents=[], top_documents=[])
    data["citations"] = []
    for name in ("groundedness", "scored_by"):
        data[name] = None if (value := getattr(result, name)) is None else value.to_dict()
    if result.status != "ok":
        return data
    named = [*titles, *[None] * len(result.document_scores)]
    data["documents"] = [  # "index" from 0; "label" as words name it (Document 1, a title)
        {"index": i, "score": float(score), "rank": rank, "title": named[i]}
        | {"label": named[i] or f"Document {i + 1}"}
        for i, (score, rank) in enumerate(zip(result.document_scores, document_ranks(result)))
    ]
    cited = _cited(result)
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
    """The documents ``cite()`` cites for some answer sentence, most relied-on first."""
    held = {d for _, docs in (_cited(result) if cited is None else cited) for d in docs}
    return [i for i in result.top_documents(len(result.document_scores)) if i in held]


def titles(documents: Sequence[Any]) -> list[str | None]:
    metadata = [getattr(d, "metadata", None) or {} for d in documents]
    names = [
        m.get("title") or m.get("source") if isinstance(m, Mapping) else None for m in metadata
    ]
    return [str(n) if n is not None else None for n in names]


@dataclass
class Attachment:
    """What an answer and each of its documents carry: pending, then filled in place."""

    answer: dict[str, Any]
    documents: list[dict[str, Any]]

    @classmethod
    def placeholders(cls, run_id: str | None, n_documents: int) -> Attachment:
        return cls(pending(run_id), [pending(run_id) for _ in range(n_documents)])

    @classmethod
    def of(
        cls, result: AttributionResult, documents: Sequence[Any], *, segments: bool = False
    ) -> Attachment:
        summary = answer_summary(result, titles(documents))
        return cls(summary, document_summary(result, len(documents), segments=segments))

    def fill(self, result: AttributionResult, documents: Sequence[Any]) -> Attachment:
        for target, values in zip(self.all(), Attachment.of(result, documents).all()):
            fill(target, values)
        return self

    def all(self) -> list[dict[str, Any]]:
        return [self.answer, *self.documents]


def native_citations(
    result: AttributionResult, documents: Sequence[Any], *, rule: CitationRule | None = None
) -> list[tuple[CitationPair, str | None]]:
    """``cite()``'s citations over the chain's ``documents``, each with its source location."""
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
    """The result stored on an answer (``metadata["attribution"]``); else a typed ``KeyError``."""
    info = _attached(response)
    if not isinstance(info, Mapping) or info is response:
        raise KeyError(f"the response has no metadata[{METADATA_KEY!r}]")
    return AttributionResult.from_dict(info)  # a pending or cancelled one raises


def groundedness_of(source: object) -> FilteredAnswer:
    """The verdict of a result, answer, step output or summary; else a typed ``KeyError``."""
    if isinstance(source, AttributionResult):
        verdict = source.groundedness
    else:
        check_finished(data := _attached(source))
        stored = data.get("groundedness") if isinstance(data, Mapping) else None
        verdict = FilteredAnswer.from_dict(stored) if isinstance(stored, Mapping) else None
    if verdict is None:
        raise KeyError("no groundedness verdict (no groundedness= filter)")
    return verdict
