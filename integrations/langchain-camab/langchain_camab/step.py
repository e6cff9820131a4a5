"""``CamabAttributor``'s kernel: :class:`StepKeys` reads a step's input dict (a missing
key gets an error naming the input's keys and how to point the step at them) and
:class:`ChainStep` attributes it and builds the output (the input plus ``"attribution"``,
documents copied with their entries, a blocked answer replaced by the fallback)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from camab_rag.errors import InputError, WrongTypeError
from camab_rag.integration import METADATA_KEY, Attachment, ChainAttribution, ChainCall
from langchain_camab.native import annotate, message_text, with_metadata
from langchain_camab.run_tree import input_keys

if TYPE_CHECKING:
    from camab_rag.integration import ChainParts, ProgressRelay, Prompt, Runs, Steps

logger = logging.getLogger(__name__)


def _metadata(value: object) -> dict[str, Any] | None:
    return value.metadata if isinstance(value, Document) else None


def _single(value: object) -> bool:
    """Whether ``value`` is one document (or one string) rather than a list of them."""
    return isinstance(value, (str, Document))


@dataclass(frozen=True)
class StepInput:
    """What a step's input dict holds: the answer as text, the prompt as given."""

    question: str
    documents: list[Any]
    answer: str
    prompt: object


@dataclass(frozen=True)
class StepKeys:
    """Where a step reads its input dict. Its errors name ``step`` (the step's class),
    where to put it (``after``) and how to rename a key before it (``rename``, with
    ``{key}`` for the key the step expects)."""

    question_keys: Sequence[str] = ("input", "question")  # a tuple once built (input_keys)
    context_key: str = "context"
    answer_key: str = "answer"
    prompt_key: str = "prompt"
    step: str = "the step"
    after: str = "a chain that returns them"
    rename: str = "{key}"

    def __post_init__(self) -> None:
        object.__setattr__(self, "question_keys", input_keys("question_keys", self.question_keys))
        for option in ("context_key", "answer_key", "prompt_key"):
            if not isinstance(getattr(self, option), str):
                raise WrongTypeError(
                    f"{option} must be a key (a string), got {getattr(self, option)!r}"
                )

    def _hint(self, input: Mapping[str, Any], option: str, example: object, key: str) -> str:
        keys = sorted(str(k) for k in input)
        return (
            f" (the input's keys: {keys}): pass {self.step}(..., {option}={example!r}), or "
            f"rename it before the step: {self.rename.format(key=key)}"
        )

    def read(self, input: object) -> StepInput:
        """The question, documents, answer and prompt of ``input`` (an ``InputError``
        saying what is missing and how to point the step at it)."""
        if not isinstance(input, Mapping):
            raise InputError(
                f"{self.step} needs a dict with the question, '{self.context_key}' and "
                f"'{self.answer_key}', got {type(input).__name__} (put it after a chain "
                f"that returns them, e.g. {self.after})"
            )
        questions = (input[k] for k in self.question_keys if isinstance(input.get(k), str))
        question = next(questions, None)
        if question is None:
            hint = self._hint(input, "question_keys", ("my_key",), "question")
            raise InputError(
                f"the input has no question (a string) under any of {list(self.question_keys)}"
                f"{hint}"
            )
        for key, option, what, name in (
            (self.context_key, "context_key", "documents", "context"),
            (self.answer_key, "answer_key", "answer", "answer"),
        ):
            if key not in input:
                hint = self._hint(input, option, "my_key", name)
                raise InputError(f"the input has no {what} under '{key}'{hint}")
        raw = input[self.answer_key]
        answer = message_text(raw) if isinstance(raw, BaseMessage) else raw
        if not isinstance(answer, str):
            raise InputError(
                f"the answer under '{self.answer_key}' must be a string or a message, got "
                f"{type(raw).__name__}"
            )
        context = input[self.context_key]
        documents = [context] if _single(context) else list(context)
        return StepInput(question, documents, answer, input.get(self.prompt_key))


@dataclass
class StepCall:
    """One invocation: its documents, the placeholders filled when it is done, its
    steps and progress relay, and its result once attributed."""

    run_id: str | None
    documents: list[Any]
    attachment: Attachment
    progress: ProgressRelay
    steps: Steps[ChainAttribution] = field(init=False)
    result: ChainAttribution | None = None


