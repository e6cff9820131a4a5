"""One attribution's progress, relayed to the user's hook and to the framework's events.

The engine reports ``progress(calls_made, total)`` every few model calls. An integration
passes it on twice: to the ``progress=`` hook its user gave, and as an event of its
framework (LangChain's custom event of the chain run). :class:`ProgressRelay` does both;
an event sent by a coroutine runs as a task, and :meth:`ProgressRelay.drain` awaits them.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any

ProgressHook = Callable[[int, int], object]
"""A user's ``progress(calls_made, total)`` hook."""
logger = logging.getLogger(__name__)


class ProgressRelay:
    """The engine's progress hook for one attribution: ``hook(calls, total)``, then
    ``emit({"run_id", "calls", "total"})`` (an awaitable it returns runs as a task of
    the running loop: :meth:`drain` awaits them)."""

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
        """Wait until every event sent so far has been delivered (a failure is logged)."""
        tasks, self._tasks = self._tasks, []
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, BaseException):
                logger.warning("camab: a progress event failed: %s", outcome)


__all__ = ["ProgressHook", "ProgressRelay"]
