"""Callback handlers that attribute a chain's answer when its root run ends, against the
exact prompt its LLM received; a failure is recorded, never raised, unless ``strict=True``.
Args: ``scorer`` (``None``: ``llm``'s, else that of the model the callbacks see),
``question_keys`` / ``context_keys`` and ``ChainOptions``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.outputs import LLMResult

from camab_rag.integration import Runs
from langchain_camab import native
from langchain_camab.chat_models import explain_refused_key, scorer_from_run
from langchain_camab.roots import CONTEXT_KEYS, QUESTION_KEYS, Kept, LLMCall, RootRuns

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from camab_rag.integration import ChainOptions


class _Handler(RootRuns, Kept):
    def __init__(
        self,
        scorer: object = None,
        *,
        question_keys: Sequence[str] = QUESTION_KEYS,
        context_keys: Sequence[str] = CONTEXT_KEYS,
        **options: Unpack[ChainOptions],
    ) -> None:
        owner = type(self).__name__
        refused = native.cannot_block(f"{owner} observes and")
        runs = Runs.of(
            owner,
            scorer,
            options,
            blocking_refused=refused,
            explain=explain_refused_key,
            uuid_keys=True,
        )
        self.settings, self.scorers = runs.settings, runs.scorers
        RootRuns.__init__(self, runs, self._scorer_for, question_keys, context_keys)
        self.raise_error = runs.strict  # strict: LangChain re-raises our errors into the chain

    def _scorer_for(self, call: LLMCall | None) -> Any:
        """The configured scorer, else that of the model the callbacks saw."""
        if call is None:
            return self.scorers.get()
        serialized, params = call.model
        key = repr((serialized or {}).get("id")) + repr(sorted(map(str, params.items())))
        return self.scorers.get(call.model, partial(scorer_from_run, serialized, params), key)


class CamabCallbackHandler(_Handler, BaseCallbackHandler):
    """Attribute the answer of every root run to its retrieved documents.

    ``handler.results[run_id]`` is a finished root run's result, ``handler.last_result``
    the latest; the answer message gets ``response_metadata["attribution"]`` and each
    retrieved ``Document`` ``metadata["attribution"]``. Arguments: see the module.
    """

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self.llm_ended(run_id, response)
        self.on_chain_end(None, run_id=run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if (job := self.ended(run_id)) is not None:
            self.runs.go(run_id, job[0])

    def close(self) -> None:
        """Wait for background work and stop its thread."""
        self.runs.worker.close()


class AsyncCamabCallbackHandler(_Handler, AsyncCallbackHandler):  # type: ignore[misc]
    """The async :class:`CamabCallbackHandler` (scores with ``scorer.ascore``).

    It runs inline, before other handlers see the root run's end, so tracers report the
    attribution in the run's metadata; with ``background=True`` the attribution is a task
    of the running loop (``handler.pending[run_id]``, ``await handler.wait(run_id)``).
    """

    run_inline = True

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self.llm_ended(run_id, response)
        await self.on_chain_end(None, run_id=run_id)

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if (job := self.ended(run_id)) is not None:
            await self.runs.ago(run_id, *job)

    wait = Kept.await_result  # type: ignore[assignment]  # await handler.wait(run_id)
