"""A framework's chat messages as camab-rag prompts (``[{"role", "content"}]``).

Frameworks name roles their own way (LangChain's ``human``/``ai``) and carry multi-part
contents (text blocks beside images); attribution needs the text the model read, under
the roles a chat template knows. The framework says how to read one of its messages
(``role_of``, ``content_of``; :func:`chat_prompt` reads ``role`` and ``content``
attributes) and how to read its prompt values (``chat_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from camab_rag.errors import InputError
from camab_rag.scorers.base import Prompt

ROLES = {"human": "user", "ai": "assistant"}
"""Framework role names that chat templates call otherwise."""


def content_text(content: object) -> str:
    """The plain text of a message's content: a string, or its text blocks joined (a
    block is a string or a ``{"type": "text", "text": ...}`` dict; other blocks dropped)."""
    if isinstance(content, str):
        return content
    blocks: Sequence[Any] = content if isinstance(content, Sequence) else ()
    return "".join(
        b if isinstance(b, str) else str(b.get("text", ""))
        for b in blocks
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    )


def chat_messages(
    messages: Sequence[Any], role_of: Callable[[Any], str], content_of: Callable[[Any], object]
) -> list[dict[str, str]]:
    """``[{"role", "content"}]`` of a framework's messages (roles renamed by :data:`ROLES`,
    contents as :func:`content_text`)."""
    return [
        {"role": ROLES.get(role_of(m), role_of(m)), "content": content_text(content_of(m))}
        for m in messages
    ]


def chat_prompt(messages: Iterable[Any]) -> list[dict[str, str]]:
    """:func:`chat_messages` of messages with ``role`` (a string or an enum) and ``content``
    attributes (LlamaIndex's ``ChatMessage``)."""
    return chat_messages(list(messages), _role, lambda m: m.content)


def _role(message: Any) -> str:
    return str(getattr(message.role, "value", message.role))


def as_prompt(
    value: object,
    chat_of: Callable[[object], list[dict[str, str]] | None],
    expected: str = "a string, a prompt value or a list of messages",
) -> Prompt:
    """A string as it is; a framework's prompt value or messages as chat messages
    (``chat_of(value)``, ``None`` when it is neither); ``{"role", "content"}`` mappings as
    they are; anything else an :class:`~camab_rag.errors.InputError` naming it and what is
    ``expected``."""
    if isinstance(value, str):
        return value
    chat = chat_of(value)
    if chat is not None:
        return chat
    if isinstance(value, Sequence) and all(
        isinstance(m, dict) and "role" in m and "content" in m for m in value
    ):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in value]
    raise InputError(f"cannot use a {type(value).__name__} as a prompt: expected {expected}")


def last_user_text(chat: Sequence[dict[str, str]] | None) -> str:
    """The content of the last ``user`` message of chat messages (``""`` if none)."""
    return next((m["content"] for m in reversed(chat or []) if m.get("role") == "user"), "")


__all__ = ["ROLES", "as_prompt", "chat_messages", "chat_prompt", "content_text", "last_user_text"]
