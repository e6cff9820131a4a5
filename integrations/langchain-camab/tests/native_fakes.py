"""A framework's documents and answer messages, faked for the adapter's kernel
tests (the chain step, root runs): pure logic, so small dataclasses stand in for
LangChain's ``Document`` and messages, read through :class:`NativeTypes`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from langchain_camab.step import NativeTypes


@dataclass
class Doc:
    """A framework's document: text and a metadata dict."""

    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Message:
    """A framework's answer message (a tool's output may carry an ``artifact``)."""

    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    artifact: Any = None


def annotate(message: Any, data: dict[str, Any], result: Any, documents: Any) -> None:
    """Put the summary on an answer message, and whether a result was given to cite."""
    if isinstance(message, Message):
        message.metadata.update(attribution=data, cited=result is not None)


TYPES = NativeTypes(
    metadata_of=lambda x: x.metadata if isinstance(x, Doc) else None,
    copied=lambda d: replace(d, metadata=dict(d.metadata)),
    message_text=lambda x: x.text if isinstance(x, Message) else None,
    with_data=lambda m, data: replace(m, metadata={**m.metadata, "attribution": data}),
    with_text=lambda m, text: replace(m, text=text),
    annotate=annotate,
    make=Doc,
)
