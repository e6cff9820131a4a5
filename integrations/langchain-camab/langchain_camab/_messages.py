"""Convert LangChain prompts (messages, prompt values, strings) into camab-rag prompts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.prompt_values import PromptValue

from camab_rag.integration import InputError

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def message_text(message: BaseMessage) -> str:
    """The plain text of a message (text blocks of a multi-part content joined)."""
    content: Any = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def message_role(message: BaseMessage) -> str:
    """The chat-template role of a LangChain message (``human`` -> ``user``, ...)."""
    role = getattr(message, "role", None)  # ChatMessage carries its own role
    if message.type == "chat" and isinstance(role, str):
        return role
    return _ROLES.get(message.type, message.type)


def to_chat_messages(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """LangChain messages -> ``[{"role", "content"}]`` as camab-rag scorers expect."""
    return [{"role": message_role(m), "content": message_text(m)} for m in messages]


def to_prompt(value: object) -> str | list[dict[str, str]]:
    """Any LangChain prompt form -> a camab-rag prompt (text or chat messages).

    Accepts a string, a ``PromptValue`` (e.g. from ``ChatPromptTemplate``), a sequence of
    ``BaseMessage`` or a sequence of ``{"role", "content"}`` mappings.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, PromptValue):
        return to_chat_messages(value.to_messages())
    if isinstance(value, Sequence) and all(isinstance(m, BaseMessage) for m in value):
        return to_chat_messages(value)
    if isinstance(value, Sequence) and all(
        isinstance(m, dict) and "role" in m and "content" in m for m in value
    ):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in value]
    raise InputError(
        f"cannot use a {type(value).__name__} as a prompt: expected a string, a PromptValue "
        "or a list of messages"
    )
