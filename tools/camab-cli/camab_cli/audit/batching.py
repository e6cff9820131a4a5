"""Batching for an in-process scorer shared by the records in flight.

With several records in flight, each asks the model for a few subsets per round. Running
those calls in parallel threads would make one CPU/GPU model fight itself; instead
:class:`MicroBatcher` queues every pending request and runs them through the model in one
``score`` call at a time (up to ``max_batch`` requests of one record), oldest first, so
records take turns without contention. A record's deadline clock is paused while its
requests wait behind another record's call: its deadline counts its own work, so a short
record is not failed behind a long one's batches (fresh-user review 11).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from camab_rag import deadline
from camab_rag.errors import DeadlineExceededError, InputError
from camab_rag.scorers.base import (
    ResponseLogprobs,
    ScoredBy,
    Scorer,
    ScoreRequest,
    parallel_requests,
    scored_by,
)


@dataclass
class _Pending:
    request: ScoreRequest
    future: asyncio.Future[ResponseLogprobs]
    #: the asking record's context: its deadline (camab_rag.deadline), read by the scorer
    context: contextvars.Context = field(default_factory=contextvars.copy_context)
    #: the asking record's deadline clock (None: none); its requests share a model call
    clock: deadline.Clock | None = field(init=False)

    def __post_init__(self) -> None:
        self.clock = self.context.run(deadline.current)


def _settle(pending: _Pending, outcome: ResponseLogprobs | BaseException) -> None:
    if pending.future.done():
        return
    if isinstance(outcome, BaseException):
        pending.future.set_exception(outcome)
    else:
        pending.future.set_result(outcome)


class MicroBatcher:
    """Merge concurrent ``ascore`` calls into batched ``scorer.score`` calls.

    One model call runs at a time (in a worker thread, so the event loop stays free);
    requests that arrive meanwhile wait for the next. A call holds one record's requests
    (those of one deadline clock; requests without a deadline are merged), oldest first,
    and runs under that record's deadline. While it runs and its record still waits for it,
    the clocks of the records queued behind it are paused: a record's deadline counts its
    own calls, never its wait for another's. A request whose record stopped waiting
    (cancelled, past its deadline) is dropped unscored.

    Args:
        scorer: the in-process scorer (its ``score`` is called from one thread at a time).
        max_batch: most requests per ``score`` call.
    """

    def __init__(self, scorer: Scorer, max_batch: int = 16) -> None:
        if max_batch < 1:
            raise InputError(f"max_batch must be at least 1, got {max_batch}")
        self.scorer = scorer
        self.max_batch = max_batch
        self.batches = 0
        self.requests = 0
        self._queue: list[_Pending] = []
        self._running: list[_Pending] = []  # the requests in the model call running now
        self._paused: set[deadline.Clock] = set()  # the clocks this batcher holds paused
        self._worker: asyncio.Task[None] | None = None

    @property
    def parallel_requests(self) -> int:
        """The batched scorer's parallel capacity."""
        return parallel_requests(self.scorer)

    @property
    def scored_by(self) -> ScoredBy:
        """The batched scorer's model (results name it, not this wrapper)."""
        return scored_by(self.scorer)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return self.scorer.score(requests)

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        loop = asyncio.get_running_loop()
        pending = [_Pending(r, loop.create_future()) for r in requests]
        for p in pending:
            p.future.add_done_callback(self._repause)  # answered or given up: a pause may end
        self._queue.extend(pending)
        self._repause()
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain())
        return list(await asyncio.gather(*(p.future for p in pending)))

    def _next_batch(self) -> list[_Pending]:
        """The oldest waiting request and the next ones of its record, taken off the queue."""
        self._queue = [p for p in self._queue if not p.future.done()]  # gave up: dropped
        if not self._queue:
            return []
        clock = self._queue[0].clock
        batch = [p for p in self._queue if p.clock is clock][: self.max_batch]
        taken = {id(p) for p in batch}
        self._queue = [p for p in self._queue if id(p) not in taken]
        return batch

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let the other records in flight add their requests
        while batch := self._next_batch():
            self.batches += 1
            self.requests += len(batch)
            try:
                results = await self._run(batch)
                if len(results) != len(batch):
                    raise RuntimeError(
                        f"the scorer returned {len(results)} results for {len(batch)} requests"
                    )
            except Exception as exc:
                if isinstance(exc, DeadlineExceededError):
                    self._give_up(batch, exc)
                elif len(batch) == 1:
                    _settle(batch[0], exc)
                else:  # isolate the bad request: one request's error must not fail others
                    for p in batch:
                        await self._score_alone(p)
                continue
            for p, result in zip(batch, results):
                _settle(p, result)

    def _give_up(self, batch: list[_Pending], exc: DeadlineExceededError) -> None:
        """The batch's record ran past its deadline: its requests, running and queued, fail
        with it now, so none is scored after (the record's own give-up may come a moment
        later, from the event loop, after the next call was already taken)."""
        clock = batch[0].clock
        mine = [p for p in self._queue if clock is not None and p.clock is clock]
        self._queue = [p for p in self._queue if clock is None or p.clock is not clock]
        for p in [*batch, *mine]:
            _settle(p, exc)

    async def _run(self, batch: list[_Pending]) -> list[ResponseLogprobs]:
        """``scorer.score`` of ``batch`` in a worker thread, under its record's deadline (a
        fresh copy of its context), the records queued behind it paused."""
        score = functools.partial(self.scorer.score, [p.request for p in batch])
        self._running = batch
        self._repause()
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, batch[0].context.copy().run, score)
        finally:
            self._running = []
            self._repause()

    async def _score_alone(self, pending: _Pending) -> None:
        if pending.future.done():
            return
        try:
            [result] = await self._run([pending])
        except Exception as exc:
            _settle(pending, exc)
        else:
            _settle(pending, result)

    def _repause(self, *_: object) -> None:
        """Pause the clock of each record queued behind the running call while a record with
        a deadline still waits for that call; resume the others. Behind a call no record
        waits for any more (its record gave up: a hung model), the clocks run."""
        running = {p.clock for p in self._running}
        waited_for = any(p.clock is not None and not p.future.done() for p in self._running)
        queued = {p.clock for p in self._queue if not p.future.done()}
        paused = {c for c in queued - running if c is not None} if waited_for else set()
        for clock in self._paused - paused:
            clock.resume()
        for clock in paused - self._paused:
            clock.pause()
        self._paused = paused

    @property
    def mean_batch(self) -> float:
        """Average requests per model call so far."""
        return self.requests / self.batches if self.batches else 0.0
