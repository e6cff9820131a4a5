"""``CamabAttributor``: an LCEL step (or LangGraph node) that attributes an answer
(``retrieval_chain | CamabAttributor(scorer)``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, BaseMessageChunk
from langchain_core.prompts import BasePromptTemplate
from langchain_core.runnables import Runnable, RunnableConfig, RunnableGenerator
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.utils import AddableDict

from camab_rag.errors import InputError, WrongTypeError
from camab_rag.integration import METADATA_KEY, Attachment, ChainCall, ProgressRelay, Runs
from camab_rag.result import AttributionResult
from langchain_camab import native
from langchain_camab.callbacks import Kept, input_keys
from langchain_camab.native import annotate, to_prompt, with_metadata

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from camab_rag.integration import ChainOptions, Prompt, Steps

_MAP_KEY_TAG = "map:key:"
RENAME = "RunnablePassthrough.assign({key}=lambda x: x['my_key'])"
logger = logging.getLogger(__name__)


@dataclass
class StepCall:
    run_id: str | None
    documents: list[Any]
    progress: ProgressRelay
    steps: Steps[AttributionResult] = field(init=False)
    result: AttributionResult | None = None

    def __post_init__(self) -> None:
        self.attachment = Attachment.placeholders(self.run_id, len(self.documents))

    def finish(self, result: AttributionResult) -> AttributionResult:
        self.result = result
        self.attachment.fill(result, self.documents)
        return result


_QUESTION_NAMES = ("question", "query", "input")
"""The names a prompt template asks the user's question by."""


