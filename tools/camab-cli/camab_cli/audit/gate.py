"""A concurrency and cool-down gate shared by every record in flight.

:class:`~camab_rag.scorers.openai_completions.OpenAICompletionsScorer` retries each HTTP
request on its own, within its documented retry budget (``retry_budget_s``, 3 s by
default), and bounds concurrency per ``ascore`` call; with many records in flight a 429
storm would still make every record hammer the server. :class:`RateGate` sits around
``scorer.ascore`` for the whole audit:

* at most ``limit`` scorer calls in flight over all records (an adaptive limit: halved on a
  rate-limit/overload error, grown back by one after ``limit`` successes, AIMD style);
* a shared cool-down: after a transient error every caller waits until it has passed
  (``Retry-After`` honoured up to ``backoff_max``, else exponential backoff with jitter
  growing with the number of consecutive failures): the audit pauses between calls;
* no retries of its own by default (``max_retries=0``): the scorer's retry policy is the
  one policy, so a dead server costs each record the scorer's budget plus at most one
  pause (``backoff_max``, 1 s), never budgets multiplied. ``max_retries`` > 0 makes the
  gate retry a failed call too (for a scorer that does not retry).

So a storm slows everyone down, and a dead server fails each record in seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from camab_rag.errors import InputError, TransientScorerError
from camab_rag.retry import RetryPolicy
from camab_rag.scorers.base import (
    ResponseLogprobs,
    ScoredBy,
    Scorer,
    ScoreRequest,
    parallel_requests,
    scored_by,
)

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after_of(exc: BaseException) -> float | None:
    hint = getattr(exc, "retry_after", None)
    if isinstance(hint, (int, float)):
        return float(hint)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        return float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None


def transient(exc: BaseException) -> tuple[bool, float | None]:
    """Whether ``exc`` (or an exception in its cause chain) is worth retrying, and the
    server's ``Retry-After`` hint in seconds if it gave one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, InputError):
            return False, None
        status = _status_of(current)
        if status is not None and status in RETRYABLE_STATUS:
            return True, _retry_after_of(current)
        name = type(current).__name__
        transient_kinds = (TimeoutError, ConnectionError, TransientScorerError)
        if isinstance(current, transient_kinds) or name in {
            "APITimeoutError",
            "APIConnectionError",
        }:
            return True, _retry_after_of(current)
        current = current.__cause__ or current.__context__
    return False, None


@dataclass
class GateStats:
    """What the gate did (for the cost report)."""

    calls: int = 0
    retries: int = 0
    transient_errors: int = 0
    waited_s: float = 0.0
    min_limit: int = 0


class RateGate:
    """Shared concurrency limit and cool-down for every scorer call of an audit.

    Args:
        limit: most scorer calls in flight at once (the adaptive limit's ceiling).
        max_retries: retries of one call after transient errors before it fails (0: the
            scorer's own retries are the only ones).
        backoff_base: first cool-down in seconds (doubled per consecutive failure).
        backoff_max: longest cool-down (also the cap on ``Retry-After``).
    """

    def __init__(
        self,
        limit: int = 16,
        *,
        max_retries: int = 0,
        backoff_base: float = 0.25,
        backoff_max: float = 1.0,
    ) -> None:
        if limit < 1:
            raise InputError(f"the gate's limit must be at least 1, got {limit}")
        self.retry = RetryPolicy(max_retries, backoff_base, backoff_max)
        self.ceiling = limit
        self.limit = limit
        self.in_flight = 0
        self.cooldown_until = 0.0
        self.failures = 0  # consecutive transient failures, over all callers
        self.successes = 0  # since the last change of the limit
        self.stats = GateStats(min_limit=limit)
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def _acquire(self) -> None:
        changed = self._condition()
        started = time.monotonic()
        async with changed:
            while True:
                wait = self.cooldown_until - time.monotonic()
                if wait <= 0 and self.in_flight < self.limit:
                    break
                if wait > 0:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(changed.wait(), timeout=wait)
                else:
                    await changed.wait()
            self.in_flight += 1
        self.stats.waited_s += time.monotonic() - started

    async def _release(self, ok: bool | None, retry_after: float | None = None) -> None:
        """``ok``: success (True), transient failure (False), other failure (None)."""
        changed = self._condition()
        async with changed:
            self.in_flight -= 1
            if ok is None:
                pass
            elif ok:
                self.failures = 0
                self.successes += 1
                if self.limit < self.ceiling and self.successes >= self.limit:
                    self.limit += 1
                    self.successes = 0
            else:
                self.failures += 1
                self.successes = 0
                self.stats.transient_errors += 1
                self.limit = max(1, self.limit // 2)
                self.stats.min_limit = min(self.stats.min_limit, self.limit)
                delay = self.retry.delay(self.failures, retry_after)
                self.cooldown_until = max(self.cooldown_until, time.monotonic() + delay)
            changed.notify_all()

    async def call(
        self, scorer: Scorer, requests: Sequence[ScoreRequest]
    ) -> list[ResponseLogprobs]:
        """``scorer.ascore(requests)`` through the gate (retried on transient errors)."""
        for attempt in range(self.retry.max_retries + 1):
            await self._acquire()
            self.stats.calls += 1
            try:
                result = await scorer.ascore(requests)
            except Exception as exc:
                retry, hint = transient(exc)
                if not retry:
                    await self._release(None)
                    raise
                await self._release(False, hint)
                if attempt == self.retry.max_retries:
                    raise
                self.stats.retries += 1
                continue
            await self._release(True)
            return result
        raise AssertionError("unreachable")


class GatedScorer:
    """A scorer whose async calls go through a shared :class:`RateGate`."""

    def __init__(self, scorer: Scorer, gate: RateGate) -> None:
        self.scorer = scorer
        self.gate = gate

    @property
    def parallel_requests(self) -> int:
        """The gated scorer's parallel capacity."""
        return parallel_requests(self.scorer)

    @property
    def scored_by(self) -> ScoredBy:
        """The gated scorer's model (results name it, not this wrapper)."""
        return scored_by(self.scorer)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return self.scorer.score(requests)

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return await self.gate.call(self.scorer, requests)
