"""Callback handlers that attribute a chain's answer when its root run ends.

Pass one in ``config={"callbacks": [handler]}`` of any chain. The handler records the
retrieved documents (``on_retriever_end``), the exact prompt of each LLM call
(``on_chat_model_start`` / ``on_llm_start``) and each answer (``on_llm_end``) under the
root run they belong to, and attributes the answer to the documents when the root run
ends. Nothing it does can break the chain: a failure is recorded in the result
(``status="error"``) unless ``strict=True``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
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

    @property
    def futures(self) -> Mapping[Any, Any]:
        """Background attributions by root run id (``concurrent.futures.Future``; a copy)."""
        return self._jobs.snapshot()

    def _finish(self, run_id: UUID) -> None:
        job = self._take(run_id)
        if job is None:
            return
        if not self.background:
            self._attribute(job)
            return
        self._placeholders(job)
        self._jobs.start(job.capture.run_id, self._attribute_steps(job))

    def wait(
        self, run_id: UUID | str | None = None, timeout: float | None = None
    ) -> ChainAttribution:
        """The result of a background attribution, waiting for it (the latest root run's
        when ``run_id`` is ``None``)."""
        done = self._finished(run_id)
        if done is not None:
            return done
        key = self._background_key(run_id)
        return self._jobs.wait(key, timeout, finished=self.results)

    def close(self) -> None:
        """Wait for background work and stop its thread."""
        self._jobs.close()


class AsyncCamabCallbackHandler(HandlerCore, AsyncCallbackHandler):
    """The async :class:`CamabCallbackHandler` (scores with ``scorer.ascore``).

    It runs inline, before other handlers see the root run's end, so tracers report the
    attribution in the run's metadata. With ``background=True`` the attribution is an
    ``asyncio.Task`` in ``handler.tasks[run_id]``; ``await handler.wait(run_id)``.
    """

    __doc__ = (__doc__ or "") + HANDLER_ARGS_DOC
    run_inline = True

    @property
    def tasks(self) -> Mapping[Any, Any]:
        """Background attributions by root run id (``asyncio.Task``; a copy)."""
        return self._jobs.snapshot()

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
        self._jobs.astart(
            job.capture.run_id, self._attribute_steps(job), on_cancel=lambda: self._cancelled(job)
        )

    async def wait(self, run_id: UUID | str | None = None) -> ChainAttribution:
        """The result of a background attribution, awaiting it (the latest root run's when
        ``run_id`` is ``None``)."""
        done = self._finished(run_id)
        if done is not None:
            return done
        key = self._background_key(run_id)
        return await self._jobs.await_result(key, finished=self.results)


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
