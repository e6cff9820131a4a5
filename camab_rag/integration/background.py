"""Attributions that finish after the host has returned its answer.

An integration that must not hold the chain up (``background=True``, or an async query
engine that lets the loop go on) hands the attribution's :data:`~camab_rag.steps.Steps`
to :class:`Background`: from sync code it runs in one worker thread (scoring with blocking
calls), from a coroutine as an ``asyncio`` task (scoring with ``ascore``). Either way the
caller keeps a key (its run or query id) to wait for the result with, and the answer's
metadata shows :func:`pending` until the steps fill it in place (:func:`fill`). A task
whose event loop ends before it finishes (``asyncio.run`` returning without awaiting it)
never stays "pending": its ``on_cancel`` fills the placeholders with :func:`cancelled`
(read back, an :class:`~camab_rag.errors.AttributionCancelledError`), and a warning is
logged.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar
from uuid import UUID

from camab_rag.steps import Steps, adrive, drive

T = TypeVar("T")
logger = logging.getLogger(__name__)


def pending(run_id: str | None = None) -> dict[str, Any]:
    """The placeholder an answer or document carries while its attribution runs."""
    return {"status": "pending", "error": None, "run_id": run_id}


CANCELLED = (
    "the attribution was cancelled before it finished: its event loop ended first. Keep "
    "the loop running until it is done: await what waits for it (the object's "
    "await_result() or aflush(), await_attribution(response)) before the event loop ends "
    "(e.g. at the end of the coroutine given to asyncio.run), or set background=False "
    "where the object takes it"
)
"""What every attribution cancelled by its event loop's end says (one text, one typed
error on reading it: :class:`~camab_rag.errors.AttributionCancelledError`)."""


def cancelled(run_id: str | None) -> dict[str, Any]:
    """What a placeholder becomes when its attribution was cancelled before it finished
    (its event loop ended first)."""
    return {"status": "cancelled", "error": CANCELLED, "run_id": run_id}


def fill(target: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """Replace ``target``'s content in place, so readers holding it see the result."""
    target.clear()
    target.update(values)
    return target


