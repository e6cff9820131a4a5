"""LangChain's own types on both sides of an attribution: messages and prompt values in,
metadata, ``Citation`` annotations (unescaped document text) and progress events out."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.content import Citation, create_citation
from langchain_core.prompt_values import PromptValue

from camab_rag.errors import InputError
from camab_rag.integration import METADATA_KEY, native_citations

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from camab_rag import AttributionResult, CitationRule
    from camab_rag.integration import Prompt

RUN_METADATA_KEY = "camab_attribution"
PROGRESS_EVENT = "camab_progress"
"""The custom event sent every few model calls: ``{"run_id", "calls", "total"}``."""


def to_chat_messages(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """``[{"role", "content"}]`` for chat templates: ``human``/``ai`` are user/assistant."""
    roles = {"human": "user", "ai": "assistant"}
    return [
        {"role": getattr(m, "role", roles.get(m.type, m.type)), "content": m.text} for m in messages
    ]


def chat_of(value: object) -> list[dict[str, str]] | None:
    if isinstance(value, PromptValue):
        return to_chat_messages(value.to_messages())
    if isinstance(value, Sequence) and all(isinstance(m, BaseMessage) for m in value):
        return to_chat_messages(value)
    return None


def to_prompt(value: object) -> Prompt:
    """A string, a ``PromptValue``, messages or ``{"role", "content"}`` mappings as a
    camab-rag prompt (anything else an ``InputError``)."""
    if isinstance(value, str):
        return value
    chat = chat_of(value)
    if chat is not None:
        return chat
    if isinstance(value, Sequence) and all(
        isinstance(m, dict) and "role" in m and "content" in m for m in value
    ):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in value]
    raise InputError(
        f"cannot use a {type(value).__name__} as a prompt: expected a string, a PromptValue "
        "or a list of messages"
    )


def last_user_text(chat: Sequence[dict[str, str]] | None) -> str:
    return next((m["content"] for m in reversed(chat or []) if m.get("role") == "user"), "")


def cannot_block(where: str) -> str:
    return (
        f"{where} cannot replace the chain's answer, so it would not block anything: use "
        "mode='flag' here, or put CamabAttributor(groundedness=GroundednessFilter("
        "mode='block')) after the chain"
    )


def with_metadata(message: BaseMessage, data: dict[str, Any]) -> BaseMessage:
    metadata = {**(getattr(message, "response_metadata", None) or {}), METADATA_KEY: data}
    return message.model_copy(update={"response_metadata": metadata})


def annotate(
    message: object,
    data: dict[str, Any],
    result: AttributionResult | None = None,
    documents: Sequence[Any] = (),
) -> None:
    """Put ``data`` on an answer message in place (with an ok ``result``, citations too)."""
    if isinstance(message, BaseMessage) and isinstance(message.response_metadata, dict):
        message.response_metadata[METADATA_KEY] = data
    if result is not None and result.status == "ok" and isinstance(message, AIMessage):
        try:
            message.content = with_citations(message, to_citations(result, documents)).content
        except InputError as error:  # documents that are not the attributed ones: no citations
            logger.warning("camab: no citations on the answer: %s", error)


def to_citations(
    result: AttributionResult, documents: Sequence[Any], *, rule: CitationRule | None = None
) -> list[Citation]:
    """LangChain ``Citation`` annotations for ``result.response``, in answer order, over the
    attributed ``documents``; ``rule`` (default ``CitationRule()``) decides what is cited."""
    return [
        create_citation(
            url=location,
            title=c.source.title,
            start_index=c.sentence.start,
            end_index=c.sentence.end,
            cited_text=c.cited_text,
            document_index=c.source.doc_index,
            score=c.score,
            camab_source=c.source.number,
        )
        for c, location in native_citations(result, documents, rule=rule)
    ]


def with_citations(message: AIMessage, citations: Sequence[Citation]) -> AIMessage:
    """A copy of ``message`` whose content is one text block carrying ``citations``."""
    block: dict[str, Any] = {"type": "text", "text": message.text, "annotations": list(citations)}
    return message.model_copy(update={"content": [block]})
