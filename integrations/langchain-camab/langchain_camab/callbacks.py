"""Callback handlers that attribute a chain's answer when its root run ends.

Pass one in ``config={"callbacks": [handler]}``: it records the retrieved documents, each
LLM call's exact prompt and answer per root run, and attributes the answer when the root
run ends; a failure is recorded (``status="error"``), never raised, unless ``strict=True``.

Args (both handlers):
    scorer: a camab-rag scorer; ``None``: built from the chain's model (``llm``, else what
        callbacks see of it: an OpenAI-compatible ``ChatOpenAI`` or ``CamabChatModel``).
    settings: :class:`~camab_rag.AttributionSettings`; its groundedness filter must be
        ``mode="flag"`` (to block, put :class:`~langchain_camab.CamabAttributor` after the
        chain).
    llm, proxy, scorer_options: the chain's chat model; a scorer used when that model
        cannot score (named in ``scored_by``); the HTTP scorer's options.
    strict, background, progress: re-raise errors; attribute in the background (pending
        dicts meanwhile); ``progress(calls_made, total)``.
    citations: also put LangChain ``Citation`` annotations on the answer message.
    question_keys, context_keys: root input keys holding the question / the documents.
    report_run_metadata: add the summary to the root run's metadata (``camab_attribution``).
    max_results: results kept in ``.results`` (oldest dropped first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.outputs import LLMResult

from langchain_camab._handler import HOW_TO_WAIT, HandlerCore
from langchain_camab.result import ChainAttribution


class CamabCallbackHandler(HandlerCore, BaseCallbackHandler):
    """Attribute the answer of every root run to its retrieved documents.

    ``handler.results[run_id]`` is the :class:`~langchain_camab.ChainAttribution` of a
    finished root run, ``handler.last_result`` the latest one. The answer message (when
    the chain's model returned one) gets ``response_metadata["attribution"]`` and each
    retrieved ``Document`` gets ``metadata["attribution"]``. Arguments: see
    :mod:`langchain_camab.callbacks`.
    """

    @property
    def futures(self) -> Mapping[Any, Any]:
        """Background attributions by root run id (``concurrent.futures.Future``; a copy)."""
        return self.runs.pending

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self._llm_end(response, run_id)
        self._finish(run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish(run_id)

    def _finish(self, run_id: UUID) -> None:
        run = self._take(run_id)
        if run is None:
            return
        if not self.background:
            self.runs.run(self._steps(run))
            return
        self._start(run)
        self.runs.start(run.capture.run_id, self._steps(run))

    def wait(
        self, run_id: UUID | str | None = None, timeout: float | None = None
    ) -> ChainAttribution:
        """The result of a root run (the latest when ``run_id`` is ``None``), waiting for
        a background attribution."""
        return self.runs.wait(run_id, timeout)

    def close(self) -> None:
        """Wait for background work and stop its thread."""
        self.runs.close()


class AsyncCamabCallbackHandler(HandlerCore, AsyncCallbackHandler):  # type: ignore[misc]
    """The async :class:`CamabCallbackHandler` (scores with ``scorer.ascore``).

    It runs inline (``run_inline``: LangChain calls its plain recording methods directly
    and awaits the two that attribute), before other handlers see the root run's end, so
    tracers report the attribution in the run's metadata. With ``background=True`` the
    attribution is an ``asyncio.Task`` in ``handler.tasks[run_id]``;
    ``await handler.wait(run_id)``.
    """

    run_inline = True

    @property
    def tasks(self) -> Mapping[Any, Any]:
        """Background attributions by root run id (``asyncio.Task``; a copy)."""
        return self.runs.pending

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self._llm_end(response, run_id)
        await self._finish(run_id)

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        await self._finish(run_id)

    async def _finish(self, run_id: UUID) -> None:
        run = self._take(run_id)
        if run is None:
            return
        if not self.background:
            await self.runs.arun(self._steps(run))
            return
        self._start(run)
        key = run.capture.run_id
        self.runs.astart(key, self._steps(run), self._all_placeholders(run), HOW_TO_WAIT)

    async def wait(self, run_id: UUID | str | None = None) -> ChainAttribution:
        """The result of a root run (the latest when ``run_id`` is ``None``), awaiting a
        background attribution."""
        return await self.runs.await_result(run_id)