class Background(Generic[T]):
    """Attributions running in the background, by key, oldest first.

    :meth:`start` runs steps in a worker thread (one, so attributions of one object never
    compete for the model), :meth:`astart` as a task of the running event loop;
    :meth:`wait` / :meth:`await_result` give a result (the latest started when no key is
    given), :meth:`aflush` awaits every task, :meth:`close` stops the thread. Finished
    attributions are kept for :meth:`wait`, the oldest finished dropped past ``keep``;
    the caller's ``finished`` results answer for a dropped one.
    """

    def __init__(self, keep: int = 1000) -> None:
        self.pending: OrderedDict[Hashable, Future[T] | asyncio.Task[T]] = OrderedDict()
        self.keep = keep
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _add(self, key: Hashable, job: Future[T] | asyncio.Task[T]) -> None:
        """Keep ``job`` under ``key`` (caller holds the lock); a job still running under the
        same key stays, under ``(key, id)``, so it is still awaited and referenced; forget
        the oldest finished jobs past ``keep``."""
        earlier = self.pending.pop(key, None)
        if earlier is not None and not earlier.done():
            self.pending[(key, id(earlier))] = earlier
        self.pending[key] = job
        excess = len(self.pending) - self.keep
        finished = [k for k, j in self.pending.items() if j.done() and k != key]
        for old in finished[: max(excess, 0)]:
            del self.pending[old]

    def snapshot(self) -> dict[Hashable, Future[T] | asyncio.Task[T]]:
        """The jobs by key, oldest first (a copy: safe while others start)."""
        with self._lock:
            return dict(self.pending)

    def knows(self, key: Hashable) -> bool:
        """Whether a job under ``key`` is kept."""
        with self._lock:
            return key in self.pending

    def __len__(self) -> int:
        return len(self.pending)

    def start(self, key: Hashable, steps: Steps[T]) -> Future[T]:
        """Run ``steps`` with blocking calls in the worker thread."""
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="camab")
            future = self._executor.submit(drive, steps)
            self._add(key, future)
        return future

    def astart(
        self, key: Hashable, steps: Steps[T], on_cancel: Callable[[], object] | None = None
    ) -> asyncio.Task[T]:
        """Run ``steps`` as a task of the running event loop, awaiting each call;
        ``on_cancel()`` runs (once) if the task is cancelled or dropped unfinished, e.g.
        when ``asyncio.run`` ends before it."""
        once = _Once(on_cancel)

        async def run() -> T:
            try:
                return await adrive(steps)
            except (asyncio.CancelledError, GeneratorExit):
                once()
                raise

        task = asyncio.get_running_loop().create_task(run())
        task.add_done_callback(lambda done: once() if done.cancelled() else None)
        with self._lock:
            self._add(key, task)
        return task

    def _get(self, key: Hashable | None) -> Future[T] | asyncio.Task[T]:
        with self._lock:
            if not self.pending:
                raise KeyError("no background attribution was started")
            if key is None:
                return next(reversed(self.pending.values()))
            return self.pending[key]

    def _dropped(self, key: Hashable | None, finished: Mapping[Any, T] | None) -> T | None:
        """The result ``finished`` holds for ``key`` when its job is no longer kept."""
        if key is None or finished is None or self.knows(key):
            return None
        return finished.get(key)

    def wait(
        self,
        key: Hashable | None = None,
        timeout: float | None = None,
        *,
        finished: Mapping[Any, T] | None = None,
    ) -> T:
        """Block until the attribution under ``key`` is done; its result (from
        ``finished``, the caller's stored results, when its job was dropped past ``keep``)."""
        done = self._dropped(key, finished)
        if done is not None:
            return done
        job = self._get(key)
        if isinstance(job, asyncio.Task):
            raise TypeError("this attribution runs in an event loop: await await_result()")
        return job.result(timeout)

    async def await_result(
        self, key: Hashable | None = None, *, finished: Mapping[Any, T] | None = None
    ) -> T:
        """Await the attribution under ``key`` (a task or a thread's future; ``finished``
        as in :meth:`wait`); cancelling the caller leaves the attribution running."""
        done = self._dropped(key, finished)
        if done is not None:
            return done
        job = self._get(key)
        awaited = job if isinstance(job, asyncio.Task) else asyncio.wrap_future(job)
        return await asyncio.shield(awaited)

    async def aflush(self) -> None:
        """Await every attribution started so far (errors stay in their results);
        cancelling the caller leaves them running."""
        while True:
            with self._lock:
                jobs = [j for j in self.pending.values() if not j.done()]
            if not jobs:
                return
            await asyncio.wait(
                [j if isinstance(j, asyncio.Task) else asyncio.wrap_future(j) for j in jobs]
            )

    def close(self) -> None:
        """Wait for the thread's attributions and stop it (tasks belong to their loop)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)


class _Once:
    """Call ``action`` the first time only (a cancelled task may report twice); an error
    it raises is logged, never raised into the event loop's shutdown."""

    def __init__(self, action: Callable[[], object] | None) -> None:
        self.action = action
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            action, self.action = self.action, None
        if action is None:
            return
        try:
            action()
        except Exception:  # pragma: no cover - reporting must never break the shutdown
            logger.exception("camab: could not record a cancelled attribution")


class ResultStore(OrderedDict[Hashable, T]):
    """Results by run or query id, the oldest dropped past ``limit``; a ``str`` key is
    read as the ``UUID`` it spells when ``uuid_keys`` (LangChain run ids)."""

    def __init__(self, limit: int, *, uuid_keys: bool = False) -> None:
        super().__init__()
        self.limit = limit
        self.uuid_keys = uuid_keys

    def _key(self, key: object) -> Any:
        return UUID(key) if self.uuid_keys and isinstance(key, str) else key

    def __getitem__(self, key: object) -> T:
        return super().__getitem__(self._key(key))

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self._key(key))

    def get(self, key: object, default: Any = None) -> Any:
        return super().get(self._key(key), default)

    def add(self, key: Hashable, value: T) -> None:
        """Store ``value`` under ``key``, dropping the oldest results past ``limit``."""
        self[self._key(key)] = value
        while len(self) > self.limit:
            self.popitem(last=False)
