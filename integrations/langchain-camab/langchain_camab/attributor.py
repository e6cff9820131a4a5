"""``CamabAttributor``: an LCEL step (or LangGraph node) that attributes an answer
(``retrieval_chain | CamabAttributor(scorer)``); see the class docstring."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import Document
from langchain_core.messages import BaseMessageChunk
from langchain_core.prompts import BasePromptTemplate
from langchain_core.runnables import Runnable, RunnableConfig, RunnableGenerator
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.utils import AddableDict

from camab_rag.integration import METADATA_KEY, ChainParts
from langchain_camab import native
from langchain_camab.native import to_prompt
from langchain_camab.roots import Waited
from langchain_camab.step import ChainStep, StepCall, StepInput, StepKeys, added

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from camab_rag.integration import ChainOptions, Prompt

OutputMode = Literal["auto", "merge", "attribution"]
_MAP_KEY_TAG = "map:key:"


class CamabAttributor(Waited, RunnableGenerator[Any, Any]):
    """Attribute an answer to its documents as a chain step (or LangGraph node).

    Reads the question, documents and answer from its input dict (``question_keys``,
    ``context_key``, ``answer_key``; the prompt under ``prompt_key`` or rebuilt from
    ``prompt=``) and returns the input plus ``"attribution"`` (messages and ``Document``
    objects get it in their metadata); in ``.assign(attribution=...)`` position just the
    summary. ``stream()`` passes chunks through, then adds the attribution as a last chunk.
    Never breaks the chain unless ``strict=True``.

    Args, besides the options of every integration
    (:class:`camab_rag.integration.ChainOptions`: the knobs of :func:`camab_rag.attribute`,
    ``budget``, ``method``, ``granularity``, ``deadline_s``, ``groundedness``; ``settings``
    for the rest; ``llm``, ``proxy``, ``scorer_options``, ``strict``, ``background``,
    ``progress``, ``citations``, ``max_results``):
        scorer: a camab-rag scorer; ``None``: built from ``llm`` (or the ``proxy`` scores).
        prompt, document_separator: the chain's prompt template and how it joins documents.
        question_keys, context_key, answer_key, prompt_key: where to read the input.
        output: ``"merge"``, ``"attribution"`` (the summary only) or ``"auto"``.

    With a ``mode="block"`` groundedness filter an ungrounded or unjudgeable answer is
    replaced by its fallback (in ``.assign`` position read ``["groundedness"]["answer"]``).
    ``background=True`` returns ``{"status": "pending"}`` dicts, filled in place later:
    ``wait(run_id)`` / ``await await_result(run_id)`` give the result. Progress is also
    the custom event ``"camab_progress"`` of the run; citations are LangChain
    ``Citation`` annotations on an ``AIMessage`` answer.
    """

    __hash__ = Runnable.__hash__  # type: ignore[assignment]  # RunnableGenerator drops it

    def __init__(
        self,
        scorer: object = None,
        *,
        prompt: BasePromptTemplate[Any] | None = None,
        document_separator: str = "\n\n",
        question_keys: Sequence[str] = ("input", "question"),
        context_key: str = "context",
        answer_key: str = "answer",
        prompt_key: str = "prompt",
        output: OutputMode = "auto",
        name: str | None = "CamabAttributor",
        **options: Unpack[ChainOptions],
    ) -> None:
        if output not in ("auto", "merge", "attribution"):
            raise ValueError(f"output must be 'auto', 'merge' or 'attribution', got {output!r}")
        where = "CamabAttributor(background=True) returns the answer before it is judged and"
        parts = ChainParts.of(
            "CamabAttributor",
            scorer,
            options,
            blocking_refused=native.cannot_block(where) if options.get("background") else None,
            needs_scorer="a step cannot see the chain's model, so with none of them every call "
            "would fail",
            uuid_keys=True,
        )
        self.settings, self.scorers, self.runs = parts.settings, parts.scorers, parts.runs
        self.prompt, self.document_separator = prompt, document_separator
        self.output = output
        # stream / astream / transform / atransform are RunnableGenerator's; it gives a
        # transform that takes ``run_manager`` the run's manager (typed without it)
        super().__init__(cast(Any, self._through), cast(Any, self._athrough), name=name)
        keys = StepKeys(
            question_keys,
            context_key,
            answer_key,
            prompt_key,
            step="CamabAttributor",
            after="create_retrieval_chain or RunnablePassthrough.assign",
            rename="RunnablePassthrough.assign({key}=lambda x: x['my_key'])",
        )
        self.step = ChainStep(keys, parts)

    # ------------------------------------------------------------------ Runnable
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._invoke, input, ensure_config(config), **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self._acall_with_config(self._ainvoke, input, ensure_config(config), **kwargs)

    def _through(
        self, chunks: Iterator[Any], run_manager: CallbackManagerForChainRun
    ) -> Iterator[Any]:
        passes = self.step.passes_through(self._summary_only(run_manager))
        merged: Any = None
        for chunk in chunks:
            if passes:
                yield chunk
            merged = added(merged, chunk, AddableDict)
        output = self._invoke(merged, run_manager)
        yield self.step.last_chunk(merged, output, AddableDict, _data_chunk) if passes else output

    async def _athrough(
        self, chunks: AsyncIterator[Any], run_manager: AsyncCallbackManagerForChainRun
    ) -> AsyncIterator[Any]:
        passes = self.step.passes_through(self._summary_only(run_manager))
        merged: Any = None
        async for chunk in chunks:
            if passes:
                yield chunk
            merged = added(merged, chunk, AddableDict)
        output = await self._ainvoke(merged, run_manager)
        yield self.step.last_chunk(merged, output, AddableDict, _data_chunk) if passes else output

    def _invoke(self, input: Any, run_manager: CallbackManagerForChainRun) -> Any:
        call = self._begin(input, run_manager)
        if not isinstance(call, StepCall):
            return call
        self.step.run(call)
        return self.step.output(input, call, self._summary_only(run_manager))

    async def _ainvoke(self, input: Any, run_manager: AsyncCallbackManagerForChainRun) -> Any:
        call = self._begin(input, run_manager)
        if not isinstance(call, StepCall):
            return call
        await self.step.arun(call)
        return self.step.output(input, call, self._summary_only(run_manager))

    def _begin(self, input: Any, run_manager: Any) -> StepCall | Any:
        """The call to attribute, or on bad input the output with the error recorded."""
        run_id = str(run_manager.run_id) if run_manager is not None else None
        background = self.step.parts.background  # no run to send events to once it returned
        emit = native.progress_emitter(None if background else run_manager)
        summary = self._summary_only(run_manager)
        scorer = self.scorers.get  # resolved once (a proxy when its model cannot score)
        return self.step.start(input, run_id, scorer, self._prompt_for, emit, summary)

    def _prompt_for(self, input: Mapping[str, Any], read: StepInput) -> Prompt | None:
        if read.prompt is not None:
            return to_prompt(read.prompt)
        if self.prompt is None:
            return None
        texts = [d.page_content if isinstance(d, Document) else str(d) for d in read.documents]
        joined = self.document_separator.join(texts)
        return to_prompt(self.prompt.invoke({**input, self.step.keys.context_key: joined}))

    def _summary_only(self, run_manager: Any) -> bool:
        """``output="attribution"``, or ``"auto"`` in ``.assign(attribution=...)`` position."""
        if self.output != "auto":
            return self.output == "attribution"
        tags = getattr(run_manager, "tags", None) or []
        return any(t.startswith(_MAP_KEY_TAG) for t in tags)


def _data_chunk(answer: Any, data: Any) -> Any:
    """An empty chunk of a streamed answer message, carrying the summary in its metadata."""
    if isinstance(answer, BaseMessageChunk):
        chunk_type: Any = type(answer)  # AIMessageChunk, ... (its type field has a default)
        return chunk_type(content="", response_metadata={METADATA_KEY: data})
    return None
