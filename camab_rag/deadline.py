"""An attribution's deadline: :func:`bounded` checks the clock before each model call (an
awaited call is cancelled), scorers cut their work to :func:`remaining`."""

from __future__ import annotations

import asyncio
import math
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from camab_rag.errors import DeadlineExceededError, InputError
from camab_rag.steps import Call, Steps, guarded

T = TypeVar("T")
_END: ContextVar[tuple[float, float] | None] = ContextVar("camab_rag_deadline", default=None)


def check_deadline(seconds: object, name: str = "deadline_s") -> float | None:
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InputError(f"{name} must be a number of seconds or None, got {seconds!r}")
    if not math.isfinite(seconds) or seconds <= 0:
        raise InputError(f"{name} must be a positive number of seconds, got {seconds!r}")
    return float(seconds)


def remaining() -> float | None:
    """Seconds left before the running attribution's deadline (``None``: no deadline)."""
    current = _END.get()
    return None if current is None else current[0] - time.monotonic()


def check(waiting: str | None = None) -> None:
    left = remaining()
    if left is not None and left <= 0:
        raise expired(waiting)


def expired(last: str | None = None, seconds: float | None = None) -> DeadlineExceededError:
    """The error past a deadline of ``seconds`` (default: the running one's), waiting for
    ``last``."""
    if seconds is None:
        current = _END.get()
        seconds = current[1] if current is not None else 0.0
    waiting = f" (waiting for: {last})" if last else ""
    return DeadlineExceededError(
        f"the attribution ran past its deadline of {seconds:g} s (deadline_s) and was "
        f"stopped{waiting}. Raise deadline_s for a slow model or a long context {IN_A_CHAIN}"
    )


IN_A_CHAIN = "(in a chain the answer is still served, without its attribution)"


@dataclass(frozen=True)
class _BoundedCall:
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
            raise expired(seconds=deadline[1]) from None
        finally:
            _END.reset(token)


def bounded(steps: Steps[T], seconds: float | None) -> Steps[T]:
    """``steps`` under a deadline of ``seconds`` from its first step (``None``: as it is)."""
    if seconds is None:
        return (yield from steps)
    end = time.monotonic() + seconds

    def past_end() -> None:
        if time.monotonic() >= end:
            raise expired(seconds=seconds)

    return (yield from guarded(steps, past_end, lambda call: _BoundedCall(call, end, seconds)))
