"""An attribution's deadline, checked before each model call (:func:`bounded`)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from camab_rag.errors import DeadlineExceededError, InputError
from camab_rag.steps import Call, Steps, guarded

T = TypeVar("T")


class Clock:
    """A deadline's clock: ``seconds`` from its start, stopped while paused (pauses nest)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        #: (monotonic end, paused since or None, pause depth): replaced whole, read whole
        self._state: tuple[float, float | None, int] = (time.monotonic() + seconds, None, 0)
        self._waiters: list[asyncio.Future[None]] = []

    def left(self) -> float:
        """Seconds left (frozen while paused)."""
        end, since, _ = self._state
        return end - (time.monotonic() if since is None else since)

    @property
    def paused(self) -> bool:
        return self._state[1] is not None

    def pause(self) -> None:
        """Stop the clock until as many resumes."""
        end, since, depth = self._state
        self._state = (end, time.monotonic() if since is None else since, depth + 1)

    def resume(self) -> None:
        """Undo one pause; the last one starts the clock again, the time paused added."""
        end, since, depth = self._state
        if since is None:
            return
        if depth > 1:
            self._state = (end, since, depth - 1)
            return
        self._state = (end + time.monotonic() - since, None, 0)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()


_END: ContextVar[Clock | None] = ContextVar("camab_rag_deadline", default=None)


def check_deadline(seconds: object) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float, type(None))):
        raise InputError(f"deadline_s must be a number of seconds or None, got {seconds!r}")
    if seconds is not None and (not math.isfinite(seconds) or seconds <= 0):
        raise InputError(f"deadline_s must be a positive number of seconds, got {seconds!r}")


def current() -> Clock | None:
    """The clock of the running attribution's deadline (``None``: no deadline)."""
    return _END.get()


def remaining() -> float | None:
    """Seconds left before the running attribution's deadline (``None``: no deadline)."""
    clock = _END.get()
    return None if clock is None else clock.left()


def check(waiting: str | None = None) -> None:
    left = remaining()
    if left is not None and left <= 0:
        raise expired(waiting)


def expired(last: str | None = None, seconds: float | None = None) -> DeadlineExceededError:
    """The error past a deadline of ``seconds`` (default: the running one's)."""
    if seconds is None:
        clock = _END.get()
        seconds = clock.seconds if clock is not None else 0.0
    waiting = f" (waiting for: {last})" if last else ""
    return DeadlineExceededError(
        f"the attribution ran past its deadline of {seconds:g} s (deadline_s) and was "
        f"stopped{waiting}. Raise deadline_s for a slow model or a long context {IN_A_CHAIN}"
    )


IN_A_CHAIN = "(in a chain the answer is still served, without its attribution)"


@contextmanager
def started(seconds: float | None) -> Iterator[Clock | None]:
    """A deadline of ``seconds`` (``None``: none) for :func:`bounded` steps in the block."""
    if seconds is None:
        yield None
        return
    clock = Clock(seconds)
    token = _END.set(clock)
    try:
        yield clock
    finally:
        _END.reset(token)


async def within(work: Awaitable[T], waiting: str | None = None) -> T:
    """Await ``work`` under the running deadline: past it, ``work`` is cancelled and
    :func:`expired` raised (``waiting``: what it was); a pause keeps ``work`` waiting."""
    clock = _END.get()
    if clock is None:
        return await work
    task = asyncio.ensure_future(work)
    past = False
    try:
        while not task.done() and not (past := clock.left() <= 0):
            if clock.paused:  # it stands still: wait for the work or the clock to run
                clock._waiters.append(resumed := asyncio.get_running_loop().create_future())
                await asyncio.wait([task, resumed], return_when=asyncio.FIRST_COMPLETED)
            else:
                await asyncio.wait([task], timeout=clock.left())
    finally:
        if not task.done():  # past the deadline, or the caller was cancelled
            task.cancel()
            await asyncio.wait([task])  # as asyncio.wait_for: its cancellation runs out
    if past and task.cancelled():
        raise expired(waiting, clock.seconds)
    return task.result()


@dataclass(frozen=True)
class _BoundedCall:
    call: Call[Any]
    clock: Clock

    def _deadline(self) -> Clock:
        outer = _END.get()
        return self.clock if outer is None or outer.left() > self.clock.left() else outer

    def run(self) -> Any:
        token = _END.set(self._deadline())
        try:
            return self.call.run()
        finally:
            _END.reset(token)

    async def arun(self) -> Any:
        token = _END.set(self._deadline())
        try:
            return await within(self.call.arun())
        finally:
            _END.reset(token)


def bounded(steps: Steps[T], seconds: float | None) -> Steps[T]:
    """``steps`` under a deadline of ``seconds`` from its first step (``None``: as it is);
    on the running deadline's clock (:func:`started`) when that one ends first."""
    if seconds is None:
        return (yield from steps)
    outer = _END.get()
    clock = outer if outer is not None and outer.left() <= seconds else Clock(seconds)

    def past_end() -> None:
        if clock.left() <= 0:
            raise expired(seconds=clock.seconds)

    return (yield from guarded(steps, past_end, lambda call: _BoundedCall(call, clock)))
