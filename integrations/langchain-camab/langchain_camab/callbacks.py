"""Callback handlers that attribute a chain's answer when its root run ends.

Pass one in ``config={"callbacks": [handler]}`` of any chain. The handler records the
retrieved documents (``on_retriever_end``), the exact prompt of each LLM call
(``on_chat_model_start`` / ``on_llm_start``) and each answer (``on_llm_end``) under the
root run they belong to, and attributes the answer to the documents when the root run
ends. Nothing it does can break the chain: a failure is recorded in the result
(``status="error"``) unless ``strict=True``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.outputs import LLMResult

from camab_rag.rounds import adrive
from langchain_camab._handler import HANDLER_ARGS_DOC, CaptureEvents, HandlerCore
from langchain_camab.result import ChainAttribution


class CamabCallbackHandler(CaptureEvents, BaseCallbackHandler):
    """Attribute the answer of every root run to its retrieved documents.

    ``handler.results[run_id]`` is the :class:`~langchain_camab.ChainAttribution` of a
    finished root run, ``handler.last_result`` the latest one. The answer message (when
    the chain's model returned one) gets ``response_metadata["attribution"]`` and each
    retrieved ``Document`` gets ``metadata["attribution"]``.
    """

    __doc__ = (__doc__ or "") + HANDLER_ARGS_DOC

    def _start_runtime(self) -> None:
        self.futures: dict[UUID, Future[ChainAttribution]] = {}
        self._executor: ThreadPoolExecutor | None = None

    # ---------------------------------------------------------------- attribution
    def _finish(self, run_id: UUID) -> None:
        job = self._take(run_id)
        if job is None:
            return
        if not self.background:
            self._attribute(job)
            return
        self._placeholders(job)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="camab")
        self.futures[job.capture.run_id] = self._executor.submit(self._attribute, job)

    def wait(
        self, run_id: UUID | str | None = None, timeout: float | None = None
    ) -> ChainAttribution:
        """The result of a background attribution, waiting for it (the latest root run's
        when ``run_id`` is ``None``)."""
        if not self.futures:
            if run_id is None and self.last_result is not None:
                return self.last_result
            raise KeyError("no background attribution was started")
        key = UUID(run_id) if isinstance(run_id, str) else run_id
        future = self.futures[key] if key is not None else next(reversed(self.futures.values()))
        return future.result(timeout)

    def close(self) -> None:
        """Wait for background work and stop its thread."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None


class AsyncCamabCallbackHandler(HandlerCore, AsyncCallbackHandler):
    """The async :class:`CamabCallbackHandler` (scores with ``scorer.ascore``).

    It runs inline, before other handlers see the root run's end, so tracers report the
    attribution in the run's metadata. With ``background=True`` the attribution is an
    ``asyncio.Task`` in ``handler.tasks[run_id]``; ``await handler.wait(run_id)``.
    """

    __doc__ = (__doc__ or "") + HANDLER_ARGS_DOC
    run_inline = True

    def _start_runtime(self) -> None:
        self.tasks: dict[UUID, asyncio.Task[ChainAttribution]] = {}

    async def on_llm_end(
        self, response: LLMResult, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._llm_end(response, run_id)
        await self._finish(run_id)

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        await self._finish(run_id)

    async def _finish(self, run_id: UUID) -> None:
        job = self._take(run_id)
        if job is None:
            return
        if not self.background:
            await adrive(self._attribute_steps(job))
            return
        self._placeholders(job)
        self.tasks[job.capture.run_id] = asyncio.create_task(adrive(self._attribute_steps(job)))

    async def wait(self, run_id: UUID | str | None = None) -> ChainAttribution:
        """The result of a background attribution, awaiting it (the latest root run's when
        ``run_id`` is ``None``)."""
        if not self.tasks:
            if run_id is None and self.last_result is not None:
                return self.last_result
            raise KeyError("no background attribution was started")
        key = UUID(run_id) if isinstance(run_id, str) else run_id
        task = self.tasks[key] if key is not None else next(reversed(self.tasks.values()))
        return await task


def _as_coroutine(event: Callable[..., None]) -> Callable[..., Awaitable[None]]:
    @functools.wraps(event)
    async def handle(self: Any, *args: Any, **kwargs: Any) -> None:
        event(self, *args, **kwargs)

    return handle


for _name in (
    "on_chain_start",
    "on_retriever_start",
    "on_retriever_end",
    "on_tool_start",
    "on_tool_end",
    "on_chat_model_start",
    "on_llm_start",
    "on_chain_error",
    "on_llm_error",
    "on_retriever_error",
    "on_tool_error",
):
    setattr(AsyncCamabCallbackHandler, _name, _as_coroutine(getattr(CaptureEvents, _name)))