class CamabAttributor(Kept, RunnableGenerator[Any, Any]):
    """Attribute an answer to its documents as a chain step (or LangGraph node): the
    input dict (question, documents, answer; the prompt under ``"prompt"`` or rebuilt
    from ``prompt=``) plus ``"attribution"``, or the summary alone (``.assign(attribution=
    ...)``); ``stream()`` adds it as a last chunk. A blocking filter replaces an unsupported
    answer. Never breaks the chain unless ``strict=True``. Options: ``ChainOptions``."""

    __hash__ = Runnable.__hash__  # type: ignore[assignment]  # RunnableGenerator drops it

    def __init__(
        self,
        scorer: object = None,
        *,
        prompt: BasePromptTemplate[Any] | None = None,
        question_keys: Sequence[str] = ("input", "question"),
        context_key: str = "context",
        answer_key: str = "answer",
        name: str | None = "CamabAttributor",
        **options: Unpack[ChainOptions],
    ) -> None:
        where = "CamabAttributor(background=True) returns the answer before it is judged and"
        self.runs = runs = Runs.of(
            "CamabAttributor",
            scorer,
            options,
            blocking_refused=native.cannot_block(where) if options.get("background") else None,
            needs_scorer="a step cannot see the chain's model, so with none of them every call "
            "would fail",
            uuid_keys=True,
        )
        self.settings, self.scorers = runs.settings, runs.scorers
        self.prompt = prompt
        # RunnableGenerator gives a transform taking ``run_manager`` the run's manager
        super().__init__(cast(Any, self._through), cast(Any, self._athrough), name=name)
        self.question_keys = input_keys("question_keys", question_keys)
        self.context_key, self.answer_key = context_key, answer_key
        for option, key in (("context_key", context_key), ("answer_key", answer_key)):
            if not isinstance(key, str):
                raise WrongTypeError(f"{option} must be a key (a string), got {key!r}")

    def _read(self, input: object) -> tuple[ChainCall, object]:
        """The call ``input`` holds and its prompt (``None``: none), else an ``InputError``
        saying what is missing and how to point the step at it."""
        if not isinstance(input, Mapping):
            raise InputError(
                f"CamabAttributor needs a dict with the question, '{self.context_key}' and "
                f"'{self.answer_key}', got {type(input).__name__} (put it after a chain that "
                "returns them, e.g. create_retrieval_chain or RunnablePassthrough.assign)"
            )

        def hint(option: str, example: object, key: str) -> str:
            return (
                f" (the input's keys: {sorted(str(k) for k in input)}): pass CamabAttributor"
                f"(..., {option}={example!r}), or rename it before the step: "
                + RENAME.format(key=key)
            )

        question = next(
            (input[k] for k in self.question_keys if isinstance(input.get(k), str)), None
        )
        if question is None:
            raise InputError(
                f"the input has no question (a string) under any of {list(self.question_keys)}"
                + hint("question_keys", ("my_key",), "question")
            )
        for key, option, what, name in (
            (self.context_key, "context_key", "documents", "context"),
            (self.answer_key, "answer_key", "answer", "answer"),
        ):
            if key not in input:
                raise InputError(
                    f"the input has no {what} under '{key}'" + hint(option, "my_key", name)
                )
        raw = input[self.answer_key]
        answer = raw.text if isinstance(raw, BaseMessage) else raw
        if not isinstance(answer, str):
            raise InputError(
                f"the answer under '{self.answer_key}' must be a string or a message, got "
                f"{type(raw).__name__}"
            )
        context = input[self.context_key]
        if not (_single(context) or isinstance(context, Iterable)):
            raise WrongTypeError(
                f"the documents under '{self.context_key}' must be Documents, strings or a "
                f"list of them, got {type(context).__name__}"
            )
        documents = [context] if _single(context) else list(context)
        return ChainCall(question, answer, documents), input.get("prompt")

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

    def _invoke(self, input: Any, run_manager: CallbackManagerForChainRun) -> Any:
        call = self._begin(input, run_manager)
        if not isinstance(call, StepCall):
            return call
        self.runs.go(call.run_id, call.steps)
        return self._output(input, call.attachment.answer, self._summary_only(run_manager), call)

    async def _ainvoke(self, input: Any, run_manager: AsyncCallbackManagerForChainRun) -> Any:
        call = self._begin(input, run_manager)
        if not isinstance(call, StepCall):
            return call
        try:
            await self.runs.ago(call.run_id, call.steps, call.attachment.all())
        finally:
            await call.progress.drain()
        return self._output(input, call.attachment.answer, self._summary_only(run_manager), call)

    def _begin(self, input: Any, run_manager: Any) -> StepCall | Any:
        """The call to attribute, or on bad input the output with the failure recorded."""
        run_id = str(run_manager.run_id) if run_manager is not None else None
        try:
            chain_call, raw_prompt = self._read(input)
            given = self._prompt_for(input, chain_call, raw_prompt)
        except Exception as error:
            if self.runs.strict:
                raise
            return self._failed(input, error, run_id, self._summary_only(run_manager))

        def emit(data: dict[str, Any]) -> object:  # the run's custom progress event
            child = run_manager.get_child()
            return child.on_custom_event(native.PROGRESS_EVENT, data, run_id=run_manager.run_id)

        in_run = run_manager is not None and not self.runs.background
        progress = ProgressRelay(self.runs.progress, emit if in_run else None, run_id)
        call = StepCall(run_id, chain_call.documents, progress)
        chain_call.scorer, chain_call.progress = self.scorers.get, progress
        chain_call.prompts = [given] if given is not None else []
        call.steps = self.runs.steps(run_id, chain_call, call.finish)
        return call

    def _prompt_for(
        self, input: Mapping[str, Any], call: ChainCall, prompt: object
    ) -> Prompt | None:
        """The prompt the chain sent: the input's, else ``prompt=`` filled from the input, its
        question under whichever name the template asks it by ("{question}" beside
        create_retrieval_chain's "input")."""
        if prompt is not None:
            return to_prompt(prompt)
        if self.prompt is None:
            return None
        texts = [d.page_content if isinstance(d, Document) else str(d) for d in call.documents]
        asked = {*self.question_keys, *_QUESTION_NAMES} - set(input)
        named = {name: call.question for name in self.prompt.input_variables if name in asked}
        values = {**named, **input, self.context_key: "\n\n".join(texts)}
        try:
            return to_prompt(self.prompt.invoke(values))
        except KeyError as error:
            raise InputError(
                f"CamabAttributor(prompt=...) is filled from the input's keys {sorted(values)}"
                f" and needs others ({error}): give the step its variables, or the prompt "
                "value under 'prompt'"
            ) from error

    def _summary_only(self, run_manager: Any) -> bool:
        return any(t.startswith(_MAP_KEY_TAG) for t in getattr(run_manager, "tags", None) or [])

    def _failed(self, input: object, error: Exception, run_id: str | None, summary: bool) -> Any:
        """The input with the failure recorded; a blocking filter still judges it, so an
        answer it cannot check is replaced (fails closed) unless ``on_error="pass"``."""
        settings = self.runs.settings
        answer = input.get(self.answer_key) if isinstance(input, Mapping) else None
        answer = answer.text if isinstance(answer, BaseMessage) else answer
        failed = AttributionResult.failed(
            error, run_id=run_id, method=settings.method_instance.name, budget=settings.budget
        )
        if isinstance(answer, str):  # the answer it could not check, as the chain gave it
            failed = replace(failed, response=answer)
        if self.runs.gate is not None:
            failed = replace(failed, groundedness=self.runs.gate.judge(failed))
        self.runs.record(None, failed)
        logger.warning("camab: cannot attribute this input: %s", error)
        context = input.get(self.context_key) if isinstance(input, Mapping) else None
        if not (_single(context) or isinstance(context, (list, tuple))):
            return self._output(input, Attachment.of(failed, []).answer, summary)
        # its documents say so too: a retriever's reused Documents kept the last run's "ok"
        documents = list(context) if isinstance(context, (list, tuple)) else [context]
        call = StepCall(run_id, documents, ProgressRelay(None, None, run_id))
        call.finish(failed)
        return self._output(input, call.attachment.answer, summary, call)

    def _output(
        self, input: object, data: dict[str, Any], summary: bool, call: StepCall | None = None
    ) -> Any:
        """The summary alone (the input's documents get their entries in place), else the
        input plus ``"attribution"``, with annotated copies of its documents and answer."""
        documents, entries = (call.documents, call.attachment.documents) if call else ([], [])
        if summary:
            for item, entry in zip(documents, entries):
                if isinstance(item, Document):
                    item.metadata[METADATA_KEY] = entry
            return data
        if not isinstance(input, Mapping):
            return _shown(
                with_metadata(input, data) if isinstance(input, BaseMessage) else input, data
            )
        output = {**input, "attribution": data}
        if call is not None:
            annotated = [_with_entry(item, entry) for item, entry in zip(documents, entries)]
            single = _single(input[self.context_key])
            output[self.context_key] = annotated[0] if single else annotated
        if self.answer_key in input:
            answer = input[self.answer_key]
            if isinstance(answer, BaseMessage):
                answer = with_metadata(answer, data)
                cited = call.result if call is not None and self.runs.citations else None
                annotate(answer, data, cited, documents)
            output[self.answer_key] = _shown(answer, data)
        return output

    def _passes_through(self, run_manager: Any) -> bool:
        """Not for the summary alone, nor when a blocking filter must judge the answer
        before anyone sees it."""
        gate = self.runs.gate
        return not self._summary_only(run_manager) and (gate is None or gate.mode != "block")

    def _last_chunk(self, streamed: object, output: object) -> Any:
        """What a stream that passed its input through still lacks: the summary, the
        entries on the streamed documents and an empty answer chunk carrying it."""
        if not isinstance(output, Mapping) or not isinstance(streamed, Mapping):
            return AddableDict()
        last = AddableDict(attribution=output.get("attribution"))
        originals = streamed.get(self.context_key)
        copies = output.get(self.context_key)
        if _single(originals):
            originals, copies = [originals], [copies]
        if isinstance(originals, list) and isinstance(copies, list):
            for original, copy in zip(originals, copies):
                if isinstance(original, Document) and isinstance(copy, Document):
                    original.metadata.update(copy.metadata)
        answer = streamed.get(self.answer_key)
        if isinstance(answer, BaseMessageChunk):
            chunk_type: Any = type(answer)  # AIMessageChunk, ... (its type field has a default)
            metadata = {METADATA_KEY: last["attribution"]}
            last[self.answer_key] = chunk_type(content="", response_metadata=metadata)
        return last


def _single(value: object) -> bool:
    return isinstance(value, (str, Document))


def _with_entry(item: Any, entry: dict[str, Any]) -> Any:
    if not isinstance(item, Document):
        return item
    return item.model_copy(update={"metadata": {**item.metadata, METADATA_KEY: entry}})


def added(merged: Any, chunk: Any, mapping: Callable[[Mapping[Any, Any]], Any] = dict) -> Any:
    """The stream so far plus ``chunk``: dicts key by key, addable values added, anything
    else replaced by the newer value."""
    if merged is None:
        return chunk
    if isinstance(merged, Mapping) and isinstance(chunk, Mapping):
        out = mapping(merged)
        for key, value in chunk.items():
            out[key] = added(out.get(key), value, mapping)
        return out
    try:
        return merged + chunk
    except TypeError:
        return chunk


def _shown(answer: Any, data: Mapping[str, Any]) -> Any:
    """``answer``, or a blocking filter's fallback in its place (same message type)."""
    verdict = data.get("groundedness") or {}
    if not verdict.get("blocked"):
        return answer
    text = str(verdict["answer"])
    return answer.model_copy(update={"content": text}) if isinstance(answer, BaseMessage) else text