@dataclass
class ChainStep:
    """Attribute a step's input and build its output (see the module docstring) with the
    object's :class:`~camab_rag.integration.ChainParts`; in the background a call
    returns at once with pending placeholders, filled in place later."""

    keys: StepKeys
    parts: ChainParts

    @property
    def runs(self) -> Runs[ChainAttribution]:
        """The object's attributions (``parts.runs``)."""
        return self.parts.runs

    def start(
        self,
        input: Any,
        run_id: str | None,
        scorer: Callable[[], Any],
        prompt: Callable[[Mapping[str, Any], StepInput], Prompt | None],
        emit: Callable[[dict[str, Any]], object] | None = None,
        summary: bool = False,
    ) -> StepCall | Any:
        """Read ``input`` into a call to attribute (progress: the options' hook and
        ``emit``, see :class:`ProgressRelay`); on bad input the output with the failure
        recorded (:meth:`failed`; re-raised when strict)."""
        try:
            read = self.keys.read(input)
            given = prompt(input, read)
        except Exception as error:
            if self.parts.strict:
                raise
            return self.failed(input, error, run_id, summary)
        progress = self.parts.relay(emit, run_id)
        n = len(read.documents)
        call = StepCall(run_id, read.documents, Attachment.placeholders(run_id, n), progress)
        prompts = [given] if given is not None else []
        chain_call = ChainCall(
            read.question, read.answer, read.documents, scorer, prompts, progress
        )

        def finish(attributed: Any) -> ChainAttribution:
            call.result = ChainAttribution.of(attributed, run_id, read.documents)
            call.attachment.fill(call.result, read.documents)
            return call.result

        call.steps = self.runs.steps(run_id, chain_call, finish)
        return call

    def failed(self, input: object, error: Exception, run_id: str | None, summary: bool) -> Any:
        """Bad input, recorded as a failed result; the output with the failure in it."""
        failed = ChainAttribution.failed(error, run_id=run_id)
        result = self.runs.record(None, failed)  # type: ignore[arg-type]
        logger.warning("camab: cannot attribute this input: %s", error)
        data = Attachment.of(result, []).answer
        if summary:
            return data
        if isinstance(input, BaseMessage):
            return with_metadata(input, data)
        if not isinstance(input, Mapping):
            return input
        output = dict(input)
        raw = input.get(self.keys.answer_key)
        if isinstance(raw, BaseMessage):
            output[self.keys.answer_key] = with_metadata(raw, data)
        output["attribution"] = data
        return output

    def run(self, call: StepCall) -> None:
        """Attribute ``call`` now, or start it in the background."""
        if self.parts.background:
            self.runs.start(call.run_id, call.steps)
        else:
            self.runs.run(call.steps)

    async def arun(self, call: StepCall) -> None:
        """Async :meth:`run` (a task of the running loop in the background)."""
        if self.parts.background:
            self.runs.start(call.run_id, call.steps, call.attachment.all(), in_loop=True)
            return
        try:
            await self.runs.arun(call.steps)
        finally:
            await call.progress.drain()

    def output(self, input: Mapping[str, Any], call: StepCall, summary: bool) -> Any:
        """The step's output: with ``summary`` the answer's summary alone (the input's
        documents get their entries in place), else the input plus ``"attribution"``, the
        documents copies carrying their entries and the answer message the summary
        (with citations when the options ask for them; a blocked answer says the fallback
        instead)."""
        data, entries = call.attachment.answer, call.attachment.documents
        if summary:
            for item, entry in zip(call.documents, entries):
                if isinstance(item, Document):
                    item.metadata[METADATA_KEY] = entry
            return data
        annotated = [_with_entry(item, entry) for item, entry in zip(call.documents, entries)]
        output = dict(input)
        single = _single(input[self.keys.context_key])
        output[self.keys.context_key] = annotated[0] if single else annotated
        answer = input[self.keys.answer_key]
        if isinstance(answer, BaseMessage):
            answer = with_metadata(answer, data)
            annotate(answer, data, call.result if self.parts.citations else None, call.documents)
        verdict = data.get("groundedness")
        if isinstance(verdict, dict) and verdict.get("blocked"):
            fallback = str(verdict["answer"])
            if isinstance(answer, BaseMessage):
                answer = answer.model_copy(update={"content": fallback})
            else:
                answer = fallback
        output[self.keys.answer_key] = answer
        output["attribution"] = data
        return output

    def passes_through(self, summary: bool) -> bool:
        """Whether a stream passes its input through (then adds the attribution): not when
        the output is the ``summary`` alone, nor when a blocking groundedness filter must
        judge the answer before anyone sees it."""
        gate = self.parts.groundedness
        return not summary and (gate is None or gate.mode != "block")

    def last_chunk(
        self,
        streamed: object,
        output: object,
        mapping: Callable[..., Any] = dict,
        data_chunk: Callable[[Any, Any], Any] = lambda answer, data: None,
    ) -> Any:
        """What a stream that passed the input through still lacks once ``output`` is
        known: the summary, the entries on the streamed documents (put in place) and, for
        a streamed answer, ``data_chunk(answer, summary)`` (``None``: nothing to add)."""
        if not isinstance(output, Mapping) or not isinstance(streamed, Mapping):
            return mapping()
        last = mapping(attribution=output.get("attribution"))
        self._update_streamed(streamed, output)
        chunk = data_chunk(streamed.get(self.keys.answer_key), last["attribution"])
        if chunk is not None:
            last[self.keys.answer_key] = chunk
        return last

    def _update_streamed(self, streamed: Mapping[str, Any], output: Mapping[str, Any]) -> None:
        originals, copies = streamed.get(self.keys.context_key), output.get(self.keys.context_key)
        if _single(originals):
            originals, copies = [originals], [copies]
        if not isinstance(originals, list) or not isinstance(copies, list):
            return
        for original, copy in zip(originals, copies):
            target, values = _metadata(original), _metadata(copy)
            if target is not None and values is not None:
                target.update(values)


def _with_entry(item: Any, entry: dict[str, Any]) -> Any:
    """A copy of a document carrying ``entry`` (anything else as it is)."""
    if not isinstance(item, Document):
        return item
    return item.model_copy(update={"metadata": {**item.metadata, METADATA_KEY: entry}})


def added(merged: Any, chunk: Any, mapping: Callable[[Mapping[Any, Any]], Any] = dict) -> Any:
    """The stream so far plus ``chunk``: dicts key by key (made by ``mapping``), addable
    values added (text, message chunks), anything else replaced by the newer value."""
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
