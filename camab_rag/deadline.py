"""An attribution's deadline: past it, the attribution ends with a clear error.

:func:`bounded` checks the clock before each model call of a step generator (an awaited
call is cancelled) and :func:`remaining` cuts the HTTP scorer's timeouts and retries to
it; past it, :class:`~camab_rag.errors.DeadlineExceededError` is raised.
"""

from __future__ import annotations

import asyncio
import math
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from camab_rag.errors import DeadlineExceededError, InputError
from camab_rag.steps import Call, Steps

T = TypeVar("T")
_END: ContextVar[tuple[float, float] | None] = ContextVar("camab_rag_deadline", default=None)
"""(monotonic end, seconds given) of the deadline of the call running in this context."""


def check_deadline(seconds: object, name: str = "deadline_s") -> float | None:
    """``seconds`` as a positive float, or ``None`` (no deadline); else an
    :class:`~camab_rag.errors.InputError`."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InputError(f"{name} must be a number of seconds or None, got {seconds!r}")
    if not math.isfinite(seconds) or seconds <= 0:
        raise InputError(f"{name} must be a positive number of seconds, got {seconds!r}")
    return float(seconds)


def remaining() -> float | None:
    """Seconds left before the deadline of the attribution whose call is running (``None``:
    no deadline); at most 0 once it has passed."""
    current = _END.get()
    return None if current is None else current[0] - time.monotonic()


def check(waiting: str | None = None) -> None:
    """Raise :func:`expired` when the running attribution's deadline has passed: a
    scorer that splits one call into parts (forward passes) checks before each, so a long
    call overshoots the deadline by one part, not by the whole call."""
    left = remaining()
    if left is not None and left <= 0:
        raise expired(waiting)


def expired(last: str | None = None) -> DeadlineExceededError:
    """The error that ends an attribution whose deadline (the one of the running call) has
    passed; ``last``: what was being waited for."""
    current = _END.get()
    return _expired(current[1] if current is not None else 0.0, last)


def _expired(seconds: float, last: str | None = None) -> DeadlineExceededError:
    waiting = f" (waiting for: {last})" if last else ""
    return DeadlineExceededError(
        f"the attribution ran past its deadline of {seconds:g} s (deadline_s) and was "
        f"stopped{waiting}; the answer itself is not affected. Raise deadline_s for a slow "
        "model or a long context"
    )


@dataclass(frozen=True)
class _BoundedCall:
    """A call run under a deadline (see the module docstring)."""

    call: Call[Any]
    end: float
    seconds: float

    def _deadline(self) -> tuple[float, float]:
        outer = _END.get()
        return (self.end, self.seconds) if outer is None or outer[0] > self.end else outer

    def run(self) -> Any:
        token = _END.set(self._deadline())
        try:
            return self.call.run()
        finally:
            _END.reset(token)

    async def arun(self) -> Any:
        deadline = self._deadline()
        token = _END.set(deadline)
        try:
            left = max(deadline[0] - time.monotonic(), 0.0)
            return await asyncio.wait_for(self.call.arun(), left)
        except asyncio.TimeoutError:
            raise _expired(deadline[1]) from None
        finally:
            _END.reset(token)


def bounded(steps: Steps[T], seconds: float | None) -> Steps[T]:
    """``steps`` under a deadline of ``seconds`` from its first step (``None``: as it is)."""
    if seconds is None:
        return (yield from steps)
    end = time.monotonic() + seconds
    value: Any = None
    error: Exception | None = None
    while True:
        try:
            call = steps.throw(error) if error is not None else steps.send(value)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        if time.monotonic() >= end:
            steps.close()
            raise _expired(seconds)
        try:
            value, error = (yield _BoundedCall(call, end, seconds)), None
        except Exception as raised:
            value, error = None, raised
