"""Cross-record batching for an in-process scorer.

With several records in flight, each asks the model for a few subsets per round. Running
those calls in parallel threads would make one CPU/GPU model fight itself; instead
:class:`MicroBatcher` queues every pending request and runs them through the model in one
``score`` call at a time (up to ``max_batch`` requests), so the model sees full batches and
records take turns without contention. Requests are served in arrival order, whichever
record asked: a record's deadline clock runs while its requests wait behind the other
records' batches, so a short record can run past its deadline behind a long one (fresh-user
review 11); ``--concurrency 1`` gives each record the model to itself.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from camab_rag import deadline
from camab_rag.errors import InputError
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

    def remaining(self) -> float:
        """Seconds left before the asking record's deadline (``inf``: none)."""
        left = self.context.run(deadline.remaining)
        return float("inf") if left is None else left


def _latest(batch: Sequence[_Pending]) -> contextvars.Context:
    """A fresh copy of the context, among ``batch``'s, whose deadline comes last: the
    batch runs while any of its records may still wait for it; a record past its own
    deadline stops waiting (its call is cancelled) and its queued requests are dropped."""
    return max(batch, key=lambda p: p.remaining()).context.copy()


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
    requests that arrive meanwhile form the next batch. Each call runs under the latest
    deadline of the records in it (never under the record that happened to start the
    worker: one record's deadline must not fail or cut another's requests), and a request
    whose record stopped waiting (cancelled, past its deadline) is dropped unscored.

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
        self._queue.extend(pending)
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain())
        return list(await asyncio.gather(*(p.future for p in pending)))

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let the other records in flight add their requests
        loop = asyncio.get_running_loop()
        while self._queue:
            self._queue = [p for p in self._queue if not p.future.done()]  # gave up: dropped
            batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch :]
            if not batch:
                break
            self.batches += 1
            self.requests += len(batch)
            score = functools.partial(self.scorer.score, [p.request for p in batch])
            try:
                results = await loop.run_in_executor(None, _latest(batch).run, score)
                if len(results) != len(batch):
                    raise RuntimeError(
                        f"the scorer returned {len(results)} results for {len(batch)} requests"
                    )
            except Exception as exc:
                if len(batch) == 1:
                    _settle(batch[0], exc)
                else:  # isolate the bad request: one record's error must not fail others
                    for p in batch:
                        await self._score_alone(p)
                continue
            for p, result in zip(batch, results):
                _settle(p, result)

    async def _score_alone(self, pending: _Pending) -> None:
        if pending.future.done():
            return
        score = functools.partial(self.scorer.score, [pending.request])
        try:
            [result] = await asyncio.get_running_loop().run_in_executor(
                None, _latest([pending]).run, score
            )
        except Exception as exc:
            _settle(pending, exc)
        else:
            _settle(pending, result)

    @property
    def mean_batch(self) -> float:
        """Average requests per model call so far."""
        return self.requests / self.batches if self.batches else 0.0
