"""Attribution progress, reported to a user hook and to the run's LangChain callbacks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun

PROGRESS_EVENT = "camab_progress"
"""The custom event sent every few model calls: ``{"run_id", "calls", "total"}``."""

ProgressHook = Callable[[int, int], object]
logger = logging.getLogger(__name__)


class RunProgress:
    """The core's ``progress(calls, total)`` hook for one attribution: the user's ``hook``,
    and :data:`PROGRESS_EVENT` to the chain run's callbacks (async: tasks, see :meth:`drain`)."""

    def __init__(
        self,
        hook: ProgressHook | None,
        run_manager: CallbackManagerForChainRun | AsyncCallbackManagerForChainRun | None,
        run_id: str | None,
    ) -> None:
        self.hook = hook
        self.run_manager = run_manager
        self.run_id = run_id
        self._tasks: list[asyncio.Task[Any]] = []

    def __call__(self, calls: int, total: int) -> None:
        if self.hook is not None:
            self.hook(calls, total)
        manager = self.run_manager
        if manager is None:
            return
        data = {"run_id": self.run_id, "calls": calls, "total": total}
        child = manager.get_child()
        if isinstance(manager, AsyncCallbackManagerForChainRun):
            event = child.on_custom_event(PROGRESS_EVENT, data, run_id=manager.run_id)
            self._tasks.append(asyncio.get_running_loop().create_task(event))  # type: ignore[arg-type]
        else:
            child.on_custom_event(PROGRESS_EVENT, data, run_id=manager.run_id)

    async def drain(self) -> None:
        """Wait until every progress event of an async run has been delivered."""
        tasks, self._tasks = self._tasks, []
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, BaseException):
                logger.warning("camab: a progress event failed: %s", outcome)
