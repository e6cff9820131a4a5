"""The prompt for a subset of the context: the kept segments in a template, or the left-out
ones cut out of the prompt the LLM received (:class:`SpanRemovalPromptBuilder`)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Literal, NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.scorers.base import ChatMessage, Prompt, prompt_texts
from camab_rag.segments import Segment, SourceDocument, segment_documents
from camab_rag.text_gate import check_text

Mask = NDArray[np.bool_]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the question using only the given context."
)
DEFAULT_USER_TEMPLATE = "Context:\n{context}\n\nQuestion: {question}"
CHAT_ROLES = ("system", "user", "assistant")


def check_history(history: object) -> list[ChatMessage]:
    if history is None:
        return []
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise InputError(
            "history must be a list of chat messages such as "
            f'{{"role": "user", "content": "..."}}, got {type(history).__name__}'
        )
    checked: list[ChatMessage] = []
    for i, message in enumerate(history):
        if not isinstance(message, Mapping):
            raise InputError(f"history[{i}] must be a chat message mapping, got {message!r}")
        role, content = message.get("role"), message.get("content")
        if role not in CHAT_ROLES:
            raise InputError(f"history[{i}] has role {role!r}; expected one of {CHAT_ROLES}")
        checked.append({"role": str(role), "content": check_text(content, f"history[{i}].content")})
    return checked


def check_user_template(user_template: object) -> None:
    """Refuse a user template that is not a string with ``{context}`` and ``{question}``."""
    if not isinstance(user_template, str):
        raise InputError(f"user_template must be a string, got {user_template!r}")
    for name in ("{context}", "{question}"):
        if name not in user_template:
            raise InputError(f"user_template must contain the field {name}")


class PromptBuilder(Protocol):
    """Maps a boolean inclusion mask over the segments to a prompt."""

    @property
    def n_segments(self) -> int: ...

    def build(self, mask: Mask) -> Prompt: ...


def check_mask(mask: Mask, n_segments: int) -> Mask:
    array = np.asarray(mask, dtype=bool)
    if array.shape != (n_segments,):
        raise InputError(f"mask must have shape ({n_segments},), got {array.shape}")
    return array


@dataclass(eq=False, repr=False)
class TemplatePromptBuilder:
    """Question + kept segments in ``user_template``, each document in ``document_template``
    (``{text}``, ``{title}``, ``{index}``), after the ``system_prompt`` and ``history``."""

    question: str
    documents: Sequence[SourceDocument]
    segments: Sequence[Segment]
    _: KW_ONLY
    user_template: str = DEFAULT_USER_TEMPLATE
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT
    document_template: str = "{text}"
    history: Sequence[ChatMessage] | None = None

    def __post_init__(self) -> None:
        check_user_template(self.user_template)
        self.history = check_history(self.history)
        self._separator_before: list[str] = []  # the previous segment's whitespace, or " "
        previous_end: dict[int, int] = {}
        for segment in self.segments:
            end = previous_end.get(segment.doc_index, segment.start)
            gap = self.documents[segment.doc_index].text[end : segment.start]
            self._separator_before.append(gap if gap and not gap.strip() else " ")
            previous_end[segment.doc_index] = segment.end

    @property
    def n_segments(self) -> int:
        return len(self.segments)

    def render_context(self, mask: Mask) -> str:
        """The context text with only the kept segments."""
        keep = check_mask(mask, self.n_segments)
        parts: dict[int, list[str]] = {}
        for i, segment in enumerate(self.segments):
            if keep[i]:
                kept = parts.setdefault(segment.doc_index, [])
                kept += [self._separator_before[i], segment.text] if kept else [segment.text]
        return "\n\n".join(
            self.document_template.format(
                text="".join(parts[d]), title=self.documents[d].title or "", index=position + 1
            )
            for position, d in enumerate(sorted(parts))
        )

    def build(self, mask: Mask) -> Prompt:
        user = self.user_template.format(context=self.render_context(mask), question=self.question)
        messages: list[ChatMessage] = []
        if self.system_prompt is not None:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.extend(dict(m) for m in self.history or ())
        messages.append({"role": "user", "content": user})
        return messages


SpanLocation = tuple[int, int, int]  # where a segment stands: (message index, start, end)


class SpanRemovalPromptBuilder:
    """Cut ablated segments out of the prompt the LLM received, at their ``locations``."""

    def __init__(self, prompt: Prompt, locations: Sequence[SpanLocation]) -> None:
        self.prompt = prompt
        self.locations = list(locations)
        self._texts = prompt_texts(prompt)
        for before, after in itertools.pairwise(sorted(self.locations)):
            if before[0] == after[0] and after[1] < before[2]:
                raise InputError("segment locations in the prompt overlap")

    @property
    def n_segments(self) -> int:
        return len(self.locations)

    @property
    def history(self) -> list[ChatMessage]:
        """The chat's earlier turns in the captured prompt: its user and assistant messages
        before the last user message, which asks the question (a follow-up such as "And
        the Harbour one?" is read with the question before it)."""
        if isinstance(self.prompt, str):
            return []
        users = [m for m, message in enumerate(self.prompt) if message.get("role") == "user"]
        earlier = self.prompt[: users[-1]] if users else []
        return [
            {"role": str(message["role"]), "content": text}
            for message in earlier
            if message.get("role") in ("user", "assistant")
            and isinstance(text := message.get("content"), str)
        ]

    def build(self, mask: Mask) -> Prompt:
        keep = check_mask(mask, self.n_segments)
        texts = []
        for m, text in enumerate(self._texts):
            cuts = sorted(
                (s, e) for (at, s, e), kept in zip(self.locations, keep) if at == m and not kept
            )
            ends, starts = [0] + [e for _, e in cuts], [s for s, _ in cuts] + [len(text)]
            texts.append("".join(text[a:b] for a, b in zip(ends, starts)))
        if isinstance(self.prompt, str):
            return texts[0]
        return [{**message, "content": texts[m]} for m, message in enumerate(self.prompt)]


def locate_segments(
    prompt: Prompt, documents: Sequence[SourceDocument], segments: Sequence[Segment]
) -> list[SpanLocation] | None:
    """Each segment's place in the prompt, or ``None`` when a document is not in it verbatim."""
    texts = prompt_texts(prompt)
    places: dict[int, tuple[int, int]] = {}
    used: list[tuple[int, int, int]] = []
    cursor = (0, 0)
    for doc_index in sorted({segment.doc_index for segment in segments}):
        needle = documents[doc_index].text
        found = _find_unused(texts, needle, cursor, used)
        if found is None:
            return None
        places[doc_index] = found
        cursor = (found[0], found[1] + len(needle))
        used.append((*found, cursor[1]))
    starts = [places[s.doc_index] for s in segments]
    return [(m, at + s.start, at + s.end) for (m, at), s in zip(starts, segments)]


def _find_unused(
    texts: list[str], needle: str, cursor: tuple[int, int], used: list[tuple[int, int, int]]
) -> tuple[int, int] | None:
    order = [(m, cursor[1] if m == cursor[0] else 0) for m in range(cursor[0], len(texts))]
    order += [(m, 0) for m in range(len(texts))]
    for message, begin in order:
        start = texts[message].find(needle, begin)
        while start != -1:
            end = start + len(needle)
            if not any(m == message and s < end and start < e for m, s, e in used):
                return message, start
            start = texts[message].find(needle, start + 1)
    return None


PromptMode = Literal["captured", "template", "custom", "none"]  # none: failed before a prompt


class PromptPlan(NamedTuple):
    """How subsets become prompts: the mode, a captured prompt's builder, and a note."""

    mode: PromptMode
    builder: SpanRemovalPromptBuilder | None
    note: str | None


def plan_prompt(
    prompts: Sequence[Prompt], documents: Sequence[SourceDocument], granularity: Any
) -> PromptPlan:
    """Span removal on the last of ``prompts`` holding every document, else the template (why)."""
    if not prompts:
        return PromptPlan("template", None, "no prompt was captured: used the default template")
    segments = segment_documents(list(documents), granularity)
    for prompt in reversed(prompts):  # the answer comes from the last call that saw them all
        locations = locate_segments(prompt, documents, segments)
        if locations is not None:
            many = f"ablated the last of {len(prompts)} captured prompts that holds every document"
            note = many if len(prompts) > 1 else None
            return PromptPlan("captured", SpanRemovalPromptBuilder(prompt, locations), note)
    texts = [text for prompt in prompts for text in prompt_texts(prompt)]
    missing = [
        i for i, doc in enumerate(documents) if doc.text and not any(doc.text in t for t in texts)
    ]
    which = ", ".join(str(i) for i in missing) if missing else "?"
    where = "the prompt" if len(prompts) == 1 else f"any of the {len(prompts)} captured prompts"
    return PromptPlan(
        "template",
        None,
        f"the text of document(s) {which} was not found verbatim in {where} the LLM "
        "received (e.g. the context was split across calls): used the default template",
    )
