"""``CamabQueryEngine``: a query engine whose every response carries its attribution."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    StreamingResponse,
)
from llama_index.core.callbacks import CallbackManager
from llama_index.core.prompts.mixin import PromptDictType, PromptMixinType
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.postprocessor.camab.capture import QueryRecord
from llama_index.postprocessor.camab.response import AttributingWrapper, ResponseAttributor
from llama_index.postprocessor.camab.streaming import attribute_when_consumed

from camab_rag.integration import AttributionSettings, InputError, ProgressFn, Steps, adrive, drive


class CamabQueryEngine(AttributingWrapper, BaseQueryEngine):
    """Wrap a query engine so every response carries its attribution.

    ``response.metadata["attribution"]`` holds the result and each source node gains
    ``node.metadata["attribution"]`` (``score``, ``rank``, ``supporting_sentences``...). A
    streamed response is attributed in the background once read to the end.

    Args:
        query_engine: any ``BaseQueryEngine`` (e.g. ``index.as_query_engine(llm=...)``).
        scorer: scores subsets of the context; ``None``: built from the engine's own LLM
            (an OpenAI-compatible server, or an LLM that carries a scorer).
        settings: how each answer is attributed (:class:`~camab_rag.AttributionSettings`;
            default ``CHAIN_SETTINGS``: whole nodes, a 120 s deadline);
            a ``mode="block"`` groundedness filter replaces an ungrounded or unjudgeable
            ``response.response`` by its fallback.
        proxy: scores in place of an LLM that cannot (named in ``scored_by``).
        scorer_options: options of the HTTP scorer built from the LLM.
        progress: called as ``progress(calls_made, total)`` every few model calls.
    """

    def __init__(
        self,
        query_engine: BaseQueryEngine,
        scorer: Any = None,
        *,
        settings: AttributionSettings | None = None,
        proxy: Any = None,
        scorer_options: Mapping[str, Any] | None = None,
        progress: ProgressFn | None = None,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        if not isinstance(query_engine, BaseQueryEngine):
            raise InputError(
                f"query_engine must be a LlamaIndex BaseQueryEngine, got "
                f"{type(query_engine).__name__}"
            )
        self.query_engine = query_engine
        self._attributor = ResponseAttributor(
            scorer, settings, proxy=proxy, scorer_options=scorer_options, progress=progress
        )
        super().__init__(callback_manager or getattr(query_engine, "callback_manager", None))

    def _get_prompt_modules(self) -> PromptMixinType:
        return {"query_engine": self.query_engine}

    def _get_prompts(self) -> PromptDictType:
        return {}

    def retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """The wrapped engine's retrieval (no answer, so nothing to attribute)."""
        return self.query_engine.retrieve(query_bundle)

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        question = query_bundle.query_str
        record = self._attributor.begin(question)
        response = self.query_engine.query(query_bundle)
        steps_for = self._steps_for(question, record)
        if isinstance(response, StreamingResponse):
            return attribute_when_consumed(response, steps_for, record, self._attributor.runs)
        return drive(steps_for(response))

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        question = query_bundle.query_str
        record = self._attributor.begin(question)
        response = await self.query_engine.aquery(query_bundle)
        steps_for = self._steps_for(question, record)
        if isinstance(response, AsyncStreamingResponse):
            return attribute_when_consumed(response, steps_for, record, self._attributor.runs)
        return await adrive(steps_for(response))

    def _steps_for(
        self, question: str, record: QueryRecord | None
    ) -> Callable[[RESPONSE_TYPE], Steps[RESPONSE_TYPE]]:
        """What attributes an answer (the engine's synthesizer LLM scores by default)."""
        synthesizer = getattr(self.query_engine, "_response_synthesizer", None)
        llm = getattr(synthesizer, "_llm", None)
        return lambda final: self._attributor.steps(final, question, record, llm)
