"""Retrieved documents as attribution units: whole documents (``"chunk"``) or sentences."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from camab_rag.errors import InputError
from camab_rag.sentences import split_sentences
from camab_rag.text_gate import check_document

Splitter = Callable[[str], Iterable[tuple[int, int]]]
Granularity = Literal["chunk", "sentence"] | Splitter


@dataclass(frozen=True)
class SourceDocument:
    """A retrieved document, normalised from whatever the caller passed."""

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str | None:
        title = self.metadata.get("title")
        return str(title) if title is not None else None


@dataclass(frozen=True)
class Segment:
    """One attribution unit: ``text == documents[doc_index].text[start:end]``."""

    text: str
    doc_index: int
    start: int
    end: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Segment:
        return cls(str(data["text"]), int(data["doc_index"]), int(data["start"]), int(data["end"]))


def to_document(item: object, index: int = 0) -> SourceDocument:
    """One context item (a string, a mapping or a framework's document) as a document."""
    if isinstance(item, SourceDocument):
        return item
    if isinstance(item, str):
        return SourceDocument(item)
    text: object = None
    if isinstance(item, Mapping):
        text = next((item[key] for key in ("text", "page_content", "content") if key in item), None)
        metadata: object = dict(item.get("metadata") or {})
        for key in ("title", "url", "source"):  # a record's own title and link
            if key in item and isinstance(metadata, dict):
                metadata.setdefault(key, item[key])
    else:
        node = getattr(item, "node", None)  # LlamaIndex NodeWithScore wraps a node
        target = item if node is None else node
        texts = [getattr(target, attr, None) for attr in ("page_content", "text")]
        text = next((value for value in texts if isinstance(value, str)), None)
        get_content = getattr(target, "get_content", None)
        if text is None and callable(get_content):
            text = get_content()
        metadata = getattr(target, "metadata", None) or {}
    if not isinstance(text, str):
        raise InputError(
            f"context[{index}] has no text: expected a string, a mapping with 'text' or "
            f"'page_content', or a document object, got {type(item).__name__}"
        )
    if not isinstance(metadata, Mapping):
        raise InputError(f"context[{index}].metadata must be a mapping")
    return SourceDocument(text, dict(metadata))


def to_documents(context: object) -> list[SourceDocument]:
    """A context (a string or documents) as documents, each through the input gate."""
    if isinstance(context, (str, SourceDocument, Mapping)):
        items: Sequence[object] = [context]
    else:  # documents: any sequence or iterable
        try:
            items = list(context)  # type: ignore[call-overload]
        except TypeError:
            raise InputError(
                f"context must be a string or a sequence of documents, got {type(context).__name__}"
            ) from None
    documents = [to_document(item, i) for i, item in enumerate(items)]
    for i, document in enumerate(documents):
        check_document(document.text, document.metadata, i)
    return documents


def segment_documents(
    documents: Sequence[SourceDocument], granularity: Granularity = "sentence"
) -> list[Segment]:
    """Split documents into segments by ``"chunk"``, ``"sentence"`` or a callable giving
    ``(start, end)`` spans; :class:`InputError` when nothing is left to attribute."""
    named: dict[object, Splitter] = {"chunk": _chunk_span, "sentence": split_sentences}
    splitter = granularity if callable(granularity) else named.get(str(granularity))
    if splitter is None:
        raise InputError(
            f"granularity must be 'chunk', 'sentence' or a callable, got {granularity!r}"
        )
    segments: list[Segment] = []
    for doc_index, doc in enumerate(documents):
        for start, end in _spans(splitter, doc.text, doc_index):
            if not (0 <= start < end <= len(doc.text)):
                raise InputError(
                    f"the splitter returned span ({start}, {end}) outside document "
                    f"{doc_index} of length {len(doc.text)}"
                )
            segments.append(Segment(doc.text[start:end], doc_index, start, end))
    if not segments:
        raise InputError("the context is empty: there is no text to attribute the answer to")
    return segments


def _spans(splitter: Splitter, text: str, doc_index: int) -> list[tuple[int, int]]:
    returned = splitter(text)
    try:
        pairs = [tuple(span) for span in returned]
        if all(len(pair) == 2 and not any(isinstance(v, bool) for v in pair) for pair in pairs):
            return [(operator.index(start), operator.index(end)) for start, end in pairs]
    except TypeError:
        pass
    raise InputError(
        "the splitter must return (start, end) pairs of character offsets; for document "
        f"{doc_index} it returned {returned!r:.200}"
    )


def _chunk_span(text: str) -> list[tuple[int, int]]:
    start, end = len(text) - len(text.lstrip()), len(text.rstrip())
    return [(start, end)] if end > start else []
