"""``CamabAttributor``: an LCEL step (or LangGraph node) that attributes an answer
(``retrieval_chain | CamabAttributor(scorer)``); see the class docstring."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, BaseMessageChunk
from langchain_core.prompts import BasePromptTemplate
from langchain_core.runnables import Runnable, RunnableConfig, RunnableGenerator
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.utils import AddableDict

from camab_rag.integration import (
    CHAIN_SETTINGS,
    METADATA_KEY,
    Attachment,
    AttributionSettings,
    CapturedAttribution,
    ChainAttribution,
    ChainCall,
    ChainRuns,
    InputError,
    KeptResults,
    Prompt,
    ScorerCache,
    Steps,
)
from langchain_camab import native
from langchain_camab.native import ProgressHook, RunProgress, message_text, to_prompt
from langchain_camab.scorer import scorer_for_call

logger = logging.getLogger(__name__)

OutputMode = Literal["auto", "merge", "attribution"]
_MAP_KEY_TAG = "map:key:"
HOW_TO_WAIT = (
    "Await attributor.await_result(run_id) before the event loop ends (e.g. at the end "
    "of the coroutine given to asyncio.run), or set background=False"
)


@dataclass
class _Request:
    """What one invocation attributes, and where its result goes."""

    question: str
    texts: list[Any]
    answer: str
    prompt: Prompt | None
    run_id: str | None
    progress: RunProgress = field(init=False)
    attachment: Attachment = field(init=False)
    steps: Steps[ChainAttribution] = field(init=False)
    result: ChainAttribution | None = None


class CamabAttributor(KeptResults, RunnableGenerator[Any, Any]):
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
        self.scorer, self.llm, self.proxy = scorer, llm, proxy
        self.scorer_options, self._scorers = dict(scorer_options or {}), ScorerCache()
        self.prompt, self.document_separator = prompt, document_separator
        self.question_keys, self.prompt_key = tuple(question_keys), prompt_key
        self.context_key, self.answer_key = context_key, answer_key
        self.output, self.strict, self.background = output, strict, background
        self.progress, self.citations = progress, citations
        # stream / astream / transform / atransform are RunnableGenerator's; it gives a
        # transform that takes ``run_manager`` the run's manager (typed without it)
        super().__init__(cast(Any, self._through), cast(Any, self._athrough), name=name)
        self.runs: ChainRuns[ChainAttribution] = ChainRuns(
            self.settings, strict=strict, keep=max_results, uuid_keys=True
        )

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
            merged = _added(merged, chunk)
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
            merged = _added(merged, chunk)
        output = await self._ainvoke(merged, run_manager)
        yield self._last_chunk(merged, output) if passes else output

    def _passes_through(self, run_manager: Any) -> bool:
        """Stream the input through (then add the attribution) unless the output is only
        the summary, or a blocking filter must judge the answer before anyone sees it."""
        gate = self.settings.groundedness
        blocks = gate is not None and gate.mode == "block"
        return self._mode(run_manager) == "merge" and not blocks

    def _last_chunk(self, merged: Any, output: Any) -> Any:
        """What the stream still lacks once the input has streamed through: the summary,
        the annotations on the streamed documents, the answer's metadata."""
        if not isinstance(output, Mapping) or not isinstance(merged, Mapping):
            return AddableDict()
        data = output.get("attribution")
        last = AddableDict(attribution=data)
        streamed = merged.get(self.context_key)
        annotated = output.get(self.context_key)
        if isinstance(streamed, Document):
            streamed, annotated = [streamed], [annotated]
        if isinstance(streamed, list) and isinstance(annotated, list):
            for original, copy in zip(streamed, annotated):
                if isinstance(original, Document) and isinstance(copy, Document):
                    original.metadata.update(copy.metadata)
        if isinstance(merged.get(self.answer_key), BaseMessageChunk):
            answer = merged[self.answer_key]
            last[self.answer_key] = type(answer)(content="", response_metadata={METADATA_KEY: data})
        return last

    def _invoke(self, input: Any, run_manager: CallbackManagerForChainRun) -> Any:
        request, early = self._request(input, run_manager)
        if request is None:
            return early
        if self.background:
            self.runs.start(request.run_id, request.steps)
        else:
            self.runs.run(request.steps)
        return self._output(input, request, run_manager)

    async def _ainvoke(self, input: Any, run_manager: AsyncCallbackManagerForChainRun) -> Any:
        request, early = self._request(input, run_manager)
        if request is None:
            return early
        if self.background:
            placeholders = request.attachment.all()
            self.runs.astart(request.run_id, request.steps, placeholders, HOW_TO_WAIT)
            return self._output(input, request, run_manager)
        try:
            await self.runs.arun(request.steps)
        finally:
            await request.progress.drain()
        return self._output(input, request, run_manager)

    # ------------------------------------------------------------------ input
    def _request(self, input: Any, run_manager: Any) -> tuple[_Request | None, Any]:
        """Read the input into a request (its placeholders, progress reporter and steps);
        on bad input ``(None, output)`` with the error recorded."""
        run_id = str(run_manager.run_id) if run_manager is not None else None
        try:
            request = self._read(input, run_id)
        except Exception as error:
            if self.strict:
                raise
            failed = ChainAttribution.failed(error, run_id=run_id)
            result = self.runs.record(None, failed)  # type: ignore[arg-type]
            logger.warning("camab: cannot attribute this input: %s", error)
            data = Attachment.of(result, []).answer
            return None, self._error_output(input, data, run_manager)
        manager = None if self.background else run_manager  # no run once it returned
        request.progress = RunProgress(self.progress, manager, run_id)
        request.attachment = Attachment.placeholders(run_id, len(request.texts))
        call = ChainCall(
            request.question,
            request.answer,
            request.texts,
            scorer=self._scorer,
            prompts=[request.prompt] if request.prompt is not None else [],
            progress=request.progress,
        )

        def finish(attributed: CapturedAttribution) -> ChainAttribution:
            request.result = ChainAttribution.of(attributed, run_id, request.texts)
            request.attachment.fill(request.result, request.texts)
            return request.result

        request.steps = self.runs.steps(run_id, call, finish)
        return request, None

    def _read(self, input: Any, run_id: str | None) -> _Request:
        if not isinstance(input, Mapping):
            raise ValueError(
                f"CamabAttributor needs a dict with the question, '{self.context_key}' and "
                f"'{self.answer_key}', got {type(input).__name__} (put it after a chain that "
                "returns them, e.g. create_retrieval_chain or RunnablePassthrough.assign)"
            )
        question = next(
            (input[k] for k in self.question_keys if isinstance(input.get(k), str)), None
        )
        if question is None:
            raise ValueError(
                f"the input has no question (a string) under any of {list(self.question_keys)}"
                f"{_mapping_hint(input, 'question_keys', ('my_key',), 'question')}"
            )
        if self.context_key not in input:
            raise ValueError(
                f"the input has no documents under '{self.context_key}'"
                f"{_mapping_hint(input, 'context_key', 'my_key', 'context')}"
            )
        if self.answer_key not in input:
            raise ValueError(
                f"the input has no answer under '{self.answer_key}'"
                f"{_mapping_hint(input, 'answer_key', 'my_key', 'answer')}"
            )
        context = input[self.context_key]
        raw = input[self.answer_key]
        answer = message_text(raw) if isinstance(raw, BaseMessage) else raw
        if not isinstance(answer, str):
            raise ValueError(
                f"the answer under '{self.answer_key}' must be a string or a message, got "
                f"{type(raw).__name__}"
            )
        items = [context] if isinstance(context, (str, Document)) else list(context)
        return _Request(question, items, answer, self._prompt_for(input, items), run_id)

    def _prompt_for(self, input: Mapping[str, Any], items: list[Any]) -> Prompt | None:
        if self.prompt_key in input and input[self.prompt_key] is not None:
            return to_prompt(input[self.prompt_key])
        if self.prompt is None:
            return None
        texts = [d.page_content if isinstance(d, Document) else str(d) for d in items]
        values = {**input, self.context_key: self.document_separator.join(texts)}
        return to_prompt(self.prompt.invoke(values))

    def _scorer(self) -> Any:
        """The step's scorer, resolved once (a proxy when its model cannot score)."""
        return scorer_for_call(self, self._scorers)

    # ------------------------------------------------------------------ output
    def _mode(self, run_manager: Any) -> OutputMode:
        if self.output != "auto":
            return self.output
        tags = getattr(run_manager, "tags", None) or []
        return "attribution" if any(t.startswith(_MAP_KEY_TAG) for t in tags) else "merge"

    def _output(self, input: Any, request: _Request, run_manager: Any) -> Any:
        mode, data = self._mode(run_manager), request.attachment.answer
        entries = request.attachment.documents
        context = input[self.context_key]
        items = [context] if isinstance(context, (str, Document)) else list(context)
        if mode == "attribution":
            for item, entry in zip(items, entries):
                if isinstance(item, Document):
                    item.metadata[METADATA_KEY] = entry
            return data
        annotated = [
            item.model_copy(update={"metadata": {**item.metadata, METADATA_KEY: entry}})
            if isinstance(item, Document)
            else item
            for item, entry in zip(items, entries)
        ]
        output = dict(input)
        output[self.context_key] = (
            annotated if not isinstance(context, (str, Document)) else (annotated[0])
        )
        raw = input[self.answer_key]
        if isinstance(raw, BaseMessage):
            output[self.answer_key] = answer = native.with_metadata(raw, data)
            cited = request.result if self.citations else None
            native.annotate(answer, data, cited, request.texts)
        verdict = data.get("groundedness")
        if isinstance(verdict, dict) and verdict.get("blocked"):
            output[self.answer_key] = _replaced(output[self.answer_key], str(verdict["answer"]))
        output["attribution"] = data
        return output

    def _error_output(self, input: Any, data: dict[str, Any], run_manager: Any) -> Any:
        """The input unchanged, with the failure recorded where it fits."""
        if self._mode(run_manager) == "attribution":
            return data
        if isinstance(input, BaseMessage):
            return native.with_metadata(input, data)
        if isinstance(input, Mapping):
            output = dict(input)
            raw = input.get(self.answer_key)
            if isinstance(raw, BaseMessage):
                output[self.answer_key] = native.with_metadata(raw, data)
            output["attribution"] = data
            return output
        return input

    # ------------------------------------------------------------------ background
    @property
    def pending(self) -> Mapping[Any, Any]:
        """Background attributions by run id (a ``Future`` or an ``asyncio.Task``; a copy)."""
        return self.runs.pending

    def wait(self, run_id: str | None = None, timeout: float | None = None) -> ChainAttribution:
        """Block until a background attribution (started by ``invoke``) is done."""
        return self.runs.wait(run_id, timeout)

    async def await_result(self, run_id: str | None = None) -> ChainAttribution:
        """Await a background attribution (started by ``invoke`` or ``ainvoke``)."""
        return await self.runs.await_result(run_id)


def _mapping_hint(input: Mapping[str, Any], option: str, example: object, key: str) -> str:
    """How to point the step at the input's own key: its keys, the option, a rename."""
    keys = sorted(str(k) for k in input)
    return (
        f" (the input's keys: {keys}): pass CamabAttributor(..., {option}={example!r}), or "
        f"rename it before the step: RunnablePassthrough.assign({key}=lambda x: x['my_key'])"
    )


def _added(merged: Any, chunk: Any) -> Any:
    """The stream so far plus ``chunk``: dicts key by key, addable values added (text,
    message chunks), anything else replaced by the newer value."""
    if merged is None:
        return chunk
    if isinstance(merged, Mapping) and isinstance(chunk, Mapping):
        out = AddableDict(merged)
        for key, value in chunk.items():
            out[key] = _added(out.get(key), value)
        return out
    try:
        return merged + chunk
    except TypeError:
        return chunk


def _replaced(answer: Any, text: str) -> Any:
    """The blocked answer's replacement, in the answer's own type."""
    if isinstance(answer, BaseMessage):
        return answer.model_copy(update={"content": text})
    return text
