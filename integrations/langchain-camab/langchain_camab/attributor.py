"""``CamabAttributor``: an LCEL step (or LangGraph node) that attributes an answer
(``retrieval_chain | CamabAttributor(scorer)``); see the class docstring."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import Document
from langchain_core.messages import BaseMessageChunk
from langchain_core.prompts import BasePromptTemplate
from langchain_core.runnables import Runnable, RunnableConfig, RunnableGenerator
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.utils import AddableDict

from camab_rag.integration import (
    CHAIN_SETTINGS,
    METADATA_KEY,
    AttributionSettings,
    ChainAttribution,
    ChainRuns,
    ChainStep,
    InputError,
    ProgressHook,
    ProgressRelay,
    Prompt,
    ScorerSource,
    StepCall,
    StepInput,
    StepKeys,
    WaitedResults,
    added,
)
from langchain_camab import native
from langchain_camab.native import to_prompt
from langchain_camab.scorer import scorer_from_llm

OutputMode = Literal["auto", "merge", "attribution"]
_MAP_KEY_TAG = "map:key:"
HOW_TO_WAIT = (
    "Await attributor.await_result(run_id) before the event loop ends (e.g. at the end "
    "of the coroutine given to asyncio.run), or set background=False"
)


class CamabAttributor(WaitedResults, RunnableGenerator[Any, Any]):
    """Attribute an answer to its documents as a chain step (or LangGraph node).

    Reads the question, documents and answer from its input dict (``question_keys``,
    ``context_key``, ``answer_key``; the prompt under ``prompt_key`` or rebuilt from
    ``prompt=``) and returns the input plus ``"attribution"`` (messages and ``Document``
    objects get it in their metadata); in ``.assign(attribution=...)`` position just the
    summary. ``stream()`` passes chunks through, then adds the attribution as a last chunk.
    Never breaks the chain unless ``strict=True``.

    Args:
        scorer: a camab-rag scorer; ``None``: built from ``llm``.
        settings: how each answer is attributed (:class:`~camab_rag.AttributionSettings`);
            with a ``mode="block"`` groundedness filter an ungrounded or unjudgeable answer
            is replaced by its fallback (in ``.assign`` position read
            ``["groundedness"]["answer"]``).
        llm, proxy, scorer_options: the chain's chat model to score with, a scorer used
            when that model cannot score (named in ``scored_by``), the HTTP scorer's options.
        prompt, document_separator: the chain's prompt template and how it joins documents.
        question_keys, context_key, answer_key, prompt_key: where to read the input.
        output: ``"merge"``, ``"attribution"`` (the summary only) or ``"auto"``.
        strict: re-raise attribution errors (default: record them, the answer goes on).
        background: return at once with ``{"status": "pending"}`` dicts, filled in place
            later; ``wait(run_id)`` / ``await await_result(run_id)`` give the result.
        progress: ``progress(calls_made, total)``; inside a run also the custom event
            ``"camab_progress"``.
        citations: put LangChain ``Citation`` annotations on an ``AIMessage`` answer.
        max_results: results kept in ``.results`` (``last_result`` is the latest).
    """

    __hash__ = Runnable.__hash__  # type: ignore[assignment]  # RunnableGenerator drops it

    def __init__(
        self,
        scorer: object = None,
        *,
        settings: AttributionSettings | None = None,
        llm: object = None,
        proxy: object = None,
        scorer_options: Mapping[str, Any] | None = None,
        prompt: BasePromptTemplate[Any] | None = None,
        document_separator: str = "\n\n",
        question_keys: Sequence[str] = ("input", "question"),
        context_key: str = "context",
        answer_key: str = "answer",
        prompt_key: str = "prompt",
        output: OutputMode = "auto",
        strict: bool = False,
        background: bool = False,
        progress: ProgressHook | None = None,
        citations: bool = False,
        max_results: int = 1000,
        name: str | None = "CamabAttributor",
    ) -> None:
        if output not in ("auto", "merge", "attribution"):
            raise ValueError(f"output must be 'auto', 'merge' or 'attribution', got {output!r}")
        if scorer is None and llm is None and proxy is None:
            raise InputError(
                "CamabAttributor needs scorer=... (e.g. camab_rag.default_scorer()), llm=<the "
                "chain's chat model> (scored by its own server) or proxy=...: a step cannot "
                "see the chain's model, so with none of them every call would fail"
            )
        self.settings = settings or CHAIN_SETTINGS
        native.check_filter(
            self.settings.groundedness,
            can_block=not background,
            where="CamabAttributor(background=True) returns the answer before it is judged and",
        )
        options = dict(scorer_options or {})
        self.scorers = ScorerSource(scorer, llm, proxy, options, scorer_from_llm)
        self.prompt, self.document_separator = prompt, document_separator
        self.output, self.strict, self.background = output, strict, background
        self.progress, self.citations = progress, citations
        # stream / astream / transform / atransform are RunnableGenerator's; it gives a
        # transform that takes ``run_manager`` the run's manager (typed without it)
        super().__init__(cast(Any, self._through), cast(Any, self._athrough), name=name)
        self.runs: ChainRuns[ChainAttribution] = ChainRuns(
            self.settings, strict=strict, keep=max_results, uuid_keys=True
        )
        keys = StepKeys(
            tuple(question_keys),
            context_key,
            answer_key,
            prompt_key,
            step="CamabAttributor",
            after="create_retrieval_chain or RunnablePassthrough.assign",
            rename="RunnablePassthrough.assign({key}=lambda x: x['my_key'])",
        )
        self.step = ChainStep(keys, native.TYPES, self.runs, background, HOW_TO_WAIT)

    # ------------------------------------------------------------------ Runnable
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._invoke, input, ensure_config(config), **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self._acall_with_config(self._ainvoke, input, ensure_config(config), **kwargs)

    def _through(
        self, chunks: Iterator[Any], run_manager: CallbackManagerForChainRun
    ) -> Iterator[Any]:
        passes = self._passes_through(run_manager)
        merged: Any = None
        for chunk in chunks:
            if passes:
                yield chunk
            merged = added(merged, chunk, AddableDict)
        output = self._invoke(merged, run_manager)
        yield self._last_chunk(merged, output) if passes else output

    async def _athrough(
        self, chunks: AsyncIterator[Any], run_manager: AsyncCallbackManagerForChainRun
    ) -> AsyncIterator[Any]:
        passes = self._passes_through(run_manager)
        merged: Any = None
        async for chunk in chunks:
            if passes:
                yield chunk
            merged = added(merged, chunk, AddableDict)
        output = await self._ainvoke(merged, run_manager)
        yield self._last_chunk(merged, output) if passes else output

    def _passes_through(self, run_manager: Any) -> bool:
        """Stream the input through (then add the attribution) unless the output is only
        the summary, or a blocking filter must judge the answer before anyone sees it."""
        gate = self.settings.groundedness
        blocks = gate is not None and gate.mode == "block"
        return not self._summary_only(run_manager) and not blocks

    def _last_chunk(self, merged: Any, output: Any) -> Any:
        """What the stream still lacks once the input has streamed through: the summary,
        the annotations on the streamed documents, the answer's metadata."""
        if not isinstance(output, Mapping) or not isinstance(merged, Mapping):
            return AddableDict()
        last = AddableDict(attribution=output.get("attribution"))
        self.step.update_streamed(merged, output)
        answer_key = self.step.keys.answer_key
        if isinstance(merged.get(answer_key), BaseMessageChunk):
            answer = merged[answer_key]
            metadata = {METADATA_KEY: last["attribution"]}
            last[answer_key] = type(answer)(content="", response_metadata=metadata)
        return last

    def _invoke(self, input: Any, run_manager: CallbackManagerForChainRun) -> Any:
        call = self._begin(input, run_manager)
        if not isinstance(call, StepCall):
            return call
        self.step.run(call)
        return self._output(input, call, run_manager)

    async def _ainvoke(self, input: Any, run_manager: AsyncCallbackManagerForChainRun) -> Any:
        call = self._begin(input, run_manager)
        if not isinstance(call, StepCall):
            return call
        await self.step.arun(call)
        return self._output(input, call, run_manager)

    def _begin(self, input: Any, run_manager: Any) -> StepCall | Any:
        """The call to attribute, or on bad input the output with the error recorded."""
        run_id = str(run_manager.run_id) if run_manager is not None else None
        manager = None if self.background else run_manager  # no run once it returned
        progress = ProgressRelay(self.progress, native.progress_emitter(manager), run_id)
        try:
            return self.step.begin(input, run_id, self._scorer, self._prompt_for, progress)
        except Exception as error:
            if self.strict:
                raise
            return self.step.failed(input, error, run_id, self._summary_only(run_manager))

    def _prompt_for(self, input: Mapping[str, Any], read: StepInput) -> Prompt | None:
        if read.prompt is not None:
            return to_prompt(read.prompt)
        if self.prompt is None:
            return None
        texts = [d.page_content if isinstance(d, Document) else str(d) for d in read.documents]
        joined = self.document_separator.join(texts)
        return to_prompt(self.prompt.invoke({**input, self.step.keys.context_key: joined}))

    def _scorer(self) -> Any:
        """The step's scorer, resolved once (a proxy when its model cannot score)."""
        return self.scorers.configured()

    def _summary_only(self, run_manager: Any) -> bool:
        """``output="attribution"``, or ``"auto"`` in ``.assign(attribution=...)`` position."""
        if self.output != "auto":
            return self.output == "attribution"
        tags = getattr(run_manager, "tags", None) or []
        return any(t.startswith(_MAP_KEY_TAG) for t in tags)

    def _output(self, input: Any, call: StepCall, run_manager: Any) -> Any:
        def cite(answer: Any) -> None:
            cited = call.result if self.citations else None
            native.annotate(answer, call.attachment.answer, cited, call.documents)

        return self.step.output(input, call, self._summary_only(run_manager), cite)
